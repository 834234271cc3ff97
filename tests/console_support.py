"""The console's test corpus, server and browser, shared by tests/test_console.py and
scripts/console_screenshots.py.

The corpus is sample_docs/ and eval/evidence_docs/ (a group, two sibling subsidiaries, an FAQ
and a notice that conflict with the policy) side by side, plus two planted files: an encrypted
PDF that fails with a reason, and a Markdown file whose title and text are HTML. It is ingested
in process (no Prefect) and served by `kbflow serve`'s own app in a uvicorn thread.
"""

from __future__ import annotations

import json
import logging
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymupdf
import uvicorn
from debian_packages import installed

from flows.api import build_app
from flows.serving import server_config
from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.parse import discover
from ingest.pipeline import InProcess, RunContext, run_pipeline
from ingest.pipeline.report import IngestSummary

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"
# Keys of three readers: the group (default tenant), one subsidiary, and its sibling.
KEYS = {
    "group": ("group-reader-key-0001", "default"),
    "precision": ("precision-reader-key-0002", "hc-precision"),
    "logistics": ("logistics-reader-key-0003", "hc-logistics"),
}


def build_corpus(root: Path) -> Path:
    docs = root / "docs"
    shutil.copytree(REPO / "sample_docs", docs / "sample")
    shutil.copytree(REPO / "eval" / "evidence_docs", docs / "evidence")
    locked = pymupdf.open()
    locked.new_page().insert_text((72, 72), "机密", fontname="china-s")
    (docs / "sample" / "salary_bands.pdf").write_bytes(locked.tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="user"))
    (docs / "sample" / "hostile.md").write_text(
        f"# {HOSTILE}\n\n第一条 正文里也有 {HOSTILE} 这样的文字。\n", encoding="utf-8")
    (docs / "sample" / "hostile.md.meta.yaml").write_text(
        f"doc_id: hostile\ntitle: '{HOSTILE}'\n"
        "source_uri: 'ftp://files.example.com/policies/hostile.md'\n", encoding="utf-8")
    return docs


def settings_for(root: Path, docs: Path) -> Settings:
    keys = root / "keys.json"
    keys.write_text(json.dumps({key: {"tenant": tenant, "groups": ["all-staff"]}
                                for key, tenant in KEYS.values()}), encoding="utf-8")
    return Settings(data_dir=root / "data", api_keys_file=keys, document_roots=[docs],
                    tenant_parents=REPO / "eval" / "evidence_tenants.yaml")


def ingest(settings: Settings, docs: Path) -> IngestSummary:
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id="console-run",
                         steps=InProcess(), log=logging.getLogger("tests"))
        return run_pipeline(ctx, str(docs), [(path, docs) for path in discover(docs)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(settings: Settings) -> Iterator[str]:
    """`kbflow serve`'s app on a free port in this process: its base URL, once it answers."""
    port = free_port()
    server = uvicorn.Server(server_config(build_app(settings), "127.0.0.1", port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # the search service loads its model before serving
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the console's server did not start")
        time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def chromium() -> Path:
    """Debian's chromium (with a CJK font for the Chinese pages); Playwright drives it, nothing
    is downloaded by Playwright."""
    return installed(CHROMIUM, "chromium", "fonts-noto-cjk")
