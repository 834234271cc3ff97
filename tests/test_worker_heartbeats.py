"""The warm worker's flow runs end as soon as their work does (flows/warm.py, apply_events):
Prefect's sync flow engine starts a heartbeat thread per flow run and joins it at the end, and
that thread sleeps in whole seconds, so each batch of webhook events used to end 0-1 s after
its last write and hold up the next batch."""

from __future__ import annotations

import threading

from prefect import flow

from flows.warm import without_heartbeats


def heartbeat_threads() -> int:
    """Live threads running Prefect's flow heartbeat loop (its target runs `heartbeat_loop`
    in a copied context)."""
    return sum(1 for t in threading.enumerate()
               if t.is_alive() and getattr((getattr(t, "_args", ()) or (None,))[0], "__name__",
                                           "") == "heartbeat_loop")


@flow
def probe() -> int:
    return heartbeat_threads()


def test_the_workers_flow_runs_start_no_heartbeat_thread(prefect_api: None) -> None:
    with without_heartbeats():
        assert probe() == 0
    # Prefect's default, checked so that a Prefect that renames its loop fails this test loudly
    # instead of passing it: one heartbeat thread while a sync flow runs
    assert probe() >= 1
