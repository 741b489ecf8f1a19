"""The options of loadtests/run.sh: one argparse parser with a subcommand per mode of the runner, its help generated
from the parser (so it cannot drift from what the runner accepts), and every rule on which options go together.

run.sh hands its arguments over and evals what this prints: shell assignments of the variables its body reads
(SCENARIO, SMOKE, CEILING, ...), every one of them each time. With RUN_SH_SETTINGS_FD the assignments go to that
descriptor, so that the help can go to stdout; after the help (exit 0) or an error (exit 2) nothing is printed there.

The runner's older spellings still work: without a subcommand, a mode flag anywhere (--compare, --ceiling,
--capture-compare, --freshness, --topology-compare, --db-outage D@T) picks its subcommand, else --instances,
--redis or --join picks fleet, else it is run.
"""

import argparse
import os
import re
import shlex
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROG = "loadtests/run.sh"
WIDTH = 100

# Every variable the runner's body reads from the options, with its value when the option is not given (or does
# not go with the subcommand), in the order printed.
VARIABLES = {
    "SCENARIO": "users-per-second",
    "DURATION": "",
    "RATE": "",
    "CONCERTS": "5000",
    "PROFILE": "cache",
    "COMPARE": "false",
    "CEILING": "false",
    "WARM_ROUNDS": "",
    "SLO_MODE": "",
    "CAPTURE_COMPARE": "false",
    "SMOKE": "false",
    "JOIN": "false",
    "KEEP_RUNNING": "false",
    "JDK25": "false",
    "AOT_CACHE": "false",
    "STANDIN": "false",
    "DB_OUTAGE": "",
    "FRESHNESS": "false",
    "SQL_WRITER": "false",
    "FAULT": "none",
    "FRESHNESS_ONE_INSTANCE": "false",
    "INSTANCES": "",
    "REDIS_MODE": "",
    "TOPOLOGY_COMPARE": "false",
    "WRITES": "",
    "DB": "mariadb",
}

# The environment the runner reads: name, its default as the runner spells it (None: none, or not a constant),
# what it does, and the subcommands it matters to (None: all).
ENVIRONMENT = [
    ("API_JAR", None, "the API's jar; default api/target/api.jar, rebuilt when older than its sources", None),
    ("API_JAVA_OPTS", None, "JVM flags for the API", None),
    ("FLOOR_JAR", None, "the floor's jar; default floor/target/floor.jar, rebuilt when older than its sources",
     ("run", "ceiling", "fleet")),
    ("FLOOR_JAVA_OPTS", None, "JVM flags for the floor", ("run", "ceiling", "fleet")),
    ("FLOOR_DURATION", "30s", "a floor round without --duration", ("run", "ceiling", "fleet")),
    ("FLOOR_WARMUP", "30s", "the floor's JIT warm-up round before its first round (not reported; none with --smoke)",
     ("run", "ceiling", "fleet")),
    ("FLOOR_WARMUP_RATE", "300", "journeys/s of that warm-up round", ("run", "ceiling", "fleet")),
    ("RUNNER_DATA_CACHE", None, "a directory: the generated data set is dumped there once and restored by later "
     "runs of its size (MariaDB only)", None),
    ("FRESHNESS_OPTS", None, 'more flags for lib/freshness.py run, e.g. "--read-rate 50 --lag-p99-ms 250"',
     ("freshness",)),
    ("FAULT_PRIMARY", "stream", "which primary --fault primary-kill kills: stream (the one holding the invalidation "
     "stream), other (one without it: every L1 kept) or capture (the one holding the change capture's lease)",
     ("freshness", "fleet")),
    ("SQL_WRITES_PER_S", "2", "plain SQL UPDATEs a second of the most read concerts in every round",
     ("capture-compare",)),
    ("JOIN_AFTER", None, "with --join, how far into the load the last instance starts (30s; 5s with --smoke)",
     ("fleet",)),
    ("JOIN_NICE", "10", "with --join, the joiner's niceness until it is ready", ("fleet",)),
    ("FLEET_FAULT_WINDOW_SECONDS", "5", "with --fault primary-kill, the width of the windows requests are tagged with",
     ("fleet",)),
    ("FLEET_FAULT_SETTLE_SECONDS", "5", "with --fault primary-kill, how long after the promotion the failover "
     "window lasts", ("fleet",)),
    ("FLEET_FAULT_RESTART_SECONDS", "10", "with --fault primary-kill, how long after the promotion the killed node "
     "starts again", ("fleet",)),
    ("P99_MS", "100", "the p99 limit in ms of a run with the database killed", ("db-outage",)),
    ("DB_OUTAGE_WARMUP", "30s", "the scenario at the run's rate on the fresh API before the outage run, not reported "
     "(none with --smoke; 0s for none): the outage strikes a service that has been serving", ("db-outage",)),
    ("FRESHNESS_WARMUP", "30s", "the run's load and writers on freshly started instances before a freshness run, not "
     "reported (none with --smoke; 0s for none): lags are measured on instances that have been serving",
     ("freshness",)),
    ("K6", None, "a k6 binary to use (else k6 on the PATH, or one built into loadtests/.bin)", None),
    ("K6_PROMETHEUS_RW_SERVER_URL", None, "also push k6's metrics to this Prometheus remote-write URL, for the "
     "Grafana dashboards in ops/", None),
    ("K6_PROMETHEUS_RW_TREND_STATS", "p(95),p(99),avg", "the trend statistics pushed there", None),
]

