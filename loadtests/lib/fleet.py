#!/usr/bin/env python3
"""The fleet's side of loadtests/run.sh --instances N (lib/fleet.sh), next to report.py:

    fleet.py sum SCRAPE [SCRAPE ...]    one Prometheus text scrape whose samples are the sums of the
                                        instances' samples with the same name and labels (what report.py's
                                        table reads for the whole fleet: counters add up, ratios of sums
                                        are the fleet's ratios)
    fleet.py join RUN_DIR JOINER        --join: the joiner's (host:port) first-minute p99 from nginx's upstream.log,
                                        beside the rest of the fleet's and the floor's, as ratios; the fleet's
                                        p99 while the joiner started; its warm-up and hot-set fill
    fleet.py instances RUN_DIR          one row per instance, from RUN_DIR/instances/api-N/{before,after}/
    fleet.py topology S C S [C S]       --topology-compare: the runs side by side, each cluster run against the
                                        standalone runs beside it, then the means per topology and the
                                        verdict (cluster / standalone requests/s >= 0.9, 0 failed, 0 dropped);
                                        exit status 99 when missed
    fleet.py failover RUN_DIR           --fault primary-kill: the load's requests, failed reads and p99 per
                                        window around the kill (RUN_DIR/fault.log) and the verdict (0 failed
                                        reads, p99 over the failover window <= the run's + 100 ms); 99 when missed

Per instance: requests/s and share (http_server_requests_seconds_count without /actuator), cache hit ratios
(tiered_cache_gets_total, as report.py), loads/s (tiered_cache_loads_seconds_count: the misses that went to
the loader) and DB checkouts/s (hikaricp_connections_usage_seconds_count: connections taken from the pool,
one per query outside a transaction). MariaDB counts selects for the whole server only: the fleet's total is
report.py's "DB selects/s", and each instance's estimated share of it is split by its checkouts.
"""
import re
import sys
from pathlib import Path

from report import Run, bare_neighbours, compare, num, pct, prometheus
from stats import percentile

ACTUATOR = re.compile(r"^/actuator")


def sum_scrapes(paths):
    """Prometheus text: every sample summed over the scrapes (counters, gauges and histograms alike)."""
    totals = {}
    for path in paths:
        for name, samples in prometheus(Path(path)).items():
            for labels, value in samples.items():
                key = (name, labels)
                totals[key] = totals.get(key, 0.0) + value
    lines = [f"# Sum over {len(paths)} instance scrape(s) (loadtests/lib/fleet.py)"]
    for (name, labels), value in sorted(totals.items()):
        text = ",".join(f'{k}="{escape(v)}"' for k, v in labels)
        lines.append(f"{name}{{{text}}} {value!r}" if text else f"{name} {value!r}")
    return "\n".join(lines) + "\n"


def escape(label_value):
    """A label value as the text format writes it (the parser unescaped it)."""
    return label_value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Instance(Run):
    """One instance's scrapes around the k6 run; the k6 summary and MariaDB belong to the fleet."""

    def delta(self, metric, keep=lambda tags: True):
        before = prometheus(self.dir / "before" / "prometheus.txt").get(metric, {})
        after = prometheus(self.dir / "after" / "prometheus.txt").get(metric)
        if after is None:
            return None
        return sum(v - before.get(labels, 0.0) for labels, v in after.items() if keep(dict(labels)))

    def per_second(self, value):
        return value / self.seconds if value is not None and self.seconds else None

    def requests(self):
        return self.delta("http_server_requests_seconds_count", lambda t: not ACTUATOR.match(t.get("uri", "")))

    def errors(self):
        return self.delta(
            "http_server_requests_seconds_count",
            lambda t: not ACTUATOR.match(t.get("uri", "")) and t.get("status", "").startswith("5"),
        )

    def loads(self):
        return self.delta("tiered_cache_loads_seconds_count")

    def checkouts(self):
        return self.delta("hikaricp_connections_usage_seconds_count")


