#!/usr/bin/env python3
"""Freshness checker for loadtests/run.sh --freshness: writers change concert titles
through either API instance (and, with --sql-writer, with plain SQL from a connection of their own),
readers on every instance poll the written concerts, and the result says how long each instance took to
serve each write and lists every read that returned a value older than --stale-after-ms after its write
was acknowledged.

A write sets the title to "fresh-<id>-<version>", versions increasing per concert. Each concert has one
writer, so its versions commit in order. A read records the version it saw (0: a title this checker did
not write). Times are seconds since the run's start on one monotonic clock, for writes and reads alike.

    freshness.py run --instance a=http://127.0.0.1:8080 --instance b=http://127.0.0.1:8082 \\
        --token TOKEN --duration 60 --out DIR [--sql-client "mariadb ..."] [--fault-log FILE]
    freshness.py report DIR      (the table again, from DIR/writes.tsv and DIR/reads.tsv)

Exit status: 0 when every row meets the thresholds, 99 when one misses (as k6's SLOs), 1 on a broken run.
A lag limit given as "none" is reported and not judged: on a shared machine a short run's lag p99 is the
scheduler's, while a stale read or a writer behind its own write is a broken contract on any machine.
"""
import argparse
import bisect
import http.client
import json
import math
import random
import re
import shlex
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import namedtuple
from pathlib import Path

from stats import percentile

TITLE = re.compile(r"^fresh-(\d+)-(\d+)$")
KINDS = ("api-same-instance", "api-other-instance", "sql")
PAGE_SIZE = 20  # the journey's first list page (?size=20), so readers and the background load share its cache key
SLO_MISSED = 99
POSITION = "Concert-Cache-Position"  # the header a write answers with and a causal read carries (ADR 0038)

# writer: an instance name (an admin PUT through it) or "sql"; acked: None when the write failed.
Write = namedtuple("Write", "writer concert version sent acked")
# resource: "detail" (GET /api/concerts/{id}), "list" (the first page, one Read per written concert on it) or "causal"
# (the detail read on another instance right after an API write, carrying the write's commit position, ADR 0038).
Read = namedtuple("Read", "instance resource concert version sent received")
Stale = namedtuple("Stale", "instance kind resource concert seen expected age sent")
# Fault log lines run.sh writes when an instance leaves and rejoins the load balancer's rotation (stopped, killed,
# restarted and ready again): a write acknowledged in between reached an instance that served nobody.
OUT_OF_ROTATION = re.compile(r"^instance (\S+) out of rotation\b")
BACK_IN_ROTATION = re.compile(r"^instance (\S+) back in rotation\b")


# --- arithmetic (unit-tested in test_freshness.py) ----------------------------------------------


def kind_of(writer, instance):
    if writer == "sql":
        return "sql"
    return "api-same-instance" if writer == instance else "api-other-instance"


class Row:
    """One instance, one kind of writer, one resource."""

    def __init__(self):
        self.writes = 0
        self.reads = 0
        self.lags = []  # seconds, one per acknowledged write that a read on this instance saw
        self.olds = []  # seconds: how long after each such write's ack a read still returned an older version
        self.unseen = 0  # acknowledged writes no read on this instance saw (nor a newer version)
        self.down = 0  # acknowledged writes the instance was out of rotation for: neither lags nor unseen
        self.behind = 0  # reads sent after a newer write's ack (any age)
        self.stale = []  # reads sent more than stale_after after a newer write's ack
        self.read_times = []  # seconds from send to answer of each read: how much of a lag is reading

    def summary(self):
        ms = [lag * 1000 for lag in self.lags]
        return {
            "writes": self.writes,
            "reads": self.reads,
            "lag_ms": {f"p{p}": percentile(ms, p) for p in (50, 95, 99)} | {"max": max(ms) if ms else None},
            "old_ms": {"p99": percentile([old * 1000 for old in self.olds], 99),
                       "max": max(self.olds) * 1000 if self.olds else None},
            "read_ms": {"p99": percentile([t * 1000 for t in self.read_times], 99)},
            "unseen": self.unseen,
            "down": self.down,
            "behind": self.behind,
            "stale": len(self.stale),
        }