# Scenarios that write (the floor serves no writes) or have no latency SLO keep their fixed thresholds.
FLOOR_SLO_EXCLUDED = ("read-write-mix", "baseline-reads")
FRESHNESS_FAULTS = ("none", "redis-clients", "redis-restart", "primary-kill", "reader-kill", "rolling-deploy",
                    "capture-stall")
REDIS_MODES = ("standalone", "cluster")

# The older spellings: a mode flag anywhere in the arguments names the subcommand.
MODE_FLAGS = {
    "--compare": "compare",
    "--ceiling": "ceiling",
    "--capture-compare": "capture-compare",
    "--freshness": "freshness",
    "--topology-compare": "topology-compare",
    "--db-outage": "db-outage",
}
FLEET_FLAGS = ("--instances", "--redis", "--join")

RESULTS = ("Results: loadtests/results/<timestamp>-<run>/ (k6 JSON summary, HTML report, metric scrapes, the API's "
           "log, table.txt). Exit status: k6's (0: all SLOs met, 99: an SLO missed) unless the subcommand says "
           "otherwise; 2: options that do not go together.")


def scenarios():
    return sorted(p.stem for p in (ROOT / "loadtests" / "scenarios").glob("*.js"))


def matching(pattern, what):
    def check(value):
        if not re.fullmatch(pattern, value):
            raise argparse.ArgumentTypeError(f"must be {what}, not {value!r}")
        return value
    return check


positive = matching(r"[1-9][0-9]*", "a positive integer")


def freshness_faults(value):
    faults = value.split(",")
    for fault in faults:
        if fault not in FRESHNESS_FAULTS:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(FRESHNESS_FAULTS)} (or a comma-separated "
                                             f"list of them), not {fault!r}")
    if len(faults) > 1 and "primary-kill" in faults:
        raise argparse.ArgumentTypeError("takes several faults, primary-kill not among them")
    return value


def text(paragraph):
    return "\n".join(textwrap.fill(line, WIDTH, break_on_hyphens=False) for line in paragraph.split("\n"))


