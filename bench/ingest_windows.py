"""Peak memory of a run against its window of files (the file_window setting, #43).

    .venv/bin/python -m bench.ingest_windows --window N [--gold-files-only] [--limit N]
        [--data-dir DIR] [--vector-cache FILE]

One cold run of `run_pipeline` in this process (no Prefect, no CLI) over the chosen law files
(as bench.ingest_real picks and copies them) with file_window set to N: prints its peak RSS,
seconds and what it wrote as JSON. Seed the vector cache with an earlier run's
(`--vector-cache`) so that no model loads and the run measures what the pipeline holds. Run it
with two windows side by side to compare them under the same load.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import shutil
import time
from pathlib import Path

from bench.ingest_real import copy_files, pick_files
from bench.realworld import SHARED
from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.parse import discover
from ingest.pipeline import InProcess, RunContext, run_pipeline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--window", type=int, required=True, help="files per window")
    parser.add_argument("--laws", type=Path, default=SHARED / "laws")
    parser.add_argument("--questions", type=Path, default=SHARED / "stard_public.jsonl")
    parser.add_argument("--gold-files-only", action="store_true")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--data-dir", type=Path, required=True, help="removed first")
    parser.add_argument("--vector-cache", type=Path, metavar="FILE")
    args = parser.parse_args()
    data = args.data_dir.resolve()
    shutil.rmtree(data, ignore_errors=True)
    laws = data.with_name(f"{data.name}-laws")
    copy_files(args.laws, pick_files(args.laws, args.questions, args.gold_files_only,
                                     args.limit), laws)
    data.mkdir(parents=True)
    settings = Settings(data_dir=data, file_window=args.window)
    if args.vector_cache:
        shutil.copy2(args.vector_cache, settings.vector_cache_path)
    load, started = os.getloadavg()[0], time.perf_counter()
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id="windows",
                         steps=InProcess(), log=logging.getLogger("bench.ingest_windows"))
        summary = run_pipeline(ctx, str(laws), [(p, laws) for p in discover(laws)])
    print(json.dumps({
        "window": args.window, "files": summary.files,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "load": [load, os.getloadavg()[0]], "written": summary.written,
        "chunks": summary.chunks.added, "triples": summary.triples,
        "relinked": len(summary.relinked), "failures": len(summary.failures),
        "stage_seconds": summary.seconds}))


if __name__ == "__main__":  # the parse pool's processes import this module again
    main()
