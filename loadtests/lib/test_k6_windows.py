import gzip
import tempfile
import unittest
from pathlib import Path

from k6_windows import read, table, windows

HEADER = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario\n"


def row(metric, second, value, scenario="load"):
    return f"{metric},{second},{value},,,,,,,,,{scenario}\n"


class K6WindowsTest(unittest.TestCase):
    def write(self, directory, rows):
        path = Path(directory, "k6.csv.gz")
        with gzip.open(path, "wt") as out:
            out.write(HEADER + "".join(rows))
        return str(path)

    def test_each_window_counts_its_requests_failures_and_dropped_iterations_of_the_load_only(self):
        rows = [row("dropped_iterations", 1000, 7)]
        rows += [row("http_req_duration", 1001, 100 + i) for i in range(100)]
        rows += [row("http_req_failed", 1001, 1), row("http_req_failed", 1001, 0)]
        rows += [row("http_req_duration", 1005, 2) for _ in range(100)]
        rows += [row("dropped_iterations", 1006, 3, scenario="writes"), row("http_req_duration", 1006, 999, "writes")]
        with tempfile.TemporaryDirectory() as tmp:
            seconds = read(self.write(tmp, rows), "load")
        # Windows start at the scenario's first second, the one with the first dropped iteration.
        self.assertEqual([(w[0], w[1], w[2], w[5]) for w in windows(seconds, 5)], [(0, 100, 1, 7), (5, 100, 0, 0)])
        self.assertEqual(windows(seconds, 5)[0][4], 198.0)

    def test_the_last_line_tells_the_dropped_iterations_and_p99_of_the_steady_state_apart(self):
        rows = [row("dropped_iterations", 1000, 40)] + [row("http_req_duration", 1000, 500) for _ in range(10)]
        rows += [row("http_req_duration", 1010 + i % 10, 5) for i in range(1000)]
        with tempfile.TemporaryDirectory() as tmp:
            text = table(read(self.write(tmp, rows), "load"), 5, 10)
        self.assertIn("dropped 40 in all, 0 from 10 s on; p99 from 10 s on 5.0 ms", text)


if __name__ == "__main__":
    unittest.main()