def environment(subcommand=None):
    rows = [(name, default, what) for name, default, what, where in ENVIRONMENT
            if subcommand is None or where is None or subcommand in where]
    lines = ["environment:"]
    for name, default, what in rows:
        entry = f"{what} (default {default})" if default else what
        lines.append(textwrap.fill(entry, WIDTH, initial_indent=f"  {name:<29} ", subsequent_indent=" " * 32,
                                   break_on_hyphens=False))
    return "\n".join(lines)


class Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog):
        super().__init__(prog, max_help_position=30, width=WIDTH)

    def _split_lines(self, text, width):
        # Names such as seed-003-vus-10-20 stay whole.
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def add_argument(self, action):
        super().add_argument(action)
        # argparse measures the subcommands' names without their indent: the longest would wrap its summary.
        if isinstance(action, argparse._SubParsersAction):
            self._action_max_length += 4


class Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(**kwargs)


def parents():
    """The shared options, one parent parser per group of subcommands they go with."""
    common = Parser(add_help=False)
    common.add_argument("--concerts", dest="CONCERTS", type=positive, metavar="N", help="data set size (default 5000)")
    common.add_argument("--smoke", dest="SMOKE", action="store_const", const="true",
                        help="a few seconds at a low rate, for CI (SLOs still apply, latency limits x10)")
    common.add_argument("--keep-running", dest="KEEP_RUNNING", action="store_const", const="true",
                        help="leave Redis, MariaDB and the API up after the run, until Ctrl-C")
    common.add_argument("--jdk25", dest="JDK25", action="store_const", const="true",
                        help="run the API on Temurin 25 with virtual threads")
    common.add_argument("--aot-cache", dest="AOT_CACHE", action="store_const", const="true",
                        help="run the API as its image does (ADR 0202): the extracted jar on Temurin 25 from an AOT "
                             "cache trained without backends, made once per jar in api/target/aot/")
    common.add_argument("--db", dest="DB", choices=("mariadb", "mysql"), metavar="D",
                        help="mariadb (default: MariaDB 10.11, Debian's) or mysql (MySQL 9.7, Debian sid's, in a "
                             "chroot scripts/mysql-rootfs.sh makes once per machine)")

    load = Parser(add_help=False)
    load.add_argument("--scenario", dest="SCENARIO", choices=scenarios(), metavar="NAME",
                      help="a file in loadtests/scenarios/ without .js (default users-per-second): "
                           + ", ".join(scenarios()))
    load.add_argument("--duration", dest="DURATION", metavar="D",
                      help="load duration, k6 syntax (30s, 2m); default per scenario (mostly 60s)")
    load.add_argument("--rate", dest="RATE", type=positive, metavar="N",
                      help="iterations per second of arrival-rate scenarios (default per scenario)")

    profile = Parser(add_help=False)
    profile.add_argument("--profile", dest="PROFILE", metavar="P",
                         type=matching(r"[a-z0-9-]+(,[a-z0-9-]+)*", "none or Spring profile names"),
                         help="cache (two tiers, default), redis-only, none (no cache), or any Spring profiles, "
                              "comma-separated")

    standin = Parser(add_help=False)
    standin.add_argument("--standin", dest="STANDIN", action="store_const", const="true",
                         help="serve the API from loadtests/selftest/standin.py instead of the jar (tests this "
                              "runner without Java; no data is loaded)")

    writes = Parser(add_help=False)
    writes.add_argument("--writes", dest="WRITES", type=positive, metavar="N",
                        help="users-per-second only: N admin writes a second besides the journeys (k6 scenario "
                             "writes, each read back at once; the table shows them apart; on a fleet sent to "
                             "instance 1 past nginx, as a read-back through nginx may reach another instance, which "
                             "may serve the old value for up to 1 s by contract)")
    return common, load, profile, standin, writes


def add_fleet_options(parser, instances_default):
    parser.add_argument("--instances", dest="INSTANCES", metavar="N", default=instances_default,
                        type=matching(r"[1-9][0-9]?", "1..99"),
                        help=f"N API instances (free ports) behind nginx on 8080 with upstream keepalive (default "
                             f"{instances_default}); the scenario goes through nginx; the table adds one row per "
                             f"instance (lib/fleet.sh)")


