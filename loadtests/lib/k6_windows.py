"""A k6 run over time, from k6's own CSV output (K6_OUT=csv=FILE[.gz] on any run.sh command).

    python3 lib/k6_windows.py FILE [--window 5] [--scenario load] [--after 10]

One row per window of the load scenario: requests, failed requests, p50 and p99 of http_req_duration, dropped
iterations. The last line sums the dropped iterations and gives the p99 from --after seconds on, which tells a
cold start's saturation from a steady state's (k6's summary gives only the whole run's totals). Writing the CSV
costs k6 some CPU, on the cores it shares with what it measures.
"""

import argparse
import csv
import gzip
import sys
from collections import defaultdict

from stats import percentile


def read(path, scenario):
    """{second: {"durations": [...], "failed": n, "dropped": n}} of one scenario, by k6's timestamps."""
    seconds = defaultdict(lambda: {"durations": [], "failed": 0, "dropped": 0})
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as lines:
        for row in csv.DictReader(lines):
            if row.get("scenario") != scenario:
                continue
            metric, second = row["metric_name"], int(float(row["timestamp"]))
            value = float(row["metric_value"])
            if metric == "http_req_duration":
                seconds[second]["durations"].append(value)
            elif metric == "http_req_failed":
                seconds[second]["failed"] += int(value)
            elif metric == "dropped_iterations":
                seconds[second]["dropped"] += int(value)
    return seconds


def ms(value):
    return float("nan") if value is None else value


def windows(seconds, width):
    """[(start offset, requests, failed, p50, p99, dropped)] from the scenario's first second."""
    if not seconds:
        return []
    first, last = min(seconds), max(seconds)
    rows = []
    for start in range(first, last + 1, width):
        durations, failed, dropped = [], 0, 0
        for second in range(start, start + width):
            value = seconds.get(second)
            if value:
                durations += value["durations"]
                failed += value["failed"]
                dropped += value["dropped"]
        rows.append((start - first, len(durations), failed, ms(percentile(durations, 50)), ms(percentile(durations, 99)),
                     dropped))
    return rows


def table(seconds, width, after):
    rows = windows(seconds, width)
    lines = ["  window (s)        requests  failed   p50 ms   p99 ms  dropped"]
    for start, requests, failed, p50, p99, dropped in rows:
        lines.append(f"  {start:4d} .. {start + width:4d}  {requests:10,d} {failed:7,d} {p50:8.1f} {p99:8.1f} {dropped:8,d}")
    later = [row for row in rows if row[0] >= after]
    first = min(seconds, default=0)
    durations = [d for second, value in seconds.items() if second - first >= after for d in value["durations"]]
    lines.append(f"  dropped {sum(r[5] for r in rows):,d} in all, {sum(r[5] for r in later):,d} from {after} s on; "
                 f"p99 from {after} s on {ms(percentile(durations, 99)):.1f} ms")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--window", type=int, default=5, help="seconds per row (5)")
    parser.add_argument("--scenario", default="load", help="k6 scenario (load)")
    parser.add_argument("--after", type=int, default=10, help="the steady state starts this many seconds in (10)")
    args = parser.parse_args(argv)
    print(table(read(args.csv, args.scenario), args.window, args.after))


if __name__ == "__main__":
    main(sys.argv[1:])
