"""The operator console (issue 41) in a real browser: Debian's chromium driven by Playwright,
against `kbflow serve`'s app over sample_docs + eval/evidence_docs ingested for real (see
tests/console_support.py). What each page must show is read from the manifest and the search
API, not written into the test."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import httpx
import pytest
from console_support import HOSTILE, KEYS, build_corpus, ingest, serving, settings_for
from playwright.sync_api import Browser, Page

from flows.webhook.events import ChangeEvent
from flows.webhook.outbox import EventStore
from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.manifest.records import DocumentRecord
from ingest.models import ChunkKind, SearchFilter, State
from ingest.scopes import TenantTree

AS_OF = "2026-04-01"


@dataclass
class Console:
    url: str
    settings: Settings
    records: list[DocumentRecord]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    root = tmp_path_factory.mktemp("console")
    docs = build_corpus(root)
    settings = settings_for(root, docs)
    summary = ingest(settings, docs)
    assert [f.path.rsplit("/", 1)[-1] for f in summary.failures] == ["salary_bands.pdf"]
    with ManifestStore(settings.manifest) as manifest:
        records = manifest.documents()
    with serving(settings) as url:
        yield Console(url, settings, records)


def signed_in(browser: Browser, console: Console, reader: str) -> Page:
    """A fresh browser context signed in through the login form with that reader's key."""
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.goto(f"{console.url}/console/documents")
    assert page.url.endswith("/console/login")  # no key yet: the login form
    page.fill("input[name=key]", KEYS[reader][0])
    page.click("button[type=submit]")
    page.wait_for_url("**/console/documents")
    return page


def visible_to(console: Console, reader: str) -> list[DocumentRecord]:
    tenant = KEYS[reader][1]
    tree = TenantTree.load(console.settings)
    view = SearchFilter(tenant_id=tenant, ancestors=tree.ancestors(tenant),
                        groups=["all-staff"], as_of=date.today(), hidden_keys=[])
    return [r for r in console.records if view.admits(r.tenant_id, r.acl)]


def bearer(reader: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[reader][0]}"}


def test_documents_page_lists_every_version_with_its_state_and_whole_failure_reason(
        browser: Browser, console: Console) -> None:
    page = signed_in(browser, console, "group")
    expected = visible_to(console, "group")
    rows = page.locator("#documents tbody tr[data-key]")
    assert sorted(rows.evaluate_all("rows => rows.map(r => r.dataset.key)")) == sorted(
        r.version_key for r in expected)
    for r in expected:
        row = page.locator(f'#documents tr[data-key="{r.version_key}"]')
        assert row.locator(".state").first.inner_text() == r.state
    failed = [r for r in expected if r.state == State.FAILED]
    assert len(failed) == 1 and "encrypted" in (failed[0].reason or "")
    reason = page.locator(f'#documents tr[data-key="{failed[0].version_key}"] td.reason')
    assert reason.inner_text() == failed[0].reason  # the whole reason, not cut to a column
    counts = page.locator("#counts .state").all_inner_texts()
    assert sorted(counts) == sorted(f"{s} {sum(r.state == s for r in expected)}"
                                    for s in {r.state for r in expected})
    page.select_option("select[name=state]", "FAILED")
    page.click("form.filters button")
    assert page.locator("#documents tbody tr[data-key]").count() == 1
    page.fill("input[name=q]", "差旅")
    page.select_option("select[name=state]", "")
    page.click("form.filters button")
    titles = page.locator("#documents tbody tr[data-key] td:first-child a").all_inner_texts()
    assert titles and all("差旅" in t for t in titles)


