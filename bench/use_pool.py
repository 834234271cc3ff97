"""The cross-lingual encoder's passes serial and on every core (issue #43): USE vectors of real
law articles, then of their distinct sentences (the two passes the vectors stage runs), encoded
in this process alone and with the worker pool, rounds interleaved, in one process.

    .venv/bin/python -m bench.use_pool [--texts 1000] [--rounds 2]

The articles are the `第…条` paragraphs of ../shared/realworld/laws in path order (the chunks
of these laws are one article each); this process's model is loaded before timing, as in an
ingest; each pooled round starts a new pool, so its workers' start-up is counted. Prints a
Markdown table and whether every pooled vector equals the serial one exactly.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from bench.realworld import SHARED
from ingest.embed import use_pool
from ingest.text import sentences

ARTICLE = re.compile(r"^第[一二三四五六七八九十百千零〇]+条")


def articles(limit: int) -> list[str]:
    found: list[str] = []
    for path in sorted((SHARED / "laws").rglob("*.md")):
        found += [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                  if ARTICLE.match(line.strip())]
        if len(found) >= limit:
            break
    return found[:limit]


def timed(run: Callable[[], np.ndarray]) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    vectors = run()
    return time.perf_counter() - start, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    chunks = articles(args.texts)
    passes = {"chunks": chunks,
              "sentences": list(dict.fromkeys(s for c in chunks for s in sentences(c)))}
    workers = use_pool.worker_count()
    use_pool.encode(["预热"], workers=0)  # this process's model, loaded as an ingest has it
    best: dict[tuple[str, str], float] = {}
    same = True
    print(f"load average at start: {os.getloadavg()}")
    for _ in range(args.rounds):
        for name, texts in passes.items():
            serial_s, serial = timed(partial(use_pool.encode, texts, workers=0))
            pooled_s, pooled = timed(partial(use_pool.encode, texts, workers=workers))
            use_pool.shutdown()  # the next round starts its workers again
            same = same and bool(np.array_equal(serial, pooled))
            for mode, s in (("serial", serial_s), ("pooled", pooled_s)):
                best[name, mode] = min(best.get((name, mode), s), s)
    print(f"load average at end: {os.getloadavg()}; workers beside this process: {workers}; "
          f"pooled vectors equal to serial ones: {same}\n")
    print("| pass | texts | chars | serial s | pooled s | pooled / serial |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, texts in passes.items():
        serial_s, pooled_s = best[name, "serial"], best[name, "pooled"]
        print(f"| USE {name} | {len(texts)} | {sum(map(len, texts))} | {serial_s:.1f} | "
              f"{pooled_s:.1f} | {pooled_s / serial_s:.2f} |")


if __name__ == "__main__":
    main()
