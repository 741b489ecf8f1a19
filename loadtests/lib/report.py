#!/usr/bin/env python3
"""Result tables for loadtests/run.sh, from files the runner leaves in a run directory:

    meta.txt                      key=value: scenario, profile, concerts, k6_exit, dashboard, ...
    <scenario>-summary.json       k6's end-of-test summary (handleSummary data)
    before/ after/                prometheus.txt (API /actuator/prometheus), mariadb.tsv (SHOW GLOBAL
                                  STATUS), redis.txt (INFO), time.txt (epoch seconds)
    redis-clients.tsv             "epoch connected_clients", sampled every second during the run

    report.py table RUN_DIR
    report.py compare RUN_DIR [RUN_DIR ...]     (the first run is the baseline of the ratios)
    report.py ceiling FLOOR CACHED FLOOR [CACHED FLOOR ...]
                                                (each cached run against the mean of the floor runs beside it,
                                                then the median ratio of the cold and of the warm runs against
                                                the targets: p99 <= 2 x (cold), 1.25 x (warm) the
                                                floors'; vus-1000: warm requests/s >= 0.95 x theirs)
    report.py limits FLOOR_RUN RATIO [SCALE]    "p95 p99 dropped" a run may have: RATIO x the floor run's
                                                (ms rounded up, at least 1), times SCALE (smoke: 10)
    report.py capture OFF ON OFF [ON OFF ...]   (the same for capture on against off, then on / off in total)
"""
import json
import math
import statistics
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ENDPOINTS = ["list", "list-next", "detail", "schedules", "write"]
CACHES = ["concert", "concert-list", "concert-list-end", "schedules"]


