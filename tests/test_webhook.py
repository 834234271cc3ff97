"""The webhook receiver over real HTTP (uvicorn on a loopback port): authentication, replays,
malformed bodies, persistence before the reply, debouncing, de-duplication and redelivery."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

from flows.webhook.app import create_app
from flows.webhook.dispatch import Dispatcher, RunOutcome
from flows.webhook.events import SIGNATURE_HEADER, TIMESTAMP_HEADER, ChangeEvent, sign
from flows.webhook.outbox import EventStore
from flows.webhook.runs import manifest_tracker
from ingest.config import Settings

SECRET = "test-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """A trigger that can be switched off, recording what it was asked to start."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], list[str]]] = []
        self.down = False

    def __call__(self, changed: list[str], deleted: list[str]) -> str:
        if self.down:
            raise ConnectionError("prefect is down")
        self.calls.append((changed, deleted))
        return f"run-{len(self.calls)}"


@contextmanager
def receiver(settings: Settings, trigger: Callable[[list[str], list[str]], str],
             tracker: Callable | None = None) -> Iterator[str]:
    """The receiver on a loopback port; `tracker` reports the runs' outcomes, if given."""
    port = free_port()
    config = uvicorn.Config(create_app(settings, trigger, poll=0.05, tracker=tracker),
                            host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def post(url: str, event: dict | bytes, secret: str = SECRET, timestamp: float | None = None,
         signature: str | None = None) -> httpx.Response:
    body = event if isinstance(event, bytes) else json.dumps(event).encode()
    stamp = str(int(timestamp if timestamp is not None else time.time()))
    headers = {TIMESTAMP_HEADER: stamp, "Content-Type": "application/json",
               SIGNATURE_HEADER: signature or sign(secret, stamp, body)}
    return httpx.post(f"{url}/events", content=body, headers=headers, timeout=10)


def health(url: str, secret: str = SECRET) -> dict:
    """GET /health signed like an event over an empty body: the caller sees the details."""
    stamp = str(int(time.time()))
    headers = {TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: sign(secret, stamp, b"")}
    return httpx.get(f"{url}/health", headers=headers, timeout=10).json()


def wait_for(predicate, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


@pytest.fixture
def hook_settings(tmp_path: Path) -> Settings:
    docs = tmp_path / "docs"
    docs.mkdir()
    return Settings(data_dir=tmp_path / "data", webhook_secret=SECRET,
                    webhook_debounce_seconds=0.3, document_roots=[docs.resolve()])


def at(settings: Settings, name: str) -> str:
    """The real path the dispatcher sends for `name` under the (first) document root."""
    return str(settings.document_roots[0] / name)


def store(settings: Settings) -> EventStore:
    return EventStore(settings.data_dir / "webhook_events.db")


def test_unauthentic_and_malformed_requests_are_refused(hook_settings: Settings) -> None:
    trigger = Recorder()
    event = {"type": "updated", "uri": "a.md"}
    with receiver(hook_settings, trigger) as url:
        assert post(url, event, secret="wrong").status_code == 401
        assert post(url, event, timestamp=time.time() - 301).status_code == 401
        assert post(url, event, signature="sha256=" + "0" * 64).status_code == 401
        body = json.dumps(event).encode()
        nan = httpx.post(f"{url}/events", content=body, headers={
            TIMESTAMP_HEADER: "nan", SIGNATURE_HEADER: sign(SECRET, "nan", body)})
        assert nan.status_code == 401
        unsigned = httpx.post(f"{url}/events", json=event, timeout=10)
        assert unsigned.status_code == 401
        assert post(url, b"{not json").status_code == 422
        assert post(url, {"type": "renamed", "uri": "a.md"}).status_code == 422
        assert post(url, {"type": "created"}).status_code == 422
        assert httpx.get(f"{url}/health").json() == {"status": "ok"}  # nothing for strangers
        assert health(url)["pending"] == 0
    assert store(hook_settings).pending() == []
    assert trigger.calls == []


def test_a_replayed_request_or_event_id_is_refused(hook_settings: Settings) -> None:
    trigger = Recorder()
    trigger.down = True  # keep everything pending so the outbox shows what was accepted
    stamp = str(int(time.time()))
    body = json.dumps({"type": "updated", "uri": "a.md", "id": "e-1"}).encode()
    headers = {TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: sign(SECRET, stamp, body)}
    with receiver(hook_settings, trigger) as url:
        first = httpx.post(f"{url}/events", content=body, headers=headers)
        again = httpx.post(f"{url}/events", content=body, headers=headers)
        same_id = post(url, {"type": "deleted", "uri": "a.md", "id": "e-1"},
                       timestamp=time.time() + 1)
    assert (first.status_code, again.status_code, same_id.status_code) == (202, 401, 401)
    assert [e[1:3] for e in store(hook_settings).pending()] == [("updated", "a.md")]


def test_accepted_events_survive_a_trigger_outage_and_a_restart(hook_settings: Settings) -> None:
    trigger = Recorder()
    trigger.down = True
    with receiver(hook_settings, trigger) as url:
        uri = f"file://{hook_settings.document_roots[0]}/new%20policy.md"
        reply = post(url, {"type": "created", "uri": uri})
        assert reply.status_code == 202
        # persisted before the reply: the row is there the moment the 202 arrives
        assert [e[0] for e in store(hook_settings).pending()] == [reply.json()["id"]]
        time.sleep(1.0)  # several debounce windows with the trigger down
        assert len(store(hook_settings).pending()) == 1
        assert "last_error" not in httpx.get(f"{url}/health").json()  # not for strangers
        assert "prefect is down" in health(url)["last_error"]
    trigger.down = False
    with receiver(hook_settings, trigger) as url:  # a new process picks the outbox up
        wait_for(lambda: trigger.calls)
        wait_for(lambda: health(url)["pending"] == 0)
    assert trigger.calls == [([at(hook_settings, "new policy.md")], [])]
    assert store(hook_settings).counts() == {"pending": 0, "dispatched": 0, "done": 1,
                                             "failed": 0, "quarantined": 0}


def test_a_burst_is_debounced_into_one_run_with_the_last_event_per_uri(
        hook_settings: Settings) -> None:
    hook_settings.webhook_debounce_seconds = 2.0  # the burst must fit in one window on a busy box
    trigger = Recorder()
    burst = [("updated", "b.md"), ("updated", "a.md"), ("deleted", "b.md"), ("deleted", "c.md"),
             ("created", "c.md")]
    with receiver(hook_settings, trigger) as url:
        assert post(url, {"type": "created", "uri": "a.md"}).status_code == 202
        wait_for(lambda: trigger.calls)  # the idle dispatcher sends the first event at once
        for kind, uri in burst:  # those right after it wait for a quiet window, together
            assert post(url, {"type": kind, "uri": uri}).status_code == 202
        wait_for(lambda: len(trigger.calls) == 2)
        time.sleep(2.5)  # a third call would come within this
        assert len(trigger.calls) == 2
        posted = time.monotonic()  # idle for over a window again: no debounce wait
        assert post(url, {"type": "updated", "uri": "a.md"}).status_code == 202
        wait_for(lambda: len(trigger.calls) == 3)
        assert time.monotonic() - posted < 1.5  # a quiet window alone would be 2 s
    a, b, c = (at(hook_settings, name) for name in ("a.md", "b.md", "c.md"))
    assert trigger.calls == [([a], []), ([a, c], [b]), ([a], [])]


def test_the_leading_edge_sends_at_once_only_after_an_idle_window(
        hook_settings: Settings) -> None:
    """Without a tracker (nothing says when a run ends): an event after a window with nothing
    sent goes out at the next tick; events within a window of a run coalesce until quiet, or
    until a steady stream is overdue."""
    outbox, t = store(hook_settings), time.time()
    trigger = Recorder()
    dispatcher = Dispatcher(outbox, trigger, debounce=1.0, keep=3600,
                            roots=hook_settings.document_roots)
    outbox.add(ChangeEvent(type="updated", uri="a.md"), "sig-1", t)
    assert dispatcher.tick(t + 0.01) == "run-1"
    outbox.add(ChangeEvent(type="updated", uri="b.md"), "sig-2", t + 0.5)
    outbox.add(ChangeEvent(type="updated", uri="c.md"), "sig-3", t + 1.2)
    assert dispatcher.tick(t + 1.3) is None  # b.md came within a window of run-1
    assert dispatcher.tick(t + 2.2) == "run-2"  # a quiet window after c.md
    sent_at = []
    for i in range(20):  # a steady stream, one event every 0.6 s, starting right after run-2
        outbox.add(ChangeEvent(type="updated", uri=f"s{i}.md"), f"sig-s{i}", t + 2.4 + 0.6 * i)
        if dispatcher.tick(t + 2.45 + 0.6 * i):
            sent_at.append(i)
    assert sent_at == [17]  # only once the stream's first event waited 10 windows
    assert dispatcher.tick(t + 16) == "run-4"  # the rest of the stream, after a quiet window
    outbox.add(ChangeEvent(type="deleted", uri="d.md"), "sig-4", t + 20)
    assert dispatcher.tick(t + 20.01) == "run-5"  # idle for more than a window
    b, c, d = (at(hook_settings, n) for n in ("b.md", "c.md", "d.md"))
    assert trigger.calls[1] == ([b, c], []) and trigger.calls[4] == ([], [d])
    assert [len(changed) for changed, _ in trigger.calls[2:4]] == [18, 2]


class Runs:
    """A tracker over the Recorder's runs: a run goes on until the test finishes it."""

    def __init__(self) -> None:
        self.finished: set[str] = set()

    def __call__(self, run_id: str) -> RunOutcome | None:
        return RunOutcome(True) if run_id in self.finished else None


def test_with_a_tracker_events_go_at_once_unless_a_batch_is_in_flight(
        hook_settings: Settings) -> None:
    """Nothing in flight: an event goes at the next tick, however soon after the last send.
    Events arriving while a batch runs wait for it, then go together the moment it reports; a
    batch that never reports holds a steady stream up for 10 windows at most."""
    outbox, t = store(hook_settings), time.time()
    trigger, runs = Recorder(), Runs()
    dispatcher = Dispatcher(outbox, trigger, debounce=1.0, keep=3600,
                            roots=hook_settings.document_roots, tracker=runs)
    outbox.add(ChangeEvent(type="updated", uri="a.md"), "sig-1", t)
    assert dispatcher.tick(t + 0.01) == "run-1"
    outbox.add(ChangeEvent(type="updated", uri="b.md"), "sig-2", t + 0.1)
    assert dispatcher.tick(t + 0.2) is None  # run-1 has not reported
    outbox.add(ChangeEvent(type="deleted", uri="c.md"), "sig-3", t + 0.3)
    assert dispatcher.tick(t + 1.5) is None  # quiet for a window, but run-1 still runs
    runs.finished.add("run-1")
    assert dispatcher.tick(t + 1.55) == "run-2"  # its outcome read at once, not a second later
    assert outbox.counts()["done"] == 1
    runs.finished.add("run-2")
    outbox.add(ChangeEvent(type="updated", uri="d.md"), "sig-4", t + 1.6)
    assert dispatcher.tick(t + 1.65) == "run-3"  # 0.1 s after run-2 went: no window to wait
    sent_at = []
    for i in range(20):  # run-3 hangs; a steady stream, one event every 0.6 s
        outbox.add(ChangeEvent(type="updated", uri=f"s{i}.md"), f"sig-s{i}", t + 2 + 0.6 * i)
        if dispatcher.tick(t + 2.05 + 0.6 * i):
            sent_at.append(i)
    assert sent_at == [17]  # only once the stream's first event waited 10 windows
    assert dispatcher.tick(t + 14) is None  # the rest waits behind run-3 and run-4
    runs.finished |= {"run-3", "run-4"}
    assert dispatcher.tick(t + 14.1) == "run-5"
    a, b, c, d = (at(hook_settings, n) for n in ("a.md", "b.md", "c.md", "d.md"))
    assert trigger.calls[:3] == [([a], []), ([b], [c]), ([d], [])]
    assert [len(changed) for changed, _ in trigger.calls[3:]] == [18, 2]


def test_the_receiver_holds_events_behind_a_running_batch_and_sends_them_when_it_reports(
        hook_settings: Settings) -> None:
    """Over HTTP, the dispatcher on its own thread: a 2 s debounce, so only the new rule can
    send the second batch within a second of the first run reporting, and the third at once."""
    hook_settings.webhook_debounce_seconds = 2.0
    trigger, runs = Recorder(), Runs()
    with receiver(hook_settings, trigger, runs) as url:
        assert post(url, {"type": "created", "uri": "a.md"}).status_code == 202
        wait_for(lambda: trigger.calls)
        for n, (kind, uri) in enumerate([("updated", "b.md"), ("deleted", "c.md"),
                                         ("updated", "b.md")]):
            assert post(url, {"type": kind, "uri": uri, "id": f"e-{n}"}).status_code == 202
        time.sleep(0.5)  # ten polls: nothing goes while run-1 has not reported
        assert len(trigger.calls) == 1 and health(url)["pending"] == 3
        runs.finished.add("run-1")
        reported = time.monotonic()
        wait_for(lambda: len(trigger.calls) == 2)
        assert time.monotonic() - reported < 1.0
        runs.finished.add("run-2")
        wait_for(lambda: health(url)["dispatched"] == 0)
        posted = time.monotonic()  # well within a debounce window of run-2's send
        assert post(url, {"type": "updated", "uri": "a.md"}).status_code == 202
        wait_for(lambda: len(trigger.calls) == 3)
        assert time.monotonic() - posted < 1.0
    a, b, c = (at(hook_settings, name) for name in ("a.md", "b.md", "c.md"))
    assert trigger.calls == [([a], []), ([b], [c]), ([a], [])]


def test_the_tracker_reads_the_manifest_at_every_call_and_prefect_once_a_second(
        hook_settings: Settings) -> None:
    """The dispatcher asks at every tick while events wait: the run's record each time (it
    reports the moment the run records its outcome), Prefect (crashes) at most once a second."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from ingest.manifest import ManifestStore

    run_id = str(uuid.uuid4())
    with ManifestStore(hook_settings.manifest) as manifest:
        manifest.start_run(run_id, "webhook")
    track = manifest_tracker(hook_settings, task_runs=True)
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):  # refused
        with pytest.raises(httpx.ConnectError):
            track(run_id)
        assert track(run_id) is None  # Prefect not asked again within the second
        with ManifestStore(hook_settings.manifest) as manifest:
            manifest.finish_run(run_id, {"failures": [{"path": "/d/x.md", "reason": "empty"}]})
        assert track(run_id) == RunOutcome(True, {"/d/x.md": "empty"})


def test_a_burst_behind_running_batches_coalesces_into_few_runs(
        hook_settings: Settings) -> None:
    """100 edits of 100 files, one every 10 ms, into runs that each take 0.3 s, the dispatcher
    ticking every 0.125 s (a 0.5 s debounce's poll): no run starts while another has not
    reported, each file goes out once with its last event, in a handful of runs."""
    outbox, t = store(hook_settings), time.time()
    trigger, runs = Recorder(), Runs()
    dispatcher = Dispatcher(outbox, trigger, debounce=0.5, keep=3600,
                            roots=hook_settings.document_roots, tracker=runs)
    ends: dict[str, float] = {}  # run → when it reports
    added = overlaps = 0
    for step in range(100):  # 12.5 s: far past the burst's end, and its overdue cap
        now = t + 0.125 * step
        while added < 100 and t + 0.01 * added <= now:
            outbox.add(ChangeEvent(type="updated", uri=f"f{added:03d}.md"), f"sig-{added}",
                       t + 0.01 * added)
            added += 1
        runs.finished |= {run for run, end in ends.items() if end <= now}
        if started := dispatcher.tick(now):
            overlaps += any(end > now for end in ends.values())
            ends[started] = now + 0.3
    sent = [path for changed, _ in trigger.calls for path in changed]
    assert sorted(sent) == [at(hook_settings, f"f{i:03d}.md") for i in range(100)]
    assert overlaps == 0 and outbox.counts()["done"] == 100
    assert 2 <= len(trigger.calls) <= 5


def test_dispatched_events_are_pruned_after_the_retention(hook_settings: Settings) -> None:
    """The outbox does not grow forever: each dispatch deletes the finished events received
    before the retention window; a pending event is never deleted, however old."""
    outbox, now = store(hook_settings), time.time()
    trigger = Recorder()
    dispatcher = Dispatcher(outbox, trigger, debounce=0.3, keep=3600,
                            roots=hook_settings.document_roots)
    outbox.add(ChangeEvent(type="updated", uri="old.md"), "sig-old", now - 7200)
    outbox.add(ChangeEvent(type="updated", uri="recent.md"), "sig-recent", now - 60)
    assert dispatcher.tick(now) == "run-1"
    assert outbox.counts()["done"] == 1  # old.md's record is gone

    trigger.down = True
    outbox.add(ChangeEvent(type="deleted", uri="stuck.md"), "sig-stuck", now - 7200)
    assert dispatcher.tick(now) is None
    assert outbox.prune(now) == 1  # recent.md; stuck.md is pending
    assert outbox.counts() == {"pending": 1, "dispatched": 0, "done": 0, "failed": 0,
                               "quarantined": 0}
    trigger.down = False
    assert dispatcher.tick(now + 60) == "run-2"
    old, recent, stuck = (at(hook_settings, n) for n in ("old.md", "recent.md", "stuck.md"))
    assert trigger.calls == [([old, recent], []), ([], [stuck])]


def test_the_receiver_refuses_to_start_without_a_secret(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="KBFLOW_WEBHOOK_SECRET"):
        create_app(Settings(data_dir=tmp_path, webhook_secret=""), Recorder())
