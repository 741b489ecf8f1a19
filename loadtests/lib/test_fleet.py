import tempfile
import unittest
from pathlib import Path

from fleet import instances_table, sum_scrapes
from report import prometheus


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


if __name__ == "__main__":
    unittest.main()
