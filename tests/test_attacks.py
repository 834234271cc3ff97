"""The security and fault review of issue 13, replayed: every attack that got through, against
the real receiver (uvicorn on 127.0.0.1), the real pipeline and the real stores, plus a fuzz of
signed random bodies. Each test names the item it reproduces.

New interfaces are imported inside the tests, so this file also runs against the code from
before the fixes (each attack then fails on its own assertion).
"""

from __future__ import annotations

import json
import random
import select
import shutil
import socket
import sqlite3
import string
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import closing
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from test_webhook import Recorder, post, receiver, wait_for
from tests_support import SAMPLE_DOCS

from flows.webhook.events import SIGNATURE_HEADER, TIMESTAMP_HEADER, ChangeEvent, sign
from flows.webhook.outbox import EventStore
from ingest.config import Settings
from ingest.manifest import ManifestStore

SECRET = "test-secret"
POLICY = ("# 请假管理办法\n\n第一条 为规范员工请假管理，制定本办法。\n\n"
          "第二条 员工请婚假的，可享受婚假十天，须提前一周提出申请。\n\n"
          "第三条 员工请病假的，应提交医院出具的诊断证明，由部门负责人审批。\n")
SECRET_TEXT = "# 机密\n\n第一条 数据库口令是 ZEBRA-42，不得外传。\n"


def signed_headers(body: bytes, secret: str = SECRET) -> dict[str, str]:
    stamp = str(int(time.time()))
    return {TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: sign(secret, stamp, body),
            "Content-Type": "application/json"}


def signed_health(url: str) -> dict:
    stamp = str(int(time.time()))
    headers = {TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: sign(SECRET, stamp, b"")}
    return httpx.get(f"{url}/health", headers=headers, timeout=10).json()


@pytest.fixture
def site(tmp_path: Path) -> dict[str, Path]:
    """A document root with one policy, and a secret file beside it (outside the root)."""
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (docs / "leave.md").write_text(POLICY, encoding="utf-8")
    (outside / "secret.md").write_text(SECRET_TEXT, encoding="utf-8")
    return {"docs": docs.resolve(), "outside": outside.resolve(), "data": tmp_path / "data"}


@pytest.fixture
def hook(site: dict[str, Path]) -> Settings:
    return Settings(data_dir=site["data"], webhook_secret=SECRET, webhook_debounce_seconds=0.3,
                    document_roots=[site["docs"]])


def roots_env(monkeypatch: pytest.MonkeyPatch, *roots: Path) -> None:
    """The flows read their settings from the environment, as a deployment does."""
    monkeypatch.setenv("KBFLOW_DOCUMENT_ROOTS", json.dumps([str(r) for r in roots]))


def outbox(settings: Settings) -> list[dict]:
    """Every event in the outbox with its status and reason (read with plain SQL, so this
    works before the statuses existed too)."""
    db = sqlite3.connect(settings.data_dir / "webhook_events.db")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("SELECT * FROM events ORDER BY id")]
    db.close()
    return rows


def published_paths(settings: Settings) -> set[str]:
    manifest = ManifestStore(settings.manifest)
    try:
        return {r.source_path for r in manifest.documents() if r.state == "READY"}
    finally:
        manifest.close()


# ---- 1. the webhook publishes any readable file on the server -----------------------------------

