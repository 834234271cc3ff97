"""A failed version keeps whose document it is when its metadata was read (the console shows
it to that tenant's readers only), on both manifest databases."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.manifest import ManifestStore
from ingest.models import State


@pytest.fixture(params=["sqlite", "postgres"])
def manifest(request: pytest.FixtureRequest, tmp_path: Path):
    location = (str(tmp_path / "manifest.db") if request.param == "sqlite"
                else request.getfixturevalue("postgres_database"))
    store = ManifestStore(location)
    store.generation = store.create_generation("model", 8, "chunker@1", serving=True).generation
    yield store
    store.close()


def test_a_failure_records_its_owner_and_a_later_anonymous_one_keeps_it(
        manifest: ManifestStore) -> None:
    manifest.fail(("pay", "1"), "/docs/pay.pdf", "ParseError: PDF is encrypted", "r1",
                  tenant_id="hc-precision", acl=["finance"])
    record = manifest.get("pay", "1")
    assert record is not None and (record.state, record.tenant_id, record.acl) == (
        State.FAILED, "hc-precision", ["finance"])
    manifest.fail(("pay", "1"), "/docs/pay.pdf", "OSError: gone", "r2")  # metadata unread
    record = manifest.get("pay", "1")
    assert record is not None and (record.reason, record.tenant_id, record.acl) == (
        "OSError: gone", "hc-precision", ["finance"])
    manifest.fail(("anon", "1"), "/docs/anon.pdf", "ValueError: bad sidecar", "r1")
    anonymous = manifest.get("anon", "1")
    assert anonymous is not None and (anonymous.tenant_id, anonymous.acl) == (None, [])
