"""The three services of run.sh --ceiling side by side (ADR 0205): each warm round of the cache against
the nginx round just before it (the crawled responses served from files: the machine's HTTP limit) and the floor
rounds beside it.

    python3 lib/http_limit.py RUN_DIR...    (the rounds in the order they ran: floor-*, nginx-*, *-warm-*, ...)

One row per warm round: requests/s and p99 of nginx, the cache and the floors' mean, the cache's ratios to each;
then the medians against the targets (1000 journeys/s: p99 <= 1.0x the floor's in every round; 1000 VUs:
>= 0.85x nginx's and >= 1.15x the floor's requests/s).
"""

import statistics
import sys

from report import Run, num

P99_TO_FLOOR = 1.0
RPS_TO_NGINX = 0.85
RPS_TO_FLOOR = 1.15


def rounds(runs):
    """(nginx, cache, floors beside) for each warm round: the nginx round before it and the floor rounds around it."""
    found = []
    for i, run in enumerate(runs):
        if "-warm-" not in run.profile:
            continue
        nginx = next((r for r in reversed(runs[:i]) if r.profile.startswith("nginx-")), None)
        before = next((r for r in reversed(runs[:i]) if r.profile.startswith("floor-")), None)
        after = next((r for r in runs[i + 1:] if r.profile.startswith("floor-")), None)
        found.append((nginx, run, [f for f in (before, after) if f is not None]))
    return found


def p99(run):
    return (run.latency() or (None,) * 4)[2] if run else None


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def ratio(a, b):
    return a / b if a is not None and b else None


def report(runs):
    throughput = runs[0].scenario == "vus-1000"
    # A smoke run's rounds have a hundred-odd requests each: their ratios say nothing of the targets.
    smoke = any(r.meta.get("smoke") == "true" for r in runs)
    lines = [f"{runs[0].scenario} | {runs[0].meta.get('concerts', '?')} concerts | each warm cache round against "
             f"nginx serving the crawled responses (the round before it) and the floor (the rounds beside it)", "",
             f"  {'round':<14}{'nginx req/s':>12}{'cache req/s':>12}{'floor req/s':>12}{'/nginx':>8}{'/floor':>8}"
             f"{'nginx p99':>11}{'cache p99':>11}{'floor p99':>11}{'/floor':>8}"]
    to_nginx, to_floor, p99_to_floor, failed = [], [], [], 0
    for nginx, cache, floors in rounds(runs):
        rps = (nginx.rps() if nginx else None, cache.rps(), mean(f.rps() for f in floors))
        lat = (p99(nginx), p99(cache), mean(p99(f) for f in floors))
        r_nginx, r_floor, r_p99 = ratio(rps[1], rps[0]), ratio(rps[1], rps[2]), ratio(lat[1], lat[2])
        to_nginx.append(r_nginx)
        to_floor.append(r_floor)
        p99_to_floor.append(r_p99)
        failed += (cache.errors() or 0) + (cache.dropped() or 0)
        cells = [f"{num(v, 0):>12}" for v in rps] + [f"{fmt(r_nginx):>8}", f"{fmt(r_floor):>8}"]
        cells += [f"{num(v, 1):>11}" for v in lat] + [f"{fmt(r_p99):>8}"]
        lines.append(f"  {cache.profile:<14}" + "".join(cells))
    lines.append("")
    if smoke:
        lines.append("  smoke run: not judged")
    elif throughput:
        lines.append(verdict("requests/s / nginx", to_nginx, lambda m: m >= RPS_TO_NGINX, f">= {RPS_TO_NGINX}x"))
        lines.append(verdict("requests/s / floor", to_floor, lambda m: m >= RPS_TO_FLOOR, f">= {RPS_TO_FLOOR}x"))
    else:
        worst = max((r for r in p99_to_floor if r is not None), default=None)
        met = worst is not None and worst <= P99_TO_FLOOR and failed == 0
        lines.append(f"  p99 / floor         worst round {fmt(worst)}, failed + dropped {failed} (target <= "
                     f"{P99_TO_FLOOR}x in every round, 0 failed, 0 dropped: {'met' if met else 'MISSED'})")
        lines.append(verdict("requests/s / nginx", to_nginx, None, "open model: the rate is fixed"))
    return "\n".join(lines)


def verdict(label, values, test, target):
    values = [v for v in values if v is not None]
    if not values:
        return f"  {label:<20}n/a"
    median = statistics.median(values)
    judged = "" if test is None else f": {'met' if test(median) else 'MISSED'}"
    return f"  {label:<20}{median:.2f}x median of {len(values)} ({target}{judged})"


def fmt(value):
    return "n/a" if value is None else f"{value:.2f}x"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print(report([Run(d) for d in sys.argv[1:]]))
