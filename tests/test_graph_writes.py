"""The LadybugDB graph after an ingest: a file edited and edited back leaves the graph a cold
ingest of the same files leaves (chunks, links, entities, relations, row for row), and the schema
statements run once per schema version, not on every open of the file."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import ladybug
import pytest
from tests_support import SAMPLE_DOCS

from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.pipeline import InProcess, RunContext, run_pipeline
from ingest.stores import ladybug_graph
from ingest.stores.ladybug_graph import SCHEMA_VERSION, LadybugGraphStore

LOG = logging.getLogger("test_graph_writes")
FILES = ["leave_policy.md", "remote_work_policy.md", "approval_authority.html",
         "approval_authority.html.meta.yaml"]
GRAPH_ROWS = {
    "documents": "MATCH (d:Document) RETURN d.version_key, d.doc_id, d.version_id, d.title",
    "chunks": "MATCH (c:Chunk) RETURN c.chunk_id, c.version_key, c.kind, c.clause_no, "
              "c.tenant_id, c.acl, c.eff_from, c.eff_to",
    "has_chunk": "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) RETURN d.version_key, c.chunk_id",
    "next": "MATCH (a:Chunk)-[:NEXT]->(b:Chunk) RETURN a.chunk_id, b.chunk_id",
    "entities": "MATCH (n:Entity) RETURN n.key, n.name, n.type",
    "relations": "MATCH (s:Entity)-[e:RELATES]->(o:Entity) RETURN s.key, o.key, e.predicate, "
                 "e.source_chunk_id, e.doc_id, e.version_id, e.version_key, e.extractor, "
                 "e.confidence, e.tenant_id, e.acl, e.eff_from, e.eff_to, e.surface, e.rule",
}


def ingest(data: Path, folder: Path, run_id: str) -> None:
    settings = Settings(data_dir=data)
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=run_id, steps=InProcess(),
                         log=LOG)
        summary = run_pipeline(ctx, str(folder), [(p, folder) for p in sorted(folder.iterdir())
                                                  if not p.name.endswith(".yaml")])
    assert summary.failures == []


def graph_rows(data: Path) -> dict[str, list[str]]:
    """Every row of the graph file, sorted, read as the file is (not through the store)."""
    db = ladybug.Database(str(data / "graph" / "g1.lbug"), read_only=True)
    conn = ladybug.Connection(db)
    try:
        rows = {}
        for name, query in GRAPH_ROWS.items():
            result = conn.execute(query)
            assert isinstance(result, ladybug.QueryResult)
            rows[name] = sorted(json.dumps(row, ensure_ascii=False, default=str)
                                for row in result.get_all())
        return rows
    finally:
        conn.close()
        db.close()


def edit(path: Path) -> None:
    """One clause reworded (the link into it comes from an unchanged paragraph), one removed
    (its predecessor unchanged, so it gets another successor), one added."""
    text = path.read_text(encoding="utf-8")
    fifth = next(line for line in text.splitlines() if line.startswith("**第五条**"))
    edited = (text.replace("规范公司休假管理", "规范本公司的休假管理", 1)
              .replace(fifth + "\n", "", 1)
              + "\n**第九十九条** 本制度由人力资源部负责解释，经总经理审批后施行。\n")
    assert "规范本公司" in edited and "**第五条**" not in edited
    path.write_text(edited, encoding="utf-8")


def test_an_edit_and_its_undo_leave_the_graph_a_cold_ingest_leaves(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in FILES:
        shutil.copy(SAMPLE_DOCS / name, docs)
    ingest(tmp_path / "cold", docs, "cold")
    cold = graph_rows(tmp_path / "cold")
    assert all(cold.values()), {name: len(rows) for name, rows in cold.items()}

    original = (docs / "leave_policy.md").read_text(encoding="utf-8")
    edit(docs / "leave_policy.md")
    ingest(tmp_path / "warm", docs, "edited")
    edited = graph_rows(tmp_path / "warm")
    assert edited["chunks"] != cold["chunks"] and edited["relations"] != cold["relations"]
    (docs / "leave_policy.md").write_text(original, encoding="utf-8")
    ingest(tmp_path / "warm", docs, "restored")
    assert graph_rows(tmp_path / "warm") == cold


def test_schema_statements_run_once_per_schema_version(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "graph"
    LadybugGraphStore(folder).close()  # a new file: every statement, then its version
    seen: list[str] = []
    execute = ladybug.Connection.execute

    def counting(self: ladybug.Connection, query: str,
                 parameters: dict[str, Any] | None = None) -> object:
        seen.append(query)
        return execute(self, query, parameters)

    monkeypatch.setattr(ladybug.Connection, "execute", counting)
    LadybugGraphStore(folder).close()
    assert not [q for q in seen if q.startswith(("CREATE", "ALTER"))]

    # a file written before a schema change (older version recorded) gets the statements again
    monkeypatch.setattr(ladybug_graph, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    store = LadybugGraphStore(folder)
    assert [q for q in seen if q.startswith("ALTER")]
    assert store._schema_version() == SCHEMA_VERSION + 1
    store.close()