def out_of_rotation(events):
    """{instance: [(from, until)]} seconds each instance was out of rotation, from fault events (until: inf when it
    never came back)."""
    windows, since = {}, {}
    for at, text in events:
        if match := OUT_OF_ROTATION.match(text):
            since.setdefault(match.group(1), at)
        elif (match := BACK_IN_ROTATION.match(text)) and match.group(1) in since:
            windows.setdefault(match.group(1), []).append((since.pop(match.group(1)), at))
    for instance, at in since.items():
        windows.setdefault(instance, []).append((at, math.inf))
    return windows


def analyze(writes, reads, stale_after, out=None):
    """Rows keyed (instance, kind, resource), from every write and read of a run.

    A read is stale when a write newer than the version it saw was acknowledged more than stale_after
    seconds before the read was sent; its age is how long before the send the first such newer write was
    acknowledged. The lag of a write on an instance is the time from its acknowledgement to the arrival of
    the first read there (by send time) that saw it or a newer version, 0 if that read was answered before
    the acknowledgement: an upper bound, which includes the checker's own delay in reading. Its lower bound
    ("old") is when, after the acknowledgement, the last read before that one was sent, which still saw
    an older version (0 when none was).

    A write acknowledged while an instance was out of rotation (`out`, from out_of_rotation), or before it left
    rotation but not yet seen there when it left, counts as "down" there, not as a lag nor unseen: until it is ready
    again the instance serves no user, and the first answers of a JVM that is starting time its start, not the
    invalidation. Its reads still count: an older version served more than stale_after after the acknowledgement is
    stale, whenever it was read.
    """
    out = out or {}
    writer_of, acked_by_concert = {}, {}
    for w in writes:
        writer_of[w.concert] = w.writer
        if w.acked is not None:
            acked_by_concert.setdefault(w.concert, []).append(w)
    for ws in acked_by_concert.values():
        ws.sort(key=lambda w: w.version)
    reads_by_key = {}
    for r in reads:
        if r.concert in writer_of:
            reads_by_key.setdefault((r.instance, r.resource, r.concert), []).append(r)

    # A row counts the writes of the concerts its reads covered (the list covers the first page only).
    rows = {}
    for (instance, resource, concert), rs in reads_by_key.items():
        rs.sort(key=lambda r: r.sent)
        kind = kind_of(writer_of[concert], instance)
        row = rows.setdefault((instance, kind, resource), Row())
        ws = acked_by_concert.get(concert, [])
        # One writer per concert: acknowledgements come in version order.
        acks = [w.acked for w in ws]
        versions = [w.version for w in ws]
        row.reads += len(rs)
        row.read_times.extend(r.received - r.sent for r in rs)
        for r in rs:
            newest_acked = bisect.bisect_right(acks, r.sent)
            if newest_acked and versions[newest_acked - 1] > r.version:
                row.behind += 1
            old_enough = bisect.bisect_right(acks, r.sent - stale_after)
            if old_enough and versions[old_enough - 1] > r.version:
                first_newer = ws[bisect.bisect_right(versions, r.version)]
                row.stale.append(Stale(instance, kind, resource, concert, r.version,
                                       versions[old_enough - 1], r.sent - first_newer.acked, r.sent))
        # The first read (by send time) that saw version v or newer: the prefix maximum is non-decreasing.
        highest, seen = [], -1
        for r in rs:
            seen = max(seen, r.version)
            highest.append(seen)
        sents = [r.sent for r in rs]
        windows = out.get(instance, ())
        for w in ws:
            row.writes += 1
            if any(start <= w.acked < until for start, until in windows):
                row.down += 1
                continue
            i = bisect.bisect_left(highest, w.version)
            # Left rotation before any read there saw it: what it served after is judged by the stale rule.
            if any(w.acked < start <= (rs[i].sent if i < len(rs) else math.inf) for start, _ in windows):
                row.down += 1
                continue
            if i == len(rs):
                row.unseen += 1
                continue
            row.lags.append(max(0.0, rs[i].received - w.acked))
            after_ack = bisect.bisect_left(sents, w.acked)
            row.olds.append(rs[i - 1].sent - w.acked if i > after_ack else 0.0)
    return rows


