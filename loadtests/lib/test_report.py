"""Unit tests of report.py's comparisons, on run directories written here (python3 -m unittest)."""
import json
import tempfile
import unittest
from pathlib import Path

import report


def write_run(root, label, requests, p99, seconds=10.0, dropped=None):
    """A run directory as loadtests/run.sh leaves it, with only what the comparison reads."""
    run = Path(root) / label
    run.mkdir()
    (run / "meta.txt").write_text(f"scenario=vus-1000\nprofile={label}\nconcerts=5000\n")
    summary = {
        "state": {"testRunDurationMs": seconds * 1000},
        "metrics": {
            "http_reqs{scenario:load}": {"values": {"count": requests}},
            "http_req_duration{scenario:load}": {"values": {"med": 1.0, "p(95)": 2.0, "p(99)": p99, "max": 99.0}},
        },
    }
    if dropped is not None:
        summary["metrics"]["dropped_iterations"] = {"values": {"count": dropped}}
    (run / "vus-1000-summary.json").write_text(json.dumps(summary))
    return report.Run(run)


def cells(table, label):
    line = next(line for line in table.splitlines() if line.strip().startswith(label))
    return line[len(f"  {label:<20}"):]


class ComparisonTests(unittest.TestCase):

    def test_each_cached_run_is_compared_with_the_mean_of_the_floor_runs_beside_it(self):
        with tempfile.TemporaryDirectory() as root:
            runs = [
                write_run(root, "floor-1", 60_000, 10.0),
                write_run(root, "cache-cold", 45_000, 30.0),
                write_run(root, "floor-2", 80_000, 20.0),
                write_run(root, "cache-warm", 72_000, 15.0),
                write_run(root, "floor-3", 64_000, 10.0),
            ]
            table = report.compare(runs, report.bare_neighbours, "against the floor runs beside it")
        requests = cells(table, "requests/s")
        self.assertIn("4,500.0 (0.64x)", requests)  # 4,500 / mean(6,000, 8,000)
        self.assertIn("7,200.0 (1.00x)", requests)  # 7,200 / mean(8,000, 6,400)
        self.assertEqual(requests.count("x)"), 2, "floor runs carry no ratio")
        self.assertIn("15.0 (1.00x)", cells(table, "p99 ms"))  # 15 / mean(20, 10)

    def test_the_warm_rounds_are_judged_on_the_median_of_their_ratios_to_the_floors_beside_them(self):
        with tempfile.TemporaryDirectory() as root:
            runs = [
                write_run(root, "floor-1", 60_000, 10.0),
                write_run(root, "cache-cold", 45_000, 30.0),
                write_run(root, "floor-2", 60_000, 10.0),
                write_run(root, "cache-warm-1", 60_000, 12.0),
                write_run(root, "floor-3", 60_000, 10.0),
                write_run(root, "cache-warm-2", 60_000, 40.0),
                write_run(root, "floor-4", 60_000, 10.0),
                write_run(root, "cache-warm-3", 57_600, 11.0),
                write_run(root, "floor-5", 60_000, 10.0),
            ]
            for run in runs:
                run.scenario = "users-per-second"
            latency = report.ceiling(runs)
            for run in runs:
                run.scenario = "vus-1000"
            throughput = report.ceiling(runs)
        self.assertIn("warm p99            1.20x  median of 3 (1.20x, 4.00x, 1.10x)", latency)
        self.assertIn("<= 1.25x, 0 dropped, 0 failed: met", latency)
        self.assertIn("cold p99            3.00x  median of 1", latency)
        self.assertIn("MISSED", cells(latency, "cold p99"))
        self.assertIn("warm requests/s     1.00x  median of 3 (1.00x, 1.00x, 0.96x)", throughput)
        self.assertIn("(no target)", cells(throughput, "cold requests/s"))

    def test_a_smoke_ceiling_prints_its_ratios_but_judges_no_target(self):
        with tempfile.TemporaryDirectory() as root:
            runs = [write_run(root, label, 600, p99) for label, p99 in
                    [("floor-1", 10.0), ("cache-cold", 90.0), ("floor-2", 10.0), ("cache-warm-1", 40.0), ("floor-3", 10.0)]]
            for run in runs:
                run.scenario = "users-per-second"
                run.meta["smoke"] = "true"
            table = report.ceiling(runs)
        self.assertIn("warm p99            4.00x  median of 1 (4.00x)", table)
        self.assertIn("(smoke run: not judged)", cells(table, "warm p99"))
        self.assertNotIn("MISSED", table)

    def test_compare_puts_every_run_against_the_first(self):
        with tempfile.TemporaryDirectory() as root:
            runs = [write_run(root, "none", 10_000, 40.0), write_run(root, "cache", 25_000, 10.0)]
            table = report.compare(runs)
        self.assertIn("2,500.0 (2.50x)", cells(table, "requests/s"))
        self.assertIn("10.0 (0.25x)", cells(table, "p99 ms"))


class FloorLimitTests(unittest.TestCase):

    def test_a_run_is_held_to_its_ratio_of_the_floors_latency_and_drops_rounded_up(self):
        with tempfile.TemporaryDirectory() as root:
            floor = write_run(root, "floor", 10_000, 7.3, dropped=3)
            self.assertEqual(report.limits(floor, 2), (4, 15, 6))
            self.assertEqual(report.limits(floor, 1.25, 10), (1000, 1000, 3))

    def test_a_smoke_run_is_held_to_at_least_a_second_and_past_it_to_ten_times_its_ratio(self):
        with tempfile.TemporaryDirectory() as root:
            fast = write_run(root, "fast", 10_000, 16.2)
            slow = write_run(root, "slow", 10_000, 80.0)
            self.assertEqual(report.limits(fast, 2, 10), (1000, 1000, 0))
            self.assertEqual(report.limits(slow, 2, 10)[1], 1600)

    def test_a_floor_without_drops_allows_none(self):
        with tempfile.TemporaryDirectory() as root:
            floor = write_run(root, "floor", 10_000, 0.2)
            self.assertEqual(report.limits(floor, 2), (4, 1, 0))


if __name__ == "__main__":
    unittest.main()
