"""The warm incremental path (flows/warm.py) on loopback, as the README starts it: a Prefect
server, `kbflow worker` and `kbflow serve` with KBFLOW_WEBHOOK_RUNNER=worker. The worker is
SIGKILLed while it applies a batch of events; after a restart every event is applied, none is
lost, and the dead run is marked Crashed in Prefect."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from contextlib import closing
from pathlib import Path

import httpx
from test_deployments import Services, free_port, wait_until

from flows.webhook.events import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from flows.webhook.outbox import EventStore
from ingest.manifest import ManifestStore
from ingest.models import State

SECRET = "warm-secret"
KEY = "warm-test-key-0123456789"
FILES = 24


def kbflow(*args: str) -> list[str]:
    return [sys.executable, "-m", "flows.cli", *args]


def post(hook: str, kind: str, path: Path) -> None:
    body = json.dumps({"type": kind, "uri": path.as_uri(), "id": uuid.uuid4().hex}).encode()
    stamp = str(int(time.time()))
    reply = httpx.post(f"{hook}/events", content=body, headers={
        TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: sign(SECRET, stamp, body)})
    assert reply.status_code == 202, reply.text


def ready(data: Path) -> int:
    with ManifestStore(data / "manifest.db") as manifest:
        return sum(1 for r in manifest.documents() if r.state == State.READY)


def task_runs(api: str, state: str) -> list[dict]:
    reply = httpx.post(f"{api}/task_runs/filter", json={"task_runs": {
        "tags": {"all_": ["kbflow-events"]}, "state": {"type": {"any_": [state]}}}})
    return list(reply.json())


def test_events_survive_a_worker_killed_mid_batch(tmp_path: Path) -> None:
    root, docs, data = tmp_path, tmp_path / "docs", tmp_path / "data"
    docs.mkdir()
    (docs / "seed.md").write_text("# 种子制度\n\n第一条 本制度用于测试。\n", encoding="utf-8")
    port, hook_port = free_port(), free_port()
    api = f"http://127.0.0.1:{port}/api"
    (root / "keys.json").write_text(json.dumps({KEY: {"tenant": "default",
                                                      "groups": ["all-staff"]}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    env |= {"PREFECT_HOME": str(root / "prefect"), "PREFECT_API_URL": api,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false",
            "HF_HUB_OFFLINE": "1", "KBFLOW_DATA_DIR": str(data),
            "KBFLOW_DOCUMENT_ROOTS": json.dumps([str(docs)]), "KBFLOW_WEBHOOK_SECRET": SECRET,
            "KBFLOW_WEBHOOK_RUNNER": "worker", "KBFLOW_WEBHOOK_DEBOUNCE_SECONDS": "0.5",
            "KBFLOW_API_KEYS_FILE": str(root / "keys.json")}
    services = Services(root)
    try:
        services.start("server", [str(Path(sys.executable).parent / "prefect"), "server",
                                  "start", "--host", "127.0.0.1", "--port", str(port)], env)
        wait_until("the Prefect server", lambda: httpx.get(f"{api}/health").status_code == 200,
                   180, root)
        services.start("ingest", kbflow("ingest", str(docs)), env).wait(timeout=600)
        assert ready(data) == 1
        worker = services.start("worker", kbflow("worker"), env)
        services.start("serve", kbflow("serve", "--port", str(hook_port)), env)
        hook = f"http://127.0.0.1:{hook_port}"
        wait_until("kbflow serve", lambda: httpx.get(f"{hook}/health").status_code == 200,
                   120, root)

        paths = []
        for n in range(FILES):  # one batch, long enough to be killed in the middle of
            path = docs / f"policy_{n:02d}.md"
            path.write_text(f"# 制度{n}\n\n" + "".join(
                f"第{c}条 编号 warmcode{n}x{c} 的规定适用于第{c}类事项，须经部门负责人审批。\n\n"
                for c in range(1, 9)), encoding="utf-8")
            paths.append(path)
        for path in paths:
            post(hook, "created", path)

        running = wait_until("the batch to be running", lambda: task_runs(api, "RUNNING"),
                             300, root)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        assert ready(data) < 1 + FILES, "the batch ended before the kill: nothing was tested"

        services.start("worker-again", kbflow("worker"), env)
        wait_until("every event applied", lambda: ready(data) == 1 + FILES, 600, root)
        outbox = EventStore(data / "webhook_events.db")
        wait_until("every event done", lambda: outbox.counts().get("done") == FILES, 120, root)
        with closing(outbox._connect()) as db:
            assert db.execute("SELECT count(*) FROM events WHERE status != 'done'").fetchone() \
                == (0,)
        killed = httpx.get(f"{api}/task_runs/{running[0]['id']}").json()
        assert killed["state"]["type"] == "CRASHED"
        left = httpx.post(f"{api}/flow_runs/filter", json={"flow_runs": {"state": {"type": {
            "any_": ["RUNNING", "PENDING"]}}}}).json()
        assert left == []  # the dead batch's kbflow-events flow run is Crashed too
        found = httpx.get(f"{hook}/search", params={"q": f"warmcode{FILES - 1}x8"},
                          headers={"Authorization": f"Bearer {KEY}"}).json()
        assert any(f"warmcode{FILES - 1}x8" in r["text"] for r in found["results"])
    finally:
        services.stop()