def build():
    common, load, profile, standin, writes = parents()
    parser = Parser(prog=PROG, description=text(
        "One command for a load test on this machine: gets what is missing (k6, redis-server, mariadb-server, the "
        "API jar), starts private Redis and MariaDB on loopback, loads the data, starts the API, replays a k6 "
        "scenario and prints a result table. Everything it started stops when it ends or is interrupted.\n"
        f"Without a subcommand: run. Each subcommand's options: {PROG} SUBCOMMAND --help."),
        epilog=text(RESULTS) + "\n\n" + environment())
    sub = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", title="subcommands")
    commands = {}

    def command(name, summary, description, groups, **modes):
        commands[name] = sub.add_parser(name, help=summary, parents=[common, *groups], prog=f"{PROG} {name}",
                                        description=text(description),
                                        epilog=text(RESULTS) + "\n\n" + environment(name))
        commands[name].set_defaults(**modes)
        return commands[name]

    run = command(
        "run", "the scenario against one API (the default)",
        "The scenario against one API. Its latency SLOs are ratios to the floor (floor/, a plain Boot app serving the "
        "same data from memory, in a process of its own) measured first (--slo floor), except with --smoke and for "
        f"{' and '.join(FLOOR_SLO_EXCLUDED)}.",
        (load, profile, standin, writes))
    run.add_argument("--slo", dest="SLO_MODE", choices=("floor", "absolute"), metavar="MODE",
                     help="floor (default, except with --smoke and for " + " and ".join(FLOOR_SLO_EXCLUDED)
                          + "): measure the floor first (FLOOR_DURATION) and hold the run's p95/p99 to 2x the "
                            "floor's, its dropped iterations to 2x the floor's; absolute: the scenario's fixed limits "
                            "in ms (the seeds' published bars)")

    command("compare", "none, redis-only and cache side by side",
            "The scenario against none (no cache), redis-only and cache in turn (the API restarted, Redis flushed, the "
            "same data), printed side by side: requests/s and p99 with their ratio to none. Exit status 0 when every "
            "run completed.",
            (load, standin, writes), COMPARE="true")

    ceiling = command(
        "ceiling", "the cache in rounds against the floor and nginx",
        "The scenario in rounds, alternating the floor (floor/, a plain Boot app serving the same data from memory, "
        "a process of its own) and one API: floor, cache (cold), floor, then nginx, cache (warm), floor --warm-rounds "
        "times, every round --duration long (FLOOR_DURATION without it; the scenario's smoke length with --smoke); "
        "nginx serves the API's responses crawled into files by lib/crawl.py, with keep-alive and 2 workers: the "
        "machine's HTTP limit. Each cached round against the mean of the floor rounds beside it, its latency SLO 2x "
        "(cold) and 1.25x (warm) the floor's round just before it; http-limit.txt puts each warm round beside the "
        "nginx round before it, the medians against the targets (p99 at most the floor's in every round; with "
        "--scenario vus-1000, requests/s at least 0.85 x nginx's and 1.15 x the floor's). --scenario vus-1000 answers \"what does the cache cost in throughput?\", the default scenario "
        "\"what latency does it add to the framework's at 1000 users/s?\". Exit status: the last round's that was "
        "not 0.",
        (load, profile, standin), CEILING="true")
    ceiling.add_argument("--warm-rounds", dest="WARM_ROUNDS", type=positive, metavar="N",
                         help="warm rounds (default 3; 1 with --smoke)")

    command("capture-compare", "change data capture off and on in turn",
            "The scenario against the cache profile with change data capture off, on, off, on, off "
            "(concert-cache.capture.mode off / required), each on a fresh API and an empty Redis, while plain SQL "
            "UPDATEs change the 18 most read concerts from a connection of their own (SQL_WRITES_PER_S) in every "
            "run; each \"on\" run's requests/s and p99 against the mean of the \"off\" runs beside it, then "
            "capture on / off, the mean requests/s of the \"on\" runs over the \"off\" runs', against the target "
            "of at least 0.95. With an arrival-rate scenario (the default) requests/s is the offered rate "
            "unless the API falls behind; --scenario vus-1000 measures the most it serves.",
            (load, standin, writes), CAPTURE_COMPARE="true")

    outage = command(
        "db-outage", "the database killed under load",
        "The scenario against one API while mariadbd is killed (SIGKILL) and started again (ADR 0030), after "
        "DB_OUTAGE_WARMUP of the same load on the fresh API (not reported); the API is "
        "sampled once a second and lib/db_outage_report.py prints the outage's table (db-outage.txt) and judges the "
        "outage path (no 5xx but 503, stale values served, loads again once the database is back). SLOs become: "
        "under 1% failed, p99 under P99_MS; with --smoke, whose reads are mostly first touches, the verdict alone.",
        (load, profile, writes))
    outage.add_argument("DB_OUTAGE", metavar="D@T",
                        type=matching(r"[0-9]+(s|m)?@[0-9]+(s|m)?", "DURATION@AT, e.g. 15s@20s"),
                        help="kill mariadbd T into the k6 run and start it again D later, e.g. 15s@20s")

    freshness = command(
        "freshness", "how soon each of two instances serves a write",
        "Two API instances (cache) under the users-per-second journey (--rate split between them); lib/freshness.py "
        "writes concert titles through either and reads them back from both: lag per instance and writer, every read "
        "older than 1 s after its write's ack (loadtests/README.md, Freshness). Exit status: the checker's (99: a "
        "stale read or a lag p99 over its limit; with several faults, the first failing run's), else the background "
        "load's.",
        (), FRESHNESS="true")
    freshness.add_argument("--duration", dest="DURATION", metavar="D",
                           type=matching(r"[0-9]+(s|m)?", "a duration in s or m, e.g. 45s"),
                           help="in s or m (default 60s, 20s with --smoke; rolling-deploy 300s, 60s with --smoke)")
    freshness.add_argument("--rate", dest="RATE", type=positive, metavar="N",
                           help="journeys per second in total (default 1000, 20 with --smoke)")
    freshness.add_argument("--sql-writer", dest="SQL_WRITER", action="store_const", const="true",
                           help="a third writer: plain SQL UPDATEs from a mariadb client on a connection of its "
                                "own, each after an INSERT into a table of its own (freshness_order), as the ticketing "
                                "application writes its orders beside the cached tables")
    freshness.add_argument("--fault", dest="FAULT", type=freshness_faults, metavar="F",
                           help="redis-clients (CLIENT KILL TYPE normal every 2 s in the middle third), redis-restart "
                                "(Redis stopped and started again, empty, halfway), reader-kill (the instance reading "
                                "the binary log killed halfway: the other takes over), rolling-deploy (each instance "
                                "stopped gracefully and started again in turn, the next once the first is ready, the "
                                "load through nginx in front of both; a write acknowledged while an instance refused "
                                "connections counts as down, not as a lag), capture-stall "
                                "(the binary log unreadable for the middle third: the reader stalls) or, with --redis "
                                "cluster, primary-kill (the primary holding the invalidation stream killed halfway, "
                                "back 10 s later); a comma-separated list (not primary-kill): one run per fault in "
                                "turn on the same Redis, MariaDB and data set, each in a directory of its own")
    freshness.add_argument("--redis", dest="REDIS_MODE", choices=REDIS_MODES, metavar="MODE",
                           help="standalone (default) or cluster: 3 primaries + 3 replicas in cluster mode on loopback")
    freshness.add_argument("--one-instance", dest="FRESHNESS_ONE_INSTANCE", action="store_const", const="true",
                           help="instance a alone, with the whole --rate: a fault's database cost for one instance, "
                                "to hold two instances' against (not with reader-kill or rolling-deploy)")

    fleet = command(
        "fleet", "N instances behind nginx",
        "The scenario through nginx (one worker, upstream keepalive 64, ops/nginx/proxy.conf shared with compose) in "
        "front of N API instances, each started once the previous one is ready, on one standalone Redis or a Redis "
        "Cluster (Redis figures summed over its nodes). The table is the fleet's (counters summed over the "
        "instances), then one row per instance (lib/fleet.sh, loadtests/README.md).",
        (load, profile, standin, writes))
    add_fleet_options(fleet, "1")
    fleet.add_argument("--redis", dest="REDIS_MODE", choices=REDIS_MODES, metavar="MODE",
                       help="standalone (default) or cluster: 3 primaries + 3 replicas in cluster mode on loopback, "
                            "the instances pointed at it with spring.data.redis.cluster.nodes")
    fleet.add_argument("--join", dest="JOIN", action="store_const", const="true",
                       help="with --instances N (N >= 2): the floor first, then N-1 instances behind nginx under the "
                            "scenario; JOIN_AFTER into it the Nth starts (JIT warm-up, hot-set fill, readiness) and "
                            "nginx is reloaded with it; join.txt gives the joiner's first-minute p99 beside the rest "
                            "of the fleet's in the same minute and the floor's, as ratios (nginx's request times per "
                            "upstream), the fleet's p99 while the joiner started, its warm-up and hot-set fill. The "
                            "joiner runs at niceness JOIN_NICE until ready. Default --duration 3m (60s with "
                            "--smoke): the join plus a minute")
    fleet.add_argument("--fault", dest="FAULT", choices=("none", "primary-kill"), metavar="F",
                       help="none (default) or primary-kill, with --redis cluster and users-per-second: the primary holding the "
                            "invalidation stream (FAULT_PRIMARY) killed halfway through the load, started again 10 s "
                            "after the promotion; lib/fleet.py failover prints requests, failed reads and p99 per 5 s "
                            "window and holds the windows from the kill to the promotion + 5 s to the target (0 "
                            "failed reads, p99 <= the run's + 100 ms; exit 99 when missed)")

    topology = command(
        "topology-compare", "the fleet on standalone Redis and on a cluster",
        "The fleet on one standalone Redis and on the 3+3 cluster in turn: standalone, cluster, standalone, cluster, "
        "standalone (--smoke: the first three), fresh instances and nginx each round, both Redis flushed before; each "
        "cluster run against the standalone runs beside it, the means per topology and cluster / standalone "
        "requests/s against the target (>= 0.9, 0 failed, 0 dropped; exit 99 when missed).",
        (load, profile, standin, writes), TOPOLOGY_COMPARE="true")
    add_fleet_options(topology, "3")
    return parser, commands


