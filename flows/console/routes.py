"""The console's routes under /console: server-rendered pages over the manifest and the warm
search service, for the key's tenant (and its ancestors) and groups only.

A browser cannot send `Authorization: Bearer` on a link, so the login form puts the key in a
cookie (HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it; Secure
over HTTPS; Path=/console), and every request checks it against the keys file again, so a key
removed from the file stops working at once. A Bearer header works as well (scripts, the
bench). A version of another tenant, of groups the key lacks, or that does not exist is the
same 404: a caller cannot learn which.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, quote, urlsplit

import jinja2
from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from flows.console import views
from flows.console.citations import citations
from flows.console.pages import NoPage, page_png
from flows.serving import read_capped
from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.models import SearchFilter
from ingest.scopes import TenantTree

HERE = Path(__file__).parent
logger = logging.getLogger(__name__)
COOKIE = "kbflow_console"
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
MAX_FORM_BYTES = 4096
MAX_QUESTION_CHARS = 1000
ASK_K = 8
HEADERS = {  # nothing but this origin's own files, never framed, no referrer to other sites
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; "
                               "img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
                               "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # our own forms name their origin (login CSRF check)
    "Cache-Control": "no-store",
}
STATIC = {"console.css": "text/css; charset=utf-8",
          "console.js": "text/javascript; charset=utf-8"}


class Reader(Protocol):
    """What a key grants (flows.api.Grant)."""

    tenant: str
    groups: list[str]


class Keys(Protocol):
    def grant(self, authorization: str | None) -> Reader: ...


class Search(Protocol):
    """The warm search service (flows.api.SearchService)."""

    def search(self, request: Request, query: str, tenant: str, groups: list[str],
               as_of: date, k: int) -> Awaitable[str | None]: ...


def console_router(settings: Settings, keys: Keys, search: Search) -> APIRouter:
    tree = TenantTree.load(settings)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["q"] = lambda value: quote(str(value), safe="")
    env.tests["flow_run"] = _is_uuid
    static = {name: (HERE / "static" / name).read_bytes() for name in STATIC}
    router = APIRouter(prefix="/console")
    local = threading.local()

    def current() -> ManifestStore:
        """This thread's manifest connection (kept: opening one takes the write lock a moment,
        which an ingest may hold), bound to the generation serving now."""
        store = getattr(local, "manifest", None)
        if store is None:
            store = local.manifest = ManifestStore(settings.manifest)
        serving = store.serving()
        store.generation = serving.generation if serving else None
        return store

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(name).render(**context)
        return HTMLResponse(html, status_code=status, headers=HEADERS)

    def reader_of(request: Request) -> Reader | None:
        header = request.headers.get("authorization")
        if not header and (key := request.cookies.get(COOKIE)):
            header = f"Bearer {key}"
        if not header:
            return None
        try:
            return keys.grant(header)
        except HTTPException as exc:
            if exc.status_code == 401:
                return None
            raise

    def view_of(reader: Reader, groups: list[str] | None = None,
                as_of: date | None = None) -> SearchFilter:
        """The reader's filter, built as search builds it (tenant tree, the key's groups)."""
        return SearchFilter(tenant_id=reader.tenant, ancestors=tree.ancestors(reader.tenant),
                            groups=groups or list(reader.groups), as_of=as_of or date.today(),
                            hidden_keys=[])

    def signed_in(handler: Callable[..., Response]) -> Callable[..., Response]:
        """A page for signed-in readers; others go to the login form."""
        def wrapped(request: Request) -> Response:
            reader = reader_of(request)
            if reader is None:
                return RedirectResponse("/console/login", status_code=303, headers=HEADERS)
            return handler(request, reader)
        return wrapped

    def not_found(reader: Reader) -> HTMLResponse:
        return page("not_found.html", 404, reader=reader)

    @router.get("/static/{name}")
    def asset(name: str) -> Response:
        if name not in static:
            raise HTTPException(404)
        return Response(static[name], media_type=STATIC[name],
                        headers={"X-Content-Type-Options": "nosniff",
                                 "Cache-Control": "max-age=300"})

    @router.get("/login")
    def login_form() -> HTMLResponse:
        return page("login.html", reader=None, problem=None)

    @router.post("/login")
    async def login(request: Request) -> Response:
        _same_origin(request)
        raw = await read_capped(request, MAX_FORM_BYTES)
        form = parse_qs((raw or b"").decode("utf-8", "replace"))
        key = (form.get("key") or [""])[0].strip()
        if key:
            try:
                keys.grant(f"Bearer {key}")
            except HTTPException as exc:
                if exc.status_code != 401:
                    raise
                key = ""
        if not key:
            return page("login.html", 401, reader=None, problem="That key is not valid.")
        done = RedirectResponse("/console/documents", status_code=303, headers=HEADERS)
        done.set_cookie(COOKIE, key, httponly=True, samesite="strict", path="/console",
                        secure=request.url.scheme == "https")
        return done

    @router.post("/logout")
    def logout(request: Request) -> Response:
        _same_origin(request)
        done = RedirectResponse("/console/login", status_code=303, headers=HEADERS)
        done.delete_cookie(COOKIE, path="/console")
        return done

    @router.get("")
    @router.get("/")
    def home() -> Response:
        return RedirectResponse("/console/documents", status_code=303, headers=HEADERS)

    @router.get("/documents")
    @signed_in
    def documents(request: Request, reader: Reader) -> Response:
        params = request.query_params
        wanted = {name: params.get(name, "")[:200] for name in ("state", "tenant", "folder", "q")}
        manifest = current()
        found = views.listing(manifest, view_of(reader), state=wanted["state"],
                              tenant=wanted["tenant"], folder=wanted["folder"],
                              text=wanted["q"])
        return page("documents.html", reader=reader, found=found, wanted=wanted,
                    folder_of=views.folder_of,
                    prefect=_prefect_ui())

    @router.get("/doc")
    @signed_in
    def document(request: Request, reader: Reader) -> Response:
        doc_id, version = request.query_params.get("id", ""), request.query_params.get("v")
        manifest = current()
        shown = views.document(manifest, view_of(reader), doc_id, version,
                               settings.embedding_model)
        if shown is None:
            return not_found(reader)
        cites, problem = None, None
        try:
            cites = citations(settings, manifest, view_of(reader), shown.record)
        except Exception as exc:  # noqa: BLE001 - the graph store's own errors, many types
            logger.warning("citations of %s: %s", shown.record.version_key, exc)
            problem = f"The citation graph cannot be read now ({type(exc).__name__})."
        return page("document.html", reader=reader, doc=shown, cites=cites,
                    cites_problem=problem)

    @router.get("/page.png")
    @signed_in
    def page_image(request: Request, reader: Reader) -> Response:
        params = request.query_params
        number = params.get("p", "")
        manifest = current()
        found = views.versions(manifest, view_of(reader), params.get("id", ""))
        record = next((r for r in found if r.version_id == params.get("v")), None)
        # only the pages the document view outlines: a version that parsed, pages it has
        if record is None or not number.isdigit() or int(number) not in {
                region.page for c in manifest.version_chunks(record.doc_id, record.version_id)
                for region in c.regions}:
            raise HTTPException(404)
        try:
            png = page_png(settings, record, int(number))
        except NoPage:
            raise HTTPException(404) from None
        return Response(png, media_type="image/png",
                        headers={**HEADERS, "Cache-Control": "private, max-age=300"})

    @router.get("/trace")
    @signed_in
    def trace(request: Request, reader: Reader) -> Response:
        chunk_id = request.query_params.get("chunk", "")
        manifest = current()
        records = views.trace(manifest, view_of(reader), chunk_id)
        if not records:
            return not_found(reader)
        return page("trace.html", reader=reader, chunk_id=chunk_id, records=records)

    @router.get("/ask")
    async def ask(request: Request) -> Response:
        reader = reader_of(request)
        if reader is None:
            return RedirectResponse("/console/login", status_code=303, headers=HEADERS)
        params = request.query_params
        question = params.get("q", "").strip()
        chosen = [g for g in params.getlist("group") if g]
        as_of_text = params.get("as_of", "").strip() or date.today().isoformat()
        problem, answer = None, None
        if chosen and not set(chosen) <= set(reader.groups):
            problem = "This key does not grant those groups."
        elif not DAY.fullmatch(as_of_text) or not _is_day(as_of_text):
            problem = "As of must be a date written YYYY-MM-DD."
        elif len(question) > MAX_QUESTION_CHARS:
            problem = f"A question has at most {MAX_QUESTION_CHARS} characters."
        elif question:
            from ingest.search import SearchResponse

            try:
                body = await search.search(request, question, reader.tenant,
                                           sorted(set(chosen)) or list(reader.groups),
                                           date.fromisoformat(as_of_text), ASK_K)
            except HTTPException as exc:
                problem = f"Search is busy ({exc.detail}); try again shortly."
                body = None
            if body is not None:
                answer = SearchResponse.model_validate_json(body)
        return page("ask.html", reader=reader, question=question, chosen=chosen,
                    as_of=as_of_text, answer=answer, problem=problem,
                    ancestors=tree.ancestors(reader.tenant))

    @router.get("/operations")
    @signed_in
    def operations(request: Request, reader: Reader) -> Response:
        from flows.webhook.outbox import EventStore

        manifest = current()
        generations = manifest.generations()
        mine = views.source_paths(manifest, view_of(reader))
        outbox_path = settings.data_dir / "webhook_events.db"
        store = EventStore(outbox_path) if outbox_path.exists() else None
        counts = store.counts() if store else {}
        listed = store.listing(("pending", "dispatched", "failed", "quarantined"), limit=1000) \
            if store else []
        # An event names a file: shown when it is one of this reader's documents, counted
        # otherwise (another tenant's, or a path that never became a document).
        events = [e for e in listed if views.event_path(e) in mine]
        return page("operations.html", reader=reader, generations=generations,
                    counts=counts, events=events, others=len(listed) - len(events))

    return router


def _same_origin(request: Request) -> None:
    """A form posted from another site's page (login CSRF: signing a victim in with the
    attacker's key) is refused; browsers name the page's origin on every POST."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "cross-site form")


def _is_day(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_uuid(text: object) -> bool:
    try:
        uuid.UUID(str(text))
    except ValueError:
        return False
    return True


def _prefect_ui() -> str | None:
    """The Prefect UI's address when a server is configured (PREFECT_UI_URL, else the API's
    address without /api), for links to flow runs."""
    import os

    ui = os.environ.get("PREFECT_UI_URL") or os.environ.get("PREFECT_API_URL", "")
    ui = ui.removesuffix("/").removesuffix("/api")
    return ui if views.web_link(ui) else None

