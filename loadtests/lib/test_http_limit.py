"""Unit tests of http_limit.py's pairing of rounds and its verdicts (python3 -m unittest)."""
import tempfile
import unittest

import http_limit
from test_report import write_run


class HttpLimitTests(unittest.TestCase):

    def test_each_warm_round_is_held_to_the_nginx_round_before_it_and_the_floors_beside_it(self):
        with tempfile.TemporaryDirectory() as root:
            runs = [
                write_run(root, "floor-1", 30_000, 10.0),
                write_run(root, "cache-cold", 20_000, 30.0),
                write_run(root, "floor-2", 30_000, 10.0),
                write_run(root, "nginx-1", 50_000, 5.0),
                write_run(root, "cache-warm-1", 45_000, 8.0),
                write_run(root, "floor-3", 40_000, 12.0),
            ]
            pairs = http_limit.rounds(runs)
            self.assertEqual(1, len(pairs))
            nginx, cache, floors = pairs[0]
            self.assertEqual(("nginx-1", "cache-warm-1"), (nginx.profile, cache.profile))
            self.assertEqual(["floor-2", "floor-3"], [f.profile for f in floors])
            table = http_limit.report(runs)
            # 4,500 req/s against nginx's 5,000 and the floors' mean of 3,500.
            self.assertIn("0.90x", table)
            self.assertIn("1.29x", table)
            self.assertIn("requests/s / nginx  0.90x median of 1 (>= 0.85x: met)", table)
            self.assertIn("requests/s / floor  1.29x median of 1 (>= 1.15x: met)", table)

    def test_a_warm_round_below_the_targets_is_missed(self):
        with tempfile.TemporaryDirectory() as root:
            runs = [
                write_run(root, "floor-2", 40_000, 10.0),
                write_run(root, "nginx-1", 60_000, 5.0),
                write_run(root, "cache-warm-1", 42_000, 8.0),
                write_run(root, "floor-3", 40_000, 10.0),
            ]
            table = http_limit.report(runs)
            self.assertIn("requests/s / nginx  0.70x median of 1 (>= 0.85x: MISSED)", table)
            self.assertIn("requests/s / floor  1.05x median of 1 (>= 1.15x: MISSED)", table)


if __name__ == "__main__":
    unittest.main()
