"""One verified TLS context for all of a long-lived process's Prefect clients.

Prefect 3.9 gives every API client it makes a new SSL context loaded from the CA bundle
(`ssl.create_default_context(cafile=…)`, 48–60 ms here), and one webhook batch makes several:
the receiver's `.delay()`, then in the worker the task run, its flow run and their engines each
open a client. Sharing one context per CA file took the worker's scheduled → running from a
median 0.46–0.63 s to 0.31–0.40 s for an empty task (PrefectHQ/prefect#19106 proposes letting
callers pass a context in; until then this). Only the verified context is shared: Prefect
changes the insecure one after making it, so that stays one per client. A shared SSLContext is
safe across threads; httpcore only sets the same ALPN list on it when it connects.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any


class _SharedVerifiedContexts:
    """The `ssl` module as Prefect's client module sees it, with one verified context per CA
    file; everything else is the real module."""

    def __getattr__(self, name: str) -> Any:
        return getattr(ssl, name)

    def create_default_context(self, *args: Any, **kwargs: Any) -> ssl.SSLContext:
        if not args and kwargs.keys() == {"cafile"}:
            return _verified(kwargs["cafile"])
        return ssl.create_default_context(*args, **kwargs)


@functools.cache
def _verified(cafile: str) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cafile)


def share_tls_context() -> None:
    """Call once in a process that makes many Prefect clients (`kbflow serve`, `kbflow worker`)."""
    import prefect.client.orchestration as orchestration

    orchestration.ssl = _SharedVerifiedContexts()  # type: ignore[attr-defined,assignment]
