"""A new user's first run: `kbflow ingest` with an empty HOME (no ~/.prefect yet) and no
PREFECT_API_URL succeeds, and a killed run leaves no Prefect server behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests_support import SAMPLE_DOCS


def fresh_environment(home: Path) -> dict[str, str]:
    """The caller's environment minus every Prefect and kbflow setting, with an empty HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    home.mkdir()
    # The embedding model `make install` fetched stays where it is (installing is not a run).
    from ingest.embed.fetch import cache_root

    cache = str(cache_root())
    return env | {"HOME": str(home), "PREFECT_HOME": str(home / ".prefect"),
                  "KBFLOW_MODEL_CACHE": cache}


def start_ingest(tmp_path: Path,
                 output: int = subprocess.PIPE) -> tuple[subprocess.Popen[str], Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "leave_policy.md", docs)
    home = tmp_path / "home"
    child = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "--data-dir", str(tmp_path / "data"), "ingest",
         str(docs), "--json"],
        env=fresh_environment(home), stdout=output, stderr=output, text=True,
    )
    return child, home


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def server_child(pid: int, timeout: float) -> int:
    """The pid of the uvicorn process `pid` started (Prefect's temporary server)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"uvicorn" in cmdline:
                return int(entry.name)
        time.sleep(0.2)
    raise AssertionError(f"process {pid} started no Prefect server within {timeout} s")


def test_first_ingest_with_an_empty_home_succeeds(tmp_path: Path) -> None:
    child, home = start_ingest(tmp_path)
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "Timed out" not in err
    summary = json.loads(out)
    assert summary["documents"] == {"READY": 1} and summary["failures"] == []
    assert (home / ".prefect" / "prefect.db").exists()  # the run used the empty HOME


def test_a_killed_ingest_leaves_no_server_behind(tmp_path: Path) -> None:
    # No pipes: an orphaned server would hold them open and hang the test instead of failing it.
    child, _ = start_ingest(tmp_path, subprocess.DEVNULL)
    try:
        server = server_child(child.pid, timeout=300)
        assert alive(server)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        deadline = time.monotonic() + 10
        while alive(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(server), f"Prefect server {server} outlived its killed parent"
    finally:
        child.kill()
        child.wait()