def verdict(rows, lag_p99_ms, sql_lag_p99_ms, writes_by_writer, fault="none", fault_events=()):
    """(passed, reasons): no stale read anywhere, the writing instance never behind its own write (the contract's
    "never again" clause), every row's lag p99 within its kind's limit (None: not judged), and a fault that struck
    (an event in its log): a fault that did not would pass a quiet run under its name."""
    reasons = []
    if fault != "none" and not fault_events:
        reasons.append(f"fault {fault}: nothing in the fault log, the fault never struck")
    for (instance, kind, resource), row in sorted(rows.items()):
        limit = sql_lag_p99_ms if kind == "sql" else lag_p99_ms
        p99 = percentile([lag * 1000 for lag in row.lags], 99)
        where = f"{instance} {kind} {resource}"
        if row.stale:
            reasons.append(f"{where}: {len(row.stale)} stale reads")
        if kind == "api-same-instance" and row.behind:
            reasons.append(f"{where}: {row.behind} reads older than the instance's own acknowledged write")
        if resource == "causal" and row.behind:
            reasons.append(f"{where}: {row.behind} reads carrying a write's position older than that write")
        # A causal read's "lag" is its own wait for the reader's confirmation: judged by behind, not by a lag limit.
        if p99 is not None and limit is not None and p99 > limit and resource != "causal":
            reasons.append(f"{where}: lag p99 {p99:.1f} ms > {limit} ms")
    for writer, (acked, failed) in sorted(writes_by_writer.items()):
        if acked == 0:
            reasons.append(f"writer {writer}: no write acknowledged ({failed} failed): nothing measured")
    return not reasons, reasons


# --- the table ----------------------------------------------------------------------------------


def fmt_limit(limit_ms):
    return "not judged" if limit_ms is None else f"{limit_ms} ms"


def lag_limit(text):
    """A lag limit in ms, or None for "none": reported, not judged."""
    return None if text == "none" else float(text)


def render(rows, params, writes, stale_after, limits, fault_events=(), max_listed=30):
    lag_p99_ms, sql_lag_p99_ms = limits
    writes_by_writer = {}
    for w in writes:
        acked, failed = writes_by_writer.get(w.writer, (0, 0))
        writes_by_writer[w.writer] = (acked + (w.acked is not None), failed + (w.acked is None))
    passed, reasons = verdict(rows, lag_p99_ms, sql_lag_p99_ms, writes_by_writer, params["fault"], fault_events)
    out = [
        f"freshness | instances {params['instances']} | {params['duration']:.0f} s | fault {params['fault']}",
        f"  writes {params['write_rate']}/s per writer ({', '.join(sorted(writes_by_writer))}), "
        f"sampling reads {params['read_rate']}/s per instance, probes from {params.get('probe_interval_ms', '?')} ms "
        f"until seen, concerts 1..{params['concerts_written']}; after each API write, a causal read on another "
        "instance carrying its position",
        f"  stale: a read sent more than {stale_after * 1000:.0f} ms after a newer write was acknowledged; "
        f"limits: lag p99 {fmt_limit(lag_p99_ms)} (api), {fmt_limit(sql_lag_p99_ms)} (sql)",
        "",
        f"  {'instance':<9}{'writer':<20}{'resource':<9}{'writes':>7}{'reads':>8}"
        f"{'lag p50':>9}{'p95':>8}{'p99':>8}{'max':>8}{'old p99':>9}{'read p99':>10}{'unseen':>8}{'down':>6}{'behind':>8}{'stale':>7}",
    ]
    for (instance, kind, resource), row in sorted(rows.items(), key=lambda kv: (kv[0][0], KINDS.index(kv[0][1]), kv[0][2])):
        s = row.summary()
        lag = s["lag_ms"]
        out.append(
            f"  {instance:<9}{kind:<20}{resource:<9}{s['writes']:>7}{s['reads']:>8}"
            + "".join(f"{fmt_ms(lag[k]):>{w}}" for k, w in (("p50", 9), ("p95", 8), ("p99", 8), ("max", 8)))
            + f"{fmt_ms(s['old_ms']['p99']):>9}{fmt_ms(s['read_ms']['p99']):>10}"
            + f"{s['unseen']:>8}{s['down']:>6}{s['behind']:>8}{s['stale']:>7}")
    out.append("")
    out.append("  writes acknowledged / failed: " + ", ".join(
        f"{writer} {acked}/{failed}" for writer, (acked, failed) in sorted(writes_by_writer.items())))
    errors = params.get("read_errors") or {}
    if errors:
        out.append("  reads that failed (not 200): " + ", ".join(f"{i} {n}" for i, n in sorted(errors.items())))
    for at, event in fault_events:
        out.append(f"  fault at {at:7.2f} s: {event}")
    stale = sorted((s for row in rows.values() for s in row.stale), key=lambda s: s.sent)
    for kind in KINDS:
        of_kind = [s for s in stale if s.kind == kind]
        if not of_kind:
            continue
        out.append("")
        out.append(f"  stale reads, {kind}: {len(of_kind)}, the oldest {max(s.age for s in of_kind) * 1000:.0f} ms "
                   "after its write" + (f" (first {max_listed} listed; all in freshness.json)"
                                        if len(of_kind) > max_listed else ""))
        out.append(f"  {'at s':>8}  {'instance':<9}{'resource':<9}{'concert':>8}{'seen':>6}{'expected':>9}{'age ms':>8}")
        for s in of_kind[:max_listed]:
            out.append(f"  {s.sent:8.3f}  {s.instance:<9}{s.resource:<9}{s.concert:>8}{s.seen:>6}"
                       f"{s.expected:>9}{s.age * 1000:>8.0f}")
    out.append("")
    out.append("  PASS: no stale read, no writer behind its own write, no causal read behind its client's write"
               + (", every lag p99 within its limit" if (lag_p99_ms, sql_lag_p99_ms) != (None, None) else "") if passed else
               "  FAIL: " + "; ".join(reasons))
    return "\n".join(out), passed, reasons, stale, writes_by_writer


