"""What a run reports: the summary the CLI prints, the manifest keeps and the gate reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, computed_field

from ingest.graph.quality import GraphQuality
from ingest.models import ParseReport
from ingest.pipeline.failures import Failure

STAGES = ("parse", "chunk", "diff", "embed", "vectors", "lexical", "graph", "relink",
          "manifest")
_PARSE_COUNTS = ("pages", "ocr_pages", "tables", "table_rows", "empty_pages", "chars_seen",
                 "chars_indexed")


class ChunkCounts(BaseModel):
    added: int = 0
    changed: int = 0  # new content
    updated: int = 0  # same content, new links/pages/metadata: rewritten, never re-embedded
    removed: int = 0
    unchanged: int = 0


class ParseRunReport(BaseModel):
    """Parse quality over the documents this run parsed: the one definition of its rates, which
    the CLI shows and the publish gate reads."""

    documents: int = 0
    pages: int = 0
    ocr_pages: int = 0
    tables: int = 0
    table_rows: int = 0
    empty_pages: int = 0
    parse_errors: int = 0
    missing_titles: int = 0
    chars_seen: int = 0
    chars_indexed: int = 0
    skipped: dict[str, int] = {}  # parts left out on purpose (comments, boilerplate …), by kind
    low_coverage: dict[str, float] = {}  # versions that left more unread than min_coverage allows
    warnings: dict[str, list[str]] = {}  # versions read with a doubt (an encoding guessed …)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def parse_error_rate(self) -> float:
        return self.parse_errors / self.documents if self.documents else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def missing_title_rate(self) -> float:
        return self.missing_titles / self.documents if self.documents else 0.0

    @classmethod
    def of(cls, reports: Mapping[str, dict[str, Any]], failures: Iterable[Failure],
           min_coverage: float = 0.0) -> ParseRunReport:
        """From the parse reports of the parsed versions (by version key) and the run's
        failures (a parse error is a failure at the "parse" stage)."""
        errors = sum(1 for f in failures if f.stage == "parse")
        skipped: Counter[str] = Counter()
        for r in reports.values():
            skipped.update(r.get("skipped") or {})
        return cls(
            documents=len(reports) + errors, parse_errors=errors,
            missing_titles=sum(1 for r in reports.values() if r.get("missing_title")),
            skipped=dict(skipped), low_coverage=low_coverage(reports, min_coverage),
            warnings=parse_warnings(reports),
            **{name: sum(r.get(name) or 0 for r in reports.values()) for name in _PARSE_COUNTS},
        )


def low_coverage(reports: Mapping[str, dict[str, Any] | None], minimum: float
                 ) -> dict[str, float]:
    """The versions whose parse left more of their text unread than `minimum` allows, with
    their coverage (what was indexed of what was meant to be read)."""
    low = {}
    for key, report in reports.items():
        if report:
            coverage = ParseReport.model_validate(report).coverage
            if coverage < minimum:
                low[key] = round(coverage, 3)
    return low


def parse_warnings(reports: Mapping[str, dict[str, Any] | None]) -> dict[str, list[str]]:
    """The versions whose parse report has warnings, with them."""
    return {key: report["warnings"] for key, report in reports.items()
            if report and report.get("warnings")}


class IngestSummary(BaseModel):
    run_id: str
    source: str
    generation: str
    files: int
    documents: dict[str, int]  # document versions per state, in this generation
    skipped_unchanged: int
    written: int
    chunks: ChunkCounts
    embedded: int
    encoded: dict[str, int] = {}  # texts and sentences each model encoded ("<model> <kind>")
    over_budget_chunks: int  # chunks longer than the model's input (expected 0)
    triples: int
    graph: GraphQuality = GraphQuality()  # of the relations this run wrote
    tombstoned: list[str]
    # published versions whose citations this run's new or deleted titles resolved otherwise
    relinked: list[str] = []
    lifted: list[str] = []  # deleted versions published again (re-added, or undeleted)
    cleaned: list[str]
    duplicates: dict[str, list[str]]  # version → identical files ingested as that version
    parse: ParseRunReport
    failures: list[Failure]
    seconds: dict[str, float]
    total_seconds: float
