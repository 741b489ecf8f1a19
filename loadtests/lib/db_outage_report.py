#!/usr/bin/env python3
"""What a run with --db-outage did around the outage, from the files the runner leaves (ADR 0030):

    db-outage.log       "killed <epoch> pid N", "restarted <epoch> pid M"
    db-outage.samples   "# <epoch>" then the API's matching Prometheus lines, once a second
    before/ after/      the runner's scrapes around k6

    db_outage_report.py RUN_DIR
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import Run, parse_prometheus, prometheus  # noqa: E402

ENDPOINTS = {
    "/api/concerts": "list",
    "/api/concerts/{id}": "detail",
    "/api/concerts/{concertId}/schedules": "schedules",
}


def delta(before, after, name, match=lambda tags: True, key=lambda tags: None):
    totals = {}
    for labels, value in after.get(name, {}).items():
        tags = dict(labels)
        if not match(tags):
            continue
        k = key(tags)
        totals[k] = totals.get(k, 0.0) + value - before.get(name, {}).get(labels, 0.0)
    return totals


def samples(path):
    """[(epoch, {name: {labels: value}})] from the sampler's file."""
    out, current, lines = [], None, []
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("# "):
            if current is not None:
                out.append((current, parse_prometheus("\n".join(lines) + "\n")))
            current, lines = float(line[2:]), []
        else:
            lines.append(line)
    if current is not None:
        out.append((current, parse_prometheus("\n".join(lines) + "\n")))
    return out


def total(scrape, name, match=lambda tags: True):
    return sum(v for labels, v in scrape.get(name, {}).items() if match(dict(labels)))


def verdict(by_status, stale, series, killed, back):
    """What the outage path must do at any load, as failure reasons (none: passed): a database that cannot be
    reached is a stale value or a 503, never another 5xx (ADR 0031); what the tiers held was served while it was
    down; once it listens again, reads load from it again."""
    reasons = []
    errors = {s: n for (_, s), n in by_status.items() if s.startswith("5") and s != "503" and n}
    if errors:
        reasons.append("reads answered " + ", ".join(f"{n:.0f} x {s}" for s, n in sorted(errors.items()))
                       + " (a database outage is a stale value or a 503)")
    if killed and not sum(stale.values()):
        reasons.append("no stale value served while the database was down")
    if back:
        def loaded(scrape):
            return total(scrape, "tiered_cache_loads_seconds_count", lambda t: t.get("result") == "success")
        after_back = [scrape for epoch, scrape in series if epoch >= back]
        if len(after_back) < 2 or loaded(after_back[-1]) <= loaded(after_back[0]):
            reasons.append("no read loaded from the database after it listened again")
    elif killed:
        reasons.append("the database was not started again")
    return reasons