def total(values):
    """The sum of the known values; None when none is known (a metric no instance has)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def per_second(value, seconds):
    return value / seconds if value is not None and seconds else None


def instances_table(run_dir):
    run_dir = Path(run_dir)
    fleet = Run(run_dir)
    instances = sorted((run_dir / "instances").glob("api-*"), key=lambda p: int(p.name.split("-")[1]))
    rows = [(p.name, Instance(p)) for p in instances]
    total_requests = sum(i.requests() or 0 for _, i in rows)
    total_checkouts = sum(i.checkouts() or 0 for _, i in rows)
    selects = fleet.db_selects_per_second()
    head = (
        f"  {'per instance':<14}{'requests/s':>11}{'share':>8}{'5xx':>6}{'L1':>8}{'L2':>8}{'overall':>9}"
        f"{'lookups':>10}{'loads/s':>9}{'DB conn/s':>11}{'selects/s':>11}"
    )
    lines = [head]

    def line(label, rps, share, errors, ratios, loads, checkouts, selects_share):
        l1, l2, overall, lookups = ratios
        return (
            f"  {label:<14}{num(rps, 1):>11}{pct(share):>8}{num(errors):>6}{pct(l1):>8}{pct(l2):>8}"
            f"{pct(overall):>9}{num(lookups if lookups else None):>10}{num(loads, 1):>9}{num(checkouts, 1):>11}"
            f"{num(selects_share, 1):>11}"
        )

    for name, i in rows:
        requests, checkouts = i.requests(), i.checkouts()
        share = requests / total_requests if requests is not None and total_requests else None
        estimate = selects * checkouts / total_checkouts if selects is not None and checkouts and total_checkouts else None
        lines.append(
            line(name, i.per_second(requests), share, i.errors(), i.hit_ratios(),
                 i.per_second(i.loads()), i.per_second(checkouts), estimate)
        )
    lines.append(
        line(
            "fleet",
            per_second(total_requests if rows else None, fleet.seconds),
            1.0 if total_requests else None,
            total([i.errors() for _, i in rows]),
            fleet.hit_ratios(),
            per_second(total([i.loads() for _, i in rows]), fleet.seconds),
            per_second(total([i.checkouts() for _, i in rows]), fleet.seconds),
            selects,
        )
    )
    lines.append("")
    lines.append(
        "  requests/s: the instance's own count (http_server_requests), over the k6 run with setup; "
        "selects/s: MariaDB's Com_select, split by DB conn/s"
    )
    meta = fleet.meta
    if meta.get("instances"):
        lines.append(
            f"  {meta['instances']} instance(s) behind nginx {meta.get('nginx', '?')}, "
            f"Redis {meta.get('redis', '?')} {meta.get('redis_nodes', '')}"
        )
    return "\n".join(lines)


def join_table(run_dir, joiner, window=60.0):
    """--join: the joiner's first-minute p99 (nginx request times of requests it served in the WINDOW seconds after
    nginx was reloaded with it) beside the rest of the fleet's in the same seconds and the floor run's p99; the
    fleet's p99 while the joiner started (its JIT warm-up takes CPU from them); its warm-up and hot-set fill."""
    run = Path(run_dir)
    joined = float((run / "join-time.txt").read_text().split()[0])
    start_file = run / "join-start.txt"
    started = float(start_file.read_text().split()[0]) if start_file.exists() else None
    mine, others, starting, last = [], [], [], None
    for line in (run / "upstream.log").read_text().splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[1] == "-":
            continue
        at, upstream, seconds = float(fields[0]), fields[1], float(fields[2])
        last = at if last is None else max(last, at)
        if joined <= at < joined + window:
            (mine if upstream == joiner else others).append(seconds * 1000)
        elif started is not None and started <= at < joined:
            starting.append(seconds * 1000)
    floor = Run(str(run / "floor")).latency()
    floor_p99 = floor[2] if floor else None
    covered = min(window, last - joined) if last is not None and last > joined else 0.0
    lines = [f"First {window:.0f} s after the join (nginx request times, ms):",
             f"{'':<28}{'requests':>10}{'p99':>10}{'/ floor':>10}{'/ fleet':>10}"]
    fleet_p99 = percentile(others, 99)
    rows = [("joiner " + joiner, mine), ("rest of the fleet", others)]
    if started is not None:
        rows.append((f"fleet while it started ({joined - started:.0f} s)", starting))
    for label, values in rows:
        p99 = percentile(values, 99)
        lines.append(f"{label:<28}{len(values):>10}{ms(p99):>10}{ratio_of(p99, floor_p99):>10}"
                     f"{ratio_of(p99, fleet_p99):>10}")
    lines.append(f"{'floor (k6, its own round)':<28}{'':>10}{ms(floor_p99):>10}")
    if covered < window:
        lines.append(f"The load ended {covered:.0f} s after the join: the window holds those seconds only "
                     "(a longer --duration covers the minute).")
    lines.append("Target: joiner p99 <= 1.5 x the floor's.")
    lines.extend(joiner_start(run))
    return "\n".join(lines)