def fmt_ms(value):
    return "-" if value is None else f"{value:.1f}"


# --- the run ------------------------------------------------------------------------------------


class Client:
    """One keep-alive HTTP/1.1 connection; reconnects after any error."""

    def __init__(self, base_url, timeout=5.0):
        url = urllib.parse.urlsplit(base_url)
        self.host, self.port, self.timeout = url.hostname, url.port or 80, timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        """(status, body bytes), or (None, None) when the request failed."""
        status, body, _ = self.exchange(method, path, body, headers)
        return status, body

    def exchange(self, method, path, body=None, headers=None):
        """(status, body bytes, response headers), or (None, None, None) when the request failed."""
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request(method, path, body=body, headers=headers or {})
            response = self.conn.getresponse()
            return response.status, response.read(), response.headers
        except (OSError, http.client.HTTPException):
            self.close()
            return None, None, None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def version_of(title, concert):
    match = TITLE.match(title or "")
    return int(match.group(2)) if match and int(match.group(1)) == concert else 0


class Probes:
    """Acknowledged writes each instance has not served yet. A probe thread per instance reads each back
    at once, then again every --probe-interval-ms or a tenth of the time since its acknowledgement,
    whichever is longer, until it sees it or --stale-after-ms has passed: lags are measured to about 10%,
    and a write an instance never serves costs a few dozen reads, not a hundred a second."""

    def __init__(self, instances, listed, window, interval):
        self.cond = threading.Condition()
        # instance -> {(resource, concert): [version, acked, next probe due]}
        self.items = {i: {} for i in instances}
        self.listed, self.window, self.interval = listed, window, interval

    def add(self, concert, version, acked):
        with self.cond:
            for items in self.items.values():
                items[("detail", concert)] = [version, acked, acked]
                if concert in self.listed:
                    items[("list", concert)] = [version, acked, acked]
            self.cond.notify_all()

    def seen(self, instance, resource, concert, version):
        key = (resource, concert)
        with self.cond:
            items = self.items[instance]
            if key in items and items[key][0] <= version:
                del items[key]

    def next(self, instance, now):
        """The (resource, concert) to read now on instance, or None after waiting until one may be due."""
        with self.cond:
            items = self.items[instance]
            for key in [k for k, (_, acked, _) in items.items() if acked + self.window < now]:
                del items[key]
            if not items:
                self.cond.wait(0.1)
                return None
            key, item = min(items.items(), key=lambda kv: kv[1][2])
            if item[2] > now:
                self.cond.wait(item[2] - now)
                return None
            item[2] = now + max(self.interval, (now - item[1]) / 10)
            if key[0] == "list":
                # One page read serves every listed concert: none of them is due again before the next.
                for k, other in items.items():
                    if k[0] == "list":
                        other[2] = max(other[2], item[2])
            return key