class Run:
    """One k6 run against one API profile, with the server-side counters around it."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.meta = read_meta(self.dir / "meta.txt")
        self.scenario = self.meta.get("scenario", "?")
        self.profile = self.meta.get("profile", "?")
        summary = self.dir / f"{self.scenario}-summary.json"
        self.k6 = json.loads(summary.read_text()) if summary.exists() else None
        self.seconds = span(self.dir)

    # --- k6 ---

    def metric(self, name):
        return ((self.k6 or {}).get("metrics") or {}).get(name)

    def value(self, name, stat):
        metric = self.metric(name)
        return metric["values"].get(stat) if metric else None

    def load_seconds(self):
        """The load phase: the whole k6 run minus setup's cursor walk."""
        if not self.k6:
            return None
        setup_ms = (self.k6.get("setup_data") or {}).get("setupMs", 0)
        return (self.k6["state"]["testRunDurationMs"] - setup_ms) / 1000

    def requests(self):
        metrics = (self.k6 or {}).get("metrics") or {}
        counts = [m["values"]["count"] for k, m in metrics.items() if k.startswith("http_reqs{scenario:")]
        return sum(counts) if counts else None

    def scenario_requests(self, scenario):
        """Requests of one k6 scenario (load: the journey's reads; writes: --writes), None when it did not run."""
        return self.value(f"http_reqs{{scenario:{scenario}}}", "count")

    def rps(self):
        requests, seconds = self.requests(), self.load_seconds()
        return requests / seconds if requests is not None and seconds else None

    def errors(self):
        failed = self.metric("http_req_failed")
        return failed["values"]["passes"] if failed else None

    def dropped(self):
        return self.value("dropped_iterations", "count")

    def latency(self, endpoint=None, scenario="load"):
        """(p50, p95, p99, max) in ms for a scenario (the load by default), or for one endpoint tag."""
        name = f"http_req_duration{{endpoint:{endpoint}}}" if endpoint else f"http_req_duration{{scenario:{scenario}}}"
        metric = self.metric(name)
        if not metric or not metric["values"].get("max"):
            return None
        v = metric["values"]
        return v["med"], v["p(95)"], v["p(99)"], v["max"]

    def missed_slos(self):
        metrics = (self.k6 or {}).get("metrics") or {}
        return [
            f"{name} {expr}"
            for name, metric in metrics.items()
            for expr, result in (metric.get("thresholds") or {}).items()
            if not result["ok"]
        ]

    # --- API cache counters ---

    def gets(self, cache=None):
        """{(tier, result): count} of tiered_cache_gets_total during the run, over one or all caches."""
        before = prometheus(self.dir / "before" / "prometheus.txt")
        after = prometheus(self.dir / "after" / "prometheus.txt")
        totals = {}
        for labels, value in after.get("tiered_cache_gets_total", {}).items():
            tags = dict(labels)
            if cache and tags.get("cache") != cache:
                continue
            key = (tags.get("tier"), tags.get("result"))
            delta = value - before.get("tiered_cache_gets_total", {}).get(labels, 0.0)
            totals[key] = totals.get(key, 0.0) + delta
        return totals

    def hit_ratios(self, cache=None):
        """(l1, l2, overall, lookups); None where a tier is absent (no cache, or redis-only has no L1).
        Overall = (L1 hits + L2 hits) / lookups, lookups being the first tier's hits + misses."""
        g = self.gets(cache)
        l1 = (g.get(("l1", "hit"), 0), g.get(("l1", "miss"), 0))
        l2 = (g.get(("l2", "hit"), 0), g.get(("l2", "miss"), 0))
        lookups = sum(l1) or sum(l2)
        return ratio(*l1), ratio(*l2), (l1[0] + l2[0]) / lookups if lookups else None, lookups

    # --- MariaDB and Redis ---

    def db_selects_per_second(self):
        """None when unknown, and when the server restarted during the run (--db-outage): its counters
        started again from zero, so no difference of two readings means anything."""
        delta = status_delta(self.dir, "mariadb.tsv", "Com_select", mariadb_status)
        return delta / self.seconds if delta is not None and delta >= 0 and self.seconds else None

    def redis(self):
        """(connected clients after, peak during, rejected connections during, commands per second);
        each count leaves out the redis-cli connection that asked."""
        after = redis_info(self.dir / "after" / "redis.txt")
        clients = int(after["connected_clients"]) - 1 if "connected_clients" in after else None
        peak = None
        samples = self.dir / "redis-clients.tsv"
        if samples.exists():
            values = [int(line.split()[1]) - 1 for line in samples.read_text().splitlines() if len(line.split()) == 2]
            peak = max(values) if values else None
        rejected = status_delta(self.dir, "redis.txt", "rejected_connections", redis_info)
        commands = status_delta(self.dir, "redis.txt", "total_commands_processed", redis_info)
        per_second = commands / self.seconds if commands is not None and self.seconds else None
        return clients, peak, rejected, per_second


