"""What the integration tests share: eval/evidence_docs (a group and two subsidiaries, each a
tenant) ingested once, a keys file with one key per tenant, and a running `kbflow serve`."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests_support import REPO

EVAL = REPO / "eval"
TENANTS = EVAL / "evidence_tenants.yaml"
KEY_GROUP = "key-of-the-group-0123456789"
KEY_PRECISION = "key-of-hc-precision-0123456"
KEY_LOGISTICS = "key-of-hc-logistics-0123456"
LODGING = "去深圳出差住酒店一晚最多报多少钱？"  # precision says 450元, logistics 520元, group 600元
AS_OF = "2026-04-01"


@dataclass
class Served:
    data: Path
    keys: Path
    url: str  # http://127.0.0.1:<port>

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment for kbflow processes over this data directory."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
        return env | {"KBFLOW_DATA_DIR": str(self.data), "KBFLOW_TENANT_PARENTS": str(TENANTS),
                      "KBFLOW_API_KEYS_FILE": str(self.keys)} | extra


def index_evidence(root: Path) -> Path:
    """The evidence documents ingested in process (no Prefect): the data directory."""
    from ingest.config import Settings
    from ingest.manifest import ManifestStore
    from ingest.parse import discover
    from ingest.pipeline import InProcess, RunContext, run_pipeline

    docs = shutil.copytree(EVAL / "evidence_docs", root / "docs")
    settings = Settings(data_dir=root / "data", tenant_parents=TENANTS)
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=uuid.uuid4().hex,
                         steps=InProcess(), log=logging.getLogger(__name__))
        summary = run_pipeline(ctx, str(docs), [(path, docs) for path in discover(docs)])
    assert summary.failures == [] and summary.written == 6
    return settings.data_dir


def write_keys(path: Path) -> Path:
    path.write_text(json.dumps({
        KEY_GROUP: {"tenant": "default", "groups": ["all-staff"]},
        KEY_PRECISION: {"tenant": "hc-precision", "groups": ["all-staff"]},
        KEY_LOGISTICS: {"tenant": "hc-logistics", "groups": ["all-staff"]},
    }))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(args: list[str], env: dict[str, str], health: str,
          timeout: float = 300) -> subprocess.Popen[str]:
    """A kbflow server process, returned once `health` answers 200 (any status for POST-only
    endpoints: anything but a refused connection)."""
    server = subprocess.Popen([sys.executable, "-m", "flows.cli", *args], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"{args} exited: {server.communicate()[1][-2000:]}")
        try:
            httpx.get(health, timeout=2)
            return server
        except httpx.HTTPError:
            time.sleep(0.5)
    stop(server)
    raise AssertionError(f"{health} did not answer within {timeout} s")


def stop(server: subprocess.Popen[str]) -> None:
    server.terminate()
    try:
        server.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.communicate()
