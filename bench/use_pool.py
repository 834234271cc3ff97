"""The cross-lingual encoder's passes serial and on every core (issue #43): USE vectors of real
law articles, then of their distinct sentences (the two passes the vectors stage runs), encoded
in this process alone and with the worker pool, rounds interleaved, in one process.

    .venv/bin/python -m bench.use_pool [--texts 1000] [--rounds 2] [--own-session]

The texts are the `第…条` (article) paragraphs of ../shared/realworld/laws in path order;
this process's model is loaded before timing, as in an ingest; each pooled call starts new
workers, so their start-up is counted. Wall seconds and the CPU seconds of this process and of
the workers (best of the rounds each): on a busy machine the wall times say little (processes
of one session share one scheduler slice under Linux's autogroup), the CPU seconds say what
each core has to do. Prints a Markdown table, a worker's
start-up in CPU seconds, and whether every pooled vector equals the serial one exactly.
`--own-session` starts the workers in sessions of their own (setsid), each with a slice of its
own, as an idle core would give them: what the wall time would be on idle cores, approximately.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import time
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


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # of the workers stopped so far
    return usage.ru_utime + usage.ru_stime


def run(texts: list[str], workers: int) -> tuple[dict[str, float], np.ndarray]:
    """Wall s, this process's CPU s and the workers' CPU s (their start-up included) of one
    call; with workers, a new pool, stopped after the call."""
    wall, cpu, children = time.perf_counter(), time.process_time(), children_cpu()
    vectors = use_pool.encode(texts, workers=workers)
    figures = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    use_pool.shutdown()
    figures["workers cpu"] = children_cpu() - children
    return figures, vectors


def start_up_cpu() -> float:
    """A worker's start-up in CPU s: started by a call too small to wait for it."""
    return run(["。"] * (use_pool.SLICE + 1), 1)[0]["workers cpu"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--own-session", action="store_true")
    args = parser.parse_args()
    if args.own_session:  # the workers' Popen (this process starts no other)
        use_pool.subprocess.Popen = partial(subprocess.Popen,  # type: ignore[misc]
                                            start_new_session=True)
    chunks = articles(args.texts)
    passes = {"chunks": chunks,
              "sentences": list(dict.fromkeys(s for c in chunks for s in sentences(c)))}
    workers = use_pool.worker_count()
    use_pool.encode(["预热"], workers=0)  # this process's model, loaded as an ingest has it
    best: dict[tuple[str, str, str], float] = {}
    same = True
    print(f"load average at start: {os.getloadavg()}; own sessions: {args.own_session}")
    for _ in range(args.rounds):
        for name, texts in passes.items():
            serial, alone = run(texts, 0)
            pooled, vectors = run(texts, workers)
            same = same and bool(np.array_equal(alone, vectors))
            for mode, figures in (("serial", serial), ("pooled", pooled)):
                for figure, value in figures.items():
                    key = (name, mode, figure)
                    best[key] = min(best.get(key, value), value)
    start_up = min(start_up_cpu() for _ in range(args.rounds))
    print(f"load average at end: {os.getloadavg()}; workers beside this process: {workers}; "
          f"pooled vectors equal to serial ones: {same}; a worker's start-up: "
          f"{start_up:.2f} CPU s\n")
    print("| pass | texts | chars | serial wall s | serial CPU s | pooled wall s | "
          "pooled CPU s here / workers | pooled wall / serial |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, texts in passes.items():
        s = {f: best[name, "serial", f] for f in ("wall", "cpu")}
        p = {f: best[name, "pooled", f] for f in ("wall", "cpu", "workers cpu")}
        print(f"| USE {name} | {len(texts)} | {sum(map(len, texts))} | {s['wall']:.1f} | "
              f"{s['cpu']:.1f} | {p['wall']:.1f} | {p['cpu']:.1f} / {p['workers cpu']:.1f} | "
              f"{p['wall'] / s['wall']:.2f} |")


if __name__ == "__main__":
    main()
