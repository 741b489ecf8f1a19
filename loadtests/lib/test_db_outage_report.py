import unittest

from db_outage_report import verdict


def scrape(successes):
    return {"tiered_cache_loads_seconds_count": {(("cache", "concert"), ("result", "success")): successes}}


class OutagePathVerdictTests(unittest.TestCase):

    def test_an_outage_answered_with_stale_values_and_503s_then_loads_again_passes(self):
        reasons = verdict({("detail", "200"): 90, ("detail", "503"): 10}, {"concert": 40},
                          [(10.0, scrape(5)), (20.0, scrape(5)), (21.0, scrape(9))], killed=12.0, back=19.0)
        self.assertEqual(reasons, [])

    def test_a_500_during_the_outage_fails_naming_it(self):
        reasons = verdict({("detail", "500"): 3, ("detail", "503"): 10}, {"concert": 40},
                          [(20.0, scrape(5)), (21.0, scrape(9))], killed=12.0, back=19.0)
        self.assertEqual(len(reasons), 1)
        self.assertIn("3 x 500", reasons[0])

    def test_an_outage_in_which_nothing_stale_was_served_fails(self):
        reasons = verdict({("detail", "503"): 10}, {"concert": 0},
                          [(20.0, scrape(5)), (21.0, scrape(9))], killed=12.0, back=19.0)
        self.assertEqual(reasons, ["no stale value served while the database was down"])

    def test_no_load_after_the_database_is_back_fails(self):
        reasons = verdict({("detail", "200"): 10}, {"concert": 4},
                          [(20.0, scrape(5)), (21.0, scrape(5))], killed=12.0, back=19.0)
        self.assertEqual(reasons, ["no read loaded from the database after it listened again"])


if __name__ == "__main__":
    unittest.main()
