"""Index lifecycle rules: version closing, tombstone cleanup and the publish gate.

These are decisions about versions and generations, kept apart from the flows that schedule
them so each rule can be tested on its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import date, timedelta

from pydantic import BaseModel

from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.models import DocumentIdentity, version_key
from ingest.stores import Stores, open_stores

log = logging.getLogger(__name__)


def open_generation(settings: Settings, generation: str) -> Stores:
    """The stores of one generation (embedded or servers, as the profile says), opened with the
    model and dimension it was built with."""
    manifest = ManifestStore(settings.manifest)
    record = manifest.get_generation(generation)
    manifest.close()
    if record is None or record.dimension is None:
        raise ValueError(f"generation {generation} has no vector store yet")
    return open_stores(settings, record.embedding_model, record.dimension, generation)


def delete_documents(settings: Settings, doc_ids: list[str], reason: str,
                     run_id: str) -> tuple[list[str], list[str]]:
    """Tombstone every version of the documents, then clean their rows from every generation.

    The tombstone is committed first: if cleanup fails or the process dies, the documents stay
    invisible and the next run retries the cleanup. Returns (tombstoned, cleaned) version keys.
    """
    manifest = ManifestStore(settings.manifest)
    try:
        tombstoned = [version_key(*key) for doc_id in doc_ids
                      for key in manifest.tombstone(doc_id, None, reason, run_id)]
        cleaned = cleanup_tombstones(manifest, lambda g: open_generation(settings, g))
    finally:
        manifest.close()
    return tombstoned, cleaned


class VersionDates(BaseModel):
    doc_id: str
    version_id: str
    effective_from: date | None
    declared_to: date | None
    # a newer version of the document repeals or re-issues this one (原通知同时作废, （更正）)
    superseded: bool = False


def superseded_keys(identities: Iterable[DocumentIdentity | None]) -> set[str]:
    """The version keys a repeal or re-issue link names as the older side: out of force once
    the newer one is in, whether or not any of them states a date."""
    return {link.other for identity in identities if identity is not None
            for link in identity.links
            if link.other_is == "older" and link.rule in ("repeal", "reissue")}


def closing_dates(versions: Iterable[VersionDates]) -> dict[tuple[str, str], date | None]:
    """The end date in force for each version: declared, or the day before the next version of
    the same document takes effect. A new policy version closes the old one; it never deletes it.
    A superseded version sorts before its successor from the same day, and with no dated
    successor it is in force on no day: a notice and its undated correction would otherwise
    both answer, the wrong number first.
    """
    by_doc: dict[str, list[VersionDates]] = {}
    for v in versions:
        by_doc.setdefault(v.doc_id, []).append(v)
    closing: dict[tuple[str, str], date | None] = {}
    for group in by_doc.values():
        dated = sorted(group, key=lambda v: (v.effective_from or date.min, not v.superseded,
                                             v.version_id))
        for current, following in zip(dated, [*dated[1:], None], strict=True):
            end = current.declared_to
            if end is None and following is not None and following.effective_from:
                # date.min has no day before it (a date recorded before dates were checked)
                end = max(following.effective_from, date.min + timedelta(days=1)) - timedelta(1)
            elif end is None and current.superseded:
                end = date.min
            closing[(current.doc_id, current.version_id)] = end
    return closing


def cleanup_tombstones(manifest: ManifestStore,
                       open_generation: Callable[[str], Stores]) -> list[str]:
    """Delete tombstoned versions' rows from every generation's stores; idempotent, so a failed
    or interrupted cleanup is simply retried by the next run. Returns the cleaned version keys."""
    pending = manifest.pending_cleanups()
    if not pending:
        return []
    cleaned = []
    # a generation without a dimension never opened its stores: nothing of it to clean
    generations = [g.generation for g in manifest.generations()
                   if g.status != "dropped" and g.dimension is not None]
    opened = {g: open_generation(g) for g in generations}
    try:
        for doc_id, version_id in pending:
            key = version_key(doc_id, version_id)
            for stores in opened.values():
                stores.vectors.delete(sorted(stores.vectors.chunk_ids(key)))
                if stores.crosslingual is not None:
                    stores.crosslingual.delete(sorted(stores.crosslingual.chunk_ids(key)))
                stores.lexical.delete(sorted(stores.lexical.chunk_ids(key)))
                stores.graph.delete_chunks(sorted(stores.graph.chunk_ids(key)))
            manifest.mark_cleaned(doc_id, version_id)
            cleaned.append(key)
    finally:
        for stores in opened.values():
            stores.close()
    return cleaned


class GateCheck(BaseModel):
    name: str
    passed: bool
    value: float | str | None
    limit: str


class GateReport(BaseModel):
    passed: bool
    checks: list[GateCheck]

    @property
    def reasons(self) -> list[str]:
        return [f"{c.name}: {c.value} (needs {c.limit})" for c in self.checks if not c.passed]


def publish_gate(*, documents: int, parse_errors: int, missing_titles: int,
                 dimension: int, expected_dimension: int | None, recall: float | None,
                 baseline_recall: float | None, max_parse_error_rate: float = 0.0,
                 max_missing_title_rate: float = 0.01, recall_tolerance: float = 0.01
                 ) -> GateReport:
    """Whether a rebuilt generation may replace the serving one."""
    error_rate = parse_errors / documents if documents else 1.0
    missing_rate = missing_titles / documents if documents else 1.0
    checks = [
        GateCheck(name="documents", passed=documents > 0, value=documents, limit="> 0"),
        GateCheck(name="parse_error_rate", passed=error_rate <= max_parse_error_rate,
                  value=round(error_rate, 4), limit=f"<= {max_parse_error_rate}"),
        GateCheck(name="missing_title_rate", passed=missing_rate < max_missing_title_rate,
                  value=round(missing_rate, 4), limit=f"< {max_missing_title_rate}"),
        GateCheck(name="vector_dimension",
                  passed=expected_dimension is None or dimension == expected_dimension,
                  value=dimension, limit=f"== {expected_dimension}"),
    ]
    if recall is not None and baseline_recall is not None:
        checks.append(GateCheck(
            name="recall_at_10", passed=recall >= baseline_recall - recall_tolerance,
            value=round(recall, 4), limit=f">= {baseline_recall - recall_tolerance:.4f}",
        ))
    else:
        checks.append(GateCheck(name="recall_at_10", passed=True, value="no eval cases",
                                limit="configured KBFLOW_EVAL_CASES to check"))
    return GateReport(passed=all(c.passed for c in checks), checks=checks)