class Run:
    def __init__(self, args):
        self.args = args
        self.instances = dict(spec.split("=", 1) for spec in args.instance)
        self.concerts = list(range(1, args.concerts_written + 1))
        self.listed = {c for c in self.concerts if c <= PAGE_SIZE}
        writers = list(self.instances) + (["sql"] if args.sql_client else [])
        self.writer_of = {c: writers[(c - 1) % len(writers)] for c in self.concerts}
        self.probes = Probes(self.instances, self.listed, args.stale_after_ms / 1000, args.probe_interval_ms / 1000)
        self.writes, self.reads = [], []
        self.read_errors = {i: 0 for i in self.instances}
        self.lock = threading.Lock()
        self.fields = {}
        self.start = None

    def now(self):
        return time.monotonic() - self.start

    def fetch_fields(self):
        """Each written concert's other fields, for the PUT bodies (through each writer's instance)."""
        for concert in self.concerts:
            base = self.instances.get(self.writer_of[concert], next(iter(self.instances.values())))
            status, body = Client(base).request("GET", f"/api/concerts/{concert}")
            if status != 200:
                raise SystemExit(f"freshness: GET /api/concerts/{concert} on {base} returned {status}")
            self.fields[concert] = json.loads(body)

    def execute(self):
        self.fetch_fields()
        self.start = time.monotonic()
        self.start_epoch = time.time()
        # run.sh times its faults from here.
        (self.args.out / "started").write_text(f"{self.start_epoch}\n")
        end = self.args.duration
        writes_end = max(1.0, end - self.args.stale_after_ms / 1000 - 1)
        threads = []
        per_thread = self.args.read_rate / self.args.reader_threads
        for instance, base in self.instances.items():
            for n in range(self.args.reader_threads):
                threads.append(threading.Thread(target=self.reader, args=(instance, base, per_thread, end, n)))
            # Several probes per instance: one would queue read-backs behind each other's answers.
            for _ in range(self.args.probe_threads):
                threads.append(threading.Thread(target=self.prober, args=(instance, base, end)))
        for writer in sorted(set(self.writer_of.values())):
            threads.append(threading.Thread(target=self.writer, args=(writer, writes_end)))
        for t in threads:
            t.daemon = True
            t.start()
        for t in threads:
            t.join()

    def paced(self, rate, until):
        """Yields at `rate` per second until `until`; catches up without bursting more than a second's worth."""
        interval, due = 1.0 / rate, self.now()
        while True:
            now = self.now()
            if now >= until:
                return
            if due > now:
                time.sleep(due - now)
            due = max(due + interval, self.now() - 1.0)
            yield

    def reader(self, instance, base, rate, until, n):
        """Samples every written concert (and the first list page) at `rate`: the reads that find staleness."""
        rng = random.Random(f"{instance}-{n}")
        client, reads = Client(base), []
        for _ in self.paced(rate, until):
            if rng.random() < self.args.list_share:
                self.read(instance, client, "list", 0, reads)
            else:
                self.read(instance, client, "detail", rng.choice(self.concerts), reads)
        client.close()
        with self.lock:
            self.reads.extend(reads)

    def prober(self, instance, base, until):
        client, reads = Client(base), []
        while self.now() < until:
            choice = self.probes.next(instance, self.now())
            if choice is not None:
                self.read(instance, client, *choice, reads)
        client.close()
        with self.lock:
            self.reads.extend(reads)

    def read(self, instance, client, resource, concert, reads, headers=None):
        path = f"/api/concerts?size={PAGE_SIZE}" if resource == "list" else f"/api/concerts/{concert}"
        sent = self.now()
        status, body = client.request("GET", path, headers=headers)
        received = self.now()
        try:
            if status != 200:
                raise ValueError(status)
            doc = json.loads(body)
            found = ([(item["id"], item["title"]) for item in doc["items"] if item["id"] in self.listed]
                     if resource == "list" else [(doc["id"], doc["title"])])
        except (ValueError, KeyError, TypeError):
            with self.lock:
                self.read_errors[instance] += 1
            return
        for concert_id, title in found:
            version = version_of(title, concert_id)
            reads.append(Read(instance, resource, concert_id, version, sent, received))
            self.probes.seen(instance, resource, concert_id, version)

    def writer(self, writer, until):
        concerts = [c for c in self.concerts if self.writer_of[c] == writer]
        versions = dict.fromkeys(concerts, 0)
        write = self.sql_writer() if writer == "sql" else self.api_writer(self.instances[writer])
        # The writer's client reads its write back through the other instances in turn, carrying its position.
        others = [(name, Client(base)) for name, base in self.instances.items() if name != writer]
        writes, reads = [], []
        for n, _ in enumerate(self.paced(self.args.write_rate, until)):
            concert = concerts[n % len(concerts)]
            versions[concert] += 1
            version = versions[concert]
            sent = self.now()
            ok = write(concert, version)
            acked = self.now() if ok else None
            writes.append(Write(writer, concert, version, sent, acked))
            if ok:
                self.probes.add(concert, version, acked)
                if isinstance(ok, str) and others:
                    name, client = others[n % len(others)]
                    self.read(name, client, "causal", concert, reads, {POSITION: ok})
        write(None, None)
        for _, client in others:
            client.close()
        with self.lock:
            self.writes.extend(writes)
            self.reads.extend(reads)

    def api_writer(self, base):
        client = Client(base, timeout=10.0)
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.args.token}"}

        def write(concert, version):
            if concert is None:
                client.close()
                return None
            f = self.fields[concert]
            body = {"title": f"fresh-{concert}-{version}", "artist": f["artist"], "venue": f["venue"],
                    "description": f.get("description") or "", "startDate": f["startDate"], "endDate": f["endDate"]}
            status, _, response = client.exchange("PUT", f"/api/concerts/{concert}", json.dumps(body), headers)
            # The commit position (ADR 0038), for the causal read; True where the service gives none.
            return (response.get(POSITION) or True) if status == 200 else False

        return write

    def sql_writer(self):
        """Plain SQL through the mariadb client on a connection of its own (autocommit): the write is
        acknowledged when the SELECT after the UPDATE answers, so after the UPDATE committed. Before each update it
        inserts into a table of its own, as the ticketing application writes its orders to the same database: the
        capture must skip those rows and go on (its DDL names no captured table, so it flushes nothing)."""
        command = shlex.split(self.args.sql_client) + ["-N", "-B", "--unbuffered"]
        state = {"proc": None}

        def write(concert, version):
            proc = state["proc"]
            if concert is None:
                if proc is not None:
                    proc.stdin.close()
                    proc.wait(timeout=10)
                return None
            started = proc is None or proc.poll() is not None
            if started:
                proc = state["proc"] = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                        text=True, bufsize=1)
            try:
                if started:
                    proc.stdin.write("CREATE TABLE IF NOT EXISTS freshness_order (id BIGINT AUTO_INCREMENT "
                                     "PRIMARY KEY, item BIGINT NOT NULL, version INT NOT NULL);\n")
                proc.stdin.write(f"INSERT INTO freshness_order (item, version) VALUES ({concert}, {version}); "
                                 f"UPDATE concert SET title = 'fresh-{concert}-{version}', "
                                 f"updated_at = UTC_TIMESTAMP(3) WHERE id = {concert}; SELECT {version};\n")
                proc.stdin.flush()
                return proc.stdout.readline().strip() == str(version)
            except OSError:
                proc.kill()
                state["proc"] = None
                return False

        return write


