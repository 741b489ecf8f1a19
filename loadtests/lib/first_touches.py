#!/usr/bin/env python3
"""The database selects a cache cannot avoid under the journey, minute by minute, beside the ones a run made.

A concert's detail or schedules are in no cache before their first read (a compulsory miss): with ids drawn Zipf over
the whole data set (lib/journey.js: every journey reads the drawn concert's schedules, 40 % of them its detail too),
the expected number of first reads in minute m is, per resource, sum over ids of (1 - p)^(n (m - 1)) - (1 - p)^(n m),
p the id's probability (k^-s normalised, the sampler's) and n the resource's reads per minute. A cache that keeps what
it loaded makes those selects and few more; the target: selects after the first minute at most these plus 2 % of the
requests.

    first_touches.py sample --db-port P --mgmt-port M --seconds S --out FILE   every 10 s: Com_select and requests
    first_touches.py judge FILE --concerts N --rate R                          per minute: made, compulsory, verdict
"""
import argparse
import math
import re
import subprocess
import sys
import time
import urllib.request

DETAIL_SHARE = 0.4  # lib/journey.js
REQUESTS_PER_JOURNEY = 0.4 * 3 + 0.15 * 3 + 0.45 * 2  # detail, next page, list and schedules only
ENDPOINTS = ("/api/concerts", "/api/concerts/{id}", "/api/concerts/{concertId}/schedules")


def compulsory(concerts, journeys_per_minute, minutes, exponent=1.05):
    """[(minute, first schedules reads, first detail reads)] expected for minutes 1..minutes."""
    weights = [k ** -exponent for k in range(1, concerts + 1)]
    total = math.fsum(weights)
    rates = {"schedules": journeys_per_minute, "detail": journeys_per_minute * DETAIL_SHARE}
    unseen = {name: [0.0] * (minutes + 1) for name in rates}
    for weight in weights:
        miss = 1 - weight / total
        for name, n in rates.items():
            for m in range(minutes + 1):
                unseen[name][m] += miss ** (n * m)
    return [(m, unseen["schedules"][m - 1] - unseen["schedules"][m], unseen["detail"][m - 1] - unseen["detail"][m])
            for m in range(1, minutes + 1)]


def judge(samples, concerts, rate, exponent=1.05, slack=0.02):
    """Rows per whole minute of samples [(seconds, selects, requests)] from the first: (minute, requests, selects,
    compulsory, bound, within); the first minute is reported, not judged."""
    minutes = int((samples[-1][0] - samples[0][0]) // 60)
    model = compulsory(concerts, rate * 60, minutes, exponent)
    rows = []
    for minute, first_schedules, first_detail in model:
        start = value_at(samples, samples[0][0] + 60 * (minute - 1))
        end = value_at(samples, samples[0][0] + 60 * minute)
        requests = end[1] - start[1]
        selects = end[0] - start[0]
        floor = first_schedules + first_detail
        bound = floor + slack * requests
        rows.append((minute, requests, selects, floor, bound, minute == 1 or selects <= bound))
    return rows


def value_at(samples, seconds):
    """(selects, requests) at the sample nearest to seconds."""
    nearest = min(samples, key=lambda sample: abs(sample[0] - seconds))
    return nearest[1], nearest[2]


def sample(db_port, mgmt_port, seconds, out, interval=10.0):
    started = time.time()
    with open(out, "w") as f:
        f.write("seconds\tselects\trequests\n")
        while True:
            now = time.time() - started
            try:
                f.write(f"{now:.1f}\t{selects(db_port)}\t{requests(mgmt_port):.0f}\n")
            except (subprocess.CalledProcessError, OSError):
                return  # the run is over: its servers are gone
            f.flush()
            if now >= seconds:
                return
            time.sleep(max(0.0, interval - (time.time() - started - now)))


def selects(db_port):
    output = subprocess.run(["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{db_port}", "-uconcert", "-pconcert", "-N",
                             "-B", "-e", "SHOW GLOBAL STATUS LIKE 'Com_select'"],
                            check=True, capture_output=True, text=True).stdout
    return int(output.split()[1])


def requests(mgmt_port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{mgmt_port}/actuator/prometheus", timeout=5).read().decode()
    count = 0.0
    for line in text.splitlines():
        match = re.match(r'http_server_requests_seconds_count\{(.*)\} (\S+)$', line)
        if match and any(f'uri="{uri}"' in match.group(1) for uri in ENDPOINTS):
            count += float(match.group(2))
    return count


def read(path):
    rows = [line.split("\t") for line in open(path).read().splitlines()[1:]]
    return [(float(s), int(c), float(r)) for s, c, r in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("sample", help="sample Com_select and the API's requests every 10 s")
    s.add_argument("--db-port", type=int, required=True)
    s.add_argument("--mgmt-port", type=int, required=True)
    s.add_argument("--seconds", type=float, required=True)
    s.add_argument("--out", required=True)
    j = commands.add_parser("judge", help="each minute's selects against the compulsory ones")
    j.add_argument("file")
    j.add_argument("--concerts", type=int, required=True)
    j.add_argument("--rate", type=float, required=True, help="journeys per second")
    j.add_argument("--exponent", type=float, default=1.05)
    args = parser.parse_args()
    if args.command == "sample":
        sample(args.db_port, args.mgmt_port, args.seconds, args.out)
        return 0
    rows = judge(read(args.file), args.concerts, args.rate, args.exponent)
    print("minute  requests   selects  compulsory  bound (+2 %)  selects/request  compulsory/request")
    for minute, reqs, sel, floor, bound, within in rows:
        print(f"{minute:6d}{reqs:10.0f}{sel:10d}{floor:12.0f}{bound:14.0f}{sel / reqs:16.1%}{floor / reqs:20.1%}"
              + ("" if minute == 1 else ("  within" if within else "  OVER")))
    return 0 if all(row[5] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
