"""Unit tests of freshness.py's arithmetic: staleness, lag and the verdict from synthetic events."""
import unittest

from freshness import Read, Write, analyze, out_of_rotation, verdict

STALE_AFTER = 1.0


def detail(instance, concert, version, sent, received=None):
    return Read(instance, "detail", concert, version, sent, sent + 0.002 if received is None else received)


class StalenessTests(unittest.TestCase):

    def test_a_read_more_than_a_second_after_a_newer_write_was_acknowledged_is_stale_with_its_age(self):
        writes = [Write("a", 1, 1, 10.0, 10.010), Write("a", 1, 2, 11.0, 11.010)]
        reads = [detail("b", 1, 1, 11.5), detail("b", 1, 0, 12.0), detail("b", 1, 1, 12.5)]
        rows = analyze(writes, reads, STALE_AFTER)
        stale = rows[("b", "api-other-instance", "detail")].stale
        self.assertEqual([(s.concert, s.seen, s.expected) for s in stale], [(1, 0, 1), (1, 1, 2)])
        # Version 0 is older than write 1 (acked at 10.010); version 1 older than write 2 (11.010).
        self.assertAlmostEqual(stale[0].age, 1.990)
        self.assertAlmostEqual(stale[1].age, 1.490)

    def test_a_read_within_the_second_is_behind_but_not_stale(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [detail("b", 1, 0, 10.5), detail("b", 1, 0, 11.0)]
        row = analyze(writes, reads, STALE_AFTER)[("b", "api-other-instance", "detail")]
        self.assertEqual((row.behind, len(row.stale)), (2, 0))

    def test_a_read_sent_before_the_acknowledgement_is_neither_behind_nor_stale(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        row = analyze(writes, [detail("a", 1, 0, 10.005)], STALE_AFTER)[("a", "api-same-instance", "detail")]
        self.assertEqual((row.behind, len(row.stale)), (0, 0))

    def test_a_failed_write_makes_no_read_stale(self):
        writes = [Write("sql", 1, 1, 10.0, None)]
        row = analyze(writes, [detail("a", 1, 0, 20.0)], STALE_AFTER)[("a", "sql", "detail")]
        self.assertEqual((row.writes, row.behind, len(row.stale)), (0, 0, 0))


class LagTests(unittest.TestCase):

    def test_lag_runs_from_the_acknowledgement_to_the_answer_of_the_first_read_that_saw_the_write(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [detail("b", 1, 0, 10.020, 10.022), detail("b", 1, 1, 10.060, 10.065), detail("b", 1, 1, 10.2)]
        row = analyze(writes, reads, STALE_AFTER)[("b", "api-other-instance", "detail")]
        self.assertEqual(len(row.lags), 1)
        self.assertAlmostEqual(row.lags[0], 0.055)

    def test_the_lower_bound_is_the_last_read_after_the_acknowledgement_that_still_saw_the_old_version(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [detail("b", 1, 0, 10.005), detail("b", 1, 0, 10.030), detail("b", 1, 1, 10.060, 10.065)]
        row = analyze(writes, reads, STALE_AFTER)[("b", "api-other-instance", "detail")]
        self.assertAlmostEqual(row.olds[0], 0.020)
        same = analyze(writes, [detail("a", 1, 1, 10.040, 10.045)], STALE_AFTER)[("a", "api-same-instance", "detail")]
        self.assertEqual(same.olds, [0.0])

    def test_a_newer_version_counts_as_seeing_the_write_it_replaced(self):
        writes = [Write("a", 1, 1, 10.0, 10.010), Write("a", 1, 2, 10.5, 10.510)]
        reads = [detail("b", 1, 0, 10.1), detail("b", 1, 2, 10.6, 10.610)]
        row = analyze(writes, reads, STALE_AFTER)[("b", "api-other-instance", "detail")]
        self.assertEqual([round(lag, 3) for lag in row.lags], [0.6, 0.1])

    def test_a_read_answered_before_the_acknowledgement_gives_a_lag_of_zero(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        row = analyze(writes, [detail("a", 1, 1, 10.004, 10.006)], STALE_AFTER)[("a", "api-same-instance", "detail")]
        self.assertEqual(row.lags, [0.0])

    def test_a_write_no_read_saw_is_unseen_not_a_lag(self):
        writes = [Write("sql", 1, 1, 10.0, 10.010)]
        row = analyze(writes, [detail("a", 1, 0, 10.5)], STALE_AFTER)[("a", "sql", "detail")]
        self.assertEqual((row.lags, row.unseen), ([], 1))

    def test_the_first_read_by_send_time_decides_even_when_a_later_one_flaps_back(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [detail("b", 1, 1, 10.030, 10.040), detail("b", 1, 0, 12.0)]
        row = analyze(writes, reads, STALE_AFTER)[("b", "api-other-instance", "detail")]
        self.assertAlmostEqual(row.lags[0], 0.030)
        self.assertEqual(len(row.stale), 1)

    def test_a_write_acknowledged_while_the_instance_was_out_of_rotation_counts_as_down_not_as_a_lag(self):
        writes = [Write("a", 1, 1, 10.0, 10.010), Write("a", 1, 2, 16.0, 16.010)]
        reads = [detail("b", 1, 1, 14.5, 15.100), detail("b", 1, 2, 16.020, 16.030)]
        row = analyze(writes, reads, STALE_AFTER, {"b": [(10.0, 14.0)]})[("b", "api-other-instance", "detail")]
        self.assertEqual((row.writes, row.down, row.unseen), (2, 1, 0))
        self.assertEqual(len(row.lags), 1)
        self.assertAlmostEqual(row.lags[0], 0.020)

    def test_a_write_not_yet_seen_when_the_instance_left_rotation_counts_as_down_not_as_the_restarts_length(self):
        writes = [Write("sql", 1, 1, 9.9, 9.950)]
        reads = [detail("a", 1, 0, 9.960), detail("a", 1, 1, 60.0, 60.010)]
        row = analyze(writes, reads, STALE_AFTER, {"a": [(10.0, 70.0)]})[("a", "sql", "detail")]
        self.assertEqual((row.writes, row.down, row.lags, len(row.stale)), (1, 1, [], 0))

    def test_a_write_seen_before_the_instance_left_rotation_keeps_its_lag(self):
        writes = [Write("sql", 1, 1, 9.0, 9.050)]
        reads = [detail("a", 1, 1, 9.300, 9.310)]
        row = analyze(writes, reads, STALE_AFTER, {"a": [(10.0, 70.0)]})[("a", "sql", "detail")]
        self.assertEqual(row.down, 0)
        self.assertAlmostEqual(row.lags[0], 0.260)

    def test_an_old_version_served_after_the_instance_came_back_is_still_stale(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [detail("b", 1, 0, 12.0)]
        row = analyze(writes, reads, STALE_AFTER, {"b": [(10.0, 11.5)]})[("b", "api-other-instance", "detail")]
        self.assertEqual((row.down, row.behind, len(row.stale)), (1, 1, 1))

    def test_rotation_windows_come_from_the_fault_log_and_one_never_closed_lasts_to_the_end(self):
        events = [(5.0, "instance a out of rotation: stopped (SIGTERM)"), (6.0, "instance a exited"),
                  (20.0, "instance a back in rotation: ready again"), (21.0, "instance b out of rotation: killed")]
        self.assertEqual(out_of_rotation(events), {"a": [(5.0, 20.0)], "b": [(21.0, float("inf"))]})


class VerdictTests(unittest.TestCase):

    def test_a_stale_read_or_a_slow_p99_fails_and_each_kind_has_its_own_lag_limit(self):
        writes = [Write("a", 1, 1, 10.0, 10.0), Write("sql", 2, 1, 10.0, 10.0)]
        fine = [detail("b", 1, 1, 10.05, 10.09), detail("b", 2, 1, 10.1, 10.2)]
        passed, reasons = verdict(analyze(writes, fine, STALE_AFTER), 100, 250, {"a": (1, 0), "sql": (1, 0)})
        self.assertTrue(passed, reasons)
        slow = [detail("b", 1, 1, 10.1, 10.15), detail("b", 2, 0, 11.5), detail("b", 2, 1, 11.6)]
        passed, reasons = verdict(analyze(writes, slow, STALE_AFTER), 100, 250, {"a": (1, 0), "sql": (1, 0)})
        self.assertFalse(passed)
        self.assertEqual(len(reasons), 3, reasons)  # a's lag 150 ms, sql's stale read and its lag 1.6 s

    def test_without_lag_limits_a_slow_p99_passes_and_a_stale_read_still_fails(self):
        writes = [Write("a", 1, 1, 10.0, 10.0), Write("sql", 2, 1, 10.0, 10.0)]
        slow = [detail("b", 1, 1, 10.1, 10.15), detail("b", 2, 1, 10.9, 10.95)]
        passed, reasons = verdict(analyze(writes, slow, STALE_AFTER), None, None, {"a": (1, 0), "sql": (1, 0)})
        self.assertTrue(passed, reasons)
        stale = slow + [detail("b", 2, 0, 11.5)]
        passed, reasons = verdict(analyze(writes, stale, STALE_AFTER), None, None, {"a": (1, 0), "sql": (1, 0)})
        self.assertEqual(reasons, ["b sql detail: 1 stale reads"])

    def test_the_writing_instance_reading_its_own_write_back_older_fails_even_within_the_lag_limit(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [detail("a", 1, 0, 10.020, 10.021), detail("a", 1, 1, 10.030, 10.031)]
        passed, reasons = verdict(analyze(writes, reads, STALE_AFTER), 100, 250, {"a": (1, 0)})
        self.assertFalse(passed)
        self.assertEqual(reasons, ["a api-same-instance detail: 1 reads older than the instance's own acknowledged write"])

    def test_a_causal_read_on_another_instance_older_than_its_clients_write_fails_even_within_the_second(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [Read("b", "causal", 1, 0, 10.011, 10.020), detail("b", 1, 0, 10.012), detail("b", 1, 1, 10.030)]
        passed, reasons = verdict(analyze(writes, reads, STALE_AFTER), 100, 250, {"a": (1, 0)})
        self.assertFalse(passed)
        self.assertEqual(reasons, ["b api-other-instance causal: 1 reads carrying a write's position older than "
                                   "that write"])

    def test_a_causal_read_that_waited_past_the_lag_limit_passes_when_it_saw_its_write(self):
        writes = [Write("a", 1, 1, 10.0, 10.010)]
        reads = [Read("b", "causal", 1, 1, 10.011, 10.700), detail("b", 1, 1, 10.030)]
        passed, reasons = verdict(analyze(writes, reads, STALE_AFTER), 100, 250, {"a": (1, 0)})
        self.assertTrue(passed, reasons)

    def test_a_writer_with_no_acknowledged_write_fails_the_run(self):
        passed, reasons = verdict({}, 100, 250, {"sql": (0, 5)})
        self.assertFalse(passed)
        self.assertIn("nothing measured", reasons[0])

    def test_a_fault_with_nothing_in_its_log_fails_the_run(self):
        passed, reasons = verdict({}, 100, 250, {"sql": (5, 0)}, "capture-stall", [])
        self.assertFalse(passed)
        self.assertIn("the fault never struck", reasons[0])

    def test_a_fault_that_struck_passes(self):
        passed, reasons = verdict({}, 100, 250, {"sql": (5, 0)}, "capture-stall",
                                  [(15.0, "binary log not readable: 1 dump connections killed")])
        self.assertTrue(passed, reasons)


if __name__ == "__main__":
    unittest.main()