def fault_events(path, start_epoch):
    """[(seconds since the run's start, text)] from lines "<epoch> <text>" that run.sh writes."""
    events = []
    for line in Path(path).read_text().splitlines() if path and Path(path).exists() else []:
        epoch, _, text = line.partition(" ")
        try:
            events.append((float(epoch) - start_epoch, text))
        except ValueError:
            continue
    return events


def save(out, writes, reads):
    with open(out / "writes.tsv", "w") as f:
        f.write("writer\tconcert\tversion\tsent\tacked\n")
        for w in writes:
            f.write(f"{w.writer}\t{w.concert}\t{w.version}\t{w.sent:.6f}\t{'' if w.acked is None else f'{w.acked:.6f}'}\n")
    with open(out / "reads.tsv", "w") as f:
        f.write("instance\tresource\tconcert\tversion\tsent\treceived\n")
        for r in reads:
            f.write(f"{r.instance}\t{r.resource}\t{r.concert}\t{r.version}\t{r.sent:.6f}\t{r.received:.6f}\n")


def load(out):
    def rows(name):
        lines = (out / name).read_text().splitlines()[1:]
        return [line.split("\t") for line in lines]

    writes = [Write(w, int(c), int(v), float(s), float(a) if a else None) for w, c, v, s, a in rows("writes.tsv")]
    reads = [Read(i, res, int(c), int(v), float(s), float(r)) for i, res, c, v, s, r in rows("reads.tsv")]
    return writes, reads


