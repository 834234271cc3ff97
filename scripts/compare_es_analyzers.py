"""Elasticsearch BM25 with kbflow's jieba tokens vs. Elasticsearch's `cjk` bigram analyzer, on the
sample corpus and its gold cases.

Parses and chunks sample_docs/ as flows/ingest.py does (no embedding: BM25 alone is measured),
closes older versions' dates the same way, indexes the chunks once into a temporary generation
(the store indexes both fields, `tokens` and `body`, in every document), runs every case in
eval/sample_cases.jsonl through `search()` with analyzer="jieba" and analyzer="cjk", and drops the
temporary index and template at the end. Needs Elasticsearch at KBFLOW_ES_URL
(`deploy/local/engines.sh start`).

    .venv/bin/python scripts/compare_es_analyzers.py [--k 5] [--cases eval/sample_cases.jsonl]
"""

from __future__ import annotations

import argparse
import sys
import uuid
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from ingest.chunk import chunk_document, chunk_params
from ingest.config import Settings
from ingest.embed import TokenCounter
from ingest.evaluate import EvalReport, evaluate, load_cases
from ingest.lifecycle import VersionDates, closing_dates
from ingest.models import Chunk, SearchFilter
from ingest.parse import discover, parse_document, read_meta
from ingest.stores.elasticsearch import ElasticsearchLexicalStore

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Result:
    """What ingest.evaluate scores per hit."""

    chunk_id: str
    doc_id: str
    version_id: str
    clause_no: str | None
    text: str
    score: float


def corpus_chunks(root: Path, settings: Settings) -> list[Chunk]:
    """Every chunk of every document under `root`, with end dates as the pipeline sets them."""
    params = chunk_params(settings)
    tokens = TokenCounter(settings.embedding_model)
    docs = []
    for path in discover(root):
        meta, data = read_meta(path, root, settings.default_tenant, settings.default_acl)
        docs.append(parse_document(meta, data, max_file_mb=settings.max_file_mb))
    ends = closing_dates(VersionDates(doc_id=d.meta.doc_id, version_id=d.meta.version_id,
                                      effective_from=d.meta.effective_from,
                                      declared_to=d.meta.effective_to) for d in docs)
    chunks = []
    for doc in docs:
        for chunk in chunk_document(doc, params, tokens.count, tokens.max_tokens):
            chunk.effective_to = ends[(doc.meta.doc_id, doc.meta.version_id)]
            chunks.append(chunk)
    return chunks


def run(store: ElasticsearchLexicalStore, chunks: dict[str, Chunk], cases_path: Path,
        settings: Settings, k: int) -> EvalReport:
    def search(question: str, as_of: date | None, tenant: str | None,
               groups: list[str] | None, k: int) -> list[Result]:
        flt = SearchFilter(tenant_id=tenant or settings.default_tenant,
                           groups=groups or settings.default_acl,
                           as_of=as_of or date.today(), hidden_keys=[])
        results = []
        for hit in store.search(question, flt, k):
            c = chunks[hit.chunk_id]
            results.append(Result(c.chunk_id, c.doc_id, c.version_id, c.clause_no, c.text,
                                  hit.score))
        return results

    return evaluate(load_cases(cases_path), search, k=k)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--cases", type=Path, default=REPO / "eval" / "sample_cases.jsonl")
    parser.add_argument("--docs", type=Path, default=REPO / "sample_docs")
    args = parser.parse_args()
    settings = Settings()
    chunks = {c.chunk_id: c for c in corpus_chunks(args.docs.resolve(), settings)}
    print(f"{len(chunks)} chunks from {len({c.version_key for c in chunks.values()})} "
          f"document versions; Elasticsearch at {settings.es_url}")

    alias = f"kbflow_analyzers_{uuid.uuid4().hex[:8]}"  # never an index anyone else uses
    stores = {name: ElasticsearchLexicalStore(settings.es_url, alias=alias, generation="tmp",
                                              analyzer=name)
              for name in ("jieba", "cjk")}
    try:
        stores["jieba"].upsert(list(chunks.values()))
        reports = {name: run(store, chunks, args.cases, settings, args.k)
                   for name, store in stores.items()}
    finally:
        stores["jieba"].drop()
        stores["jieba"].drop_template()
        for store in stores.values():
            store.close()

    k = args.k
    print(f"\n{'analyzer':10} {'cases':>5} {f'Recall@{k}':>9} {'MRR':>6} {f'Hit@{k}':>6} "
          f"{f'nDCG@{k}':>7} {'forbidden':>9} {'no-answer ok':>12}")
    for name, report in reports.items():
        m = report.overall
        print(f"{name:10} {m.cases:>5} {m.recall:>9.3f} {m.mrr:>6.3f} {m.hit:>6.3f} "
              f"{m.ndcg:>7.3f} {m.forbidden_rate:>9.3f} {m.no_answer_passed:>5}/"
              f"{m.no_answer_cases:<6}")
    jieba = {c.id: c for c in reports["jieba"].cases}
    for case in reports["cjk"].cases:
        other = jieba[case.id]
        if (case.passed, case.reciprocal_rank) != (other.passed, other.reciprocal_rank):
            print(f"  {case.id}: jieba RR {other.reciprocal_rank:.2f} "
                  f"{'pass' if other.passed else 'FAIL'} | cjk RR {case.reciprocal_rank:.2f} "
                  f"{'pass' if case.passed else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
