"""Retrieval evaluation: gold cases (JSONL) in, Recall@K, Hit@K, MRR and nDCG@K out, overall and
per tag, with "no answer" cases scored apart. The publish gate compares a new generation's
Recall@K with the baseline's; `kbflow eval` prints the report.

An expectation names what a good result is, in whichever way survives re-chunking best: a
chunk_id (exact, but changes with the chunker), a clause of a document version ("第十条" of
travel-expense 2026: any piece of it counts), or a phrase the chunk text must contain
(optionally within one document/version). Forbidden items use the same shapes: a result in the
top K that matches one (the 2025 rule for a 2026 date, a document the reader may not see) is
counted against the case.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field, model_validator

from ingest.config import Settings
from ingest.parse.names import TENANT_SEPARATOR

if TYPE_CHECKING:  # the search stack (model, stores) is imported when a search runs
    from ingest.search import Searcher, SearchOptions

RETRIEVERS = ("bm25", "dense", "hybrid", "final")


class Retrieved(Protocol):
    """What a search returns per hit (ingest.search.SearchResult has all of it)."""

    chunk_id: str
    doc_id: str
    version_id: str
    clause_no: str | None
    text: str


class Answer(Protocol):
    """A search's whole answer (ingest.search.SearchResponse): its hits and its verdict."""

    @property
    def results(self) -> Sequence[Retrieved]: ...

    @property
    def verdict(self) -> str: ...


# A search function returns an Answer, or bare hits (a baseline's ranking: no verdict).
SearchFn = Callable[[str, date | None, str | None, list[str] | None, int],
                    Answer | Sequence[Retrieved]]


def hits_of(found: Answer | Sequence[Retrieved]) -> Sequence[Retrieved]:
    return found if isinstance(found, Sequence) else found.results


class Expectation(BaseModel):
    """A result that should (or, in `forbidden`, must not) be found; every field given must
    match. A bare string in JSONL is a chunk_id."""

    chunk_id: str | None = None
    doc_id: str | None = None
    version: str | None = None
    clause: str | None = None
    text: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"chunk_id": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _specific(self) -> Expectation:
        if not (self.chunk_id or self.clause or self.text or self.doc_id):
            raise ValueError("an expectation needs a chunk_id, a clause, a text or a doc_id")
        if self.clause and not self.doc_id:
            raise ValueError(f"clause {self.clause} needs the doc_id it belongs to")
        return self

    def matches(self, hit: Retrieved) -> bool:
        """Every field given matches the hit. A doc id is matched as its tenant names it: a
        case names "procurement", which the index keeps as "subsidiary-b:procurement" (doc ids
        are scoped by tenant, see ingest.parse.metadata.scoped_doc_id)."""
        return (
            (self.chunk_id is None or hit.chunk_id == self.chunk_id)
            and (self.doc_id is None
                 or self.doc_id in (hit.doc_id, hit.doc_id.split(TENANT_SEPARATOR, 1)[-1]))
            and (self.version is None or hit.version_id == self.version)
            and (self.clause is None or normalised(hit.clause_no or "") == normalised(self.clause))
            and (self.text is None or normalised(self.text) in normalised(hit.text))
        )


class EvalCase(BaseModel):
    id: str
    question: str
    expected: list[Expectation] = Field(default_factory=list)
    forbidden: list[Expectation] = Field(default_factory=list)
    as_of: date | None = None
    tenant: str | None = None
    groups: list[str] | None = None
    tags: list[str] = Field(default_factory=list)
    no_answer: bool = False  # nothing relevant exists for this reader: the search should say so
    conflict: bool = False  # documents state different values: the verdict should say conflict

    @model_validator(mode="after")
    def _answerable_or_not(self) -> EvalCase:
        if self.no_answer == bool(self.expected):
            raise ValueError(f"case {self.id}: give `expected`, or set no_answer (not both)")
        return self


