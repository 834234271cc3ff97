"""The README's console screenshots (docs/console-*.png), taken by the browser the console's
tests drive (Debian's chromium through Playwright) over the tests' corpus.

    python scripts/console_screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from console_support import (  # noqa: E402 - after the path that finds it
    KEYS,
    build_corpus,
    chromium,
    ingest,
    serving,
    settings_for,
)
from playwright.sync_api import sync_playwright  # noqa: E402

from ingest.manifest import ManifestStore  # noqa: E402


def main() -> None:
    out = REPO / "docs"
    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kbflow-console-shots-") as work:
        docs = build_corpus(Path(work))
        settings = settings_for(Path(work), docs)
        ingest(settings, docs)
        with ManifestStore(settings.manifest) as manifest:
            pdf = next(r for r in manifest.documents()
                       if r.source_path.endswith("expense_standards.pdf"))
        with serving(settings) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(chromium()), args=["--no-sandbox"])
            page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
            page.goto(f"{url}/console/login")
            page.fill("input[name=key]", KEYS["precision"][0])
            page.click("button[type=submit]")
            page.wait_for_url("**/console/documents")
            page.screenshot(path=str(out / "console-documents.png"))
            page.goto(f"{url}/console/doc?{urlencode({'id': pdf.doc_id, 'v': pdf.version_id})}")
            page.locator("#pages").scroll_into_view_if_needed()
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            page.locator("li.chunk.kind-table_row .text").first.click()
            page.screenshot(path=str(out / "console-document.png"))
            query = urlencode({"q": "去深圳出差住酒店一晚最多报多少钱？", "as_of": "2026-04-01"})
            page.goto(f"{url}/console/ask?{query}")
            page.screenshot(path=str(out / "console-ask.png"))
            browser.close()
    print("wrote", ", ".join(str(p.relative_to(REPO)) for p in sorted(out.glob("console-*"))))


if __name__ == "__main__":
    main()
