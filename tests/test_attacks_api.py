"""The security and fault review of issue 28 against `kbflow serve` and the CLI: the search API
under load and abandoned requests (7), idle connections (8), and the lows (open /docs, a
non-ASCII signature, a huge /search body, Unix-time dates, document text driving the terminal).
Real servers on 127.0.0.1 (uvicorn in a thread, or `kbflow serve` in a process), no mocks.

New interfaces are imported inside the tests, so this file also runs against the code from
before the fixes (each attack then fails on its own assertion).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from test_attacks import raw_request
from test_serving import KEY_A, bearer, clean_env, free_port, kbflow, wait_for, write_keys
from tests_support import SAMPLE_DOCS

from flows.webhook.events import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from ingest.config import Settings

SECRET = "test-secret"
EVIL_TITLE = "报销\x1b[31m红色\x1b[0m办法[/] [blink]闪[/blink]"
EVIL = (f"# {EVIL_TITLE}\n\n第一条 出差\x1b]0;pwned\x07报销须在十日内提交发票[/]。\n")
QUERY = "出差报销"


@pytest.fixture(scope="module")
def indexed(prefect_api, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """leave_policy and a document whose title and text carry ANSI escapes and rich markup,
    in a file whose name is markup too."""
    from flows.ingest import ingest_flow

    root = tmp_path_factory.mktemp("attacks-api")
    docs = root / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "leave_policy.md", docs)
    (docs / "bad[blink]name.md").write_text(EVIL, encoding="utf-8")
    settings = Settings(data_dir=root / "data", api_keys_file=write_keys(root / "keys.json"))
    summary = ingest_flow(str(docs), str(settings.data_dir))
    assert summary.documents == {"READY": 2}
    return settings


@contextmanager
def api_server(settings: Settings) -> Iterator[tuple[str, FastAPI]]:
    """build_app on a loopback port, configured as `kbflow serve` configures it."""
    import uvicorn

    from flows.api import build_app
    from flows.serving import server_config

    app, port = build_app(settings), free_port()
    server = uvicorn.Server(server_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300  # the lifespan loads the model first
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def api(indexed: Settings) -> Iterator[str]:
    with api_server(indexed) as (url, _):
        yield url


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`kbflow serve` as a webhook receiver only (no model to load): its URL."""
    root = tmp_path_factory.mktemp("hook")
    port = free_port()
    server = kbflow(root / "data", "serve", "--port", str(port),
                    env=clean_env(KBFLOW_WEBHOOK_SECRET=SECRET))
    try:
        wait_for(f"http://127.0.0.1:{port}/health", server)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.communicate(timeout=60)


# ---- 7. the search API without backpressure ------------------------------------------------------

def timed_search(url: str, timeout: float = 120) -> tuple[float, int, str | None]:
    """(seconds, status, Retry-After) of one search; status 0 when the client gave up."""
    started = time.perf_counter()
    try:
        reply = httpx.post(f"{url}/search", json={"query": "婚假有几天", "k": 50},
                           headers=bearer(KEY_A), timeout=timeout)
    except httpx.TimeoutException:
        return time.perf_counter() - started, 0, None
    return time.perf_counter() - started, reply.status_code, reply.headers.get("retry-after")


def slowed(app: FastAPI, seconds: float) -> None:
    """Each of the app's searches takes `seconds` longer (the real search still runs): the
    queue meets searches as slow as on a large corpus or a loaded machine, whatever this
    machine's speed. A warm search of this small index takes ~20 ms, too fast for a queue."""
    service = app.state.search
    search = service._search

    def slow(*args: Any) -> str:
        time.sleep(seconds)
        return search(*args)

    service._search = slow


