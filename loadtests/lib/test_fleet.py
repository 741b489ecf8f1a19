import json
import tempfile
import unittest
from pathlib import Path

from fleet import failover, instances_table, sum_scrapes, topology
from report import Run, prometheus


def scrape(path, gets, requests, checkouts):
    l1_hit, l1_miss, l2_hit, l2_miss = gets
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# TYPE tiered_cache_gets_total counter\n"
        f'tiered_cache_gets_total{{cache="concert",result="hit",tier="l1"}} {l1_hit}\n'
        f'tiered_cache_gets_total{{cache="concert",result="miss",tier="l1"}} {l1_miss}\n'
        f'tiered_cache_gets_total{{cache="concert",result="hit",tier="l2"}} {l2_hit}\n'
        f'tiered_cache_gets_total{{cache="concert",result="miss",tier="l2"}} {l2_miss}\n'
        f'http_server_requests_seconds_count{{method="GET",status="200",uri="/api/concerts"}} {requests}\n'
        f'http_server_requests_seconds_count{{method="GET",status="200",uri="/actuator/prometheus"}} 7\n'
        f'hikaricp_connections_usage_seconds_count{{pool="HikariPool-1"}} {checkouts}\n'
    )


class FleetTest(unittest.TestCase):
    def test_the_sum_of_scrapes_adds_samples_with_the_same_name_and_labels(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = Path(tmp, "a.txt"), Path(tmp, "b.txt")
            scrape(a, (1, 2, 3, 4), 10, 5)
            scrape(b, (10, 20, 30, 40), 100, 50)
            out = Path(tmp, "sum.txt")
            out.write_text(sum_scrapes([a, b]))
            summed = prometheus(out)
        self.assertEqual(summed["tiered_cache_gets_total"][(("cache", "concert"), ("result", "hit"), ("tier", "l1"))], 11)
        self.assertEqual(summed["hikaricp_connections_usage_seconds_count"][(("pool", "HikariPool-1"),)], 55)

    def test_each_instance_gets_its_row_and_the_fleet_the_sums(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp)
            # Instance 1: 300 requests, 90 of 100 lookups hit L1; instance 2: 100 requests, 50 of 100 hit L1.
            for name, gets, requests, checkouts in [
                ("api-1", (90, 10, 5, 5), 300, 30),
                ("api-2", (50, 50, 25, 25), 100, 10),
            ]:
                for phase, factor in (("before", 0), ("after", 1)):
                    directory = run / "instances" / name / phase
                    scrape(directory / "prometheus.txt", [g * factor for g in gets], requests * factor, checkouts * factor)
                    (directory / "time.txt").write_text(str(100 + 10 * factor))
            for phase, factor in (("before", 0), ("after", 1)):
                (run / phase).mkdir()
                (run / phase / "prometheus.txt").write_text(
                    sum_scrapes([run / "instances" / n / phase / "prometheus.txt" for n in ("api-1", "api-2")])
                )
                (run / phase / "time.txt").write_text(str(100 + 10 * factor))
                (run / phase / "mariadb.tsv").write_text(f"Com_select\t{80 * factor}\n")
            (run / "meta.txt").write_text("instances=2\nnginx=127.0.0.1:8080\nredis=cluster\n")
            table = instances_table(run)
        rows = {line.split()[0]: line.split() for line in table.splitlines() if line.strip()}
        # requests/s, share, 5xx, L1, L2, overall, lookups, loads/s, DB conn/s, selects/s
        self.assertEqual(rows["api-1"][1:8], ["30.0", "75.0%", "0", "90.0%", "50.0%", "95.0%", "100"])
        self.assertEqual(rows["api-2"][1:8], ["10.0", "25.0%", "0", "50.0%", "50.0%", "75.0%", "100"])
        self.assertEqual(rows["fleet"][1:8], ["40.0", "100.0%", "0", "70.0%", "50.0%", "85.0%", "200"])
        # 8 selects/s split 3:1 by connection checkouts.
        self.assertEqual(rows["api-1"][9:], ["3.0", "6.0"])
        self.assertEqual(rows["api-2"][9:], ["1.0", "2.0"])
        self.assertEqual(rows["fleet"][9:], ["4.0", "8.0"])


def k6_run(root, label, requests, p99, failed=0, dropped=0, seconds=10.0, extra=None, meta=""):
    """A fleet run directory with a users-per-second summary holding what the comparisons read."""
    run = Path(root) / label
    run.mkdir()
    (run / "meta.txt").write_text(f"scenario=users-per-second\nprofile={label}\n{meta}")
    metrics = {
        "http_reqs{scenario:load}": {"values": {"count": requests}},
        "http_req_duration{scenario:load}": {"values": {"med": 1.0, "p(95)": 2.0, "p(99)": p99, "max": 900.0}},
        "http_req_failed": {"values": {"passes": failed, "fails": requests - failed}},
        "dropped_iterations": {"values": {"count": dropped}},
    }
    metrics.update(extra or {})
    summary = {"state": {"testRunDurationMs": seconds * 1000}, "metrics": metrics}
    (run / "users-per-second-summary.json").write_text(json.dumps(summary))
    return run


class TopologyTest(unittest.TestCase):
    def test_the_cluster_is_held_to_nine_tenths_of_the_mean_standalone_throughput_beside_it(self):
        with tempfile.TemporaryDirectory() as root:
            runs = [
                Run(k6_run(root, "standalone-1", 10_000, 10.0)),
                Run(k6_run(root, "cluster-1", 9_000, 12.0)),
                Run(k6_run(root, "standalone-2", 10_000, 11.0)),
            ]
            text, met = topology(runs)
        self.assertTrue(met, text)
        self.assertIn("cluster / standalone 0.900", text)
        self.assertIn("900.0 (0.90x)", text)  # 900/s against mean(1,000, 1,000)

    def test_a_failed_request_or_a_slower_cluster_misses_the_target(self):
        with tempfile.TemporaryDirectory() as root:
            failed = [Run(k6_run(root, "standalone-1", 10_000, 10.0)), Run(k6_run(root, "cluster-1", 10_000, 10.0, failed=1)),
                      Run(k6_run(root, "standalone-2", 10_000, 10.0))]
            text_failed, met_failed = topology(failed)
        with tempfile.TemporaryDirectory() as root:
            slower = [Run(k6_run(root, "standalone-1", 10_000, 10.0)), Run(k6_run(root, "cluster-1", 8_900, 10.0)),
                      Run(k6_run(root, "standalone-2", 10_000, 10.0))]
            text_slower, met_slower = topology(slower)
        self.assertFalse(met_failed, text_failed)
        self.assertIn("cluster failed 1", text_failed)
        self.assertFalse(met_slower, text_slower)
        self.assertIn("cluster / standalone 0.890", text_slower)


def windowed(start, width, rows):
    """The summary metrics of windows from `start`, one (requests, failed, p99) row per window."""
    metrics = {}
    for i, (requests, failed, p99) in enumerate(rows):
        window = start + i * width
        metrics[f"http_req_failed{{scenario:load,window:{window}}}"] = {"values": {"passes": failed, "fails": requests - failed}}
        metrics[f"http_req_duration{{scenario:load,window:{window}}}"] = {"values": {"p(99)": p99, "max": p99}}
    return metrics


class FailoverTest(unittest.TestCase):
    def run_with(self, root, rows, failed_reads=0, run_p99=50.0):
        # Windows of 5 s from 1000; the primary is killed at 1012, the cluster ok at 1016, so the failover window is
        # 1012..1021: the windows starting at 1010, 1015 and 1020 overlap it.
        extra = windowed(1000, 5, rows)
        extra["http_req_failed{scenario:load}"] = {"values": {"passes": failed_reads, "fails": 1000}}
        run = k6_run(root, "run", 1000, run_p99, failed=failed_reads, extra=extra,
                     meta="window_seconds=5\nsettle_seconds=5\n")
        (run / "fault.log").write_text(
            "1001.0 load-started\n1012.0 node 7001 master 500\n1012.0 killed 127.0.0.1:7001\n1016.0 promoted\n"
            "1026.0 restarted 127.0.0.1:7001\n"
        )
        return failover(run)

    def test_the_worst_window_of_the_failover_is_held_to_the_runs_p99_plus_100_ms(self):
        rows = [(100, 0, 20.0), (100, 0, 30.0), (100, 0, 140.0), (100, 0, 90.0), (100, 0, 145.0), (100, 0, 500.0)]
        with tempfile.TemporaryDirectory() as root:
            text, met = self.run_with(root, rows)
        self.assertTrue(met, text)
        self.assertIn("failover window 145.0", text)  # the window from 1025 (p99 500) starts after 1021
        self.assertIn("0 of 300 in the failover window", text)
        self.assertIn("killed 11.0 s into the load; cluster ok (a replica promoted) 4.0 s later", text)

    def test_a_window_over_the_margin_or_a_failed_read_misses_the_target(self):
        rows = [(100, 0, 20.0), (100, 0, 30.0), (100, 0, 151.0), (100, 0, 90.0), (100, 0, 100.0)]
        with tempfile.TemporaryDirectory() as root:
            text_slow, met_slow = self.run_with(root, rows)
        with tempfile.TemporaryDirectory() as root:
            rows = [(100, 0, 20.0), (100, 0, 30.0), (100, 1, 60.0), (100, 0, 90.0), (100, 0, 100.0)]
            text_failed, met_failed = self.run_with(root, rows, failed_reads=1)
        self.assertFalse(met_slow, text_slow)
        self.assertIn("MISSED", text_slow)
        self.assertFalse(met_failed, text_failed)
        self.assertIn("1 in the run, 1 of 300 in the failover window", text_failed)

    def test_without_a_promotion_there_is_no_verdict(self):
        with tempfile.TemporaryDirectory() as root:
            run = k6_run(root, "run", 1000, 50.0)
            (run / "fault.log").write_text("1001.0 load-started\n1012.0 killed 127.0.0.1:7001\n1072.0 not-promoted\n")
            text, met = failover(run)
        self.assertFalse(met)
        self.assertIn("no kill and promotion", text)


if __name__ == "__main__":
    unittest.main()
