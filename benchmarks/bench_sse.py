"""SSE reader benchmark: events per second of the strict reader over raw bytes.

Run: ``python benchmarks/bench_sse.py [--events N] [--split BYTES] [--rounds R]``. Parses a
stream of ``N`` completion chunks fed in ``BYTES``-sized pieces (as a socket delivers them) and
prints the best of ``R`` rounds. The goal the suite used to assert in a timed unit test: 10,000
events in under 0.1 s. Not a test: timings belong in benchmarks, not in CI.
"""

from __future__ import annotations

import argparse
import json
import time

from conformance.sse import SSEParser


def stream(events: int) -> bytes:
    return b"".join(
        b"data: " + json.dumps({"choices": [{"text": f" t{i}", "index": 0}]}).encode() + b"\n\n"
        for i in range(events)
    )


def parse_seconds(body: bytes, split: int) -> tuple[float, int]:
    """(seconds, events) of one parse of ``body`` fed ``split`` bytes at a time."""
    parser = SSEParser()
    started = time.perf_counter()
    count = 0
    for i in range(0, len(body), split):
        count += len(parser.feed(body[i : i + split], float(i)))
    parser.close(0.0)
    return time.perf_counter() - started, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--split", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    body = stream(args.events)
    best, count = min(parse_seconds(body, args.split) for _ in range(args.rounds))
    print(f"| events | bytes | split | best of {args.rounds} | events/s |")
    print("|---|---|---|---|---|")
    print(f"| {count:,} | {len(body):,} | {args.split} | {best * 1000:.1f} ms | "
          f"{count / best:,.0f} |")


if __name__ == "__main__":
    main()
