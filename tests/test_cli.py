"""The `kbflow` command as a user runs it: quiet output, JSON summaries, status and search."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import jsonschema
from tests_support import REPO, SAMPLE_DOCS

from ingest.manifest import ManifestExport

EXPORT_SCHEMA = REPO / "manifests" / "export.schema.json"


def kbflow(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    env["COLUMNS"] = "200"  # a wide terminal, so table cells are not folded
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", "--data-dir", str(data), *args],
        capture_output=True, text=True, timeout=600, env=env, check=False,
    )


def test_ingest_status_search_round_trip(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "leave_policy.md", docs)
    (docs / "notes.xyz").write_text("not a document")
    data = tmp_path / "data"

    ingest = kbflow("ingest", str(docs), "--json", data=data)
    assert ingest.returncode == 0, ingest.stderr
    assert "Traceback" not in ingest.stderr and "database is locked" not in ingest.stderr
    summary = json.loads(ingest.stdout)
    assert summary["documents"] == {"FAILED": 1, "READY": 1}
    assert summary["failures"][0]["reason"] == "ParseError: unsupported file type .xyz"
    assert set(summary["seconds"]) >= {"parse", "chunk", "embed", "vectors", "lexical", "graph"}

    status = kbflow("status", "--json", data=data)
    assert status.returncode == 0, status.stderr
    export = json.loads(status.stdout)
    jsonschema.validate(export, json.loads(EXPORT_SCHEMA.read_text(encoding="utf-8")))
    states = {d["doc_id"]: d["state"] for d in export["documents"]}
    assert states == {"leave_policy": "READY", "notes": "FAILED"}
    assert export["generation"] == "g1" and export["counts"] == {"FAILED": 1, "READY": 1}
    assert export["last_run"]["summary"]["embedded"] == summary["embedded"]

    found = kbflow("search", "婚假有几天", "--json", "--k", "3", data=data)
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results[0]["doc_id"] == "leave_policy" and results[0]["clause_no"] == "第十条"
    assert results[0]["bm25_rank"] == 1

    # The trace prints the chunk record exactly as the manifest stored it.
    traced = kbflow("trace", results[0]["chunk_id"], "--json", data=data)
    assert traced.returncode == 0, traced.stderr
    [record] = json.loads(traced.stdout)
    with closing(sqlite3.connect(data / "manifest.db")) as db:
        stored, run_id = db.execute("SELECT record, run_id FROM chunks WHERE chunk_id=?",
                                    (results[0]["chunk_id"],)).fetchone()
    assert record["chunk"] == json.loads(stored) and record["generation"] == "g1"
    assert record["run_id"] == run_id == export["last_run"]["run_id"]
    assert record["run_source"] == export["last_run"]["source"]

    table = kbflow("status", data=data)
    assert "leave_policy" in table.stdout and "READY" in table.stdout


def test_the_export_schema_file_matches_the_model() -> None:
    """manifests/export.schema.json is what other tools validate `status --json` against."""
    assert EXPORT_SCHEMA.read_text(encoding="utf-8") == ManifestExport.schema_text(), \
        "run: python scripts/write_manifest_schema.py"


def test_a_missing_model_names_the_command_that_fetches_it(ingested, tmp_path: Path) -> None:
    """Nothing is downloaded at run time: without the model files a search fails in one line."""
    _, settings = ingested
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    env["KBFLOW_MODEL_CACHE"] = str(tmp_path / "empty-cache")
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli", "--data-dir", str(settings.data_dir), "search", "报销"],
        capture_output=True, text=True, timeout=600, env=env, check=False,
    )
    assert done.returncode == 2
    assert "kbflow fetch-model bge-small-zh-v1.5-q" in done.stderr.replace("\n", "")
    assert "Traceback" not in done.stderr