def table(run):
    lines = []
    k6_exit = run.meta.get("k6_exit", "?")
    missed = run.missed_slos()
    verdict = "all SLOs met" if k6_exit == "0" else f"{len(missed)} SLO(s) missed" if k6_exit == "99" else "k6 failed"
    lines.append(
        f"{run.scenario} | profile {run.profile} | {run.meta.get('concerts', '?')} concerts | "
        f"k6 exit {k6_exit}: {verdict}"
        + (f" | load average {run.meta['load_average']}" if run.meta.get("load_average") else "")
    )
    if run.meta.get("slo") and run.meta["slo"] != "fixed":
        lines.append(f"  SLO: {run.meta['slo']}")
    lines.append("")
    rps, requests = run.rps(), run.requests()
    iterations = run.value("iterations", "count")
    seconds = run.load_seconds()
    lines.append(row("requests/s", num(rps, 1), f"{num(requests)} requests in {num(seconds, 1)} s"))
    writes = run.scenario_requests("writes")
    if writes is not None and seconds:
        reads = run.scenario_requests("load") or 0
        lines.append(row("  reads/s", num(reads / seconds, 1), "the journey (scenario load)"))
        lines.append(row("  writes/s", num(writes / seconds, 1), "scenario writes: each write with its read-backs"))
    lines.append(
        row(
            "iterations/s",
            num(iterations / seconds if iterations is not None and seconds else None, 1),
            f"dropped iterations {num(run.dropped() or 0)}",
        )
    )
    errors = run.errors()
    share = f"{errors / requests * 100:.2f}% of requests" if errors is not None and requests else ""
    lines.append(row("errors", num(errors), share))
    lines.append("")
    lines.append(f"  {'latency ms':<16}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}")
    for label, endpoint in [("all", None)] + [(e, e) for e in ENDPOINTS]:
        values = run.latency(endpoint)
        if values:
            lines.append(f"  {label:<16}" + "".join(f"{v:>9.1f}" for v in values))
    values = run.latency(scenario="writes")
    if values:
        lines.append(f"  {'writes scenario':<16}" + "".join(f"{v:>9.1f}" for v in values))
    ryw = run.metric("read_your_write")
    if ryw:
        v = ryw["values"]
        lines.append(row("read-your-write", pct(v.get("rate")), f"of {num(v.get('passes', 0) + v.get('fails', 0))} read-backs"))
    lines.append("")
    l1, l2, overall, lookups = run.hit_ratios()
    if lookups:
        lines.append(f"  {'cache hit ratio':<16}{'L1':>9}{'L2':>9}{'overall':>9}{'lookups':>11}")
        for label, cache in [("all caches", None)] + [(c, c) for c in CACHES]:
            c1, c2, co, n = run.hit_ratios(cache)
            if n:
                lines.append(f"  {label:<16}{pct(c1):>9}{pct(c2):>9}{pct(co):>9}{num(n):>11}")
    else:
        lines.append(row("cache hit ratio", "n/a", "no tiered_cache_gets_total (no cache, or no scrape)"))
    lines.append("")
    lines.append(row("DB selects/s", num(run.db_selects_per_second(), 1), "MariaDB Com_select, over the k6 run"))
    clients, peak, rejected, commands = run.redis()
    lines.append(row("Redis clients", num(clients), f"peak {num(peak)}, rejected connections {num(rejected)}"))
    lines.append(row("Redis commands/s", num(commands, 1), ""))
    lines.append("")
    if run.meta.get("dashboard"):
        lines.append(row("dashboard", run.meta["dashboard"], "(the API's; up with --keep-running)"))
    if (run.dir / "report.html").exists():
        lines.append(row("k6 report", str(run.dir / "report.html"), ""))
    lines.append(row("results", str(run.dir), ""))
    for slo in missed:
        lines.append(f"  missed SLO: {slo}")
    return "\n".join(lines)


# Throughput with change data capture on at least 0.95 x with it off, in the same run.
CAPTURE_TARGET = 0.95


def first_run(values, i):
    """The baseline of --compare: the first run."""
    return values[0] if i > 0 else None


# A smoke run (SCALE > 1) has a hundred-odd requests: its p99 is its second-slowest one, and a single stall of a few
# hundred ms on a shared machine (the selftest's stand-in under other builds) decided it against 20 x a floor of
# 16 ms. Smoke checks that things work, so its latency limits are at least this.
SMOKE_MIN_LIMIT_MS = 1000


def limits(floor, ratio, scale=1.0):
    """--slo floor: the p95 and p99 (ms, rounded up) and dropped iterations a run is held to, RATIO x the floor's
    (in smoke mode, SCALE > 1, at least SMOKE_MIN_LIMIT_MS)."""
    latency = floor.latency()
    if latency is None:
        raise SystemExit(f"report.py: no latency in the floor run {floor.dir}")
    least = SMOKE_MIN_LIMIT_MS if scale > 1 else 1
    p95, p99 = (max(least, math.ceil(v * ratio * scale)) for v in latency[1:3])
    return p95, p99, math.floor((floor.dropped() or 0) * ratio)


def bare_neighbours(values, i):
    """The baseline of a cached run in --ceiling: the mean of the floor runs before and after it."""
    if i % 2 == 0 or i + 1 >= len(values) or values[i - 1] is None or values[i + 1] is None:
        return None
    return (values[i - 1] + values[i + 1]) / 2