WARMUP_LINE = re.compile(r"Warm-up: (\d+) requests \((\d+) failed\) in (\d+) ms, ([^,]+), ([\d.]+) s of CPU "
                         r"\(([\d.]+) cores\)")
FILL_LINE = re.compile(r"Filled L1 from the hot set: (\d+) of (\d+) keys in (\d+) ms")


def joiner_start(run):
    """Lines on the joiner's start: its JIT warm-up and hot-set fill (its log), the entries filled per cache (its
    scrape at readiness, tiered_cache_hot_set_filled_total)."""
    scrapes = sorted(run.glob("joiner/instances/api-*/before/prometheus.txt"))
    if not scrapes:
        return []
    name = scrapes[0].parent.parent.name
    log = run / f"{name}.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    lines = []
    warmup = WARMUP_LINE.search(text)
    if warmup:
        requests, failed, took, ended, cpu, cores = warmup.groups()
        lines.append(f"Joiner's JIT warm-up: {int(took) / 1000:.1f} s ({ended}), {cpu} s of CPU ({cores} cores), "
                     f"{requests} requests, {failed} failed")
    metrics = prometheus(scrapes[0])
    per_cache = {dict(labels).get("cache", "?"): value
                 for labels, value in metrics.get("tiered_cache_hot_set_filled_total", {}).items()}
    fill_seconds = sum(metrics.get("tiered_cache_hot_set_fill_seconds_sum", {}).values())
    fill = FILL_LINE.search(text)
    filled = ", ".join(f"{cache} {value:.0f}" for cache, value in sorted(per_cache.items())) or "none"
    published = f" of {fill.group(2)} published keys" if fill else ""
    lines.append(f"Joiner's hot-set fill: {sum(per_cache.values()):.0f} entries{published} in "
                 f"{fill_seconds * 1000:.0f} ms ({filled}; tiered_cache_hot_set_filled_total at readiness)")
    return lines


def ms(value):
    return "-" if value is None else f"{value:.1f}"


def ratio_of(value, base):
    return "-" if value is None or not base else f"{value / base:.2f}"
# The targets for the cluster against one standalone Redis, and for a primary's failover under load.
TOPOLOGY_TARGET = 0.9
FAILOVER_P99_MARGIN_MS = 100


def mean(values):
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def topology(runs):
    """--topology-compare: standalone, cluster, standalone, ... runs; (text, whether the targets were met)."""
    lines = [compare(runs, bare_neighbours, "each cluster run against the standalone runs beside it"), ""]
    groups = {"standalone": runs[0::2], "cluster": runs[1::2]}
    lines.append(
        f"  {'per topology (mean)':<22}{'rounds':>7}{'requests/s':>12}{'failed':>8}{'dropped':>9}{'p95 ms':>9}"
        f"{'p99 ms':>9}{'hit ratio':>11}{'selects/s':>11}"
    )
    rps, failed, dropped = {}, {}, {}
    for name, group in groups.items():
        rps[name] = mean([r.rps() for r in group])
        failed[name] = sum(r.errors() or 0 for r in group)
        dropped[name] = sum(r.dropped() or 0 for r in group)
        latencies = [r.latency() for r in group]
        p95 = mean([l[1] for l in latencies if l])
        p99 = mean([l[2] for l in latencies if l])
        hits = mean([r.hit_ratios()[2] for r in group])
        selects = mean([r.db_selects_per_second() for r in group])
        lines.append(
            f"  {name:<22}{len(group):>7}{num(rps[name], 1):>12}{num(failed[name]):>8}{num(dropped[name]):>9}"
            f"{num(p95, 1):>9}{num(p99, 1):>9}{pct(hits):>11}{num(selects, 1):>11}"
        )
    lines.append("")
    if rps["standalone"] and rps["cluster"] is not None:
        ratio_cs = rps["cluster"] / rps["standalone"]
        met = ratio_cs >= TOPOLOGY_TARGET and failed["cluster"] == 0 and dropped["cluster"] == 0
        lines.append(
            f"  cluster / standalone {ratio_cs:.3f}  mean requests/s; cluster failed {num(failed['cluster'])}, "
            f"dropped {num(dropped['cluster'])} (target >= {TOPOLOGY_TARGET}, 0 failed, 0 dropped: "
            f"{'met' if met else 'MISSED'})"
        )
    else:
        met = False
        lines.append("  cluster / standalone n/a (a run has no requests/s)")
    return "\n".join(lines), met


