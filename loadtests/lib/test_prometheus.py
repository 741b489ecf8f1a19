"""Unit tests of how the reports read the Prometheus text format (python3 -m unittest)."""
import tempfile
import unittest
from pathlib import Path

from db_outage_report import samples
from fleet import sum_scrapes
from report import parse_prometheus, prometheus

# What Micrometer's Prometheus registry writes: HELP and TYPE lines, counters as <family>_total, histograms as
# _count/_sum/_bucket, label values with escapes, NaN for a gauge whose object is gone, timestamps optional.
SCRAPE = r"""# HELP tiered_cache_gets_total Gets per tier
# TYPE tiered_cache_gets_total counter
tiered_cache_gets_total{cache="concert",result="hit",tier="l1"} 90.0
tiered_cache_gets_total{cache="concert",result="miss",tier="l1"} 10.0
# HELP http_server_requests_seconds
# TYPE http_server_requests_seconds histogram
http_server_requests_seconds_bucket{le="0.1",method="GET",status="200",uri="/api/concerts"} 40
http_server_requests_seconds_bucket{le="+Inf",method="GET",status="200",uri="/api/concerts"} 42
http_server_requests_seconds_count{method="GET",status="200",uri="/api/concerts"} 42
http_server_requests_seconds_sum{method="GET",status="200",uri="/api/concerts"} 1.5
# TYPE odd_labels gauge
odd_labels{path="C:\\temp",quote="say \"hi\"",comma="a,b} c"} 3 1700000000000
# TYPE gone gauge
gone NaN
"""


class PrometheusTest(unittest.TestCase):
    def test_samples_are_read_by_exposed_name_and_sorted_labels(self):
        metrics = parse_prometheus(SCRAPE)
        self.assertEqual(metrics["tiered_cache_gets_total"][(("cache", "concert"), ("result", "hit"), ("tier", "l1"))], 90)
        labels = (("method", "GET"), ("status", "200"), ("uri", "/api/concerts"))
        self.assertEqual(metrics["http_server_requests_seconds_count"][labels], 42)
        self.assertEqual(metrics["http_server_requests_seconds_sum"][labels], 1.5)
        self.assertEqual(metrics["http_server_requests_seconds_bucket"][(("le", "+Inf"),) + labels], 42)

    def test_escaped_label_values_are_unescaped_and_a_comma_or_brace_inside_one_is_text(self):
        metrics = parse_prometheus(SCRAPE)
        self.assertEqual(
            metrics["odd_labels"], {(("comma", "a,b} c"), ("path", "C:\\temp"), ("quote", 'say "hi"')): 3}
        )

    def test_nan_samples_are_left_out(self):
        self.assertNotIn("gone", parse_prometheus(SCRAPE))

    def test_a_scrape_cut_short_keeps_its_whole_lines(self):
        cut = 'a_total{x="1"} 5\nb_total{x="2"} 7\nc_total{x="3'
        self.assertEqual(parse_prometheus(cut), {"a_total": {(("x", "1"),): 5}, "b_total": {(("x", "2"),): 7}})

    def test_a_missing_file_is_an_empty_scrape(self):
        self.assertEqual(prometheus(Path("/nonexistent/prometheus.txt")), {})

    def test_a_summed_scrape_reads_back_with_the_same_labels(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b, out = Path(tmp, "a.txt"), Path(tmp, "b.txt"), Path(tmp, "sum.txt")
            a.write_text(SCRAPE)
            b.write_text(SCRAPE)
            out.write_text(sum_scrapes([a, b]))
            self.assertEqual(
                prometheus(out)["odd_labels"], {(("comma", "a,b} c"), ("path", "C:\\temp"), ("quote", 'say "hi"')): 6}
            )

    def test_the_outage_sampler_file_is_one_scrape_per_second(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, "db-outage.samples")
            path.write_text(
                "# 100.5\n"
                'hikaricp_connections_pending{pool="HikariPool-1"} 0.0\n'
                "# 101.5\n"
                'hikaricp_connections_pending{pool="HikariPool-1"} 3.0\n'
                'tiered_cache_stale_served_total{cache="concert"} 2.0\n'
            )
            second = samples(path)[1]
        self.assertEqual(second[0], 101.5)
        self.assertEqual(second[1]["hikaricp_connections_pending"], {(("pool", "HikariPool-1"),): 3})
        self.assertEqual(second[1]["tiered_cache_stale_served_total"], {(("cache", "concert"),): 2})


if __name__ == "__main__":
    unittest.main()
