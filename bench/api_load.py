"""The search API under more load than it can serve, and with clients that give up.

    python -m bench.api_load [--requests 300] [--seconds 30] [--abandoned 30] [--flood 2]
                             [--out FILE]

sample_docs/ is ingested into a temporary data directory and `kbflow serve` answers /search.
Load: `--requests` eval questions sent at an even rate over `--seconds` (open loop: a request
goes out on time whether or not earlier ones were answered), each on its own connection; every
reply's status and time are recorded (p50/p95/max overall and per status, counts of 200/503).
Abandoned: `--abandoned` clients send a question at once and hang up after 0.5 s; then one more
question is asked and timed (before the fix, it waited for every abandoned search). Flood:
with `--flood N`, a second key keeps N connections busy with 1,000-character random Chinese
queries (each sent as soon as the last one was answered or refused) for as long as the first
key's load lasts; the first key's replies then say whether one key can starve the others.
Prints a Markdown section; `--out bench/RESULTS.md` also writes it there (replaced if present).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench import write_section
from bench.latency import (
    REPO,
    environment,
    free_port,
    groups_of,
    ingest,
    kbflow,
    summary,
    wait_until_up,
)

SECTION = "## Search API under load (bench/api_load.py)"
KEY = "bench-api-load-key-0123456789"
FLOOD_KEY = "bench-api-flood-key-0123456789"
FLOOD_CHARS = 1000  # the API's longest query


async def ask(client: httpx.AsyncClient, url: str, case: dict, delay: float,
              timeout: float) -> tuple[int, float]:
    """(status, seconds) of one question sent after `delay`; status 0 when the client gave
    up or the connection failed."""
    await asyncio.sleep(delay)
    started = time.perf_counter()
    try:
        reply = await client.post(url, json={"query": case["question"], "k": 10},
                                  timeout=timeout)
    except httpx.HTTPError:
        return 0, time.perf_counter() - started
    return reply.status_code, time.perf_counter() - started


async def flood(url: str, connections: int, stop: asyncio.Event) -> Counter[int]:
    """Statuses of the flooding key's replies: `connections` loops, each sending a random
    1,000-character Chinese query as soon as its last one came back, until `stop`."""
    rng, statuses = random.Random(39), Counter[int]()

    async def loop() -> None:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {FLOOD_KEY}"}) as client:
            while not stop.is_set():
                query = "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(FLOOD_CHARS))
                status, _ = await ask(client, url, {"question": query}, 0, 120)
                statuses[status] += 1

    await asyncio.gather(*(loop() for _ in range(connections)))
    return statuses


async def load(url: str, cases: list[dict], requests: int, seconds: float,
               abandoned: int, flooding: int = 0) -> dict:
    limits = httpx.Limits(max_connections=requests + abandoned, max_keepalive_connections=0)
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"},
                                 limits=limits) as client:
        for case in cases[:5]:  # warm-up, not counted
            await ask(client, url, case, 0, 120)
        step, stop = seconds / requests, asyncio.Event()
        flooder = asyncio.ensure_future(flood(url, flooding, stop))
        replies = await asyncio.gather(*(ask(client, url, cases[i % len(cases)], i * step, 120)
                                         for i in range(requests)))
        stop.set()
        flooded = await flooder
        await asyncio.sleep(2)  # let the server drain
        gave_up = await asyncio.gather(*(ask(client, url, cases[i % len(cases)], 0, 0.5)
                                         for i in range(abandoned)))
        after = await ask(client, url, cases[0], 0, 300)
    return {"replies": replies, "gave_up": gave_up, "after": after, "flooded": flooded}


def run(requests: int, seconds: float, abandoned: int, work: Path, flooding: int = 0) -> dict:
    cases = [json.loads(line) for line in
             (REPO / "eval" / "sample_cases.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    folder = work / "corpus"
    shutil.copytree(REPO / "sample_docs", folder)
    data = work / "data"
    ingest(data, folder)
    keys = work / "keys.json"
    grant = {"tenant": "default", "groups": groups_of(data)}
    keys.write_text(json.dumps({KEY: grant, FLOOD_KEY: grant}))
    port = free_port()
    server = kbflow(data, "serve", "--port", str(port),
                    env=environment(KBFLOW_API_KEYS_FILE=str(keys)),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(port, server)
        return asyncio.run(load(f"http://127.0.0.1:{port}/search", cases, requests, seconds,
                                abandoned, flooding))
    finally:
        server.terminate()
        server.wait(timeout=60)


def section(result: dict, args: argparse.Namespace, load_avg: tuple[float, float]) -> str:
    replies = result["replies"]
    counts = Counter(status for status, _ in replies)
    by_status = {status: [t for s, t in replies if s == status] for status in sorted(counts)}
    after_status, after_seconds = result["after"]
    lines = [SECTION, "",
             f"Generated by `python -m bench.api_load` on {datetime.now(UTC):%Y-%m-%d %H:%M} "
             f"UTC, {os.cpu_count()} cores, sample_docs, embedded stores. Load average (1 min) "
             f"{load_avg[0]:.2f} before, {load_avg[1]:.2f} after (above 2 on 2 cores: shared "
             "with other work, figures inflated).", "",
             "| what | measured | goal |", "|---|---|---|",
             f"| {args.requests} requests in {args.seconds:.0f} s, all replies | "
             f"{summary([t for _, t in replies])} | p95 < 2 s |"]
    if args.flood:
        flooded = result["flooded"]
        lines.insert(-3, f"While another key floods on {args.flood} connections with "
                         f"{FLOOD_CHARS}-character random Chinese queries (its replies: "
                         f"{', '.join(f'{n} × {s}' for s, n in sorted(flooded.items()))}); "
                         "the rows are the other key's.\n")
    for status, times in by_status.items():
        lines.append(f"| … status {status or 'none (client error)'}: {counts[status]} | "
                     f"{summary(times)} | 200 fast, 503 at once |")
    lines += [f"| a search after {args.abandoned} clients gave up after 0.5 s | "
              f"{after_seconds * 1000:.0f} ms (status {after_status}) | "
              "about one search, not all of theirs |", ""]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--abandoned", type=int, default=30)
    parser.add_argument("--flood", type=int, default=0,
                        help="connections of a second key flooding with long queries")
    parser.add_argument("--out", type=Path, help="also write the section into this file")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kbflow-api-load-") as work:
        result = run(args.requests, args.seconds, args.abandoned, Path(work), args.flood)
    text = section(result, args, (load_before, os.getloadavg()[0]))
    if args.out:
        write_section(args.out, SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