def fault_log(path):
    """[(epoch, event, rest)] from a fault.log of lib/fleet.sh's _fleet_primary_kill."""
    events = []
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split(None, 2)
            if len(parts) >= 2:
                events.append((float(parts[0]), parts[1], parts[2] if len(parts) == 3 else ""))
    return events


def windows(run):
    """{window start (epoch s): (requests, failed, p99 ms)} of the load, from the summary's per-window metrics."""
    metrics = (run.k6 or {}).get("metrics") or {}
    found = {}
    for name, metric in metrics.items():
        match = re.fullmatch(r"http_req_failed\{scenario:load,window:(\d+)\}", name)
        if not match:
            continue
        values = metric["values"]
        requests = values.get("passes", 0) + values.get("fails", 0)
        if requests:
            start = int(match.group(1))
            duration = metrics.get(f"http_req_duration{{scenario:load,window:{start}}}") or {"values": {}}
            found[start] = (requests, values.get("passes", 0), duration["values"].get("p(99)"))
    return dict(sorted(found.items()))


def failover(run_dir):
    """--fault primary-kill on a fleet: (text, whether the failover targets were met)."""
    run = Run(run_dir)
    width = float(run.meta.get("window_seconds") or 5)
    settle = float(run.meta.get("settle_seconds") or 5)
    events = fault_log(run.dir / "fault.log")
    at = {event: (epoch, rest) for epoch, event, rest in events}
    lines = ["failover of a primary under load (--fault primary-kill)"]
    if "killed" not in at or "promoted" not in at:
        happened = ", ".join(event for _, event, _ in events) or "nothing"
        lines.append(f"  no kill and promotion in {run.dir / 'fault.log'} (logged: {happened}): no verdict")
        return "\n".join(lines), False
    kill, node = at["killed"]
    promoted = at["promoted"][0]
    end = promoted + settle
    started = at.get("load-started", (None,))[0]
    restarted = at.get("restarted", (None,))[0]
    lines.append(
        f"  {node} killed{f' {kill - started:.1f} s into the load' if started else ''}; cluster ok (a replica "
        f"promoted) {promoted - kill:.1f} s later"
        + (f"; the node started again {restarted - kill:.1f} s after the kill" if restarted else "")
    )
    lines.append(f"  failover window: the kill to the promotion + {settle:g} s ({end - kill:.1f} s)")
    lines.append("")
    lines.append(f"  {'window (s from kill)':<24}{'requests':>10}{'failed':>8}{'p99 ms':>9}")
    worst, in_window_failed, in_window_requests = None, 0, 0
    for start, (requests, failed, p99) in windows(run).items():
        inside = start < end and start + width > kill
        if inside:
            in_window_failed += failed
            in_window_requests += requests
            if p99 is not None:
                worst = p99 if worst is None else max(worst, p99)
        offset = start - kill
        lines.append(f"  {offset:>+8.1f} .. {offset + width:>+6.1f}{' *' if inside else '  ':<8}{num(requests):>10}"
                     f"{num(failed):>8}{num(p99, 1):>9}")
    failed_metric = run.metric("http_req_failed{scenario:load}")
    failed_reads = failed_metric["values"].get("passes", 0) if failed_metric else run.errors()
    run_p99 = (run.latency() or (None,) * 4)[2]
    lines.append("  (* the windows that overlap the failover window)")
    lines.append("")
    lines.append(f"  failed reads         {num(failed_reads)} in the run, {num(in_window_failed)} of "
                 f"{num(in_window_requests)} in the failover window")
    met = failed_reads == 0 and worst is not None and run_p99 is not None and worst <= run_p99 + FAILOVER_P99_MARGIN_MS
    lines.append(
        f"  p99 ms               run {num(run_p99, 1)}, failover window {num(worst, 1)} (its worst {width:g} s window; "
        f"target 0 failed reads, <= run + {FAILOVER_P99_MARGIN_MS} ms: {'met' if met else 'MISSED'})"
    )
    return "\n".join(lines), met


def main(argv):
    if len(argv) == 4 and argv[1] == "join":
        print(join_table(argv[2], argv[3]))
    elif len(argv) >= 2 and argv[1] == "sum":
        sys.stdout.write(sum_scrapes(argv[2:]))
    elif len(argv) == 3 and argv[1] == "instances":
        print(instances_table(argv[2]))
    elif len(argv) >= 5 and len(argv) % 2 == 1 and argv[1] == "topology":
        text, met = topology([Run(d) for d in argv[2:]])
        print(text)
        return 0 if met else 99
    elif len(argv) == 3 and argv[1] == "failover":
        text, met = failover(argv[2])
        print(text)
        return 0 if met else 99
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