def compare(runs, baseline=first_run, against=None):
    base = runs[0]
    width = 22
    head = f"  {'':<20}" + "".join(f"{r.profile:>{width}}" for r in runs)
    against = against or f"ratios against {base.profile}"
    lines = [f"{base.scenario} | {base.meta.get('concerts', '?')} concerts | {against}", "", head]

    def add(label, values, fmt, ratio_to_base=False):
        cells = []
        for i, v in enumerate(values):
            text = fmt(v)
            reference = baseline(values, i) if ratio_to_base else None
            if v is not None and reference:
                text += f" ({v / reference:.2f}x)"
            cells.append(f"{text:>{width}}")
        lines.append(f"  {label:<20}" + "".join(cells))

    add("requests/s", [r.rps() for r in runs], lambda v: num(v, 1), ratio_to_base=True)
    for i, label in enumerate(["p50 ms", "p95 ms", "p99 ms"]):
        values = [(r.latency() or (None,) * 4)[i] for r in runs]
        add(label, values, lambda v: num(v, 1), ratio_to_base=(label == "p99 ms"))
    add("errors", [r.errors() for r in runs], num)
    add("dropped iterations", [r.dropped() or 0 for r in runs], num)
    ratios = [r.hit_ratios() for r in runs]
    add("hit ratio L1", [h[0] for h in ratios], pct)
    add("hit ratio L2", [h[1] for h in ratios], pct)
    add("hit ratio overall", [h[2] for h in ratios], pct)
    add("DB selects/s", [r.db_selects_per_second() for r in runs], lambda v: num(v, 1))
    add("Redis clients peak", [r.redis()[1] for r in runs], num)
    add("Redis rejected conn", [r.redis()[2] for r in runs], num)
    add("SLOs missed", [len(r.missed_slos()) for r in runs], num)
    lines.append("")
    for r in runs:
        lines.append(f"  {r.profile}: {r.dir}")
    return "\n".join(lines)


def capture(runs):
    """--capture-compare: off, on, off, ... runs; each on run against the off runs beside it, then in total."""
    lines = [compare(runs, bare_neighbours, "each capture-on run against the capture-off runs beside it"), ""]
    off = [r.rps() for r in runs[0::2]]
    on = [r.rps() for r in runs[1::2]]
    if None in off or None in on:
        lines.append("  capture on / off     n/a (a run has no requests/s)")
    else:
        ratio_on_off = (sum(on) / len(on)) / (sum(off) / len(off))
        verdict = "met" if ratio_on_off >= CAPTURE_TARGET else "MISSED"
        lines.append(f"  capture on / off     {ratio_on_off:.3f}  mean requests/s, {len(on)} on runs and {len(off)} off "
                     f"runs (target >= {CAPTURE_TARGET}: {verdict})")
    return "\n".join(lines)


# The targets for --ceiling, judged on the median of a kind's rounds (one 30 s round's p99 moves by 2x from
# round to round on this machine, the floor's as much as the cache's): p99 at most this many times the floors'.
CEILING_P99_TARGETS = {"cold": 2.0, "warm": 1.25}
# The 1000-VU closed loop: warm requests/s at least this share of the floors'.
CEILING_THROUGHPUT_TARGET = 0.95


