import unittest

from first_touches import compulsory, judge


class CompulsoryMissesTests(unittest.TestCase):

    def test_a_single_concert_is_first_read_in_the_first_minute_only(self):
        self.assertEqual([(m, round(s, 6), round(d, 6)) for m, s, d in compulsory(1, 100, 3)],
                         [(1, 1.0, 1.0), (2, 0.0, 0.0), (3, 0.0, 0.0)])

    def test_first_reads_fall_minute_by_minute_and_never_exceed_the_concerts(self):
        rows = compulsory(1000, 600, 4)
        schedules = [s for _, s, _ in rows]
        self.assertEqual(schedules, sorted(schedules, reverse=True))
        self.assertLessEqual(sum(schedules), 1000)
        self.assertTrue(all(d <= s for _, s, d in rows))


class JudgeTests(unittest.TestCase):

    def samples(self, selects_in_minute_two):
        return [(0.0, 0, 0.0), (60.0, 1500, 1000.0), (120.0, 1500 + selects_in_minute_two, 2000.0)]

    def test_a_minute_within_compulsory_misses_plus_two_percent_passes(self):
        rows = judge(self.samples(20), concerts=1, rate=1)
        self.assertEqual(rows[1][5], True)

    def test_a_minute_over_the_bound_fails_and_the_first_minute_is_not_judged(self):
        rows = judge(self.samples(21), concerts=1, rate=1)
        self.assertEqual([row[5] for row in rows], [True, False])


if __name__ == "__main__":
    unittest.main()
