"""Shared fixtures: a copy of the sample corpus, data directories, one embedding model, one
Prefect test API, one end-to-end ingest of sample_docs reused by the read-only tests, and a
browser for the console's pages."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests_support import POSTGRES_URL, SAMPLE_DOCS

from flows.quiet import quiet

if TYPE_CHECKING:
    from playwright.sync_api import Browser

quiet()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A private copy of sample_docs/ that a test may edit."""
    target = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, target)
    return target


@pytest.fixture
def settings(tmp_path: Path):
    from ingest.config import Settings

    return Settings(data_dir=tmp_path / "data")


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory):
    """The default model (bge-small-zh-v1.5, ONNX), loaded once per session (about a second)."""
    from ingest.embed import DEFAULT_MODEL, Embedder

    model = Embedder(DEFAULT_MODEL, tmp_path_factory.mktemp("cache") / "vectors.db")
    _ = model.encoder
    yield model
    model.close()


@pytest.fixture(scope="session")
def prefect_api():
    """An isolated Prefect API for flow runs (a temporary server, started once)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def ingested(prefect_api, tmp_path_factory: pytest.TempPathFactory):
    """sample_docs/ ingested once into a fresh data directory: (summary, settings)."""
    from flows.ingest import ingest_flow
    from ingest.config import Settings

    root = tmp_path_factory.mktemp("ingested")
    docs = root / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    settings = Settings(data_dir=root / "data")
    summary = ingest_flow(str(docs), str(settings.data_dir))
    return summary, settings


@pytest.fixture
def postgres_database():
    """A fresh database on the test PostgreSQL server, dropped afterwards: its URL."""
    import psycopg

    name = f"kbflow_{uuid.uuid4().hex[:12]}"
    base = POSTGRES_URL.rsplit("/", 1)[0]
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield f"{base}/{name}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def evidence_served(tmp_path_factory: pytest.TempPathFactory):
    """eval/evidence_docs indexed once and served by `kbflow serve` with one key per tenant
    (the integration tests: Dify, MCP, LangChain, LlamaIndex)."""
    from integrations_support import Served, free_port, index_evidence, start, stop, write_keys

    root = tmp_path_factory.mktemp("evidence")
    port = free_port()
    served = Served(index_evidence(root), write_keys(root / "keys.json"),
                    f"http://127.0.0.1:{port}")
    server = start(["serve", "--port", str(port)], served.env(), f"{served.url}/health")
    yield served
    stop(server)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium driven by Playwright, for the console's pages."""
    from console_support import chromium
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(chromium()), args=["--no-sandbox"])
        yield launched
        launched.close()