def report(out, writes, reads, params):
    stale_after = params["stale_after_ms"] / 1000
    limits = (params["lag_p99_ms"], params["sql_lag_p99_ms"])
    events = fault_events(params.get("fault_log"), params["start_epoch"])
    rows = analyze(writes, reads, stale_after, out_of_rotation(events))
    text, passed, reasons, stale, writes_by_writer = render(rows, params, writes, stale_after, limits, events)
    result = {
        "params": params,
        "rows": [{"instance": i, "writer": k, "resource": r} | row.summary()
                 for (i, k, r), row in sorted(rows.items())],
        "writes_by_writer": {w: {"acked": a, "failed": f} for w, (a, f) in writes_by_writer.items()},
        "faults": [{"at": at, "event": e} for at, e in events],
        "stale_reads": [s._asdict() for s in stale],
        "passed": passed,
        "reasons": reasons,
    }
    (out / "freshness.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "freshness.txt").write_text(text + "\n")
    print(text)
    return 0 if passed else SLO_MISSED


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--instance", action="append", required=True, help="NAME=BASE_URL, once per instance")
    run.add_argument("--token", required=True, help="the API's admin token")
    run.add_argument("--out", required=True, type=Path)
    run.add_argument("--duration", type=float, default=60, help="seconds of reads; writes stop a grace earlier")
    run.add_argument("--write-rate", type=float, default=2, help="writes per second per writer")
    run.add_argument("--read-rate", type=float, default=100, help="sampling reads per second per instance")
    run.add_argument("--reader-threads", type=int, default=2, help="sampling readers per instance")
    run.add_argument("--probe-threads", type=int, default=4, help="probes reading back writes, per instance")
    run.add_argument("--probe-interval-ms", type=float, default=10,
                     help="at most how often an instance's probe reads back a write it has not served yet")
    run.add_argument("--list-share", type=float, default=0.25, help="share of sampling reads that read the list")
    run.add_argument("--concerts-written", type=int, default=18, help="ids 1..N, split between the writers")
    run.add_argument("--sql-client", help="command line of a mariadb client on the API's database (--sql-writer)")
    run.add_argument("--stale-after-ms", type=float, default=1000)
    run.add_argument("--lag-p99-ms", type=lag_limit, default=100, help="ms, or none: reported, not judged")
    run.add_argument("--sql-lag-p99-ms", type=lag_limit, default=250, help="ms, or none: reported, not judged")
    run.add_argument("--fault", default="none")
    run.add_argument("--fault-log", help="lines '<epoch> <event>' written during the run")
    rep = sub.add_parser("report")
    rep.add_argument("out", type=Path)
    args = parser.parse_args(argv)

    if args.command == "report":
        params = json.loads((args.out / "freshness.json").read_text())["params"]
        writes, reads = load(args.out)
        return report(args.out, writes, reads, params)

    args.out.mkdir(parents=True, exist_ok=True)
    r = Run(args)
    r.execute()
    save(args.out, r.writes, r.reads)
    params = {
        "instances": ", ".join(f"{n} {u}" for n, u in r.instances.items()),
        "duration": args.duration,
        "write_rate": args.write_rate,
        "read_rate": args.read_rate,
        "probe_interval_ms": args.probe_interval_ms,
        "concerts_written": args.concerts_written,
        "writers": {str(c): w for c, w in r.writer_of.items()},
        "stale_after_ms": args.stale_after_ms,
        "lag_p99_ms": args.lag_p99_ms,
        "sql_lag_p99_ms": args.sql_lag_p99_ms,
        "fault": args.fault,
        "fault_log": str(args.fault_log) if args.fault_log else None,
        "start_epoch": r.start_epoch,
        "read_errors": r.read_errors,
    }
    return report(args.out, r.writes, r.reads, params)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
