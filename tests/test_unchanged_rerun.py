"""An unchanged re-run of `kbflow ingest` (flows/unchanged.py): it starts no Prefect server,
is recorded in the manifest's run log like any run, and anything to do sends the run through
Prefect again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_first_run import fresh_environment
from tests_support import SAMPLE_DOCS

from ingest.config import Settings


def kbflow_ingest(docs: Path, data: Path, home: Path) -> dict:
    """`kbflow ingest --json` in a new process with an empty HOME and no PREFECT_API_URL."""
    done = subprocess.run([sys.executable, "-m", "flows.cli", "--data-dir", str(data), "ingest",
                           str(docs), "--json"], env=fresh_environment(home),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict = json.loads(done.stdout)
    return summary


def server_started(home: Path) -> bool:
    """Prefect's temporary server creates its database under the (empty) HOME's ~/.prefect."""
    return (home / ".prefect" / "prefect.db").exists()


def test_an_unchanged_rerun_starts_no_server_and_an_edit_does(tmp_path: Path) -> None:
    from ingest.manifest import ManifestStore

    docs, data = tmp_path / "docs", tmp_path / "data"
    docs.mkdir()
    for name in ("leave_policy.md", "remote_work_policy.md"):
        shutil.copy(SAMPLE_DOCS / name, docs)
    cold = kbflow_ingest(docs, data, tmp_path / "home-cold")
    assert cold["written"] == 2 and server_started(tmp_path / "home-cold")

    again = kbflow_ingest(docs, data, tmp_path / "home-again")
    assert not server_started(tmp_path / "home-again")
    assert (again["files"], again["skipped_unchanged"], again["written"]) == (2, 2, 0)
    assert again["failures"] == [] and again["documents"] == {"READY": 2}
    assert set(again) == set(cold)  # the summary keeps every field of the flow's
    with ManifestStore(Settings(data_dir=data).manifest) as manifest:
        last = manifest.last_run()
    assert last is not None and last.run_id == again["run_id"] != cold["run_id"]
    assert last.finished_at is not None and last.summary is not None
    assert last.summary["skipped_unchanged"] == 2

    policy = docs / "leave_policy.md"
    policy.write_text(policy.read_text(encoding="utf-8") + "\n\n补充：年假可跨年度使用。\n",
                      encoding="utf-8")
    edited = kbflow_ingest(docs, data, tmp_path / "home-edited")
    assert server_started(tmp_path / "home-edited")
    assert (edited["skipped_unchanged"], edited["written"]) == (1, 1)


def test_the_look_sees_what_a_run_would_do(tmp_path: Path, prefect_api) -> None:
    """nothing_to_do after an ingest, after a copy of a file's date only, and after each change
    that gives a run work: an edit, a new sidecar, a file gone, a new file."""
    from flows.ingest import ingest_flow
    from flows.unchanged import nothing_to_do

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("leave_policy.md", "remote_work_policy.md", "approval_authority.html",
                 "approval_authority.html.meta.yaml"):
        shutil.copy(SAMPLE_DOCS / name, docs)
    settings = Settings(data_dir=tmp_path / "data")
    assert not nothing_to_do(settings, docs)  # never ingested
    ingest_flow(str(docs), str(settings.data_dir))
    assert nothing_to_do(settings, docs)
    policy, remote = docs / "leave_policy.md", docs / "remote_work_policy.md"
    policy.touch()  # a new date, the same bytes
    assert nothing_to_do(settings, docs)

    text = policy.read_text(encoding="utf-8")
    policy.write_text(text + "\n补充条款。\n", encoding="utf-8")
    assert not nothing_to_do(settings, docs)
    policy.write_text(text, encoding="utf-8")
    assert nothing_to_do(settings, docs)

    sidecar = docs / "leave_policy.md.meta.yaml"
    sidecar.write_text("acl: [hr]\n", encoding="utf-8")
    assert not nothing_to_do(settings, docs)
    sidecar.unlink()
    assert nothing_to_do(settings, docs)

    kept = remote.read_bytes()
    remote.unlink()
    assert not nothing_to_do(settings, docs)
    remote.write_bytes(kept)
    assert nothing_to_do(settings, docs)

    (docs / "new.md").write_text("# 新制度\n\n第一条 本制度自发布之日起施行。\n", encoding="utf-8")
    assert not nothing_to_do(settings, docs)


def test_the_unchanged_path_imports_no_prefect() -> None:
    """Importing Prefect alone costs 3-15 s on 2 loaded cores: the CLI and the look must not."""
    code = ("import sys, flows.cli, flows.progress, flows.unchanged; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'prefect'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_the_unchanged_run_on_the_servers_profile(tmp_path: Path, prefect_api,
                                                   postgres_database: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The look and the in-process run with the manifest in PostgreSQL and the stores on the
    engines: nothing to do after an ingest, the run recorded there, nothing written."""
    import uuid

    from flows.ingest import ingest_flow
    from flows.unchanged import ingest_here, nothing_to_do
    from ingest.lifecycle import open_generation
    from ingest.manifest import ManifestStore

    monkeypatch.setenv("KBFLOW_PROFILE", "servers")
    monkeypatch.setenv("KBFLOW_MANIFEST_URL", postgres_database)
    monkeypatch.setenv("KBFLOW_NAMESPACE", f"t{uuid.uuid4().hex[:10]}")
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("leave_policy.md", "remote_work_policy.md"):
        shutil.copy(SAMPLE_DOCS / name, docs)
    settings = Settings(data_dir=tmp_path / "data")
    cold = ingest_flow(str(docs), str(settings.data_dir))
    try:
        assert nothing_to_do(settings, docs)
        again = ingest_here(settings, str(docs))
        assert (again.skipped_unchanged, again.written, again.embedded) == (2, 0, 0)
        assert again.documents == cold.documents == {"READY": 2} and again.failures == []
        with ManifestStore(settings.manifest) as manifest:
            last = manifest.last_run()
        assert last is not None and last.run_id == again.run_id and last.summary is not None
    finally:
        stores = open_generation(settings, cold.generation)
        stores.drop()
        stores.close()