def test_a_pdf_page_shows_each_chunk_outlined_and_a_click_marks_it(
        browser: Browser, console: Console) -> None:
    record = next(r for r in console.records if r.source_path.endswith("expense_standards.pdf"))
    with ManifestStore(console.settings.manifest) as manifest:
        chunks = [c for c in manifest.version_chunks(record.doc_id, record.version_id)
                  if c.kind != ChunkKind.PARENT]
    page = signed_in(browser, console, "group")
    page.goto(f"{console.url}/console/doc?id={record.doc_id}&v={record.version_id}")
    image = page.locator("figure.page img").first
    image.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0",
                           arg=image.element_handle())
    assert image.evaluate("img => img.naturalWidth") <= 900
    assert page.locator("rect.region").count() == sum(len(c.regions) for c in chunks) > 0
    chunk = next(c for c in chunks if c.kind == ChunkKind.TABLE_ROW or c.clause_no)
    page.locator(f'li.chunk[data-chunk="{chunk.chunk_id}"] .text').click()
    marked = page.locator("rect.region.active")
    assert marked.count() == len(chunk.regions)
    assert set(marked.evaluate_all("rs => rs.map(r => r.dataset.chunk)")) == {chunk.chunk_id}
    # the outline is drawn where the chunk's region is, over the rendered page
    box, picture = marked.first.bounding_box(), image.bounding_box()
    assert box is not None and picture is not None
    x0, y0, _, _ = chunk.regions[0].box
    assert abs(box["x"] - (picture["x"] + x0 * picture["width"])) < 3
    assert abs(box["y"] - (picture["y"] + y0 * picture["height"])) < 3
    assert page.locator("#parse-report").inner_text().count("indexed of") == 1


def test_ask_shows_a_conflict_with_both_sides_and_a_no_answer_verdict(
        browser: Browser, console: Console) -> None:
    page = signed_in(browser, console, "precision")
    question = "去深圳出差住酒店一晚最多报多少钱？"
    api = httpx.get(f"{console.url}/search", params={"q": question, "as_of": AS_OF, "k": 8},
                    headers=bearer("precision"), timeout=120).json()
    assert api["verdict"] == "conflict"
    page.goto(f"{console.url}/console/ask")
    page.fill("input[name=q]", question)
    page.fill("input[name=as_of]", AS_OF)
    page.click("form.ask button")
    page.wait_for_selector("#verdict")
    assert "conflict" in page.locator("#verdict h2").inner_text()
    assert page.locator("#verdict-reason").inner_text() == api["reason"]
    conflict = page.locator("#conflict-1")
    for side, expected in zip(conflict.locator(".side").all(),
                              (api["conflicts"][0]["a"], api["conflicts"][0]["b"]), strict=True):
        assert side.locator(".value").inner_text() == expected["value"]
        assert side.locator("blockquote").inner_text() == expected["sentence"]
    links = conflict.locator(".side a").evaluate_all("as => as.map(a => a.href)")
    assert len(links) == 2 and all("/console/doc?id=" in link for link in links)
    page.goto(links[0])
    assert page.locator("li.chunk.active").count() == 1  # the cited chunk, marked
    question = "年会抽奖一等奖是什么"  # no document says
    api = httpx.get(f"{console.url}/search", params={"q": question, "as_of": AS_OF, "k": 8},
                    headers=bearer("precision"), timeout=120).json()
    assert api["verdict"] == "no_answer"
    page.goto(f"{console.url}/console/ask?q={question}&as_of={AS_OF}")
    assert "no answer" in page.locator("#verdict h2").inner_text()
    assert page.locator("#verdict-reason").inner_text() == api["reason"]


