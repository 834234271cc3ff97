"""The commands that read the published index and the manifest: status, chunks, search, graph,
citations, trace, generations, webhook events."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from datetime import date
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from flows.cli.output import console, print_json, print_low_coverage, print_warnings, shown
from ingest.config import Settings

if TYPE_CHECKING:
    from ingest.manifest import RunRecord


def status(args: argparse.Namespace, settings: Settings) -> int:
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
    print_low_coverage(low, settings.min_coverage)
    print_warnings(parse_warnings({r.version_key: r.parse_report for r in records
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


def chunks(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.chunk.describe import describe
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


def search(args: argparse.Namespace, settings: Settings) -> int:
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


def graph(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.search.graph_channel import describe, entity_relations

    if args.citations:
        return citations(args, settings)
    found = entity_relations(
        settings, args.entity, tenant_id=args.tenant or settings.default_tenant,
        groups=args.groups or settings.default_acl, as_of=args.as_of or date.today(),
        hops=args.hops,
    )
    if args.json:
        print_json(found)
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


def citations(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.search.citations import citations_for

    found = citations_for(settings, args.entity, tenant_id=args.tenant or settings.default_tenant,
                          groups=args.groups or settings.default_acl,
                          as_of=args.as_of or date.today())
    if args.json:
        print_json(found)
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


def trace(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    records = manifest.trace(args.chunk_id)
    manifest.close()
    if args.json:
        print_json([r.model_dump(mode="json") for r in records])
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


def generations(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    generations = manifest.generations()
    manifest.close()
    if args.json:
        print_json([g.model_dump(mode="json") for g in generations])
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


def events(args: argparse.Namespace, settings: Settings) -> int:
    from flows.webhook.outbox import EventStore

    path = settings.data_dir / "webhook_events.db"
    rows = EventStore(path).listing() if path.exists() else []
    if args.json:
        print_json(rows)
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