class CaseResult(BaseModel):
    id: str
    tags: list[str]
    no_answer: bool
    recall: float = 0.0
    hit: float = 0.0
    reciprocal_rank: float = 0.0
    ndcg: float = 0.0
    forbidden_hits: int = 0
    abstained: bool = False  # the search said nothing answers (verdict no_answer)
    conflict: bool = False  # a planted conflict (the case's `conflict`)
    flagged: bool = False  # the search said its results conflict (verdict conflict)
    passed: bool  # answerable: hit and no forbidden result; no-answer: see evaluate()
    ranked: list[str]  # doc@version clause of each result, for reading a failure


class Metrics(BaseModel):
    cases: int  # answerable cases; the four means are over these
    recall: float
    hit: float
    hit_at_1: float  # the first result is right (what exact-identifier questions need)
    mrr: float
    ndcg: float
    forbidden_rate: float  # share of all cases (answerable or not) with a forbidden result
    no_answer_cases: int
    no_answer_passed: int
    no_answer_abstained: int  # no-answer cases where the search said it had nothing
    false_abstain_rate: float  # share of answerable cases where it wrongly said so
    no_answer_precision: float  # share of no_answer verdicts given on no-answer cases
    conflict_cases: int  # cases with a planted conflict
    conflict_recall: float  # share of them the verdict flagged
    conflict_precision: float  # share of conflict verdicts given on planted conflicts

    @property
    def no_answer_rate(self) -> float:
        return self.no_answer_passed / self.no_answer_cases if self.no_answer_cases else 1.0


class EvalReport(BaseModel):
    k: int
    overall: Metrics
    per_tag: dict[str, Metrics]
    cases: list[CaseResult]


def load_cases(path: Path) -> list[EvalCase]:
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                cases.append(EvalCase.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from exc
    if len({c.id for c in cases}) != len(cases):
        raise ValueError(f"{path}: case ids must be unique")
    return cases


def evaluate(cases: Sequence[EvalCase], search_fn: SearchFn, k: int = 5,
             no_answer_threshold: float | None = None) -> EvalReport:
    """Run every case through `search_fn(question, as_of, tenant, groups, k)` and score the top K.

    A no-answer case passes when no forbidden result is in the top K and, with a threshold, the
    top-1 score (a `score` attribute) is below it; with neither forbidden items nor a threshold,
    only an empty result list passes."""
    results = [
        score_case(case, search_fn(case.question, case.as_of, case.tenant, case.groups, k),
                   k, no_answer_threshold)
        for case in cases
    ]
    tags = sorted({tag for r in results for tag in r.tags})
    return EvalReport(
        k=k, overall=summarise(results),
        per_tag={tag: summarise([r for r in results if tag in r.tags]) for tag in tags},
        cases=results,
    )


def score_case(case: EvalCase, found: Answer | Sequence[Retrieved], k: int,
               no_answer_threshold: float | None = None) -> CaseResult:
    hits = list(hits_of(found))[:k]
    verdict = getattr(found, "verdict", None)  # bare hits (a baseline's) have none
    forbidden = sum(any(f.matches(h) for f in case.forbidden) for h in hits)
    ranked = [f"{h.doc_id}@{h.version_id} {h.clause_no or '-'}" for h in hits]
    abstained = not hits or verdict == "no_answer"
    if case.no_answer:
        top = getattr(hits[0], "score", None) if hits else None
        if no_answer_threshold is not None:
            quiet = top is None or top < no_answer_threshold
        else:  # hidden from this reader (forbidden given), or nothing in the corpus: abstain
            quiet = bool(case.forbidden) or abstained
        return CaseResult(id=case.id, tags=case.tags, no_answer=True, forbidden_hits=forbidden,
                          abstained=abstained, passed=quiet and forbidden == 0, ranked=ranked,
                          flagged=verdict == "conflict")
    credited: set[int] = set()  # expectations already found higher up
    dcg, first = 0.0, 0
    for rank, hit in enumerate(hits, start=1):
        new = {i for i, e in enumerate(case.expected) if i not in credited and e.matches(hit)}
        if new:
            first = first or rank
            dcg += 1 / math.log2(rank + 1)
            credited |= new
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(case.expected), k) + 1))
    return CaseResult(
        id=case.id, tags=case.tags, no_answer=False,
        recall=len(credited) / len(case.expected), hit=float(first > 0),
        reciprocal_rank=1 / first if first else 0.0, ndcg=dcg / ideal,
        forbidden_hits=forbidden, abstained=abstained, passed=first > 0 and forbidden == 0,
        ranked=ranked, conflict=case.conflict, flagged=verdict == "conflict",
    )