def test_a_tenant_never_sees_a_sibling_tenants_documents_even_by_guessing_urls(
        browser: Browser, console: Console) -> None:
    theirs = [r for r in console.records if r.tenant_id == "hc-logistics"]
    assert theirs
    page = signed_in(browser, console, "precision")
    listed = page.locator("#documents tbody tr[data-key]").evaluate_all(
        "rows => rows.map(r => r.dataset.key)")
    assert listed and not {r.version_key for r in theirs} & set(listed)
    assert "driver_allowances" not in page.content()
    record = theirs[0]
    with ManifestStore(console.settings.manifest) as manifest:
        chunk = manifest.version_chunks(record.doc_id, record.version_id)[0]
    guesses = [f"/console/doc?id={record.doc_id}&v={record.version_id}",
               f"/console/doc?id={record.doc_id}",
               f"/console/trace?chunk={chunk.chunk_id}",
               f"/console/page.png?id={record.doc_id}&v={record.version_id}&p=1"]
    unknown = httpx.get(f"{console.url}/console/doc?id=no-such-document",
                        headers=bearer("precision"))
    assert unknown.status_code == 404
    for guess in guesses:
        answer = httpx.get(console.url + guess, headers=bearer("precision"))
        assert answer.status_code == 404, guess
        assert record.doc_id not in answer.text and chunk.text[:10] not in answer.text
        # its own reader gets it: the 404 above is about the reader, not the URL
        if "page.png" not in guess:
            assert httpx.get(console.url + guess, headers=bearer("logistics")).status_code == 200
    page.goto(console.url + guesses[0])
    assert page.locator("h1").inner_text() == "Not found"
    page.goto(f"{console.url}/console/ask?q=司机跑长途出车一天补贴多少&as_of={AS_OF}")
    cited = page.locator("#results a[href*='/console/doc']").all_inner_texts()
    assert not any(record.doc_id.split(":")[-1] in c for c in cited)
    anonymous = httpx.get(console.url + guesses[0], follow_redirects=False)
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/console/login"


def test_html_in_titles_text_and_uris_is_shown_as_text(
        browser: Browser, console: Console) -> None:
    record = next(r for r in console.records if r.doc_id == "hostile")
    assert record.title == HOSTILE
    page = signed_in(browser, console, "group")
    page.fill("input[name=q]", "pwned")
    page.click("form.filters button")
    assert page.locator(f'tr[data-key="{record.version_key}"] td a').first.inner_text() == HOSTILE
    page.goto(f"{console.url}/console/doc?id=hostile&v={record.version_id}")
    assert page.locator("h1").inner_text() == HOSTILE
    assert HOSTILE in page.locator("#chunks").inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("script").count() == 1 and page.locator("main img").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("a[href^='ftp']").count() == 0  # shown, not linked
    assert "ftp://files.example.com/policies/hostile.md" in page.locator("main").inner_text()


def test_the_cookie_is_http_only_and_strict_and_a_bad_key_is_refused(
        browser: Browser, console: Console) -> None:
    page = signed_in(browser, console, "group")
    (cookie,) = page.context.cookies()
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict",
                                                                       "/console")
    assert page.evaluate("document.cookie") == ""
    page.click("text=Sign out")
    page.wait_for_url("**/console/login")
    assert page.context.cookies() == []
    page.fill("input[name=key]", "not-a-key-of-anyone-at-all")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text() == "That key is not valid."
    assert re.search(r"/console/login$", page.url)
    forged = httpx.post(f"{console.url}/console/login", data={"key": KEYS["group"][0]},
                        headers={"Origin": "http://attacker.example"})
    assert forged.status_code == 403 and "set-cookie" not in forged.headers


def test_operations_lists_generations_and_the_readers_own_outbox_problems(
        browser: Browser, console: Console) -> None:
    outbox = EventStore(console.settings.data_dir / "webhook_events.db")
    mine = next(r for r in console.records if r.tenant_id == "hc-precision")
    theirs = next(r for r in console.records if r.tenant_id == "hc-logistics")
    ids = {}
    for name, record in (("mine", mine), ("theirs", theirs)):
        event = ChangeEvent(type="updated", uri=Path(record.source_path).as_uri(), id=name)
        ids[name] = outbox.add(event, f"sig-{name}", time.time())
        outbox.finish({ids[name]: ("quarantined", f"<b>{name}</b>: the file changed twice")})
    page = signed_in(browser, console, "precision")
    page.goto(f"{console.url}/console/operations")
    with ManifestStore(console.settings.manifest) as manifest:
        serving = manifest.serving()
    assert serving is not None
    row = page.locator("#generations tbody tr.gen-serving")
    assert row.locator("td").first.inner_text().startswith(serving.generation)
    listed = page.locator("#outbox tbody").inner_text()
    assert "<b>mine</b>: the file changed twice" in listed and "quarantined" in listed
    assert "theirs" not in listed and Path(theirs.source_path).name not in page.content()

