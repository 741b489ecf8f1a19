#!/usr/bin/env python3
"""Allocation and GC pauses per request, per run, from a JVM's GC log (-Xlog:gc:file=F:time) and run.sh's run
directories (before/time.txt, after/time.txt, the k6 summary):

    gc_alloc.py GC_LOG RUN_DIR [RUN_DIR ...]

Allocated bytes between two young collections are the heap before the second minus the heap after the first;
a run's allocation is the sum over the collections inside its window (MB resolution, so a run needs several).
"""
import re
import sys
from datetime import datetime
from pathlib import Path

import report

LINE = re.compile(r"^\[([^\]]+)\].*GC\(\d+\) Pause Young.* (\d+)M->(\d+)M\(\d+M\) ([0-9.]+)ms")


def collections(log):
    """(epoch seconds, heap before MB, heap after MB, pause ms) per young pause."""
    out = []
    for line in Path(log).read_text().splitlines():
        m = LINE.match(line)
        if m:
            when = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
            out.append((when, int(m.group(2)), int(m.group(3)), float(m.group(4))))
    return out


def window(run_dir, pauses):
    start = float((Path(run_dir) / "before" / "time.txt").read_text())
    end = float((Path(run_dir) / "after" / "time.txt").read_text())
    inside = [i for i, p in enumerate(pauses) if start <= p[0] <= end and i > 0]
    allocated = sum(pauses[i][1] - pauses[i - 1][2] for i in inside) * 1024 * 1024
    return allocated, len(inside), sum(pauses[i][3] for i in inside), max((pauses[i][3] for i in inside), default=0)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    pauses = collections(argv[1])
    print(f"  {'run':<14}{'requests':>10}{'KB/request':>12}{'young GCs':>11}{'pause ms':>10}{'max ms':>8}")
    for run_dir in argv[2:]:
        run = report.Run(Path(run_dir))
        allocated, count, total, longest = window(run_dir, pauses)
        requests = run.requests() or 0
        per = allocated / requests / 1024 if requests and count else float("nan")
        print(f"  {run.profile:<14}{requests:>10}{per:>12.1f}{count:>11}{total:>10.1f}{longest:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