def legacy(argv, parser, commands):
    """The older spellings as subcommands: the mode flag anywhere (skipping option values) names it."""
    if not argv or argv[0] not in commands:
        if argv in (["-h"], ["--help"]):
            return argv
        takes_value = {option for command in commands.values() for action in command._actions
                       if action.nargs is None and action.option_strings for option in action.option_strings}
        modes, rest, fleet, i = [], [], False, 0
        while i < len(argv):
            arg = argv[i]
            name, has_value = arg.split("=", 1)[0], "=" in arg
            if name in MODE_FLAGS:
                value = []
                if name == "--db-outage":
                    if has_value:
                        value = [arg.split("=", 1)[1]]
                    elif i + 1 < len(argv):
                        value = [argv[i + 1]]
                        i += 1
                    else:
                        parser.error("argument --db-outage: expected one argument")
                modes.append((name, value))
            else:
                fleet = fleet or name in FLEET_FLAGS
                rest.append(arg)
                if name in takes_value and not has_value and i + 1 < len(argv):
                    rest.append(argv[i + 1])
                    i += 1
            i += 1
        if len(modes) > 1:
            parser.error(f"argument {modes[1][0]}: not allowed with argument {modes[0][0]}")
        if modes:
            return [MODE_FLAGS[modes[0][0]], *modes[0][1], *rest]
        return ["fleet" if fleet else "run", *rest]
    return argv


