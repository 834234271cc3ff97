"""Operations end to end, as in production but on loopback: a Prefect server, a process worker on
the pool "kbflow", the deployments registered by `kbflow deploy`, and `kbflow serve` receiving a
signed webhook that must end with the document READY in the worker's data directory. A backfill
started with `prefect deployment run` runs beside it, one subflow run per batch."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests_support import REPO, SAMPLE_DOCS

from flows.artifacts import ARTIFACT_KEY, summary_markdown
from flows.backfill import batches, select_files
from flows.webhook.events import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from flows.webhook.outbox import EventStore
from ingest.manifest import ManifestStore
from ingest.models import State

BIN = Path(sys.executable).parent
SECRET = "e2e-secret"
CRON = "15 3 * * 0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what: str, check: Callable[[], Any], seconds: float, logs: Path) -> Any:
    """Poll `check` until it returns something truthy; on timeout show the service logs."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = check()
        except httpx.HTTPError:
            value = None
        if value:
            return value
        time.sleep(1)
    tails = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                      for p in sorted(logs.glob("*.log")))
    pytest.fail(f"timed out waiting for {what}\n{tails}")


class Services:
    """Subprocesses started by this test, each in its own process group, ended by their ids."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[subprocess.Popen] = []

    def start(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(args, env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("ops")
    port, hook_port = free_port(), free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    env |= {"PREFECT_HOME": str(root / "prefect"), "PREFECT_API_URL": api,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false",
            "HF_HUB_OFFLINE": "1", "KBFLOW_REBUILD_CRON": CRON,
            # webhook, incremental and backfill runs read only under the document roots
            "KBFLOW_DOCUMENT_ROOTS": json.dumps([str(tmp_path_factory.getbasetemp())])}
    services = Services(root)
    try:
        services.start("server", [str(BIN / "prefect"), "server", "start", "--host",
                                  "127.0.0.1", "--port", str(port)], env)
        wait_until("the Prefect server", lambda: httpx.get(f"{api}/health").status_code == 200,
                   180, root)
        deploy = subprocess.run([str(BIN / "kbflow"), "deploy"], env=env, cwd=REPO,
                                capture_output=True, text=True, timeout=180)
        assert deploy.returncode == 0, deploy.stdout + deploy.stderr
        services.start("worker", [str(BIN / "prefect"), "worker", "start", "--pool", "kbflow",
                                  "--type", "process"],
                       env | {"KBFLOW_DATA_DIR": str(root / "data"),
                              "PREFECT_WORKER_QUERY_SECONDS": "1"})
        services.start("serve", [str(BIN / "kbflow"), "serve", "--port", str(hook_port)],
                       env | {"KBFLOW_DATA_DIR": str(root / "hook"),
                              "KBFLOW_WEBHOOK_SECRET": SECRET,
                              "KBFLOW_WEBHOOK_DEBOUNCE_SECONDS": "0.5"})
        hook = f"http://127.0.0.1:{hook_port}"
        wait_until("kbflow serve", lambda: httpx.get(f"{hook}/health").status_code == 200,
                   60, root)
        yield {"root": root, "api": api, "hook": hook, "env": env, "deploy": deploy.stdout}
    finally:
        services.stop()


def flow_run(api: str, run_id: str) -> dict:
    return httpx.get(f"{api}/flow_runs/{run_id}").json()


def finished(api: str, run_id: str) -> dict | None:
    run = flow_run(api, run_id)
    state = run["state"]["type"]
    if state in {"FAILED", "CRASHED", "CANCELLED"}:
        pytest.fail(f"flow run {run['name']} ended {state}: {run['state'].get('message')}")
    return run if state == "COMPLETED" else None


def send_event(stack: dict, kind: str, doc: Path, event_id: str) -> tuple[str, dict]:
    """POST a signed event; wait for the incremental run it starts to complete."""
    api, root = stack["api"], stack["root"]
    body = json.dumps({"type": kind, "uri": doc.as_uri(), "id": event_id}).encode()
    stamp = str(int(time.time()))
    reply = httpx.post(f"{stack['hook']}/events", content=body, headers={
        TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: sign(SECRET, stamp, body)})
    assert reply.status_code == 202, reply.text
    outbox = EventStore(root / "hook" / "webhook_events.db")

    def dispatched() -> str | None:
        with closing(outbox._connect()) as db:
            row = db.execute("SELECT flow_run_id FROM events WHERE event_id=?",
                             (event_id,)).fetchone()
        return row[0] if row else None

    run_id = wait_until(f"the run for {event_id} to be started", dispatched, 60, root)
    return run_id, wait_until(f"the run for {event_id} to complete",
                              lambda: finished(api, run_id), 240, root)


def test_deploy_creates_pool_limits_and_four_deployments(stack: dict) -> None:
    api = stack["api"]
    assert httpx.get(f"{api}/work_pools/kbflow").json()["type"] == "process"
    for role in ("vectors", "lexical", "graph"):
        limit = httpx.get(f"{api}/v2/concurrency_limits/kbflow-{role}").json()
        assert limit["limit"] == 1 and limit["active"]
    names = {"kbflow-full-rebuild/full-rebuild", "kbflow-incremental/incremental",
             "kbflow-backfill/backfill", "kbflow-rollback/rollback"}
    for name in names:
        deployment = httpx.get(f"{api}/deployments/name/{name}").json()
        assert deployment["work_pool_name"] == "kbflow"
        steps = deployment["pull_steps"]
        assert steps[0]["prefect.deployments.steps.set_working_directory"]["directory"] == str(
            REPO)
        assert name in stack["deploy"]
    rebuild = httpx.get(f"{api}/deployments/name/kbflow-full-rebuild/full-rebuild").json()
    assert [s["schedule"]["cron"] for s in rebuild["schedules"]] == [CRON]


def test_signed_webhooks_make_a_document_ready_then_tombstoned(stack: dict, tmp_path: Path) -> None:
    api, root = stack["api"], stack["root"]
    watched = tmp_path / "watched"
    watched.mkdir()
    doc = watched / "leave_policy.md"
    shutil.copy(SAMPLE_DOCS / "leave_policy.md", doc)

    # a backfill of two other documents, batch size 1, started from the Prefect CLI, runs beside
    backfill_dir = tmp_path / "backfill"
    backfill_dir.mkdir()
    for name in ("remote_work_policy.md", "approval_authority.html",
                 "approval_authority.html.meta.yaml"):
        shutil.copy(SAMPLE_DOCS / name, backfill_dir / name)
    started = subprocess.run(
        [str(BIN / "prefect"), "deployment", "run", "kbflow-backfill/backfill",
         "-p", f"folder={backfill_dir}", "-p", "batch_size=1",
         "-p", f"data_dir={root / 'backfill-data'}"],
        env=stack["env"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stdout + started.stderr
    backfill_id = re.search(r"UUID: ([0-9a-f-]{36})", started.stdout).group(1)

    run_id, run = send_event(stack, "created", doc, "evt-1")
    assert run["parameters"] == {"changed": [str(doc)], "deleted": []}
    deployment = httpx.get(f"{api}/deployments/{run['deployment_id']}").json()
    assert deployment["name"] == "incremental"

    manifest = ManifestStore(root / "data" / "manifest.db")
    try:
        records = {r.source_path: r for r in manifest.documents()}
    finally:
        manifest.close()
    assert records[str(doc)].state == State.READY
    assert records[str(doc)].chunk_count > 0
    status = subprocess.run([str(BIN / "kbflow"), "--data-dir", str(root / "data"), "status",
                             "--json"], capture_output=True, text=True, timeout=120)
    shown = json.loads(status.stdout)
    assert shown["counts"] == {"READY": 1}
    assert shown["last_run"]["run_id"] == run_id and shown["last_run"]["summary"]["written"] == 1

    doc.unlink()
    send_event(stack, "deleted", doc, "evt-2")
    manifest = ManifestStore(root / "data" / "manifest.db")
    try:
        assert manifest.documents()[0].state == State.TOMBSTONED
    finally:
        manifest.close()

    report = wait_until("the backfill to complete", lambda: finished(api, backfill_id), 240, root)
    assert report["name"] == f"backfill {backfill_dir}"
    batches = httpx.post(f"{api}/flow_runs/filter", json={
        "flow_runs": {"name": {"like_": "backfill batch"}}}).json()
    assert sorted(b["name"] for b in batches) == ["backfill batch 1/2", "backfill batch 2/2"]
    assert {b["state"]["type"] for b in batches} == {"COMPLETED"}
    artifacts = httpx.post(f"{api}/artifacts/filter", json={
        "artifacts": {"flow_run_id": {"any_": [backfill_id]}}}).json()
    assert [a["key"] for a in artifacts] == [ARTIFACT_KEY]
    assert "| files | 2 |" in artifacts[0]["data"]
    manifest = ManifestStore(root / "backfill-data" / "manifest.db")
    try:
        assert {r.doc_id: r.state for r in manifest.documents()} == {
            "remote_work_policy": State.READY, "approval-authority": State.READY}
    finally:
        manifest.close()


def test_summary_markdown_lists_failures_and_escapes_cells() -> None:
    text = summary_markdown({"run_id": "r1", "documents": {"READY": 3, "FAILED": 1},
                             "failures": [{"path": "a|b.pdf", "reason": "bad\nPDF"}]}, "t")
    assert "| documents | READY: 3, FAILED: 1 |" in text
    assert "## Failures (1)" in text and "- `a|b.pdf`: bad PDF" in text
    assert "| run_id | r1 |" in text


def test_backfill_selects_by_modification_time_and_batches(tmp_path: Path) -> None:
    day = 86400
    for i, name in enumerate(("a.md", "b.md", "c.md", "d.md")):
        path = tmp_path / name
        path.write_text(f"# {name}", encoding="utf-8")
        os.utime(path, (1_700_000_000 + i * day, 1_700_000_000 + i * day))
    (tmp_path / "b.md.meta.yaml").write_text("doc_id: b\n", encoding="utf-8")
    after = datetime.fromtimestamp(1_700_000_000 + day, UTC)
    before = datetime.fromtimestamp(1_700_000_000 + 3 * day, UTC)
    assert [p.name for p in select_files(tmp_path, after, before)] == ["b.md", "c.md"]
    assert len(select_files(tmp_path)) == 4
    assert [len(b) for b in batches(select_files(tmp_path), 3)] == [3, 1]
    with pytest.raises(ValueError):
        batches([], 0)