def test_1_events_outside_the_roots_never_reach_a_run(site: dict[str, Path],
                                                       hook: Settings) -> None:
    trigger = Recorder()
    docs = site["docs"]
    with receiver(hook, trigger) as url:
        escape = post(url, {"type": "updated", "uri": f"file://{docs}/../outside/secret.md"})
        passwd = post(url, {"type": "updated", "uri": "file:///etc/passwd"})
        relative = post(url, {"type": "updated", "uri": "leave.md"})
        metadata = post(url, {"type": "updated", "uri": "http://169.254.169.254/latest/x.md"})
        remote = post(url, {"type": "updated", "uri": "file://evil.example/etc/passwd"})
        assert (escape.status_code, passwd.status_code, relative.status_code) == (202, 202, 202)
        assert (metadata.status_code, remote.status_code) == (422, 422)
        wait_for(lambda: trigger.calls and not EventStore(
            hook.data_dir / "webhook_events.db").pending())
        anyone, insider = httpx.get(f"{url}/health").json(), signed_health(url)
    assert trigger.calls == [([str(docs / "leave.md")], [])]
    events = {e["id"]: e for e in outbox(hook)}
    for reply in (escape, passwd):
        event = events[reply.json()["id"]]
        assert event["status"] == "quarantined"
        assert "outside the document roots" in event["reason"]
    assert events[relative.json()["id"]]["status"] == "done"
    assert anyone == {"status": "ok"} and insider["quarantined"] == 2
    assert {p["id"] for p in insider["problems"]} == {escape.json()["id"], passwd.json()["id"]}


def test_1_without_document_roots_the_webhook_refuses_every_path(site: dict[str, Path]) -> None:
    settings = Settings(data_dir=site["data"], webhook_secret=SECRET,
                        webhook_debounce_seconds=0.3)
    trigger = Recorder()
    with receiver(settings, trigger) as url:
        reply = post(url, {"type": "updated", "uri": f"file://{site['docs']}/leave.md"})
        wait_for(lambda: outbox(settings)[0].get("status") == "quarantined"
                 or trigger.calls, seconds=5)
    assert reply.status_code == 202 and trigger.calls == []
    assert "KBFLOW_DOCUMENT_ROOTS" in outbox(settings)[0]["reason"]


