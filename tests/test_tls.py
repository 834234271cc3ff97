"""flows/tls.py: a long-lived process's Prefect clients share one verified TLS context, and it
still verifies (CA certificates loaded, hostnames checked); the insecure one stays per client."""

from __future__ import annotations

import ssl

import certifi
import pytest


@pytest.fixture
def shared(monkeypatch):
    import prefect.client.orchestration as orchestration

    from flows.tls import share_tls_context

    monkeypatch.setattr(orchestration, "ssl", orchestration.ssl)  # undone after the test
    share_tls_context()
    return orchestration


def transport_context(client) -> ssl.SSLContext:
    return client._client._transport._pool._ssl_context


def test_prefect_clients_share_one_verified_context(shared) -> None:
    first = shared.SyncPrefectClient("https://prefect.example/api")
    second = shared.SyncPrefectClient("https://prefect.example/api")
    context = transport_context(first)
    assert transport_context(second) is context
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 50  # the CA bundle is loaded


def test_the_insecure_context_is_not_shared(shared) -> None:
    made = [shared.ssl.create_default_context() for _ in range(2)]
    made[0].check_hostname = False
    assert made[1] is not made[0] and made[1].check_hostname
    verified = shared.ssl.create_default_context(cafile=certifi.where())
    assert verified.check_hostname and verified is not made[1]
