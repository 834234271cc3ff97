"""`kbflow` command line: ingest a folder, show the manifest, search the published index."""

from __future__ import annotations

import sys

from rich.console import Console

from flows.cli import reads, runs, tools
from flows.cli.arguments import build_parser
from flows.cli.output import console, shown
from flows.orchestrator import OrchestratorUnavailable, ensure_api
from flows.quiet import quiet
from ingest.config import Settings
from ingest.lock import DataDirBusy, writer_lock

FLOW_COMMANDS = ("ingest", "delete", "rebuild", "rollback", "undelete")  # Prefect flows


def main(argv: list[str] | None = None) -> int:
    quiet()
    parser = build_parser(__doc__)
    args = parser.parse_args(argv)
    settings = Settings() if args.data_dir is None else Settings(data_dir=args.data_dir)
    handlers = {
        "ingest": runs.ingest, "delete": runs.delete, "undelete": runs.undelete,
        "rebuild": runs.rebuild, "rollback": runs.rollback,
        "status": reads.status, "chunks": reads.chunks, "search": reads.search,
        "graph": reads.graph, "trace": reads.trace, "generations": reads.generations,
        "events": reads.events,
        "serve": tools.serve, "worker": tools.worker, "mcp": tools.mcp,
        "deploy": lambda _, s: tools.deploy(s), "eval": tools.evaluate, "tune": tools.tune,
        "fetch-model": tools.fetch_model, "fetch-llm": tools.fetch_llm,
    }
    try:
        if args.command not in FLOW_COMMANDS:
            return handlers[args.command](args, settings)
        # One writer per data directory, taken before any work (ingest/lock.py).
        with writer_lock(settings.data_dir, " ".join(sys.argv[1:] if argv is None else argv)):
            from ingest.stores.sqlite_file import check_files

            check_files(settings)  # a damaged file is one line, not a failed run's traceback
            if args.command != "ingest":  # ingest starts it only when there is work (runs.ingest)
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
