#!/usr/bin/env python3
"""Check the Grafana dashboards in ops/grafana/dashboards (python3 standard library only).

Always: every panel has a unique integer id and a title, every query target has a refId and an expr; panels,
targets and query variables name the data source through the dashboard's variable $datasource (type datasource,
Prometheus), never a fixed uid, so the dashboards import into any Grafana; every selector of a metric the API or
redis_exporter publishes filters on job, namespace and instance through the dashboard's variables. Then one of:

  --list                 print every expression, one per line: <dashboard>/<panel id>/<refId><TAB><expr>
  --rules FILE           write every expression as a Prometheus recording rule, for `promtool check rules FILE`
  --promtool             the same into a temporary file, and run promtool on it (syntax check, no server)
  --prometheus URL       evaluate every expression with /api/v1/query and fail listing those that return
                         no data (and the template variables whose label_values() query finds no value)

Grafana variables are substituted first: $__rate_interval and $__interval with --rate-interval (1m),
$__range with --range (5m), and template variables ($cache) with their "All" value (.*).

  ops/grafana/check-dashboards.py --promtool
  ops/grafana/check-dashboards.py --prometheus http://127.0.0.1:9090 --range 10m \\
      --allow-empty 'errors|Stale|5xx|4xx|dropped'

Exit status: 0 when everything passed, 1 when a check failed, 2 on usage errors.
"""
import argparse
import json
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

DATASOURCE_UID = "${datasource}"
# Metrics scraped from the API's management port and from redis_exporter: the selectors that must filter on the
# dashboard's job, namespace and instance variables (k6's series, pushed by remote write, carry testid instead).
SCRAPED_METRIC = re.compile(r"\b((?:tiered_cache|cache|concert_cache|resilience4j|http_server|jvm|hikaricp|lettuce|"
                            r"jetty|process|system|executor|redis)_[A-Za-z0-9_]*)(\{[^}]*\})?")
FILTERS = ("job", "namespace", "instance")
DEFAULT_DIR = pathlib.Path(__file__).resolve().parent / "dashboards"


class Query:
    def __init__(self, dashboard, panel_id, title, ref_id, expr):
        self.dashboard = dashboard
        self.panel_id = panel_id
        self.title = title
        self.ref_id = ref_id
        self.expr = expr

    @property
    def name(self):
        return f"{self.dashboard}/{self.panel_id}/{self.ref_id}"


def panels_of(container):
    """Panels at any depth (rows may nest panels when collapsed)."""
    for panel in container.get("panels", []):
        yield panel
        yield from panels_of(panel)


def load(paths, problems):
    queries, variables = [], []
    for path in paths:
        board = json.loads(path.read_text(encoding="utf-8"))
        name = path.stem
        seen = set()
        for panel in panels_of(board):
            pid, title = panel.get("id"), panel.get("title")
            where = f"{name}: panel {pid!r} ({title!r})"
            if not isinstance(pid, int):
                problems.append(f"{where}: id must be an integer")
            elif pid in seen:
                problems.append(f"{where}: duplicate id")
            seen.add(pid)
            if not title:
                problems.append(f"{where}: no title")
            if panel.get("type") == "row":
                continue
            targets = panel.get("targets") or []
            if not targets:
                problems.append(f"{where}: no targets")
            if (panel.get("datasource") or {}).get("uid") != DATASOURCE_UID:
                problems.append(f"{where}: panel datasource uid is not {DATASOURCE_UID!r}")
            refs = set()
            for target in targets:
                ref, expr = target.get("refId"), target.get("expr")
                if not ref or ref in refs:
                    problems.append(f"{where}: missing or duplicate refId {ref!r}")
                refs.add(ref)
                if not expr or not expr.strip():
                    problems.append(f"{where} {ref}: no expr")
                    continue
                if (target.get("datasource") or {}).get("uid") != DATASOURCE_UID:
                    problems.append(f"{where} {ref}: target datasource uid is not {DATASOURCE_UID!r}")
                for metric, selector in SCRAPED_METRIC.findall(expr):
                    for label in FILTERS:
                        if not re.search(rf'\b{label}=~"\$\w+"', selector):
                            problems.append(f"{where} {ref}: {metric} does not filter {label} by a variable")
                queries.append(Query(name, pid, title, ref, expr))
        board_variables = board.get("templating", {}).get("list", [])
        if not any(v.get("name") == "datasource" and v.get("type") == "datasource" and v.get("query") == "prometheus"
                   for v in board_variables):
            problems.append(f"{name}: no variable $datasource of type datasource (query prometheus)")
        for var in board_variables:
            if var.get("type") == "query" and (var.get("datasource") or {}).get("uid") != DATASOURCE_UID:
                problems.append(f"{name}: variable ${var.get('name')}: datasource uid is not {DATASOURCE_UID!r}")
            variables.append((name, var))
    return queries, variables


