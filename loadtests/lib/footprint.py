#!/usr/bin/env python3
"""What a fleet run cost Redis, per node and per API instance (the figures of ADR 0039):

    footprint.py measure RUN_DIR PORT [PORT ...]
        while the instances are still up after a run of lib/fleet.sh: CLIENT LIST, INFO, the keys by kind (SCAN)
        and MEMORY USAGE of a sample of each kind on every node; writes RUN_DIR/footprint.json and prints the
        figures (reads RUN_DIR/{before,after}/commandstats.PORT, meta.txt, the k6 summary and the scrapes)
    footprint.py report RUN_DIR
        the figures again from RUN_DIR/footprint.json, and what they make for 10, 50 and 200 instances

Per instance: long-lived connections per node (by client name); per cached entry: bytes in Redis (MEMORY USAGE of
value keys, and used_memory over all keys); invalidation traffic: stream entries and bytes per write, XREADs per
instance per second, and the lock, generation and shape keys there are.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

from report import Run, num, parse_redis_info, prometheus

SAMPLE = 300  # MEMORY USAGE calls per kind of key and node
SCAN_LIMIT = 500_000  # keys per node; past this the counts are a lower bound
PROJECTED_INSTANCES = (10, 50, 200)


def kind(key):
    """The kind of a cache key (RedisTier's layout, ADR 0039, "Key layout")."""
    if key.endswith(":invalidations"):
        return "stream"
    if key.endswith("}:seq"):
        return "stream-seq"
    if key.endswith("}:failover"):
        return "failover-epoch"
    if key.endswith(":generation"):
        return "generation"
    if key.endswith(":shapes"):
        return "shapes"
    if re.search(r"\}:(leader|position|feed)$", key):
        return "capture"  # the binary-log reader's lease, position (ADR 0033) and checkpoint (ADR 0039)
    if ":lock:g" in key:
        return "lock"
    match = re.search(r":v\d+:([^:]+):g\d+:", key)
    if match:
        return "value:" + match.group(1)
    return "other"


def redis(port, *command, stdin=None):
    result = subprocess.run(["redis-cli", "-p", str(port), *command], input=stdin, capture_output=True, text=True,
                            timeout=300)
    return result.stdout


def info(port, section=""):
    return parse_redis_info(redis(port, "INFO", *([section] if section else [])))


def commandstats(path):
    """{command: calls} from an INFO commandstats text."""
    calls = {}
    if path.exists():
        for line in path.read_text().splitlines():
            match = re.match(r"cmdstat_([^:]+):calls=(\d+)", line.strip())
            if match:
                calls[match.group(1)] = int(match.group(2))
    return calls


def clients(port):
    """The application's connections to a node: CLIENT LIST without replication links and redis-cli itself."""
    rows = []
    for line in redis(port, "CLIENT", "LIST").splitlines():
        fields = dict(part.partition("=")[::2] for part in line.split())
        flags = fields.get("flags", "")
        if "S" in flags or "M" in flags or fields.get("cmd", "").startswith("client"):
            continue
        rows.append({"name": fields.get("name", ""), "addr": fields.get("addr", ""), "cmd": fields.get("cmd", "")})
    return rows


def client_group(name):
    """Client names without the instance id: one group per kind of connection."""
    return re.sub(r"-[0-9a-f-]{8,}$", "-<instance>", name) if name else "(unnamed: shared, pooled, reactive)"


def node_measure(port):
    node_info = info(port)
    if node_info.get("role") != "master":
        return {"port": port, "role": node_info.get("role"), "clients": clients(port)}
    keys = redis(port, "--scan").splitlines()[:SCAN_LIMIT]
    by_kind = {}
    for key in keys:
        by_kind.setdefault(kind(key), []).append(key)
    sizes = {}
    for name, group in by_kind.items():
        sample = group[:SAMPLE]
        out = redis(port, stdin="".join(f"MEMORY USAGE \"{k}\"\n" for k in sample)).split()
        values = [int(v) for v in out if v.isdigit()]
        sizes[name] = {"keys": len(group), "sampled": len(values), "bytes": sum(values), "examples": group[:3]}
    stream = {}
    if "stream" in by_kind:
        name = by_kind["stream"][0]
        xinfo = redis(port, "XINFO", "STREAM", name).splitlines()
        pairs = dict(zip(xinfo[0::2], xinfo[1::2]))
        last = redis(port, "XREVRANGE", name, "+", "-", "COUNT", "100").splitlines()
        # Entry ids, then field and value lines: the payload is the fields and values.
        payload = [line for line in last if not re.fullmatch(r"\d+-\d+", line)]
        entries = sum(1 for line in last if re.fullmatch(r"\d+-\d+", line))
        stream = {
            "name": name,
            "length": int(pairs.get("length", 0)),
            "entries_added": int(pairs.get("entries-added", 0)),
            "memory_bytes": int(redis(port, "MEMORY", "USAGE", name).strip() or 0),
            "payload_bytes_per_entry": (sum(len(p) for p in payload) / entries) if entries else None,
            "sample_entry": payload[:10],
        }
    return {
        "port": port,
        "role": "master",
        "clients": clients(port),
        "used_memory": int(node_info.get("used_memory", 0)),
        "used_memory_dataset": int(info(port, "memory").get("used_memory_dataset", 0)),
        "keys": len(keys),
        "kinds": sizes,
        "stream": stream,
    }


def measure(run_dir, ports):
    run_dir = Path(run_dir)
    run = Run(run_dir)
    instances = int(run.meta.get("instances") or 1)
    seconds = run.seconds
    nodes = [node_measure(port) for port in ports]
    # Commands during the k6 run, per node: XREAD (the listeners), XADD (announcements).
    for node in nodes:
        before = commandstats(run_dir / "before" / f"commandstats.{node['port']}")
        after = commandstats(run_dir / "after" / f"commandstats.{node['port']}")
        node["commands"] = {c: after[c] - before.get(c, 0) for c in after if after[c] - before.get(c, 0) > 0}
    # Writes: PUTs the instances answered during the run (their own counters, summed in the fleet's scrape).
    before = prometheus(run_dir / "before" / "prometheus.txt").get("http_server_requests_seconds_count", {})
    after = prometheus(run_dir / "after" / "prometheus.txt").get("http_server_requests_seconds_count", {})
    writes = sum(v - before.get(labels, 0.0) for labels, v in after.items() if dict(labels).get("method") == "PUT")
    data = {"instances": instances, "seconds": seconds, "writes": writes, "redis": run.meta.get("redis"),
            "nodes": nodes}
    (run_dir / "footprint.json").write_text(json.dumps(data, indent=1))
    return data


def figures(data):
    """The per-instance and per-entry figures from a footprint.json."""
    instances, seconds, writes = data["instances"], data["seconds"] or 0, data["writes"]
    primaries = [n for n in data["nodes"] if n.get("role") == "master"]
    connections = {}  # per node: {group: count}
    for node in data["nodes"]:
        groups = {}
        for client in node["clients"]:
            group = client_group(client["name"])
            groups[group] = groups.get(group, 0) + 1
        connections[node["port"]] = groups
    value_keys = value_bytes = 0
    kinds = {}
    for node in primaries:
        for name, k in node["kinds"].items():
            total = kinds.setdefault(name, {"keys": 0, "sampled": 0, "bytes": 0, "examples": []})
            for field in ("keys", "sampled", "bytes"):
                total[field] += k[field]
            total["examples"] += k.get("examples", [])
    for name, k in kinds.items():
        if name.startswith("value:"):
            value_keys += k["keys"]
            value_bytes += k["bytes"] / k["sampled"] * k["keys"] if k["sampled"] else 0
    all_keys = sum(n["keys"] for n in primaries)
    dataset = sum(n["used_memory_dataset"] for n in primaries)
    stream_node = next((n for n in primaries if n["stream"]), None)
    stream = stream_node["stream"] if stream_node else {}
    xreads = sum(n["commands"].get("xread", 0) for n in data["nodes"])
    xadds = sum(n["commands"].get("xadd", 0) for n in data["nodes"])
    return {
        "instances": instances,
        "seconds": seconds,
        "writes": writes,
        "connections_per_node": {port: sum(g.values()) for port, g in connections.items()},
        "connection_groups": connections,
        "value_keys": value_keys,
        "bytes_per_value": value_bytes / value_keys if value_keys else None,
        "dataset_bytes_per_key": dataset / all_keys if all_keys else None,
        "kinds": kinds,
        "stream_entries": stream.get("entries_added"),
        "stream_length": stream.get("length"),
        "stream_bytes_per_entry": stream.get("memory_bytes", 0) / stream["length"] if stream.get("length") else None,
        "payload_bytes_per_entry": stream.get("payload_bytes_per_entry"),
        "entries_per_write": stream.get("entries_added", 0) / writes if writes else None,
        "xreads_per_instance_per_second": xreads / instances / seconds if seconds else None,
        "xadds": xadds,
        "stream_node": stream_node["port"] if stream_node else None,
    }


def text(data):
    f = figures(data)
    lines = [f"Redis footprint ({data.get('redis', '?')}, {f['instances']} instance(s), {num(f['seconds'], 1)} s, "
             f"{num(f['writes'])} writes)", "", "  connections of the application per node (CLIENT LIST, by name):"]
    for port, groups in f["connection_groups"].items():
        role = next(n.get("role") for n in data["nodes"] if n["port"] == port)
        parts = ", ".join(f"{g} {c}" for g, c in sorted(groups.items()))
        lines.append(f"    {port} ({role}): {sum(groups.values())} = {f['instances']} x "
                     f"{sum(groups.values()) / f['instances']:.2f}  [{parts}]")
    lines.append("")
    lines.append("  keys by kind (all primaries; bytes: MEMORY USAGE, mean of a sample):")
    for name, k in sorted(f["kinds"].items()):
        mean = k["bytes"] / k["sampled"] if k["sampled"] else None
        lines.append(f"    {name:<22}{num(k['keys']):>9} keys{num(mean):>8} bytes each"
                     + (f"  e.g. {', '.join(k['examples'][:2])}" if name == "other" else ""))
    lines.append(f"  per cached entry       {num(f['bytes_per_value'])} bytes (value keys, MEMORY USAGE); "
                 f"{num(f['dataset_bytes_per_key'])} bytes per key of used_memory_dataset")
    lines.append("")
    lines.append(f"  invalidation stream    on {f['stream_node']}: {num(f['stream_entries'])} entries added, "
                 f"{num(f['entries_per_write'], 2)} per write; {num(f['stream_bytes_per_entry'])} bytes per entry in "
                 f"Redis, {num(f['payload_bytes_per_entry'])} bytes of fields per entry to each reader")
    lines.append(f"  stream reads           {num(f['xreads_per_instance_per_second'], 2)} XREAD per instance per second")
    lines.append("")
    lines.append(projection(f))
    return "\n".join(lines)


def projection(f):
    """Connections, memory and invalidation traffic per node for 10, 50 and 200 instances, linear in the instances."""
    conns = f["connections_per_node"]
    per_instance = {port: c / f["instances"] for port, c in conns.items()}
    busiest = max(per_instance.values()) if per_instance else 0
    quietest = min(per_instance.values()) if per_instance else 0
    xreads = f["xreads_per_instance_per_second"] or 0
    payload = f["payload_bytes_per_entry"] or 0
    lines = ["  projected (linear in N instances): connections per node = N x measured per instance; XREAD/s on the",
             "  stream's node = N x measured; bytes out per write = entries per write x N x payload",
             f"    {'N':>5}{'conns/node':>16}{'XREAD/s':>10}{'bytes out per write':>22}"]
    for n in PROJECTED_INSTANCES:
        lines.append(f"    {n:>5}{f'{quietest * n:.0f}-{busiest * n:.0f}':>16}{xreads * n:>10.0f}"
                     f"{(f['entries_per_write'] or 0) * n * payload:>22,.0f}")
    return "\n".join(lines)


def main(argv):
    if len(argv) >= 4 and argv[1] == "measure":
        print(text(measure(argv[2], [int(p) for p in argv[3:]])))
    elif len(argv) == 3 and argv[1] == "report":
        print(text(json.loads((Path(argv[2]) / "footprint.json").read_text())))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
