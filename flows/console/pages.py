"""A document's page as a PNG for the console, with PyMuPDF, cached in the data directory.

No path comes from the request: the file read is the one the manifest says this version was
ingested from, and only when it still resolves (symlinks followed) under the root it was
ingested from and under a configured document root, is a PDF or an image, and is within the
size limits ingest itself applies (bytes; pixels, read from an image's header). The picture is
capped in pixels whatever the page's declared size, and written under
`<data dir>/console_pages/` (a key of the version, its file's size and time, and the page, so
an edited file is rendered again).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ingest.config import Settings
from ingest.manifest.records import DocumentRecord
from ingest.parse.roots import OutsideRoots, resolve_under

MAX_WIDTH = 900  # pixels: a laptop screen's column
MAX_HEIGHT = 1400
IMAGE_TYPES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".tif": "tiff",
               ".tiff": "tiff", ".bmp": "bmp", ".gif": "gif", ".webp": "webp"}
CACHE = "console_pages"


class NoPage(LookupError):
    """The page cannot be shown; the message says why (for the operator, not the caller)."""


def source_file(settings: Settings, record: DocumentRecord) -> Path:
    """The version's own file, checked as the module says; NoPage otherwise."""
    roots = [Path(record.source_root)] if record.source_root else []
    try:
        path = resolve_under(record.source_path, roots)
        if settings.document_roots:
            resolve_under(path, settings.document_roots)
    except OutsideRoots as exc:
        raise NoPage(str(exc)) from None
    if path.suffix.lower() != ".pdf" and path.suffix.lower() not in IMAGE_TYPES:
        raise NoPage(f"{path.name}: not a PDF or an image")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise NoPage(f"{path.name}: {exc.strerror}") from None
    if not path.is_file() or size > settings.max_file_mb * 1024 * 1024:
        raise NoPage(f"{path.name}: not a regular file within max_file_mb")
    if path.suffix.lower() in IMAGE_TYPES:
        _check_pixels(path, settings.parse_max_image_megapixels)
    return path


def _check_pixels(path: Path, megapixels: float) -> None:
    """An image's size from its header (nothing decoded) within the parse limit: the file may
    have changed since it was ingested."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            width, height = image.size
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise NoPage(f"{path.name}: not a readable image: {exc}") from None
    if width * height > megapixels * 1_000_000:
        raise NoPage(f"{path.name}: {width}×{height} pixels, over the parse limit")


def page_png(settings: Settings, record: DocumentRecord, page: int) -> bytes:
    """Page `page` (from 1) of the version's file, rendered at most MAX_WIDTH × MAX_HEIGHT."""
    path = source_file(settings, record)
    stat = path.stat()
    key = hashlib.sha256(f"{record.version_key}\x1f{stat.st_size}\x1f{stat.st_mtime_ns}"
                         f"\x1f{page}\x1f{MAX_WIDTH}x{MAX_HEIGHT}".encode()).hexdigest()[:32]
    cached = settings.data_dir / CACHE / f"{key}.png"
    if cached.is_file():
        return cached.read_bytes()
    png = _render(path, page)
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(png)
    partial.replace(cached)
    return png


def _render(path: Path, page: int) -> bytes:
    import pymupdf

    suffix = path.suffix.lower()
    try:
        doc = pymupdf.open(path, filetype=IMAGE_TYPES.get(suffix, "pdf"))
    except Exception as exc:  # noqa: BLE001 - PyMuPDF raises several types for a bad file
        raise NoPage(f"{path.name}: cannot be opened: {exc}") from None
    with doc:
        if not 1 <= page <= doc.page_count:
            raise NoPage(f"{path.name} has no page {page}")
        sheet = doc[page - 1]
        if suffix == ".pdf":
            sheet.set_rotation(0)  # chunk regions are in the unrotated page
        rect = sheet.rect
        if rect.width <= 0 or rect.height <= 0:
            raise NoPage(f"{path.name}: page {page} has no area")
        zoom = min(MAX_WIDTH / rect.width, MAX_HEIGHT / rect.height)
        pixmap = sheet.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        return bytes(pixmap.tobytes("png"))
