#!/usr/bin/env python3
"""Stand-in for the concert-cache API, for testing the load-test runner without Java or data.

Serves the contract's read and admin endpoints over N synthetic concerts (ids 1..N, 2 or 3 schedules
each), keeps admin writes in memory so read-your-write checks are meaningful, and exposes
/actuator/health and an /actuator/prometheus with tiered_cache_gets_total counters from a simulated
cache (first read of a key misses both tiers, later reads hit L1; the `none` profile has no cache).

    standin.py --port 8080 --management-port 8081 --concerts 5000 --profile cache --token secret
"""
import argparse
import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Store:
    def __init__(self, concerts, profiles):
        self.n = concerts
        # The runner passes Spring profiles (comma-separated, or "none"); only the cache ones matter.
        active = set(profiles.split(","))
        self.profile = "cache" if "cache" in active else "redis-only" if "redis-only" in active else "none"
        self.lock = threading.Lock()
        self.concert_overrides = {}
        self.schedule_overrides = {}
        self.seen = set()
        self.gets = {}  # (cache, tier, result) -> count
        self.requests = {}  # (method, uri pattern, status) -> count, as Spring's http_server_requests

    def concert(self, cid):
        if not 1 <= cid <= self.n:
            return None
        base = {
            "id": cid,
            "title": f"Concert {cid}",
            "artist": f"Artist {cid % 97}",
            "venue": f"Hall {cid % 13}",
            "description": "stand-in",
            "startDate": "2026-12-01",
            "endDate": "2026-12-03",
        }
        base.update(self.concert_overrides.get(cid, {}))
        return base

    def schedules(self, cid):
        count = 2 + cid % 2
        result = []
        for i in range(count):
            sid = cid * 10 + i
            schedule = {"id": sid, "startsAt": f"2026-12-0{i + 1}T19:00:00Z", "totalSeats": 1200}
            schedule.update(self.schedule_overrides.get(sid, {}))
            result.append(schedule)
        return result

    def record_get(self, cache, key):
        if self.profile == "none":
            return
        with self.lock:
            hit = (cache, key) in self.seen
            self.seen.add((cache, key))
            tiers = ["l2"] if self.profile == "redis-only" else ["l1", "l2"]
            if hit:
                self._count(cache, tiers[0], "hit")
            else:
                for tier in tiers:
                    self._count(cache, tier, "miss")

    def evict(self, cache, key):
        with self.lock:
            self.seen.discard((cache, key))
            if cache == "concert":
                # The API's list: the concert's block of 100 ids and the end of the list (ADR 0036).
                self.seen.discard(("concert-list", (key - 1) // 100))
                self.seen.discard(("concert-list-end", "end"))

    def _count(self, cache, tier, result):
        self.gets[(cache, tier, result)] = self.gets.get((cache, tier, result), 0) + 1

    def count_request(self, method, path, status):
        uri = re.sub(r"/\d+", "/{id}", urlsplit(path).path)
        with self.lock:
            key = (method, uri, str(status))
            self.requests[key] = self.requests.get(key, 0) + 1

    def prometheus(self):
        lines = ["# TYPE tiered_cache_gets_total counter"]
        with self.lock:
            for (cache, tier, result), value in sorted(self.gets.items()):
                lines.append(f'tiered_cache_gets_total{{cache="{cache}",result="{result}",tier="{tier}"}} {value}.0')
            # As Spring's: a summary whose _count samples count requests. Declared as a counter of that name, the
            # parser (prometheus_client 0.26) read its samples as http_server_requests_seconds_count_total.
            lines.append("# TYPE http_server_requests_seconds summary")
            for (method, uri, status), value in sorted(self.requests.items()):
                lines.append(
                    f'http_server_requests_seconds_count{{method="{method}",status="{status}",uri="{uri}"}} {value}.0'
                )
        return "\n".join(lines) + "\n"


def encode_cursor(after_id):
    return base64.urlsafe_b64encode(f"after:{after_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor):
    padded = cursor + "=" * (-len(cursor) % 4)
    text = base64.urlsafe_b64decode(padded.encode()).decode()
    if not text.startswith("after:"):
        raise ValueError(cursor)
    return int(text[len("after:"):])


def make_handler(store, token, management):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as k6 and Tomcat use it
        disable_nagle_algorithm = True  # headers and body go out in two writes

        def log_message(self, *args):
            pass

        def send_json(self, status, body, content_type="application/json"):
            if not management:
                store.count_request(self.command, self.path, status)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def send_text(self, text):
            data = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def problem(self, status, detail):
            self.send_json(status, {"status": status, "detail": detail}, "application/problem+json")

        def do_GET(self):
            url = urlsplit(self.path)
            if management:
                if url.path in ("/actuator/health", "/actuator/health/readiness"):
                    return self.send_json(200, {"status": "UP"})
                if url.path == "/actuator/prometheus":
                    return self.send_text(store.prometheus())
                return self.problem(404, "not found")
            path = url.path
            if path == "/api/concerts":
                return self.list(parse_qs(url.query))
            match = re.fullmatch(r"/api/concerts/(\d+)(/schedules)?", path)
            if not match:
                return self.problem(404, "not found")
            cid = int(match.group(1))
            concert = store.concert(cid)
            if concert is None:
                return self.problem(404, f"concert {cid} not found")
            if match.group(2):
                store.record_get("schedules", cid)
                return self.send_json(200, {"concertId": cid, "schedules": store.schedules(cid)})
            store.record_get("concert", cid)
            return self.send_json(200, concert)

        def list(self, query):
            try:
                size = int(query.get("size", ["20"])[0])
                after = decode_cursor(query["cursor"][0]) if query.get("cursor", [""])[0] else 0
            except ValueError:
                return self.problem(400, "bad size or cursor")
            if not 1 <= size <= 100:
                return self.problem(400, "size must be 1..100")
            ids = range(after + 1, min(after + size, store.n) + 1)
            store.record_get("concert-list-end", "end")
            for block in sorted({(i - 1) // 100 for i in ids}):
                store.record_get("concert-list", block)
            next_cursor = encode_cursor(after + size) if after + size < store.n else None
            return self.send_json(200, {"items": [store.concert(i) for i in ids], "nextCursor": next_cursor})

        def do_PUT(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.headers.get("Authorization") != f"Bearer {token}":
                return self.problem(401, "admin token required")
            url = urlsplit(self.path)
            match = re.fullmatch(r"/api/concerts/(\d+)(?:/schedules/(\d+))?", url.path)
            if not match or store.concert(int(match.group(1))) is None:
                return self.problem(404, "not found")
            cid = int(match.group(1))
            if match.group(2):
                sid = int(match.group(2))
                if sid not in {s["id"] for s in store.schedules(cid)}:
                    return self.problem(404, "not found")
                store.schedule_overrides[sid] = {k: body[k] for k in ("startsAt", "totalSeats")}
                store.evict("schedules", cid)
                return self.send_json(200, next(s for s in store.schedules(cid) if s["id"] == sid))
            fields = ("title", "artist", "venue", "description", "startDate", "endDate")
            store.concert_overrides[cid] = {k: body[k] for k in fields}
            store.evict("concert", cid)
            return self.send_json(200, store.concert(cid))

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--management-port", type=int, required=True)
    parser.add_argument("--concerts", type=int, default=5000)
    parser.add_argument("--profile", default="cache", help="cache, redis-only or none (Spring profile list)")
    parser.add_argument("--token", default="")
    args = parser.parse_args()
    store = Store(args.concerts, args.profile)
    api = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(store, args.token, False))
    mgmt = ThreadingHTTPServer(("127.0.0.1", args.management_port), make_handler(store, args.token, True))
    api.daemon_threads = mgmt.daemon_threads = True
    threading.Thread(target=mgmt.serve_forever, daemon=True).start()
    api.serve_forever()


if __name__ == "__main__":
    main()
