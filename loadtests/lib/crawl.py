"""Crawls the API's cached reads into files that nginx serves as they are (run.sh --ceiling's HTTP limit, ADR 0205).

    python3 lib/crawl.py BASE_URL DIR --concerts N [--page-size 20]

Every URL the journey (lib/journey.js) asks for: each list page by cursor, as the journey spells it
(`?size=S`, then `?cursor=C&size=S`), each concert's detail and schedules. A response's body goes to
DIR/<path>?<query>.body, so that nginx's `try_files $uri$is_args$args.body` finds it: the same URLs, the same
bytes. One keep-alive connection; a response other than 200 stops the crawl.
"""

import argparse
import http.client
import json
import os
import sys
from urllib.parse import urlsplit


def crawl(base, directory, concerts, page_size):
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)
    count = 0

    def fetch(target):
        nonlocal count
        connection.request("GET", target)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            sys.exit(f"crawl.py: GET {target} answered {response.status}")
        path = os.path.join(directory, target.lstrip("/") + ".body")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(body)
        count += 1
        return body

    cursor = ""
    for _ in range((concerts + page_size - 1) // page_size):
        query = f"cursor={cursor}&size={page_size}" if cursor else f"size={page_size}"
        cursor = json.loads(fetch(f"/api/concerts?{query}")).get("nextCursor")
        if not cursor:
            break
    for concert in range(1, concerts + 1):
        fetch(f"/api/concerts/{concert}")
        fetch(f"/api/concerts/{concert}/schedules")
    connection.close()
    return count


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("directory")
    parser.add_argument("--concerts", type=int, required=True)
    parser.add_argument("--page-size", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"{crawl(args.base, args.directory, args.concerts, args.page_size)} responses in {args.directory}")


if __name__ == "__main__":
    main(sys.argv[1:])
