"""The console's page pictures (flows/console/pages.py): only the version's own file, under the
folder it came from and the document roots; capped in pixels; cached in the data directory."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from flows.console.pages import MAX_HEIGHT, MAX_WIDTH, NoPage, page_png
from ingest.config import Settings
from ingest.manifest.records import DocumentRecord


def record(path: Path, root: Path) -> DocumentRecord:
    return DocumentRecord.model_validate({
        "generation": "g1", "doc_id": "d", "version_id": "1", "state": "READY", "reason": None,
        "title": "t", "source_path": str(path), "source_root": str(root), "duplicate_paths": [],
        "source_uri": None, "file_hash": None, "tenant_id": "default", "acl": ["all-staff"],
        "effective_from": None, "effective_to": None, "effective_to_declared": None,
        "parser_version": None, "chunker_version": None, "embedding_model": None,
        "parse_report": None, "chunk_count": 1, "attempts": 1, "last_run_id": None,
        "updated_at": datetime.now(UTC)})


def pdf(path: Path, width: float = 595, height: float = 842) -> Path:
    doc = pymupdf.open()
    doc.new_page(width=width, height=height).insert_text((72, 72), "第一条", fontname="china-s")
    path.write_bytes(doc.tobytes())
    return path


def size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    return folder


def test_a_page_is_rendered_capped_and_cached_in_the_data_dir(tmp_path: Path, docs: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", document_roots=[docs])
    target = record(pdf(docs / "a.pdf"), docs)
    png = page_png(settings, target, 1)
    width, height = size(png)
    assert width <= MAX_WIDTH and height <= MAX_HEIGHT and max(width, height) > 500
    [cached] = (settings.data_dir / "console_pages").iterdir()
    assert cached.read_bytes() == png
    huge = record(pdf(docs / "huge.pdf", 14400, 14400), docs)  # PDF's largest page, 200 in
    assert max(size(page_png(settings, huge, 1))) <= MAX_HEIGHT
    with pytest.raises(NoPage):
        page_png(settings, target, 2)


def test_an_image_document_is_rendered(tmp_path: Path, docs: Path) -> None:
    Image.new("RGB", (2400, 1200), "white").save(docs / "scan.png")
    png = page_png(Settings(data_dir=tmp_path / "data"), record(docs / "scan.png", docs), 1)
    assert size(png) == (MAX_WIDTH, MAX_WIDTH // 2)


def test_no_file_outside_its_folder_or_the_roots_is_read(tmp_path: Path, docs: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    outside = pdf(tmp_path / "outside.pdf")
    (docs / "link.pdf").symlink_to(outside)
    for path in (outside, docs / "link.pdf", docs / ".." / "outside.pdf"):
        with pytest.raises(NoPage):
            page_png(settings, record(path, docs), 1)
    other_root = tmp_path / "other"
    other_root.mkdir()
    inside = record(pdf(docs / "a.pdf"), docs)
    with pytest.raises(NoPage):  # under its folder, but not under the configured roots
        page_png(Settings(data_dir=tmp_path / "data", document_roots=[other_root]), inside, 1)
    Image.new("1", (20000, 20000)).save(docs / "bomb.png")  # 400 megapixels, a small file
    with pytest.raises(NoPage):
        page_png(settings, record(docs / "bomb.png", docs), 1)
    (docs / "notes.txt").write_text("secret")
    with pytest.raises(NoPage):
        page_png(settings, record(docs / "notes.txt", docs), 1)
    assert not (settings.data_dir / "console_pages").exists()