def test_7_searches_beyond_the_queue_are_refused_at_once(indexed: Settings) -> None:
    """30 searches at once against a queue of 2: the rest get 503 with Retry-After straight
    away instead of queueing behind everyone (before, all 30 waited their turn)."""
    with api_server(indexed.model_copy(update={"search_max_pending": 2})) as (url, app):
        slowed(app, 0.1)
        with ThreadPoolExecutor(max_workers=30) as pool:
            replies = list(pool.map(lambda _: timed_search(url), range(30)))
        assert timed_search(url)[1] == 200  # served again once the burst is over
    statuses = [status for _, status, _ in replies]
    refused = [(seconds, after) for seconds, status, after in replies if status == 503]
    assert set(statuses) == {200, 503}, statuses
    assert len(refused) >= 15, statuses
    assert all(after is not None and int(after) >= 1 for _, after in refused)
    assert max(seconds for seconds, _ in refused) < 5


def test_7_searches_abandoned_before_their_turn_are_not_computed(
        indexed: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """30 clients that give up after 0.5 s: the searches still waiting when their client left
    are skipped (before, every one was computed and stalled whoever came next). All 30 are
    queued (no refusal by expected wait), each search 0.1 s or more: at most 5 finish in time."""
    monkeypatch.setattr("flows.api.MAX_QUEUE_SECONDS", 60.0)
    with api_server(indexed.model_copy(update={"search_max_pending": 30,
                                                "search_max_pending_per_key": 30,
                                                "search_max_pending_per_tenant": 30})
                    ) as (url, app):
        slowed(app, 0.1)
        with ThreadPoolExecutor(max_workers=30) as pool:
            replies = list(pool.map(lambda _: timed_search(url, timeout=0.5), range(30)))
        service = app.state.search
        computed_while_clients_waited = service.computed  # every client has answered or left
        time.sleep(0.5)  # a waiting search notices within 0.1 s that its client left
        assert service.pending <= 1, vars(service)  # at most the one being computed
        deadline = time.monotonic() + 120
        while service.computed + service.abandoned + service.refused < 30:
            assert time.monotonic() < deadline, vars(service)
            time.sleep(0.05)
        assert timed_search(url)[1] == 200
    gave_up = sum(status == 0 for _, status, _ in replies)
    assert gave_up >= 10, replies
    # once every client has gone, only the search already running (and at most one that took
    # its turn as its client hung up) is still computed; the rest are skipped. How many were
    # computed while clients still waited depends on the machine's speed, so it is not bounded.
    computed_after = service.computed - 1 - computed_while_clients_waited  # -1: the last probe
    assert computed_after <= 2, (computed_while_clients_waited, vars(service), gave_up)
    assert service.abandoned >= 1, vars(service)


# ---- 8. idle half-open connections are never closed -----------------------------------------

def test_8_idle_and_trickling_connections_are_closed_and_health_answers(hook: str) -> None:
    """200 connections that send nothing and one that trickles a request head byte by byte:
    /health answers meanwhile, and the server closes them all within its idle timeout (before,
    they stayed open for ever and, by the thousand, used up the file descriptors)."""
    from flows.serving import IDLE_TIMEOUT

    host, port = hook.removeprefix("http://").split(":")
    idle = [socket.create_connection((host, int(port)), timeout=5) for _ in range(200)]
    slow = socket.create_connection((host, int(port)), timeout=5)
    deadline = time.monotonic() + IDLE_TIMEOUT + 10
    try:
        assert httpx.get(f"{hook}/health", timeout=5).json() == {"status": "ok"}
        head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
        try:
            for byte in head:
                assert time.monotonic() < deadline, "the trickling connection is still open"
                slow.sendall(bytes([byte]))
                time.sleep(0.1)
        except OSError:  # closed by the server, as it should be
            pass
        for s in idle:
            s.settimeout(max(0.1, deadline - time.monotonic()))
            assert s.recv(100) == b""  # closed, with nothing sent (a timeout: still open)
        assert httpx.get(f"{hook}/health", timeout=5).json() == {"status": "ok"}
    finally:
        for s in [*idle, slow]:
            s.close()


# ---- lows ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json"])
def test_api_documentation_is_not_served(api: str, hook: str, path: str) -> None:
    """The generated docs listed every route and model to anyone without a key."""
    assert httpx.get(f"{api}{path}", timeout=10).status_code == 404
    assert httpx.get(f"{hook}{path}", timeout=10).status_code == 404


def test_a_non_ascii_signature_is_401_not_500(hook: str) -> None:
    """hmac.compare_digest raised TypeError on a str with non-ASCII characters: a 500 for any
    stranger, on /events and on /health."""
    body = b'{"type": "created", "uri": "a.md"}'
    stamp = str(int(time.time()))
    forged = ("sha256=é" + sign(SECRET, stamp, body)[8:]).encode("utf-8")
    reply = httpx.post(f"{hook}/events", content=body, timeout=10,
                       headers={TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: forged})
    assert reply.status_code == 401
    health = httpx.get(f"{hook}/health", timeout=10,
                       headers={TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: "ü".encode()})
    assert health.status_code == 200 and health.json() == {"status": "ok"}


def test_a_huge_search_body_is_refused_before_it_is_read(api: str) -> None:
    """300 MB announced and not sent: 413 at once (before, the server waited for all of it);
    a chunked body is cut off as it grows."""
    auth = f"Authorization: Bearer {KEY_A}\r\n"
    reply = raw_request(api, f"POST /search HTTP/1.1\r\nHost: x\r\n{auth}"
                        "Content-Length: 314572800\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 413")
    sent = []

    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            sent.append(1)
            yield b"10000\r\n" + b"a" * 65536 + b"\r\n"
    reply = raw_request(api, f"POST /search HTTP/1.1\r\nHost: x\r\n{auth}"
                        "Transfer-Encoding: chunked\r\n\r\n", chunks())
    assert reply.startswith(b"HTTP/1.1 413") and len(sent) < 64
    ok = httpx.post(f"{api}/search", json={"query": QUERY}, headers=bearer(KEY_A), timeout=60)
    assert ok.status_code == 200


@pytest.mark.parametrize("as_of", [1735689600, "1735689600", "20250101", "2025-W01-1"])
def test_as_of_is_a_calendar_date_only(api: str, as_of: int | str) -> None:
    """1735689600 was read as Unix time (2025-01-01), silently."""
    posted = httpx.post(f"{api}/search", json={"query": QUERY, "as_of": as_of},
                        headers=bearer(KEY_A), timeout=60)
    assert posted.status_code == 422, posted.text
    got = httpx.get(f"{api}/search", params={"q": QUERY, "as_of": str(as_of)},
                    headers=bearer(KEY_A), timeout=60)
    assert got.status_code == 422, got.text
    fine = httpx.get(f"{api}/search", params={"q": QUERY, "as_of": "2025-01-01"},
                     headers=bearer(KEY_A), timeout=60)
    assert fine.status_code == 200 and fine.json()["as_of"] == "2025-01-01"


@pytest.mark.parametrize("command", ["search", "graph"])
@pytest.mark.parametrize("as_of", ["20250101", "2025-W01-1", "2025-1-1"])
def test_cli_as_of_is_a_calendar_date_only(tmp_path: Path, command: str, as_of: str,
                                           capsys: pytest.CaptureFixture) -> None:
    from flows.cli import main

    with pytest.raises(SystemExit) as caught:
        main(["--data-dir", str(tmp_path), command, "婚假", "--as-of", as_of])
    assert caught.value.code == 2 and "YYYY-MM-DD" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["status"], ["search", QUERY, "--k", "10"],
                                     ["chunks", "bad-blink-name"]])
def test_document_text_reaches_the_terminal_as_text(indexed: Settings,
                                                    command: list[str]) -> None:
    """A title `…[/]…` crashed `kbflow status` and `kbflow search` (MarkupError); ESC and BEL
    from a document went to the terminal. Now both print, literally, without control bytes."""
    env = {k: v for k, v in clean_env(COLUMNS="300").items()
           if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    done = subprocess.run([sys.executable, "-m", "flows.cli", "--data-dir",
                           str(indexed.data_dir), *command], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "[/]" in done.stdout and "[blink]" in done.stdout
