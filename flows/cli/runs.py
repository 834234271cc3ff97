"""The commands that change the index through a Prefect flow: ingest, delete, undelete, rebuild,
rollback (flows/cli/__init__.py takes the data directory's writer lock before any of them)."""

from __future__ import annotations

import argparse
import os

from rich.table import Table

from flows.cli.output import console, print_json, print_low_coverage, print_warnings, shown
from flows.orchestrator import ensure_api
from ingest.config import Settings


def ingest(args: argparse.Namespace, settings: Settings) -> int:
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
    print_low_coverage(parse.low_coverage, settings.min_coverage)
    print_warnings(parse.warnings)
    return 0


def delete(args: argparse.Namespace, settings: Settings) -> int:
    from flows.lifecycle import delete_flow

    result = delete_flow(args.doc_ids, str(settings.data_dir))
    if args.json:
        print_json(result)
    elif not result["tombstoned"]:
        console.print(f"no versions of {shown(', '.join(args.doc_ids))} are known")
    else:
        console.print(f"tombstoned {shown(', '.join(result['tombstoned']))}; cleaned "
                      f"{len(result['cleaned'])} from the stores")
    return 0 if result["tombstoned"] else 1


def undelete(args: argparse.Namespace, settings: Settings) -> int:
    from flows.ingest import undelete_flow

    summary = undelete_flow(args.doc_id, str(settings.data_dir))
    if args.json:
        print(summary.model_dump_json(indent=2))
    else:
        console.print(f"published again: {shown(', '.join(summary.lifted)) or 'nothing'}")
        for failure in summary.failures:
            console.print(f"[red]FAILED[/] {shown(failure.path)}: {shown(failure.reason)}")
    return 0 if summary.lifted and not summary.failures else 1


def rebuild(args: argparse.Namespace, settings: Settings) -> int:
    from flows.lifecycle import rebuild_flow

    report = rebuild_flow(str(settings.data_dir), args.eval_cases)
    if args.json:
        print_json(report)
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


def rollback(args: argparse.Namespace, settings: Settings) -> int:
    from flows.lifecycle import rollback_flow

    report = rollback_flow(args.to, str(settings.data_dir))
    if args.json:
        print_json(report)
    else:
        console.print(f"serving {report.serving} (was {report.previous})")
    return 0