class RetrieverReports(BaseModel):
    """One report per retriever (BM25 alone, dense alone, plain hybrid, final) over the same
    cases."""

    k: int
    retrievers: dict[str, EvalReport]


@contextmanager
def hybrid_search_fn(settings: Settings, generation: str | None = None,
                     mode: str = "final") -> Iterator[SearchFn]:
    """A search function over the serving (or the given) generation: what `kbflow search`
    does (or one retriever alone), with the configured default tenant and groups."""
    with retriever_fns(settings, generation, {mode: None}) as fns:
        yield fns[mode]


@contextmanager
def retriever_fns(settings: Settings, generation: str | None = None,
                  modes: Sequence[str] | Mapping[str, SearchOptions | None] = RETRIEVERS,
                  ) -> Iterator[dict[str, SearchFn]]:
    """Search functions for several retrievers sharing one open index and one loaded model.
    `modes` names retrievers (ingest.search.RETRIEVERS), or maps a name to search options;
    a name that is no retriever runs the final search with its options (a rule switched off)."""
    from ingest.search import RETRIEVERS as ALL_RETRIEVERS
    from ingest.search import Searcher

    named = modes if isinstance(modes, Mapping) else dict.fromkeys(modes)
    with Searcher(settings, generation) as searcher:
        yield {name: searcher_fn(searcher, settings,
                                 name if name in ALL_RETRIEVERS else "final", options)
               for name, options in named.items()}


def searcher_fn(searcher: Searcher, settings: Settings, mode: str = "final",
                options: SearchOptions | None = None) -> SearchFn:
    """One retriever of an open Searcher, with the configured default tenant and groups."""
    retriever: Any = mode

    def search(question: str, as_of: date | None, tenant: str | None,
               groups: list[str] | None, k: int) -> Answer:
        return searcher.search(
            question, tenant_id=tenant or settings.default_tenant,
            groups=groups or settings.default_acl, as_of=as_of or date.today(), k=k,
            mode=retriever, options=options,
        )

    return search


def compare_retrievers(cases: Sequence[EvalCase], settings: Settings, k: int = 5,
                       modes: Sequence[str] | Mapping[str, SearchOptions | None] = RETRIEVERS,
                       ) -> RetrieverReports:
    with retriever_fns(settings, modes=modes) as fns:
        return RetrieverReports(
            k=k, retrievers={mode: evaluate(cases, fn, k) for mode, fn in fns.items()},
        )


def summarise(results: Sequence[CaseResult]) -> Metrics:
    answerable = [r for r in results if not r.no_answer]
    silent = [r for r in results if r.no_answer]

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0.0

    def share(said: list[bool]) -> float:
        """Of what was said, the share that was right (1.0 when nothing was said)."""
        return round(sum(said) / len(said), 4) if said else 1.0

    return Metrics(
        cases=len(answerable), recall=mean([r.recall for r in answerable]),
        hit=mean([r.hit for r in answerable]),
        hit_at_1=mean([float(r.reciprocal_rank == 1.0) for r in answerable]),
        mrr=mean([r.reciprocal_rank for r in answerable]),
        ndcg=mean([r.ndcg for r in answerable]),
        forbidden_rate=mean([float(r.forbidden_hits > 0) for r in results]),
        no_answer_cases=len(silent), no_answer_passed=sum(r.passed for r in silent),
        no_answer_abstained=sum(r.abstained for r in silent),
        false_abstain_rate=mean([float(r.abstained) for r in answerable]),
        no_answer_precision=share([r.no_answer for r in results if r.abstained]),
        conflict_cases=sum(r.conflict for r in results),
        conflict_recall=share([r.flagged for r in results if r.conflict]),
        conflict_precision=share([r.conflict for r in results if r.flagged]),
    )


def normalised(text: str) -> str:
    """NFKC and no whitespace: "第 10 条" and full-width digits match what the parser wrote."""
    return "".join(unicodedata.normalize("NFKC", text).split())
