"""Search latency: the warm API, a cold one-shot `kbflow search`, and both during an ingest.

    python -m bench.latency [--docs 0] [--rounds 1] [--cli 3] [--out bench/RESULTS.md]
    python -m bench.latency --reader DATA_DIR [--rounds 1]   # the reader model's cost

With `--docs 0` the index is sample_docs/; with `--docs N` it is N synthetic documents
(bench/corpus.py). The eval questions (eval/sample_cases.jsonl, with their as-of dates) are
asked of `kbflow serve` over HTTP; the first round warms up and is not counted. The cold
figure is the whole `kbflow search --json` process, interpreter start included. Then a second
folder (20 synthetic documents) is ingested into the same data directory by `kbflow ingest`,
and the questions are asked again, over the API and from CLI processes, until it finishes.
Everything runs with the embedding model configured on this checkout, and the results go into
the "Search latency" section of `--out` (replaced if present, else appended).

`--reader DATA_DIR` measures the reader model (search/ranker.py) over an index already built
(sample_docs): ms per pair (the fused top N of each question, cut to their windows, in the
ranker's batches) and the warm API's latency with the reader model switched on and off per
request, the two alternating question by question so both see the same load
("The reader model's cost" section; KBFLOW_READER_DIR and KBFLOW_RERANK_DEPTH apply).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench import write_section
from bench.corpus import make_corpus
from ingest.config import Settings

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SECTION = "## Search latency (bench/latency.py)"
READER_SECTION = "## The reader model's cost (bench/latency.py --reader)"
KEY = "bench-latency-key-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    return env | {"HF_HUB_OFFLINE": "1"} | extra


def kbflow(data: Path, *args: str, env: dict[str, str], **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "flows.cli", "--data-dir", str(data), *args],
                            env=env, cwd=REPO, text=True, **kwargs)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(values: list[float]) -> str:
    if not values:
        return "no samples"
    ms = [v * 1000 for v in values]
    return (f"p50 {percentile(ms, 0.5):.0f} ms, p95 {percentile(ms, 0.95):.0f} ms, "
            f"max {max(ms):.0f} ms (n={len(ms)})")


def groups_of(data: Path) -> list[str]:
    """Every ACL group in the index, so the benchmark key can read every document."""
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(Settings(data_dir=data).manifest)
    try:
        return sorted({g for r in manifest.documents() for g in (r.acl or [])}) or ["all-staff"]
    finally:
        manifest.close()


class Api:
    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/search"
        self.client = httpx.Client(timeout=300, headers={"Authorization": f"Bearer {KEY}"})

    def ask(self, case: dict, rerank: bool | None = None) -> float:
        started = time.perf_counter()
        reply = self.client.post(self.url, json={"query": case["question"], "k": 10,
                                                 "as_of": case.get("as_of"), "rerank": rerank})
        elapsed = time.perf_counter() - started
        reply.raise_for_status()
        return elapsed


def cli_search(data: Path, case: dict) -> float:
    args = ["search", case["question"], "--k", "10", "--json"]
    if case.get("as_of"):
        args += ["--as-of", case["as_of"]]
    started = time.perf_counter()
    done = kbflow(data, *args, env=environment(), stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE)
    out, err = done.communicate(timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"kbflow search failed: {err[-2000:]}")
    json.loads(out)
    return time.perf_counter() - started


def wait_until_up(port: int, server: subprocess.Popen[str]) -> float:
    started = time.perf_counter()
    while server.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("kbflow serve exited")


def ingest(data: Path, folder: Path) -> dict:
    done = kbflow(data, "ingest", str(folder), "--json", env=environment(),
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = done.communicate(timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"kbflow ingest exited {done.returncode}: {(out + err)[-3000:]}")
    return json.loads(out)


def run(docs: int, rounds: int, cli_runs: int, work: Path) -> dict:
    cases = [json.loads(line) for line in
             (REPO / "eval" / "sample_cases.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    folder = work / "corpus"
    if docs:
        make_corpus(folder, docs)
    else:
        shutil.copytree(REPO / "sample_docs", folder)
    data = work / "data"
    first = ingest(data, folder)
    keys = work / "keys.json"
    keys.write_text(json.dumps({KEY: {"tenant": "default", "groups": groups_of(data)}}))
    port = free_port()
    server = kbflow(data, "serve", "--port", str(port),
                    env=environment(KBFLOW_API_KEYS_FILE=str(keys)),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    result: dict = {"cases": len(cases), "index_seconds": first["total_seconds"],
                    "versions": first["written"]}
    try:
        result["serve_start"] = wait_until_up(port, server)
        api = Api(port)
        for case in cases:  # warm-up round
            api.ask(case)
        result["warm"] = [api.ask(case) for _ in range(rounds) for case in cases]
        result["cold"] = [cli_search(data, cases[i % len(cases)]) for i in range(cli_runs)]

        extra = work / "more"
        make_corpus(extra / "extra", 20, seed=11)  # doc ids extra-policy-…: new documents
        errors: list[str] = []

        def write() -> None:
            try:
                result["second"] = ingest(data, extra)
            except RuntimeError as exc:
                errors.append(f"ingest: {exc}"[:500])

        writer = threading.Thread(target=write)
        writer.start()
        during_api: list[float] = []
        during_cli: list[float] = []

        def cli_loop() -> None:
            i = 0
            while writer.is_alive():
                try:
                    during_cli.append(cli_search(data, cases[i % len(cases)]))
                except Exception as exc:  # noqa: BLE001 - counted, not fatal
                    errors.append(f"cli: {exc}"[:300])
                i += 1

        cli = threading.Thread(target=cli_loop)
        cli.start()
        i = 0
        while writer.is_alive():
            try:
                during_api.append(api.ask(cases[i % len(cases)]))
            except Exception as exc:  # noqa: BLE001 - counted, not fatal
                errors.append(f"api: {exc}"[:300])
            i += 1
        writer.join()
        cli.join()
        result |= {"during_api": during_api, "during_cli": during_cli, "errors": errors}
    finally:
        server.terminate()
        server.wait(timeout=60)
    return result


def section(results: dict[str, dict], load: tuple[float, float]) -> str:
    settings = Settings()
    lines = [SECTION, "",
             f"Generated by `python -m bench.latency` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
             f"{os.cpu_count()} cores, embedding model `{settings.embedding_model}`, embedded "
             f"stores (SQLite vectors, SQLite FTS5). Load "
             f"average (1 min) {load[0]:.2f} before, {load[1]:.2f} after: on 2 cores anything "
             "above 1 means other work shared the machine and every figure is inflated.", "",
             "| index | what | measured | goal |", "|---|---|---|---|"]
    for name, r in results.items():
        api_goal = "p50 ≤ 50 ms, p95 ≤ 150 ms" if name == "sample_docs" else "p50 ≤ 100 ms"
        cold = ", ".join(f"{v:.1f}" for v in r["cold"])
        lines += [
            f"| {name} | warm API, {r['cases']} eval questions × rounds | {summary(r['warm'])} "
            f"| {api_goal} |",
            f"| {name} | cold `kbflow search` (whole process) | {cold} s | ≤ 3 s idle |",
            f"| {name} | API during an ingest of 20 more documents | "
            f"{summary(r['during_api'])}, {len(r['errors'])} errors | {api_goal}, 0 errors |",
            f"| {name} | `kbflow search` during that ingest | "
            f"{', '.join(f'{v:.1f}' for v in r['during_cli']) or 'none finished'} s | — |",
        ]
    lines.append("")
    for name, r in results.items():
        lines.append(f"- {name}: first ingest {r['versions']} versions in "
                     f"{r['index_seconds']:.1f} s; `kbflow serve` up and warm after "
                     f"{r['serve_start']:.1f} s; the concurrent ingest took "
                     f"{r.get('second', {}).get('total_seconds', float('nan')):.1f} s"
                     + (f"; errors: {'; '.join(r['errors'][:3])}" if r["errors"] else ""))
    return "\n".join(lines) + "\n"


def reader_cost(data: Path, rounds: int) -> str:
    """The reader model's ms per pair, and the warm API with it on and off per request."""
    from ingest.search import Searcher, SearchOptions
    from ingest.search.ranker import BATCH

    cases = [json.loads(line) for line in
             (REPO / "eval" / "sample_cases.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    settings = Settings(data_dir=data)
    load_before = os.getloadavg()[0]
    pairs, scoring = 0, 0.0
    with Searcher(settings) as searcher:
        reader = searcher.ranker.reader()
        if reader is None:
            raise SystemExit(f"the reader model is unavailable: {searcher.ranker.problem}")
        for case in cases:
            found = searcher.search(case["question"], tenant_id=settings.default_tenant,
                                    groups=groups_of(data), as_of=datetime.now(UTC).date(),
                                    k=searcher.ranker.depth,
                                    options=SearchOptions(rerank=False, signal_depth=0))
            passages = [(r.prefix, r.text) for r in found.results[:searcher.ranker.depth]]
            started = time.perf_counter()
            reader.score(case["question"], passages, batch=BATCH)
            scoring += time.perf_counter() - started
            pairs += len(passages)
    keys = Path(tempfile.mkdtemp(prefix="kbflow-reader-latency-")) / "keys.json"
    keys.write_text(json.dumps({KEY: {"tenant": "default", "groups": groups_of(data)}}))
    port = free_port()
    reader_env = {k: v for k, v in os.environ.items()
                  if k.startswith(("KBFLOW_READER", "KBFLOW_RERANK"))}
    server = kbflow(data, "serve", "--port", str(port),
                    env=environment(KBFLOW_API_KEYS_FILE=str(keys), **reader_env),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(port, server)
        api = Api(port)
        for case in cases:  # warm-up, both ways
            api.ask(case, rerank=True)
            api.ask(case, rerank=False)
        on: list[float] = []
        off: list[float] = []
        for _ in range(rounds):
            for case in cases:
                on.append(api.ask(case, rerank=True))
                off.append(api.ask(case, rerank=False))
    finally:
        server.terminate()
        server.wait(timeout=60)
    return "\n".join([
        READER_SECTION, "",
        f"Generated by `python -m bench.latency --reader` on {datetime.now(UTC):%Y-%m-%d %H:%M} "
        f"UTC, {os.cpu_count()} cores, sample_docs, the reader model of "
        f"`{searcher.ranker.folder}` rescoring the fused top {searcher.ranker.depth} in batches "
        f"of {BATCH}. Load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} "
        "after: above 1, other work shared the machine and every figure is inflated (compare "
        "the two rows, measured alternately).", "",
        "| what | measured | goal |", "|---|---|---|",
        f"| reader model, per pair | {1000 * scoring / max(pairs, 1):.1f} ms ({pairs} pairs) "
        "| — |",
        f"| reader model, per search (its top {searcher.ranker.depth}) | "
        f"{1000 * scoring / len(cases):.0f} ms | — |",
        f"| warm API, `rerank: true`, {len(cases)} questions × {rounds} | {summary(on)} | "
        "p50 ≤ 250 ms, p95 ≤ 600 ms |",
        f"| warm API, `rerank: false`, the same questions, alternating | {summary(off)} | "
        "p50 ≤ 50 ms |", ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, nargs="+", default=[0],
                        help="0: sample_docs; N: N synthetic documents (several allowed)")
    parser.add_argument("--rounds", type=int, default=1, help="measured rounds of questions")
    parser.add_argument("--cli", type=int, default=3, help="cold CLI searches")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--reader", type=Path, metavar="DATA_DIR",
                        help="only the reader model's cost, over this index of sample_docs")
    args = parser.parse_args()
    if args.reader:
        text = reader_cost(args.reader.resolve(), args.rounds)
        write_section(args.out, READER_SECTION, text)
        print(text)
        return
    load_before = os.getloadavg()[0]
    results = {}
    for docs in args.docs:
        with tempfile.TemporaryDirectory(prefix="kbflow-latency-") as work:
            name = f"{docs} bench docs" if docs else "sample_docs"
            results[name] = run(docs, args.rounds, args.cli, Path(work))
            print(json.dumps({name: {k: v for k, v in results[name].items() if k != "second"}},
                             default=str)[:2000], flush=True)
    text = section(results, (load_before, os.getloadavg()[0]))
    write_section(args.out, SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
