"""Unit tests of stats.py, the percentile every report uses."""
import unittest

from stats import percentile


class PercentileTests(unittest.TestCase):

    def test_percentiles_are_nearest_rank(self):
        values = list(range(1, 101))
        self.assertEqual((percentile(values, 50), percentile(values, 99), percentile([7], 99)), (50, 99, 7))
        self.assertIsNone(percentile([], 50))

    def test_the_order_of_the_values_does_not_matter_and_the_ends_are_the_extremes(self):
        values = [5, 1, 4, 2, 3]
        self.assertEqual((percentile(values, 0), percentile(values, 100), percentile(values, 60)), (1, 5, 3))


if __name__ == "__main__":
    unittest.main()