def check(args, command):
    """The rules across options of one subcommand; the rest is in the parser's structure and types."""
    scenario = getattr(args, "SCENARIO", None) or VARIABLES["SCENARIO"]
    smoke = args.SMOKE == "true"
    if getattr(args, "WRITES", None) and scenario != "users-per-second":
        command.error("argument --writes: goes with --scenario users-per-second")
    if args.subcommand == "run" and args.SLO_MODE == "floor" and scenario in FLOOR_SLO_EXCLUDED:
        command.error(f"argument --slo: floor: the floor serves reads only and {scenario} writes or has no "
                      f"latency SLO")
    if args.subcommand == "fleet":
        if args.JOIN and int(args.INSTANCES) < 2:
            command.error("argument --join: needs --instances 2 or more")
        if args.FAULT == "primary-kill" and args.REDIS_MODE != "cluster":
            command.error("argument --fault: primary-kill needs --redis cluster")
        if args.FAULT == "primary-kill" and scenario != "users-per-second":
            command.error("argument --fault: primary-kill on a fleet replays users-per-second (its requests are "
                          "tagged with their window)")
    if args.subcommand == "freshness":
        faults = (args.FAULT or "none").split(",")
        if "primary-kill" in faults and args.REDIS_MODE != "cluster":
            command.error("argument --fault: primary-kill needs --redis cluster")
        if args.FRESHNESS_ONE_INSTANCE and {"reader-kill", "rolling-deploy"} & set(faults):
            command.error("argument --one-instance: reader-kill and rolling-deploy need two instances")
        if "redis-restart" in faults and args.REDIS_MODE == "cluster":
            command.error("argument --fault: redis-restart restarts a standalone Redis: with --redis cluster use "
                          "primary-kill")
    # The floor's SLO where a floor round can stand for the run's load: a single read-only run, not a smoke one.
    if args.subcommand in ("run", "ceiling") and not getattr(args, "SLO_MODE", None):
        args.SLO_MODE = "floor" if not smoke and scenario not in FLOOR_SLO_EXCLUDED else "absolute"
    elif args.subcommand not in ("run", "ceiling"):
        args.SLO_MODE = "absolute"


def parse(argv):
    """The variables for run.sh from its arguments; exits 0 after the help and 2 on an error."""
    parser, commands = build()
    argv = legacy(list(argv), parser, commands)
    args, extra = parser.parse_known_args(argv)
    if args.subcommand is None:
        parser.error("a subcommand is needed")
    command = commands[args.subcommand]
    for arg in extra:
        name = arg.split("=", 1)[0]
        if name in MODE_FLAGS:
            command.error(f"argument {name}: not allowed with {args.subcommand} (it is the subcommand "
                          f"{MODE_FLAGS[name]})")
        if name.startswith("-"):
            others = [n for n, c in commands.items() if name in c._option_string_actions]
            if others:
                command.error(f"argument {name}: not allowed with {args.subcommand} (it goes with "
                              f"{', '.join(others)})")
    if extra:
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    check(args, command)
    values = dict(VARIABLES)
    values.update({name: value for name, value in vars(args).items() if name in VARIABLES and value is not None})
    return values


def main(argv):
    values = parse(argv)
    fd = os.environ.get("RUN_SH_SETTINGS_FD")
    out = os.fdopen(int(fd), "w") if fd else sys.stdout
    out.write("".join(f"{name}={shlex.quote(value)}\n" for name, value in values.items()))
    out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