def main(directory):
    run = Run(directory)
    d = Path(directory)
    before = prometheus(d / "before" / "prometheus.txt")
    after = prometheus(d / "after" / "prometheus.txt")
    start = float((d / "before" / "time.txt").read_text().strip())
    events = {}
    log = d / "db-outage.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        parts = line.split()
        events[parts[0]] = float(parts[1])
    lines = []
    killed, back = events.get("killed"), events.get("restarted")
    if killed:
        lines.append(
            f"database killed at +{killed - start:.1f} s of the k6 run (setup included), "
            + (f"listening again at +{back - start:.1f} s: down {back - killed:.1f} s" if back else "not restarted")
        )
    requests = run.requests()
    failed = run.value("http_req_failed", "passes")
    lines.append(
        f"k6: {requests} requests, {run.rps():.1f}/s, failed {failed} ({100 * failed / requests:.2f}%), "
        f"dropped iterations {run.dropped() or 0:.0f}"
        if requests
        else "k6: no summary"
    )
    lat = run.latency()
    if lat:
        lines.append("k6 latency ms: p50 %.1f  p95 %.1f  p99 %.1f  max %.1f" % lat)
    by_status = delta(
        before,
        after,
        "http_server_requests_seconds_count",
        match=lambda t: t.get("uri") in ENDPOINTS,
        key=lambda t: (ENDPOINTS[t["uri"]], t.get("status")),
    )
    statuses = sorted({s for _, s in by_status})
    lines.append("")
    lines.append("API answers during the run (http_server_requests)")
    lines.append("  " + "endpoint".ljust(12) + "".join(s.rjust(9) for s in statuses))
    for endpoint in ["list", "detail", "schedules"]:
        lines.append(
            "  " + endpoint.ljust(12) + "".join(f"{by_status.get((endpoint, s), 0):9.0f}" for s in statuses)
        )
    rejected = delta(before, after, "tiered_cache_loads_rejected_total", key=lambda t: (t["cache"], t["reason"]))
    failures = delta(
        before,
        after,
        "tiered_cache_loads_seconds_count",
        match=lambda t: t.get("result") == "failure",
        key=lambda t: t["cache"],
    )
    stale = delta(before, after, "tiered_cache_stale_served_total", key=lambda t: t["cache"])
    lines.append("")
    lines.append("  cache          load failures  rejected: circuit-open  bulkhead-full  unreachable   stale served")
    for cache in ["concert", "concert-list", "concert-list-end", "schedules"]:
        lines.append(
            f"  {cache:<14}{failures.get(cache, 0):14.0f}{rejected.get((cache, 'circuit-open'), 0):24.0f}"
            f"{rejected.get((cache, 'bulkhead-full'), 0):15.0f}{rejected.get((cache, 'unreachable'), 0):13.0f}"
            f"{stale.get(cache, 0):15.0f}"
        )
    series = samples(d / "db-outage.samples")
    if series:
        lines.append("")
        lines.append("per second (API side)   2xx/s  503/s  loads/s  failed/s  rejected/s  stale/s  breaker   "
                     "pool act/pend  busy threads")
        previous = None
        for epoch, scrape in series:
            if previous is not None:
                p = previous[1]
                dt = epoch - previous[0] or 1

                def rate(name, match=lambda t: True):
                    return (total(scrape, name, match) - total(p, name, match)) / dt

                ok = rate("http_server_requests_seconds_count", lambda t: t.get("status", "").startswith("2"))
                unavailable = rate("http_server_requests_seconds_count", lambda t: t.get("status") == "503")
                loads = rate("tiered_cache_loads_seconds_count")
                failed_loads = rate("tiered_cache_loads_seconds_count", lambda t: t.get("result") == "failure")
                rej = rate("tiered_cache_loads_rejected_total")
                st = rate("tiered_cache_stale_served_total")
                state = next(
                    (dict(labels)["state"] for labels, v in scrape.get("resilience4j_circuitbreaker_state", {}).items()
                     if v == 1 and dict(labels).get("name", "").startswith("tiered-cache-loader")),
                    "?",
                )
                active = total(scrape, "hikaricp_connections_active")
                pending = total(scrape, "hikaricp_connections_pending")
                busy = total(scrape, "jetty_threads_busy")
                mark = ""
                if killed and previous[0] < killed <= epoch:
                    mark = "  <- killed"
                if back and previous[0] < back <= epoch:
                    mark = "  <- back"
                lines.append(
                    f"  +{epoch - start:5.1f} s {ok:15.0f}{unavailable:7.0f}{loads:9.0f}{failed_loads:10.0f}"
                    f"{rej:12.0f}{st:9.0f}  {state:<9}{active:6.0f}/{pending:<6.0f}{busy:12.0f}{mark}"
                )
            previous = (epoch, scrape)
    reasons = verdict(by_status, stale, series, killed, back)
    lines.append("")
    lines.append("outage path: " + ("OK: no 5xx but 503, stale values served, loads again once the database was back"
                                    if not reasons else "FAIL: " + "; ".join(reasons)))
    print("\n".join(lines))
    return 0 if not reasons else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
