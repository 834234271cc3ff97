"""Scale benchmark (issue #16): search latency and one-file incremental ingest time as the
number of published versions grows, and cold throughput on many small documents.

    python -m bench.scale --profile embedded|servers --sizes 1000,10000,100000 [--label before]
    python -m bench.scale --throughput 1000 [--label before]

Sizes: sample_docs/ is ingested for real by `ingest_flow` (so the questions have real answers),
then synthetic versions are added until the manifest holds N published versions. A synthetic
version is one clause chunk: generated Chinese/English text holding a few real policy words
(so BM25 matches some of them), a random unit vector of the model's dimension (nothing is
embedded), READY in the manifest (rows written by SQL in one transaction) and upserted in
batches into all three stores through the store classes. Sizes run in ascending order on one
growing data directory. At each size, once the 1-min load average is below 1 (a bulk load
leaves index builds behind), in one warm process: a fixed set of 20 eval questions
(12 Chinese, 8 English) through `ingest.search.Searcher`, after one warm-up query that is not
counted; then `incremental_flow` of one edited file (leave_policy.md), timed in-process against
the same local Prefect server. Every error is counted and its first message kept.

Throughput: N one-clause Markdown notices ingested cold by one `kbflow ingest --json`
subprocess on the embedded profile; documents/s over the whole process and the run's stage
seconds. `--profile-vectors` adds an in-process run over the same notices that times each
embedded vector-store call (chunk_ids, upsert, delete) to show where the vectors stage goes.

Results: one JSON file per run under --work, and a row block in the "Scale" section of --out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bench import write_section
from bench.latency import percentile
from bench.run import start_prefect

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SECTION = "## Scale (bench/scale.py)"
PG_URL = os.environ.get("KBFLOW_PG_URL", "postgresql://kbflow@127.0.0.1:55432/kbflow")
EDITED = "leave_policy.md"
ANCHOR = "制定本制度。"
BATCH = 5000  # synthetic versions per store write and manifest transaction

# Real words of the sample policies, so BM25 finds synthetic chunks too.
ZH_WORDS = ["报销", "差旅", "审批", "请假", "采购", "印章", "信息安全", "远程办公", "住宿", "交通",
            "费用", "员工", "部门", "合同", "年休假", "密码", "出差", "预算", "发票", "加班"]
EN_WORDS = ["expense", "travel", "approval", "leave", "security", "remote", "purchase", "policy",
            "reimbursement", "hotel", "laptop", "password", "contract", "budget", "invoice"]
ZH_FILLER = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能"
    "下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加"
    "量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与"
    "关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者"
    "最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少"
    "图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光"
    "门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采"
    "转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节"
    "话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际"
    "商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精"
    "值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住"
    "调满县局照参红细引听该铁价严"
)
EN_FILLER = ["the", "staff", "must", "within", "days", "after", "notice", "office", "rules",
             "apply", "to", "all", "team", "members", "report", "form", "manager", "system"]

QUESTIONS = 20  # 12 Chinese, 8 English, in file order, no-answer questions included


# ---- helpers ------------------------------------------------------------------------------------

def questions(count: int = QUESTIONS) -> list[tuple[str, date]]:
    """`count` eval questions, three Chinese to two English."""
    rows = [json.loads(line) for line in (REPO / "eval/sample_cases.jsonl").open(encoding="utf-8")]
    english = [r for r in rows if "english" in r.get("tags", [])]
    chinese = [r for r in rows if "english" not in r.get("tags", [])]
    zh = round(count * 0.6)
    chosen = chinese[:zh] + english[: count - zh]
    return [(r["question"], date.fromisoformat(r.get("as_of") or "2026-06-01")) for r in chosen]


def synthetic_text(rng: random.Random, i: int) -> str:
    zh = "".join(rng.choice(ZH_FILLER) for _ in range(rng.randint(30, 70)))
    cut = sorted(rng.sample(range(len(zh)), 3))
    words = rng.sample(ZH_WORDS, 3)
    body = (zh[: cut[0]] + words[0] + zh[cut[0] : cut[1]] + words[1] + zh[cut[1] : cut[2]]
            + words[2] + zh[cut[2] :])
    english = " ".join(rng.choice(EN_FILLER + EN_WORDS[:3] + [rng.choice(EN_WORDS)])
                       for _ in range(rng.randint(8, 16)))
    return f"第{i % 50 + 1}条 {body}。{english}."


def unit_vectors(rng_seed: int, count: int, dimension: int) -> list[list[float]]:
    import numpy as np

    vectors = np.random.default_rng(rng_seed).standard_normal((count, dimension))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype("float32").tolist()


@contextmanager
def prefect_server(work: Path) -> Iterator[None]:
    """A local Prefect server for the in-process flow calls, stopped at the end."""
    server, env = start_prefect(work / "prefect")
    saved = {k: os.environ.get(k) for k in env if k.startswith("PREFECT_")}
    os.environ.update({k: v for k, v in env.items() if k.startswith("PREFECT_")})
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def load_average() -> float:
    return os.getloadavg()[0]


# ---- synthetic versions -------------------------------------------------------------------------

def add_synthetic(settings: Any, start: int, stop: int,
                  text_of: Callable[[random.Random, int], str] = synthetic_text,
                  ) -> dict[str, float]:
    """Synthetic versions start..stop-1: READY manifest rows and rows in the three stores,
    each one clause of `text_of(rng, i)`."""
    from ingest.diff import fingerprint
    from ingest.embed import Embedding
    from ingest.manifest import ManifestStore
    from ingest.manifest.sql import connect
    from ingest.models import Chunk, ChunkKind, State
    from ingest.stores import open_stores

    manifest = ManifestStore(settings.manifest)
    generation = manifest.get_generation(manifest.generation)
    manifest.close()
    assert generation is not None and generation.dimension is not None
    stores = open_stores(settings, generation.embedding_model, generation.dimension,
                         generation.generation)
    db = connect(settings.manifest)
    seconds = {"manifest": 0.0, "vectors": 0.0, "lexical": 0.0, "graph": 0.0}
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    try:
        for lo in range(start, stop, BATCH):
            hi = min(stop, lo + BATCH)
            rng = random.Random(lo)
            chunks, titles = [], {}
            for i in range(lo, hi):
                doc_id, text = f"syn-{i:07d}", text_of(rng, i)
                title = f"合成通知 {i:07d}"
                titles[f"{doc_id}@v1"] = title
                chunks.append(Chunk(
                    doc_id=doc_id, version_id="v1",
                    chunk_id=hashlib.sha256(doc_id.encode()).hexdigest()[:32],
                    kind=ChunkKind.CLAUSE, text=text, prefix=f"《{title}》",
                    title_path=[title], clause_no="第一条", structural_path="第一条",
                    page_start=1, page_end=1, char_start=0, char_end=len(text),
                    tenant_id=settings.default_tenant, acl=["all-staff"],
                    source_uri=f"synthetic://{doc_id}", parser_version="synthetic",
                    chunker_version=generation.chunker_version or "",
                    embedding_model=generation.embedding_model,
                    content_hash=hashlib.sha256(text.encode()).hexdigest()))
            started = time.perf_counter()
            db.begin()
            db.executemany(
                """INSERT INTO documents (generation, doc_id, version_id, state, title,
                       source_path, source_root, source_uri, file_hash, tenant_id, acl,
                       parser_version, chunker_version, embedding_model, chunk_count, attempts,
                       last_run_id, updated_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,1,?,?)""",
                [(generation.generation, c.doc_id, c.version_id, State.READY.value,
                  titles[c.version_key], f"/synthetic/{c.doc_id}.md", "/synthetic",
                  c.source_uri, c.content_hash, c.tenant_id, json.dumps(c.acl),
                  c.parser_version, c.chunker_version, c.embedding_model, "synthetic", now)
                 for c in chunks])
            db.executemany(
                "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?)",
                [(generation.generation, c.chunk_id, c.doc_id, c.version_id, c.content_hash,
                  fingerprint(c), c.model_dump_json(), "synthetic") for c in chunks])
            db.commit()
            seconds["manifest"] += time.perf_counter() - started
            vectors = {c.chunk_id: Embedding(values=v, coverage=1.0) for c, v in
                       zip(chunks, unit_vectors(lo, len(chunks), generation.dimension),
                           strict=True)}
            for role, write, write_args in (
                ("vectors", stores.vectors.upsert, (chunks, vectors)),
                ("lexical", stores.lexical.upsert, (chunks,)),
                ("graph", stores.graph.upsert, (chunks, [], titles)),
            ):
                started = time.perf_counter()
                write(*write_args)
                seconds[role] += time.perf_counter() - started
            print(f"  synthetic {hi - start}/{stop - start}", file=sys.stderr, flush=True)
    finally:
        db.close()
        stores.close()
    return {k: round(v, 1) for k, v in seconds.items()}


def settle(timeout: float = 600, below: float = 1.0) -> float:
    """Wait for the background work a bulk load starts to end (Milvus compacts and builds HNSW
    on both cores for minutes after 90,000 new rows; Elasticsearch merges), as seen in the
    1-min load average, so that searches are timed on a settled index. Seconds waited."""
    started = time.perf_counter()
    while load_average() >= below and time.perf_counter() - started < timeout:
        time.sleep(5)
    return round(time.perf_counter() - started, 1)


# ---- measurements -------------------------------------------------------------------------------

def measure_search(settings: Any, groups: list[str], count: int) -> dict[str, Any]:
    from ingest.search import Searcher

    asked = questions(count)
    latencies, errors = [], []
    with Searcher(settings) as searcher:
        def ask(question: str, as_of: date) -> None:
            started = time.perf_counter()
            try:
                searcher.search(question, tenant_id=settings.default_tenant, groups=groups,
                                as_of=as_of)
                latencies.append(time.perf_counter() - started)
            except Exception as exc:  # noqa: BLE001 - counted and reported, the bench goes on
                errors.append(f"{type(exc).__name__}: {str(exc)[:300]}")

        ask(*asked[0])  # warm-up: not counted
        latencies.clear()
        for question, as_of in asked:
            ask(question, as_of)
    ms = [v * 1000 for v in latencies]
    return {"n": len(ms), "errors": len(errors), "first_error": errors[0] if errors else None,
            "p50_ms": round(percentile(ms, 0.5)) if ms else None,
            "p95_ms": round(percentile(ms, 0.95)) if ms else None}


def measure_incremental(settings: Any, docs: Path, turn: int) -> dict[str, Any]:
    """One edited file through incremental_flow, in this process."""
    from flows.ingest import incremental_flow

    path = docs / EDITED
    text = path.read_text(encoding="utf-8")
    head = text.partition("\n\n<!-- scale edit")[0]
    path.write_text(f"{head}\n\n<!-- scale edit -->\n第九十九条 本制度第{turn}次修订。\n",
                    encoding="utf-8")
    started = time.perf_counter()
    try:
        summary = incremental_flow([str(path)], [], str(settings.data_dir))
    except Exception as exc:  # noqa: BLE001 - reported with the size
        return {"seconds": round(time.perf_counter() - started, 2),
                "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "written": summary.written,
            "embedded": summary.embedded,
            "failures": [f.reason[:300] for f in summary.failures],
            "stages": {k: round(v, 2) for k, v in summary.seconds.items()},
            "error": None}


def published_count(settings: Any) -> int:
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    try:
        return len(manifest.published_keys())
    finally:
        manifest.close()


def groups_of(settings: Any) -> list[str]:
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    try:
        return sorted({g for r in manifest.documents() if not r.doc_id.startswith("syn-")
                       for g in r.acl}) or ["all-staff"]
    finally:
        manifest.close()


# ---- profiles -----------------------------------------------------------------------------------

@contextmanager
def profile_environment(profile: str, work: Path) -> Iterator[dict[str, str]]:
    """KBFLOW_* for the profile; on servers a fresh PostgreSQL database and namespace, dropped
    (with the namespace's store data) unless --keep."""
    docs = work / "docs"
    env = {"KBFLOW_DOCUMENT_ROOTS": json.dumps([str(docs)]), "KBFLOW_PROFILE": profile}
    database = None
    if profile == "servers":
        import psycopg

        tag = uuid.uuid4().hex[:10]
        database = f"kbflow_scale_{tag}"
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {database}")
        env |= {"KBFLOW_MANIFEST_URL": f"{PG_URL.rsplit('/', 1)[0]}/{database}",
                "KBFLOW_NAMESPACE": f"scale_{tag}"}
    os.environ.update(env)
    try:
        yield env
    finally:
        if database:
            info = {"database": database, "namespace": env["KBFLOW_NAMESPACE"]}
            (work / "servers-namespace.json").write_text(json.dumps(info), encoding="utf-8")


def drop_servers(settings: Any) -> None:
    """The namespace's collections, indices and graph, and the manifest database."""
    import psycopg

    from ingest.manifest import ManifestStore
    from ingest.stores import open_stores

    manifest = ManifestStore(settings.manifest)
    for generation in manifest.generations():
        if generation.dimension:
            stores = open_stores(settings, generation.embedding_model, generation.dimension,
                                 generation.generation)
            stores.drop()
            stores.close()
    manifest.close()
    database = settings.manifest_url.rsplit("/", 1)[1]
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {database} WITH (FORCE)")


def run_sizes(args: argparse.Namespace) -> dict[str, Any]:
    from ingest.config import Settings

    work = Path(args.work) / args.profile
    shutil.rmtree(work, ignore_errors=True)
    docs = work / "docs"
    shutil.copytree(REPO / "sample_docs", docs)
    result: dict[str, Any] = {"profile": args.profile, "label": args.label, "sizes": [],
                              "started": datetime.now(UTC).isoformat(timespec="minutes"),
                              "load_before": load_average()}
    with profile_environment(args.profile, work), prefect_server(work):
        from flows.ingest import ingest_flow
        from flows.quiet import quiet

        quiet()
        settings = Settings(data_dir=work / "data")
        started = time.perf_counter()
        summary = ingest_flow(str(docs), str(settings.data_dir))
        result["sample_ingest_seconds"] = round(time.perf_counter() - started, 1)
        real = published_count(settings)
        result["real_versions"] = real
        groups = groups_of(settings)
        have, turn = real, 0
        print(f"sample_docs: {summary.written} versions, {real} published", file=sys.stderr)
        try:
            for size in args.sizes:
                row: dict[str, Any] = {"size": size}
                started = time.perf_counter()
                row["synthetic_write"] = add_synthetic(settings, have - real, size - real)
                row["synthetic_seconds"] = round(time.perf_counter() - started, 1)
                row["settle_seconds"] = settle()
                have = max(have, size)
                row["published"] = published_count(settings)
                row["search"] = measure_search(settings, groups, args.questions)
                turn += 1
                row["incremental"] = measure_incremental(settings, docs, turn)
                row["load"] = load_average()
                result["sizes"].append(row)
                print(json.dumps(row, ensure_ascii=False), file=sys.stderr, flush=True)
                save(args, result)
        finally:
            if args.profile == "servers" and not args.keep:
                drop_servers(settings)
    return result


# ---- throughput ---------------------------------------------------------------------------------

NOTICE = "# 通知 {i:04d}\n\n**第一条** {text}\n"


def make_notices(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(16)
    for i in range(count):
        (folder / f"notice_{i:04d}.md").write_text(
            NOTICE.format(i=i, text=synthetic_text(rng, i)), encoding="utf-8")


def run_throughput(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work) / "throughput"
    shutil.rmtree(work, ignore_errors=True)
    notices = work / "notices"
    make_notices(notices, args.throughput)
    result: dict[str, Any] = {"documents": args.throughput, "label": args.label,
                              "started": datetime.now(UTC).isoformat(timespec="minutes"),
                              "load_before": load_average()}
    with prefect_server(work):
        env = {k: v for k, v in os.environ.items() if not k.startswith("KBFLOW_")}
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "flows.cli", "--data-dir", str(work / "data"), "ingest",
             str(notices), "--json"], env=env, cwd=REPO, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"kbflow ingest failed:\n{proc.stderr[-3000:]}")
        summary = json.loads(proc.stdout[proc.stdout.index("{"):])
        result |= {"seconds": round(wall, 1), "docs_per_second": round(args.throughput / wall, 1),
                   "written": summary["written"], "embedded": summary["embedded"],
                   "failures": len(summary["failures"]),
                   "stages": {k: round(v, 1) for k, v in summary["seconds"].items()}}
        stages = result["stages"]
        result["vectors_share_of_embed"] = round(stages.get("vectors", 0)
                                                 / max(stages.get("embed", 1e-9), 1e-9), 3)
        result["load_after"] = load_average()
        save(args, result)  # kept if the profiled re-run fails
        if args.profile_vectors:
            try:
                result["vector_calls"] = profile_vectors(work, notices)
            except Exception as exc:  # noqa: BLE001 - the measured run above stands
                result["vector_calls_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return result


def profile_vectors(work: Path, notices: Path) -> dict[str, Any]:
    """The same notices ingested in this process (embeddings come from the first run's vector
    cache), with every embedded vector-store call timed: where the vectors stage goes."""
    from flows.ingest import ingest_flow
    from flows.quiet import quiet
    from ingest.stores.sqlite_vectors import SqliteVectorStore

    quiet()
    data = work / "data-profiled"
    data.mkdir(parents=True, exist_ok=True)
    shutil.copy(work / "data" / "vector_cache.db", data / "vector_cache.db")
    calls: dict[str, list[float]] = {}
    originals = {}
    for name in ("chunk_ids", "chunk_ids_of", "upsert", "delete"):
        original = getattr(SqliteVectorStore, name, None)
        if original is None:
            continue
        originals[name] = original

        def timed(self, *a, _name=name, _f=original, **kw):
            started = time.perf_counter()
            try:
                return _f(self, *a, **kw)
            finally:
                calls.setdefault(_name, []).append(time.perf_counter() - started)

        setattr(SqliteVectorStore, name, timed)
    try:
        started = time.perf_counter()
        summary = ingest_flow(str(notices), str(data))
        wall = time.perf_counter() - started
    finally:
        for name, original in originals.items():
            setattr(SqliteVectorStore, name, original)
    return {"flow_seconds": round(wall, 1),
            "stages": {k: round(v, 1) for k, v in summary.seconds.items()},
            "calls": {k: {"n": len(v), "seconds": round(sum(v), 2)} for k, v in calls.items()}}


# ---- output -------------------------------------------------------------------------------------

def save(args: argparse.Namespace, result: dict[str, Any]) -> None:
    name = (f"throughput-{args.label}.json" if args.throughput
            else f"sizes-{args.profile}-{args.label}.json")
    path = Path(args.work) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")


def report(work: Path) -> str:
    """The Scale section from every sizes-*.json and throughput-*.json under `work`."""
    lines = [SECTION, "",
             "Generated by `python -m bench.scale --report` from the JSON results that "
             "`python -m bench.scale --profile P --sizes 1000,10000,100000 --label L` and "
             "`python -m bench.scale --throughput 1000 --profile-vectors --label L` leave in "
             "--work. Synthetic versions: one clause chunk each, "
             "generated Chinese/English text with a few real policy words and a random unit "
             "vector (nothing embedded), written straight into the manifest (SQL) and the "
             "three stores (store classes' upsert); sample_docs is ingested for real first. "
             "Each size waits for the 1-min load average to fall below 1 before it is timed (the "
             "bulk load leaves Milvus index builds behind). "
             "Search: 20 eval questions (12 Chinese, 8 English) through one warm `Searcher`, "
             "first warm-up query not counted. Incremental: `incremental_flow` of one edited "
             "Markdown file, timed in-process against a local Prefect server. 2 shared cores: "
             "the load column is the 1-min load average after the size (above 2 = contended).",
             "", "| label | profile | published versions | search p50 / p95 ms | search errors "
             "| one-file incremental s | incremental error | load |",
             "|---|---|---|---|---|---|---|---|"]
    for path in sorted(work.glob("sizes-*.json"),
                       key=lambda p: json.loads(p.read_text(encoding="utf-8"))["started"]):
        result = json.loads(path.read_text(encoding="utf-8"))
        for row in result["sizes"]:
            search, inc = row["search"], row["incremental"]
            error, asked = search["first_error"] or "", search["n"] + search["errors"]
            inc_error = inc.get("error") or "; ".join(inc.get("failures", []))
            lines.append(
                f"| {result['label']} | {result['profile']} | {row['published']:,} | "
                f"{search['p50_ms']} / {search['p95_ms']} | {search['errors']}/{asked}"
                f"{' (' + error[:120] + ')' if error else ''} | {inc['seconds']} | "
                f"{inc_error[:120] or 'none'} | {row['load']:.1f} |")
    throughput = sorted(work.glob("throughput-*.json"),
                        key=lambda p: json.loads(p.read_text(encoding="utf-8"))["started"])
    if throughput:
        lines += ["", "| label | one-clause notices | wall s (`kbflow ingest` process) | docs/s "
                  "| stage seconds | vectors / embed | load before → after |",
                  "|---|---|---|---|---|---|---|"]
        for path in throughput:
            r = json.loads(path.read_text(encoding="utf-8"))
            stages = ", ".join(f"{k} {v}" for k, v in r["stages"].items())
            lines.append(f"| {r['label']} | {r['documents']} | {r['seconds']} | "
                         f"{r['docs_per_second']} | {stages} | {r['vectors_share_of_embed']:.0%} "
                         f"| {r['load_before']:.1f} → {r['load_after']:.1f} |")
        for path in throughput:
            r = json.loads(path.read_text(encoding="utf-8"))
            if "vector_calls_error" in r:
                lines.append(f"\n- {r['label']}: the profiled re-run failed: "
                             f"{r['vector_calls_error']}")
            if "vector_calls" in r:
                calls = r["vector_calls"]
                timed = ", ".join(f"{k} ×{v['n']} {v['seconds']} s"
                                  for k, v in calls["calls"].items())
                lines.append(f"\n- {r['label']}: in-process re-run (embeddings cached): vectors "
                             f"stage {calls['stages'].get('vectors')} s; vector-store "
                             f"calls: {timed}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=["embedded", "servers"], default="embedded")
    parser.add_argument("--sizes", default="1000,10000",
                        type=lambda s: sorted(int(x) for x in s.split(",")))
    parser.add_argument("--questions", type=int, default=QUESTIONS,
                        help="how many of the 20 questions to time (fewer: a quicker before-run)")
    parser.add_argument("--throughput", type=int, default=0,
                        help="instead of sizes: ingest this many one-clause notices cold")
    parser.add_argument("--profile-vectors", action="store_true",
                        help="with --throughput: time each vector-store call of a second, "
                        "in-process run")
    parser.add_argument("--label", default="run", help="e.g. before/after: names the JSON file")
    parser.add_argument("--work", default="/tmp/kbflow-scale")
    parser.add_argument("--keep", action="store_true", help="servers: keep the namespace's data")
    parser.add_argument("--report", action="store_true",
                        help="only write the Scale section of --out from the JSON under --work")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    if args.report:
        write_section(Path(args.out), SECTION, report(Path(args.work)))
        return
    result = run_throughput(args) if args.throughput else run_sizes(args)
    save(args, result)
    print(json.dumps(result, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