def test_1_incremental_runs_refuse_paths_outside_the_roots(
        prefect_api, site: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.ingest import incremental_flow, ingest_flow

    roots_env(monkeypatch, site["docs"])
    settings = Settings(data_dir=site["data"])
    escape = f"{site['docs']}/../outside/secret.md"
    summary = incremental_flow([escape, str(site["docs"] / "leave.md")], [],
                               str(site["data"]))
    assert summary.written == 1
    assert [(f.path, "outside the document roots" in f.reason) for f in summary.failures] == [
        (escape, True)]
    assert published_paths(settings) == {str(site["docs"] / "leave.md")}

    with pytest.raises(ValueError, match="outside the document roots"):  # kbflow ingest too
        ingest_flow(str(site["outside"]), str(site["data"]))

    monkeypatch.delenv("KBFLOW_DOCUMENT_ROOTS")
    again = incremental_flow([str(site["docs"] / "leave.md")], [], str(site["data"]))
    assert again.written == 0 and "KBFLOW_DOCUMENT_ROOTS" in again.failures[0].reason


def test_1_a_folder_event_rescans_that_folder_and_nothing_outside_it(
        prefect_api, site: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed folder is re-scanned (its new and edited files in, its removed ones out, also
    where they were ingested from the root above it, under their first doc ids); a link out of
    it is refused, and files beside it wait for their own event."""
    from flows.ingest import incremental_flow, ingest_flow

    roots_env(monkeypatch, site["docs"])
    docs, settings = site["docs"], Settings(data_dir=site["data"])
    hr = docs / "hr"
    hr.mkdir()
    (hr / "travel.md").write_text("# 差旅制度\n\n第一条 住宿标准每晚四百元。\n", encoding="utf-8")
    (hr / "old.md").write_text("# 旧制度\n\n第一条 本制度已过时。\n", encoding="utf-8")
    ingest_flow(str(docs), str(site["data"]))  # recorded under the root, not under hr/
    with ManifestStore(settings.manifest) as manifest:
        first_ids = {r.source_path: r.doc_id for r in manifest.documents()}
    (hr / "old.md").unlink()
    (hr / "travel.md").write_text("# 差旅制度\n\n第一条 住宿标准每晚五百元。\n", encoding="utf-8")
    (hr / "new.md").write_text("# 新制度\n\n第一条 本制度自发布之日起施行。\n", encoding="utf-8")
    (hr / "link.md").symlink_to(site["outside"] / "secret.md")
    (docs / "leave.md").write_text(POLICY + "\n第四条 本条不在该文件夹内。\n", encoding="utf-8")

    summary = incremental_flow([str(hr)], [], str(site["data"]))

    with ManifestStore(settings.manifest) as manifest:
        old = [r.version_key for r in manifest.documents(source_paths=[str(hr / "old.md")])]
    assert summary.written == 2 and summary.tombstoned == old
    assert published_paths(settings) == {str(docs / "leave.md"), str(hr / "travel.md"),
                                         str(hr / "new.md")}
    with ManifestStore(settings.manifest) as manifest:
        travel = [r for r in manifest.documents() if r.source_path == str(hr / "travel.md")]
        leave = [r for r in manifest.documents() if r.source_path == str(docs / "leave.md")]
    assert {r.doc_id for r in travel} == {first_ids[str(hr / "travel.md")]}
    assert len(leave) == 1  # its edit waits for its own event
    refused = {Path(f.path).name: f.reason for f in summary.failures}
    assert list(refused) == ["link.md"] and "outside" in refused["link.md"]


# ---- 2. symlinks are followed out of the ingested folder ----------------------------------------

def test_2_a_folder_walk_does_not_follow_links_out_of_the_root(
        prefect_api, site: dict[str, Path]) -> None:
    from flows.ingest import ingest_flow

    docs = site["docs"]
    (docs / "innocent.md").symlink_to(site["outside"] / "secret.md")
    (docs / "sub").mkdir()
    (docs / "sub" / "alias.md").symlink_to(docs / "leave.md")  # inside: read as its target
    (docs / "elsewhere").symlink_to(site["outside"], target_is_directory=True)
    summary = ingest_flow(str(docs), str(site["data"]))
    settings = Settings(data_dir=site["data"])
    assert published_paths(settings) == {str(docs / "leave.md")}
    refused = {Path(f.path).name: f.reason for f in summary.failures}
    assert set(refused) == {"innocent.md", "elsewhere"}
    assert "outside" in refused["innocent.md"] and "not followed" in refused["innocent.md"]


# ---- 3. poison pills in the webhook -------------------------------------------------------------

def test_3_a_burst_over_the_parameter_limit_is_split_into_runs_prefect_accepts(
        prefect_api, site: dict[str, Path]) -> None:
    """3,000 paths of 200 characters (600 KB of parameters) against a real Prefect server."""
    from prefect import get_client

    from flows.ingest import incremental_flow
    from flows.webhook.dispatch import Dispatcher
    from flows.webhook.runs import deployment_trigger

    incremental_flow.to_deployment(name="attack-burst").apply()
    store = EventStore(site["data"] / "webhook_events.db")
    names = [f"folder-{i // 100:03d}/policy-{i:05d}-{'x' * 170}.md" for i in range(3000)]
    with closing(sqlite3.connect(store.path)) as db, db:  # one transaction: 3,000 rows
        db.executemany("INSERT INTO events (signature, type, uri, received_at) VALUES (?,?,?,?)",
                       [(f"sig-{i}", "updated", n, time.time() - 60) for i, n in enumerate(names)])
    dispatcher = Dispatcher(store, deployment_trigger("kbflow-incremental/attack-burst"),
                            0.1, 3600)
    dispatcher.roots = [site["docs"]]
    dispatcher.tick(time.time())
    assert dispatcher.last_error is None and store.pending() == []
    run_ids = {e["flow_run_id"] for e in outbox(Settings(data_dir=site["data"]))}
    assert len(run_ids) >= 3
    sent = []
    with get_client(sync_client=True) as client:
        for run_id in run_ids:
            parameters = client.read_flow_run(run_id).parameters
            assert len(json.dumps(parameters)) < 512 * 1024
            sent += parameters["changed"]
    assert sorted(sent) == sorted(str(site["docs"] / n) for n in names)


def test_3_a_nul_byte_uri_is_refused_and_costs_no_other_event(site: dict[str, Path],
                                                              hook: Settings) -> None:
    trigger = Recorder()
    with receiver(hook, trigger) as url:
        assert post(url, {"type": "updated", "uri": "bad\u0000name.md"}).status_code == 422
        assert post(url, {"type": "updated", "uri": "file:///x%00y.md"}).status_code == 422
    # one already in the outbox (accepted by an older receiver) is quarantined, not sent
    from flows.webhook.dispatch import Dispatcher

    store = EventStore(hook.data_dir / "webhook_events.db")
    store.add(ChangeEvent.model_construct(type="updated", uri="old\u0000.md", id=None),
              "sig-nul", time.time() - 60)
    store.add(ChangeEvent(type="updated", uri="leave.md"), "sig-ok", time.time() - 60)
    dispatcher = Dispatcher(store, trigger, 0.1, 3600)
    dispatcher.roots = [site["docs"]]
    dispatcher.tick(time.time())
    assert trigger.calls == [([str(site["docs"] / "leave.md")], [])]
    assert [e["status"] for e in outbox(hook)] == ["quarantined", "done"]


def test_3_an_event_is_done_only_when_its_run_recorded_its_outcome(
        prefect_api, site: dict[str, Path], hook: Settings,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real incremental flow behind the receiver: a good file, a bad file and an escape go
    out together; each event ends with its own file's outcome."""
    from flows.ingest import incremental_flow
    from flows.webhook.runs import manifest_tracker

    roots_env(monkeypatch, site["docs"])
    (site["docs"] / "empty.md").write_bytes(b"")
    runs: list[str] = []
    ready = threading.Event()

    def run_now(changed: list[str], deleted: list[str]) -> str:
        if not ready.is_set():  # an outage until all three are in: then they go out together
            raise ConnectionError("held back")
        runs.append(incremental_flow(changed, deleted, str(hook.data_dir)).run_id)
        return runs[-1]

    hook.webhook_debounce_seconds = 1.0
    with receiver(hook, run_now, manifest_tracker(hook)) as url:
        for uri in ("leave.md", "empty.md", f"file://{site['docs']}/../outside/secret.md"):
            assert post(url, {"type": "updated", "uri": uri}).status_code == 202
        ready.set()
        wait_for(lambda: all(e["status"] not in ("pending", "dispatched")
                             for e in outbox(hook)), seconds=120)
    events = outbox(hook)
    assert [e["status"] for e in events] == ["done", "failed", "quarantined"]
    assert "empty" in events[1]["reason"] and len(runs) == 1
    assert events[0]["flow_run_id"] == events[1]["flow_run_id"] == runs[0]


def test_3_an_event_that_keeps_crashing_its_run_is_quarantined_alone(
        site: dict[str, Path], hook: Settings) -> None:
    from flows.webhook.dispatch import MAX_ATTEMPTS, Dispatcher, RunOutcome

    poison = str(site["docs"] / "poison.md")
    runs: dict[str, list[str]] = {}

    def trigger(changed: list[str], deleted: list[str]) -> str:
        runs[f"run-{len(runs) + 1}"] = changed
        return f"run-{len(runs)}"

    def tracker(run_id: str) -> RunOutcome:  # a run with the poison in it crashes
        return RunOutcome(poison not in runs[run_id], note="Crashed")

    store = EventStore(hook.data_dir / "webhook_events.db")
    for i, name in enumerate(["a.md", "poison.md", "b.md"]):
        store.add(ChangeEvent(type="updated", uri=name), f"sig-{i}", time.time() - 60)
    dispatcher = Dispatcher(store, trigger, 0.0, 3600, hook.document_roots, tracker)
    for n in range(MAX_ATTEMPTS + 2):
        dispatcher.tick(time.time() + 2 * n)  # outcomes are looked at once a second
    statuses = {Path(e["uri"]).name: (e["status"], e["reason"]) for e in outbox(hook)}
    assert statuses["a.md"] == ("done", None) and statuses["b.md"] == ("done", None)
    assert statuses["poison.md"][0] == "quarantined" and "Crashed" in statuses["poison.md"][1]
    # the batch crashed; then each went alone, the poison until its last attempt
    assert [sorted(Path(p).name for p in changed) for changed in runs.values()] == [
        ["a.md", "b.md", "poison.md"], ["a.md"], ["poison.md"], ["b.md"], ["poison.md"]]
    assert sum(poison in changed for changed in runs.values()) == MAX_ATTEMPTS


# ---- 4. no request limits -----------------------------------------------------------------------

def raw_request(url: str, head: str, body_chunks: Iterable[bytes] = ()) -> bytes:
    """Send a request over a plain socket, stopping the body as soon as a reply is there; the
    start of the reply (waits 5 s at most)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(head.encode())
        try:
            for chunk in body_chunks:
                if select.select([s], [], [], 0)[0]:
                    break
                s.sendall(chunk)
        except OSError:  # the server closed the connection: it replied already
            pass
        return s.recv(200)


def signed_head(body: bytes) -> str:
    headers = signed_headers(body) | {"Content-Length": str(len(body)), "Host": "x"}
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return f"POST /events HTTP/1.1\r\n{lines}\r\n"


def pieces(body: bytes, size: int = 65536) -> Iterator[bytes]:
    return (body[i : i + size] for i in range(0, len(body), size))


def test_4_a_huge_body_is_refused_before_it_is_read(hook: Settings) -> None:
    with receiver(hook, Recorder()) as url:
        # 100 MB announced and not sent: the reply comes before any of it
        reply = raw_request(url, "POST /events HTTP/1.1\r\nHost: x\r\n"
                            "Content-Length: 104857600\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 413")
        sent = []

        def chunks() -> Iterator[bytes]:  # chunked upload, no length: cut off as it grows
            for _ in range(64):
                sent.append(1)
                yield b"10000\r\n" + b"a" * 65536 + b"\r\n"
        reply = raw_request(url, "POST /events HTTP/1.1\r\nHost: x\r\n"
                            "Transfer-Encoding: chunked\r\n\r\n", chunks())
        assert reply.startswith(b"HTTP/1.1 413") and len(sent) < 64
        # signed, but still too big: a 5 MB uri and a 10 MB id
        for event in ({"type": "created", "uri": "a" * 5_000_000},
                      {"type": "created", "uri": "a.md", "id": "i" * 10_000_000}):
            body = json.dumps(event).encode()
            assert raw_request(url, signed_head(body), pieces(body)).startswith(b"HTTP/1.1 413")
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
    assert outbox(hook) == []


def test_4_long_fields_and_deep_json_are_422_never_500(hook: Settings) -> None:
    bodies = [
        json.dumps({"type": "created", "uri": "a" * 5000}).encode(),
        json.dumps({"type": "created", "uri": "a.md", "id": "i" * 1000}).encode(),
        b"[" * 30_000 + b"]" * 30_000,
        json.dumps({"type": "created", "uri": "a.md", "x": [[[[[[1]]]]]]}).encode(),
        b'{"type": "created", "uri": "a.md", "id": 1e99999}',
        b'{"type": "created", "uri": "\xff\xfe.md"}',
        b"1" * 5000,
    ]
    with receiver(hook, Recorder()) as url:
        codes = [httpx.post(f"{url}/events", content=b, headers=signed_headers(b),
                            timeout=30).status_code for b in bodies]
    assert codes == [422] * len(bodies)


# ---- 5. one bad LLM reply aborts a whole ingest -------------------------------------------------

class HtmlEndpoint:
    """A chat-completions URL behind a misconfigured proxy: 200 with a login page."""

    def __init__(self) -> None:
        self.requests = 0

        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                endpoint.requests += 1
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                page = b"<html><body>Please log in</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_5_an_llm_reply_that_is_not_json_is_a_warning_not_a_failed_run(
        prefect_api, site: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.ingest import ingest_flow
    from ingest.llm import LLMClient, LLMError

    html = HtmlEndpoint()
    try:
        with (LLMClient.over_http(html.url, "m") as client,
              pytest.raises(LLMError, match="not JSON")):
            client.chat([{"role": "user", "content": "x"}])
        for name, value in {"KBFLOW_LLM_BASE_URL": html.url, "KBFLOW_LLM_MODEL": "m",
                            "KBFLOW_GRAPH_EXTRACTOR": "both"}.items():
            monkeypatch.setenv(name, value)
        summary = ingest_flow(str(site["docs"]), str(site["data"]))
    finally:
        html.close()
    assert html.requests > 0 and summary.failures == [] and summary.written == 1
    assert summary.documents == {"READY": 1}


# ---- 6. and 9. sidecar fields -------------------------------------------------------------------

@pytest.mark.parametrize(("sidecar", "reason"), [
    ("acl: []\n", "acl: is empty"),
    ("tenant_id: ''\n", "tenant_id: must not be empty"),
    ("effective_from: 2026-01-01\neffective_to: 2025-12-31\n", "is before effective_from"),
    ('doc_id: "leave\\npolicy"\n', "doc_id: must not contain control characters"),
    ('version: "1\\u0000"\n', "version: must not contain control characters"),
    ('tenant_id: "A\\n"\n', "tenant_id: must not contain control characters"),
    ("acl: ['hr', '']\n", "acl: group '' is empty"),
])
def test_6_9_bad_sidecar_fields_fail_with_a_readable_reason(tmp_path: Path, sidecar: str,
                                                            reason: str) -> None:
    from ingest.parse import read_meta

    (tmp_path / "leave.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "leave.md.meta.yaml").write_text(sidecar, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        read_meta(tmp_path / "leave.md", tmp_path, "default", ["all-staff"])
    message = str(caught.value)
    assert message.startswith("leave.md.meta.yaml: ") and reason in message
    assert "Traceback" not in message and "\n" not in message


def test_6_an_empty_acl_is_never_widened_in_a_run(prefect_api, site: dict[str, Path]) -> None:
    from flows.ingest import ingest_flow

    (site["docs"] / "leave.md.meta.yaml").write_text("acl: []\n", encoding="utf-8")
    summary = ingest_flow(str(site["docs"]), str(site["data"]))
    assert summary.written == 0 and "acl: is empty" in summary.failures[0].reason
    assert published_paths(Settings(data_dir=site["data"])) == set()


# ---- 7. a truncated PDF is published silently as partial ----------------------------------------

def test_7_a_repaired_pdf_fails_unless_allowed(tmp_path: Path) -> None:
    from ingest.parse import ParseError, ParseLimits, parse_document, read_meta

    data = (SAMPLE_DOCS / "employee_handbook.pdf").read_bytes()
    (tmp_path / "cut.pdf").write_bytes(data[: int(len(data) * 0.6)])
    meta, cut = read_meta(tmp_path / "cut.pdf", tmp_path, "default", ["all-staff"])
    with pytest.raises(ParseError, match=r"^damaged PDF: repaired by PyMuPDF, 1 of 2 pages read"):
        parse_document(meta, cut)
    allowed = parse_document(meta, cut, ParseLimits(allow_repaired_pdf=True))
    assert allowed.report.repaired and allowed.report.pages_read == 1


# ---- 8. control characters break the Milvus filter ----------------------------------------------

def test_8_control_characters_in_filter_values_neither_break_nor_leak(tmp_path: Path) -> None:
    from test_store_contract import make_chunk, vector

    from ingest.models import SearchFilter
    from ingest.stores.milvus import MilvusVectorStore

    store = MilvusVectorStore(str(tmp_path / "milvus.db"), 8, "m")
    try:
        chunks = [make_chunk(1, tenant="A"), make_chunk(2, doc="other", tenant="B")]
        store.upsert(chunks, {c.chunk_id: vector(n) for n, c in enumerate(chunks, 1)})
        keys = ["hidden@1", 'x" or version_key != "']

        def search(tenant: str, groups: list[str], probe: list[float] | None = None) -> list:
            flt = SearchFilter(tenant_id=tenant, groups=groups, as_of=date(2026, 1, 1),
                               hidden_keys=keys)
            return store.search(probe or vector(1).values, flt, 5, 0.0)

        assert [h.chunk_id for h in search("A", ["staff"])] == ["policy-1-1"]
        for code in [*range(32), 0x7F, 0x85, 0x2028]:
            assert search(f"A{chr(code)}", ["staff"]) == [], hex(code)
            assert search("A", [f"staff{chr(code)}"]) == [], hex(code)
        assert search('A" or tenant_id != "', ["staff"]) == []
        with pytest.raises(Exception) as caught:  # a wrong dimension: Milvus refuses the query
            search("A", ["staff"], [1.0, 0.0])
        assert "other-tenant-secret" not in str(caught.value)
    finally:
        store.close()


# ---- 10. smaller points -------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "encoding"), [("gbk.txt", "gb18030"), ("gbk.md", "gb18030"),
                                                ("bom.md", "utf-8-sig")])
def test_10_gb18030_and_bom_text_files_are_read(tmp_path: Path, name: str,
                                                encoding: str) -> None:
    from ingest.parse import parse_document, read_meta

    text = "第一条 员工请婚假的，可享受婚假十天。\n\n第二条 本办法自发布之日起施行。\n"
    data = text.encode("gbk") if encoding == "gb18030" else "\ufeff".encode() + text.encode()
    (tmp_path / name).write_bytes(data)
    meta, raw = read_meta(tmp_path / name, tmp_path, "default", ["all-staff"])
    doc = parse_document(meta, raw)
    assert "婚假十天" in " ".join(b.text for b in doc.blocks)
    assert doc.report.encoding == encoding


def test_10_identical_trivial_files_are_not_merged(prefect_api, site: dict[str, Path]) -> None:
    from flows.ingest import ingest_flow

    docs = site["docs"]
    (docs / "a.md").write_bytes(b"")
    (docs / "b.md").write_bytes(b"")
    (docs / "c.md").write_text("TODO\n", encoding="utf-8")
    (docs / "d.md").write_text("TODO\n", encoding="utf-8")
    shutil.copy(docs / "leave.md", docs / "leave2.md")  # a real copy still is one
    summary = ingest_flow(str(docs), str(site["data"]))
    assert summary.duplicates == {"leave@1": [str(docs / "leave2.md")]}
    assert [(f.doc_id, "file is empty" in f.reason) for f in summary.failures] == [
        ("a", True), ("b", True)]
    assert published_paths(Settings(data_dir=site["data"])) == {
        str(docs / name) for name in ("c.md", "d.md", "leave.md")}


def test_10_a_deleted_file_comes_back_when_re_added_or_undeleted(
        prefect_api, site: dict[str, Path]) -> None:
    from flows.ingest import ingest_flow

    docs, data = site["docs"], str(site["data"])
    settings = Settings(data_dir=site["data"])
    leave = docs / "leave.md"
    ingest_flow(str(docs), data)
    leave.unlink()
    assert ingest_flow(str(docs), data).tombstoned == ["leave@1"]
    leave.write_text(POLICY, encoding="utf-8")  # the same file, put back
    back = ingest_flow(str(docs), data)
    assert back.failures == [] and back.written == 1
    assert published_paths(settings) == {str(leave)}

    from flows.cli import main

    assert main(["--data-dir", data, "delete", "leave"]) == 0
    kept = ingest_flow(str(docs), data)  # deleted on purpose, unchanged: stays deleted
    assert "kbflow undelete leave" in kept.failures[0].reason
    assert main(["--data-dir", data, "undelete", "leave"]) == 0
    assert published_paths(settings) == {str(leave)}
    assert main(["--data-dir", data, "delete", "leave"]) == 0
    leave.write_text(POLICY + "\n第三条 新增条款。\n", encoding="utf-8")  # new content: back
    assert ingest_flow(str(docs), data).written == 1
    assert published_paths(settings) == {str(leave)}


@pytest.mark.parametrize("k", ["-3", "0", "101", "x"])
def test_10_k_is_validated(tmp_path: Path, k: str, capsys: pytest.CaptureFixture) -> None:
    from flows.cli import main

    with pytest.raises(SystemExit) as caught:
        main(["--data-dir", str(tmp_path), "search", "婚假", "--k", k])
    assert caught.value.code == 2 and "--k" in capsys.readouterr().err


def test_events_lists_what_the_webhook_refused(site: dict[str, Path], hook: Settings,
                                               capsys: pytest.CaptureFixture) -> None:
    from flows.cli import main

    with receiver(hook, Recorder()) as url:
        post(url, {"type": "updated", "uri": "file:///etc/passwd"})
        post(url, {"type": "updated", "uri": "leave.md"})
        wait_for(lambda: not EventStore(hook.data_dir / "webhook_events.db").pending())
    assert main(["--data-dir", str(hook.data_dir), "events", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["uri"], e["status"]) for e in listed] == [("leave.md", "done"),
                                                         ("file:///etc/passwd", "quarantined")]


# ---- the fuzz -----------------------------------------------------------------------------------

def fuzz_body(rng: random.Random, docs: Path) -> bytes:
    """A random body: garbage, odd JSON, or an event with a hostile or valid uri."""
    uris = ["leave.md", f"file://{docs}/leave.md", "../outside/secret.md", "/etc/passwd",
            "http://169.254.169.254/x.md", "file:///%00", "a\u0000b", "a\nb.md", "..", "",
            "file://host/x.md", "C:\\x.md", "~/x.md", "leave.md/../../x", "\u202e.md",
            "file:" + "/" * 50, "x" * 4097, "中文目录/政策.md", f"{docs}/../docs/leave.md"]
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randbytes(rng.randrange(0, 300))
    if kind == 1:
        depth = rng.randrange(1, 3000)
        return b"[" * depth + b"]" * rng.choice([depth, 0, depth // 2])
    if kind == 2:
        value = rng.choice([None, True, 1, -1.5, "s", [], {}, [1, "a"], {"type": None}])
        return json.dumps(value).encode()
    event: dict = {"type": rng.choice(["created", "updated", "deleted", "moved", 1, None]),
                   "uri": rng.choice(uris) if rng.random() < 0.8 else "".join(
                       rng.choices(string.printable + "中\u0000\u2028", k=rng.randrange(40)))}
    if rng.random() < 0.5:
        event["id"] = rng.choice([f"e-{rng.random()}", "", 5, "x" * 300, "a\nb"])
    if rng.random() < 0.2:
        event[rng.choice(["extra", "uri", "type"])] = rng.choice([[], {"a": [1]}, "x", 3])
    return json.dumps(event, ensure_ascii=rng.random() < 0.5).encode(
        "utf-8", "surrogatepass")


def test_fuzz_500_signed_random_bodies(site: dict[str, Path], hook: Settings) -> None:
    rng = random.Random(13)
    trigger = Recorder()
    statuses: list[int] = []
    accepted: list[int] = []
    with receiver(hook, trigger) as url, httpx.Client(timeout=10) as client:
        for _ in range(500):
            body = fuzz_body(rng, site["docs"])
            reply = client.post(f"{url}/events", content=body, headers=signed_headers(body))
            statuses.append(reply.status_code)
            if reply.status_code == 202:
                accepted.append(reply.json()["id"])
        wait_for(lambda: not EventStore(hook.data_dir / "webhook_events.db").pending(),
                 seconds=30)
        final = post(url, {"type": "updated", "uri": "leave.md", "id": "after-the-fuzz"})
        assert final.status_code == 202  # the server is still up and still works
        wait_for(lambda: {e["id"]: e for e in outbox(hook)}[final.json()["id"]].get(
            "status", "done") == "done" and trigger.calls)
    assert set(statuses) <= {202, 401, 413, 422} and 500 not in statuses
    assert statuses.count(202) > 20 and statuses.count(422) > 100
    events = {e["id"]: e for e in outbox(hook)}
    assert set(accepted) <= set(events)  # nothing accepted was lost
    sent = {p for changed, deleted in trigger.calls for p in changed + deleted}
    for event_id in accepted:
        event = events[event_id]
        assert event["status"] in ("done", "quarantined"), event
        assert (event["status"] == "done") == (event["path"] in sent), event
        assert event["status"] == "done" or event["reason"], event
    assert all(Path(p).is_relative_to(site["docs"]) for p in sent)