def substitute(expr, variables, rate_interval, range_):
    """Replace Grafana's built-in and template variables with concrete values PromQL accepts."""
    seconds = duration_seconds(range_)
    builtins = {
        "__rate_interval": rate_interval, "__interval": rate_interval,
        "__interval_ms": str(duration_seconds(rate_interval) * 1000),
        "__range": range_, "__range_s": str(seconds), "__range_ms": str(seconds * 1000),
    }
    values = dict(builtins)
    for _, var in variables:
        values.setdefault(var["name"], var.get("allValue") or ".*")

    def repl(match):
        key = match.group(1) or match.group(2)
        if key not in values:
            raise ValueError(f"unknown variable ${key} in: {expr}")
        return values[key]

    # ${name}, ${name:format} and $name (longest names first is implied by \w+ being greedy)
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", repl, expr)


def duration_seconds(text):
    match = re.fullmatch(r"(\d+)([smhd])", text)
    if not match:
        raise ValueError(f"duration must look like 30s, 5m, 1h, 1d: {text!r}")
    return int(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


def one_line(expr):
    return " ".join(expr.split())


def rules_document(queries, exprs):
    rules = [{"record": re.sub(r"[^A-Za-z0-9_:]", "_", f"dashboard:{q.dashboard}:panel_{q.panel_id}:{q.ref_id}"),
              "expr": exprs[q.name]}
             for q in queries]
    # JSON is valid YAML, so promtool reads this without a YAML library here.
    return json.dumps({"groups": [{"name": "grafana-dashboards", "rules": rules}]}, indent=2) + "\n"


def run_promtool(document):
    promtool = shutil.which("promtool")
    if not promtool:
        print("promtool not found (Debian package: prometheus)", file=sys.stderr)
        return 2
    with tempfile.NamedTemporaryFile("w", suffix=".yml", prefix="dashboard-rules-") as f:
        f.write(document)
        f.flush()
        result = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return 0 if result.returncode == 0 else 1


def api_call(base, path, params, timeout, post=True):
    """POST for queries (long expressions); GET where the endpoint accepts only GET (label values)."""
    encoded = urllib.parse.urlencode(params, doseq=True)
    if post:
        request = urllib.request.Request(base.rstrip("/") + path, data=encoded.encode(), method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    else:
        request = urllib.request.Request(base.rstrip("/") + path + "?" + encoded, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = json.load(response)
    except urllib.error.HTTPError as e:
        try:
            body = json.load(e)
        except ValueError:
            return None, f"HTTP {e.code}"
    except (urllib.error.URLError, OSError) as e:
        return None, str(e)
    if body.get("status") != "success":
        return None, f"{body.get('errorType')}: {body.get('error')}"
    return body["data"], None


def evaluate(base, queries, exprs, variables, allow_empty, at, timeout):
    _, error = api_call(base, "/api/v1/status/buildinfo", {}, timeout, post=False)
    if error:
        print(f"FAIL   Prometheus at {base} not reachable: {error}", file=sys.stderr)
        return 1
    failed, with_data, empty_allowed = [], 0, 0
    for q in queries:
        params = {"query": exprs[q.name]}
        if at:
            params["time"] = at
        data, error = api_call(base, "/api/v1/query", params, timeout)
        if error:
            failed.append(f"{q.name} ({q.title}): error {error}")
            continue
        result = data.get("result")
        count = len(result) if isinstance(result, list) else (0 if result is None else 1)
        if count:
            with_data += 1
            print(f"ok     {q.name:<22} {count:>3} series  {q.title}")
        elif allow_empty and allow_empty.search(q.title):
            empty_allowed += 1
            print(f"empty  {q.name:<22}   (allowed) {q.title}")
        else:
            failed.append(f"{q.name} ({q.title}): no data for {one_line(exprs[q.name])}")
    for board, var in variables:
        # The selector may hold commas (several matchers): the label is what follows the last one.
        match = re.fullmatch(r"\s*label_values\(\s*(.+)\s*,\s*(\w+)\s*\)\s*", query_text(var))
        if not match:
            continue
        selector, label = match.groups()
        # A variable's query may use the board's other variables (the cache list filtered by $instance).
        selector = substitute(selector, [(b, v) for b, v in variables if b == board], "1m", "1h")
        data, error = api_call(base, f"/api/v1/label/{label}/values", {"match[]": selector}, timeout,
                               post=False)
        if error:
            failed.append(f"{board} variable ${var['name']}: error {error}")
        elif not data:
            failed.append(f"{board} variable ${var['name']}: label_values({selector}, {label}) is empty")
        else:
            print(f"ok     {board} variable ${var['name']}: {', '.join(data)}")
    print(f"{with_data} of {len(queries)} expressions with data, {empty_allowed} allowed empty, "
          f"{len(failed)} failed")
    for f in failed:
        print("FAIL   " + f, file=sys.stderr)
    return 1 if failed else 0


def query_text(var):
    query = var.get("query")
    if isinstance(query, dict):
        return query.get("query", "")
    return query or var.get("definition", "")


def main(argv=None):
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("dashboards", nargs="*", type=pathlib.Path,
                        help=f"dashboard JSON files (default: every *.json in {DEFAULT_DIR})")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="print the expressions, one per line")
    mode.add_argument("--rules", metavar="FILE", type=pathlib.Path, help="write a recording-rules file")
    mode.add_argument("--promtool", action="store_true", help="check the expressions' syntax with promtool")
    mode.add_argument("--prometheus", metavar="URL", help="evaluate against this Prometheus")
    parser.add_argument("--rate-interval", default="1m", help="value for $__rate_interval (default 1m)")
    parser.add_argument("--range", default="5m", help="value for $__range (default 5m)")
    parser.add_argument("--time", help="evaluation time for --prometheus (RFC 3339 or unix; default now)")
    parser.add_argument("--allow-empty", metavar="REGEX", action="append", default=[],
                        help="panel titles (regex, repeatable) that may return no data, e.g. error panels")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per query (default 10)")
    args = parser.parse_args(argv)

    paths = args.dashboards or sorted(DEFAULT_DIR.glob("*.json"))
    if not paths:
        parser.error(f"no dashboards in {DEFAULT_DIR}")
    try:
        duration_seconds(args.rate_interval)
        duration_seconds(args.range)
    except ValueError as e:
        parser.error(str(e))

    problems = []
    queries, variables = load(paths, problems)
    exprs = {}
    for q in queries:
        try:
            exprs[q.name] = substitute(q.expr, variables, args.rate_interval, args.range)
        except ValueError as e:
            problems.append(f"{q.name}: {e}")
    if problems:
        for p in problems:
            print("FAIL   " + p, file=sys.stderr)
        return 1

    if args.list:
        for q in queries:
            print(f"{q.name}\t{one_line(exprs[q.name])}")
        return 0
    if args.rules:
        args.rules.write_text(rules_document(queries, exprs), encoding="utf-8")
        print(f"wrote {len(queries)} rules to {args.rules}")
        return 0
    if args.promtool:
        return run_promtool(rules_document(queries, exprs))
    if args.prometheus:
        allow = re.compile("|".join(f"(?:{r})" for r in args.allow_empty)) if args.allow_empty else None
        return evaluate(args.prometheus, queries, exprs, variables, allow, args.time, args.timeout)
    print(f"{len(paths)} dashboards, {len(queries)} expressions: structure OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