def ceiling(runs):
    """--ceiling: floor, cold, floor, warm, floor[, warm, floor ...]; the table, then each kind's median ratio."""
    lines = [compare(runs, bare_neighbours, "each cached run against the floor runs beside it"), ""]
    throughput = runs[0].scenario == "vus-1000"
    # A smoke run's rounds have a hundred-odd requests each: their ratios say nothing of the targets.
    smoke = any(r.meta.get("smoke") == "true" for r in runs)
    for kind in ("cold", "warm"):
        rounds = [i for i in range(1, len(runs) - 1, 2) if f"-{kind}" in runs[i].profile]
        if not rounds:
            continue
        if throughput:
            values = [r.rps() for r in runs]
            label, target = f"{kind} requests/s", CEILING_THROUGHPUT_TARGET if kind == "warm" else None
        else:
            values = [(r.latency() or (None,) * 4)[2] for r in runs]
            label, target = f"{kind} p99", CEILING_P99_TARGETS[kind]
        ratios = [values[i] / bare_neighbours(values, i) for i in rounds
                  if values[i] is not None and bare_neighbours(values, i)]
        dropped = sum(runs[i].dropped() or 0 for i in rounds)
        failed = sum(runs[i].errors() or 0 for i in rounds)
        if not ratios:
            lines.append(f"  {label:<20}n/a (a round has no figure)")
            continue
        median = statistics.median(ratios)
        if target is None:
            verdict = "no target"
        elif smoke:
            verdict = "smoke run: not judged"
        else:
            met = (median >= target) if throughput else (median <= target and dropped == 0 and failed == 0)
            verdict = f"target {'>=' if throughput else '<='} {target}x{'' if throughput else ', 0 dropped, 0 failed'}: " \
                      f"{'met' if met else 'MISSED'}"
        each = ", ".join(f"{r:.2f}x" for r in ratios)
        lines.append(f"  {label:<20}{median:.2f}x  median of {len(ratios)} ({each}), dropped {num(dropped)}, "
                     f"failed {num(failed)} ({verdict})")
    return "\n".join(lines)


def row(label, value, note):
    return f"  {label:<16}{value:>12}   {note}".rstrip()


def num(value, digits=0):
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def pct(value):
    return "n/a" if value is None else f"{value * 100:.1f}%"


def ratio(hits, misses):
    return hits / (hits + misses) if hits + misses else None


def read_meta(path):
    meta = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                meta[key.strip()] = value.strip()
    return meta


def span(directory):
    try:
        return float((directory / "after" / "time.txt").read_text()) - float(
            (directory / "before" / "time.txt").read_text()
        )
    except (OSError, ValueError):
        return None


def prometheus(path):
    """{sample name: {sorted label pairs: value}} from a file in the Prometheus text format."""
    return parse_prometheus(path.read_text()) if path.exists() else {}


def parse_prometheus(text):
    """{sample name: {sorted label pairs: value}} from the Prometheus text format, by prometheus_client's parser.

    Sample names are as exposed (tiered_cache_gets_total, http_server_requests_seconds_count), NaN samples are
    left out. A scrape cut short (curl's time limit) ends in a broken line: then each line is parsed alone and
    the lines the parser refuses are skipped.
    """
    metrics = {}
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError:
        families = []
        for line in text.splitlines():
            try:
                families.extend(text_string_to_metric_families(line + "\n"))
            except ValueError:
                continue
    for family in families:
        for sample in family.samples:
            if not math.isnan(sample.value):
                metrics.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return metrics


def mariadb_status(path):
    status = {}
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split("\t")
            if len(parts) == 2:
                status[parts[0]] = parts[1]
    return status


def parse_redis_info(text):
    """{field: value} from the text of Redis's INFO; section headers ("# Clients") left out."""
    info = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep and not key.startswith("#"):
            info[key] = value
    return info


def redis_info(path):
    return parse_redis_info(path.read_text()) if path.exists() else {}


def status_delta(directory, filename, key, parse):
    before = parse(directory / "before" / filename)
    after = parse(directory / "after" / filename)
    try:
        return float(after[key]) - float(before[key])
    except (KeyError, ValueError):
        return None


def main(argv):
    if len(argv) == 3 and argv[1] == "table":
        print(table(Run(argv[2])))
    elif len(argv) >= 3 and argv[1] == "compare":
        print(compare([Run(d) for d in argv[2:]]))
    elif len(argv) >= 5 and len(argv) % 2 == 1 and argv[1] == "capture":
        print(capture([Run(d) for d in argv[2:]]))
    elif len(argv) >= 5 and len(argv) % 2 == 1 and argv[1] == "ceiling":
        print(ceiling([Run(d) for d in argv[2:]]))
    elif len(argv) in (4, 5) and argv[1] == "limits":
        print(*limits(Run(argv[2]), float(argv[3]), float(argv[4]) if len(argv) == 5 else 1.0))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
