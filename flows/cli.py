"""`kbflow` command line: ingest a folder, show the manifest, search the published index."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from rich.console import Console
from rich.table import Table

from flows.quiet import quiet
from ingest.config import Settings

console = Console()


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

    search = commands.add_parser("search", help="hybrid BM25 + dense search of READY versions")
    search.add_argument("query")
    search.add_argument("--tenant", help="tenant to search (default: KBFLOW_DEFAULT_TENANT)")
    search.add_argument("--group", action="append", dest="groups",
                        help="ACL group of the reader; repeatable (default: KBFLOW_DEFAULT_ACL)")
    search.add_argument("--as-of", type=date.fromisoformat, default=None,
                        help="business date YYYY-MM-DD: the versions in force then (default today)")
    search.add_argument("--k", type=int, default=5)
    search.add_argument("--json", action="store_true")

    args = parser.parse_args(argv)
    settings = Settings() if args.data_dir is None else Settings(data_dir=args.data_dir)
    if args.command == "ingest":
        return _ingest(args, settings)
    if args.command == "status":
        return _status(args, settings)
    return _search(args, settings)


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    if not args.path.exists():
        console.print(f"[red]no such file or folder: {args.path}")
        return 2
    from rich.progress import Progress

    from flows import ingest as pipeline

    with Progress(console=console, transient=True, disable=args.json) as progress:
        bar = progress.add_task("starting Prefect", total=None)

        def show(done: int, total: int, what: str) -> None:
            progress.update(bar, completed=done, total=total, description=f"ingest {what}")

        pipeline.progress_listener = show
        summary = pipeline.ingest_flow(str(args.path), str(settings.data_dir))
    if args.json:
        print(summary.model_dump_json(indent=2))
        return 0
    table = Table(title=f"kbflow ingest {args.path}  ({summary.total_seconds:.1f} s)")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("files seen", str(summary.files))
    table.add_row("versions written / unchanged", f"{summary.written} / "
                  f"{summary.skipped_unchanged}")
    for state, n in summary.documents.items():
        table.add_row(f"documents {state}", str(n))
    c = summary.chunks
    table.add_row("chunks added / changed / removed / unchanged",
                  f"{c.added} / {c.changed} / {c.removed} / {c.unchanged}")
    table.add_row("chunks embedded", str(summary.embedded))
    table.add_row("triples written", str(summary.triples))
    table.add_row("failures", str(len(summary.failures)))
    for stage, seconds in summary.seconds.items():
        table.add_row(f"seconds {stage}", f"{seconds:.2f}")
    console.print(table)
    for failure in summary.failures:
        console.print(f"[red]FAILED[/] {failure.path}: {failure.reason}")
    return 0


def _status(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest_path)
    try:
        records = manifest.documents()
        last = manifest.last_run()
    finally:
        manifest.close()
    if args.json:
        payload = {"documents": [r.model_dump(mode="json") for r in records], "last_run": last}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    table = Table(title=f"kbflow status ({settings.data_dir})")
    for column in ("doc_id", "version", "state", "chunks", "effective", "title", "reason"):
        table.add_column(column, overflow="fold")
    for r in records:
        effective = f"{r.effective_from or '…'} → {r.effective_to or '…'}"
        style = {"READY": "green", "FAILED": "red"}.get(r.state, "yellow")
        table.add_row(r.doc_id, r.version_id, f"[{style}]{r.state}[/]", str(r.chunk_count),
                      effective, r.title or "", r.reason or "")
    console.print(table)
    return 0


def _search(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.embed import Embedder
    from ingest.manifest import ManifestStore
    from ingest.search import hybrid_search
    from ingest.stores import open_embedded

    manifest = ManifestStore(settings.manifest_path)
    embedder = Embedder(settings.embedding_model, settings.vector_cache_path)
    stores = open_embedded(settings, embedder.name, embedder.dimension)
    try:
        response = hybrid_search(
            args.query, manifest=manifest, lexical=stores.lexical, vectors=stores.vectors,
            embedder=embedder, tenant_id=args.tenant or settings.default_tenant,
            groups=args.groups or settings.default_acl, as_of=args.as_of or date.today(),
            k=args.k, rrf_k=settings.rrf_k, min_coverage=settings.dense_min_coverage,
        )
    finally:
        stores.close()
        embedder.close()
        manifest.close()
    if args.json:
        print(response.model_dump_json(indent=2))
        return 0
    dense = "on" if response.dense_used else "off"
    console.print(f"[bold]{response.query}[/]  tenant={response.tenant_id} "
                  f"groups={','.join(response.groups)} as_of={response.as_of}  dense path: {dense} "
                  f"(query coverage {response.query_coverage:.2f})")
    for r in response.results:
        page = f"p.{r.page_start}" + (f"-{r.page_end}" if r.page_end != r.page_start else "")
        console.print(
            f"\n[bold]{r.rank}.[/] {r.doc_id}@{r.version_id} {r.clause_no or ''} {page} "
            f"[dim]{r.chunk_id}[/] score={r.score:.4f} bm25#{r.bm25_rank or '-'} "
            f"dense#{r.dense_rank or '-'}\n   [dim]{r.prefix}[/]\n   {r.text[:300]}"
        )
    if not response.results:
        console.print("no results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
