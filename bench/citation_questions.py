"""Citation questions over the whole laws folder, answered by kbflow's graph (issue #44).

    .venv/bin/python -m bench.citation_questions [--questions eval/citation_questions.jsonl]
        [--laws DIR] [--cache FILE] [--graph DIR] [--no-results]

The questions were written by someone who had not read the graph code (eval/
citation_questions.jsonl): who cites a law (every citing file is gold), what one article cites
(the cited files and articles), and two hops (the cited article's text holds a key phrase).
Every law is parsed and chunked by kbflow (bench/citations.py's cache) and its triples extracted
as an ingest does (the folder's titles, the version's own article numbers), then written to a
graph store (Neo4j by default, or LadybugDB): everything but the embedding. Each question is
asked through `ingest.search.citations.citation_answer` with its structured fields (the target
title, the source article): the routing of the question's wording is not measured here.

A who-cites answer is complete when every gold file's document is among the citing documents;
a cites-what answer when every gold file's document is cited from the article (and every gold
article of it); a two-hop answer when a cited clause of a gold file holds the key phrase.
Writes the "Citation questions" section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import time
import unicodedata
import uuid
from datetime import date
from pathlib import Path
from typing import Any

from bench import write_section
from bench.citations import CACHE, LAWS, RESULTS, Law, load
from ingest.graph import extract_triples
from ingest.graph.link import article_spellings
from ingest.graph.normalize import canonical
from ingest.graph.titles import TitleIndex
from ingest.models import Chunk, SearchFilter
from ingest.search.citations import CitationAnswer, citation_answer
from ingest.stores.ladybug_graph import LadybugGraphStore
from ingest.stores.neo4j_graph import Neo4jGraphStore
from ingest.stores.protocols import GraphStore

QUESTIONS = Path(__file__).resolve().parents[1] / "eval" / "citation_questions.jsonl"
GRAPH = Path("/tmp/kbflow_law_graph")
WRITE_BATCH = 2000  # chunks per graph upsert


def open_store(store: str, folder: Path) -> GraphStore:
    """A fresh graph: LadybugDB in `folder`, or a new generation on the test Neo4j server."""
    if store == "neo4j":
        uri = os.environ.get("KBFLOW_NEO4J_URI", "bolt://127.0.0.1:7687")
        return Neo4jGraphStore(uri, generation=f"cq_{uuid.uuid4().hex[:12]}")
    shutil.rmtree(folder, ignore_errors=True)
    return LadybugGraphStore(folder)


def build(laws: list[Law], graph: GraphStore) -> GraphStore:
    """The laws' chunks and triples written to `graph`."""
    index = TitleIndex(law.title for law in laws)
    chunks: list[Chunk] = []
    titles: dict[str, str] = {}
    triples = []
    for law in laws:
        articles = {c.clause_no for c in law.chunks if c.clause_no}
        triples += extract_triples(law.chunks, law.title, index, articles)
        chunks += law.chunks
        titles |= {c.version_key: canonical(law.title) for c in law.chunks}
    for at in range(0, len(chunks), WRITE_BATCH):
        graph.upsert(chunks[at:at + WRITE_BATCH], [], titles)
    for at in range(0, len(triples), WRITE_BATCH):
        graph.upsert([], triples[at:at + WRITE_BATCH])
    return graph


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def judge(question: dict[str, Any], answer: CitationAnswer, doc_of: dict[str, str],
          title_of: dict[str, str], text_of: dict[str, str]) -> dict[str, Any]:
    """Whether the answer is complete, and what it missed."""
    gold = question["gold_files"]
    if question["kind"] == "who_cites":
        found = {d.doc_id for d in answer.incoming}
        missed = [f for f in gold if doc_of.get(f) not in found]
        return {"complete": not missed, "missed": missed}
    cited = {t.document for t in answer.outgoing}
    missed = [f for f in gold if title_of.get(f) not in cited]
    clauses = {t.cited for t in answer.outgoing}
    for file, articles in question["gold_articles"].items():
        for article in articles:
            names = {f"《{title_of.get(file)}》{s}" for s in article_spellings(article)}
            if not names & clauses:
                missed.append(f"{file} {article}")
    if question["kind"] == "two_hop":
        phrase = squeeze(question["key_phrase"])
        texts = [text_of.get(c, "") for t in answer.outgoing
                 if t.document in {title_of.get(f) for f in gold} for c in t.target_chunks]
        if not any(phrase in squeeze(text) for text in texts):
            missed.append(f"key phrase {question['key_phrase'][:20]}…")
    return {"complete": not missed, "missed": missed}


def run(questions: list[dict[str, Any]], laws: list[Law], graph: GraphStore
        ) -> list[dict[str, Any]]:
    chunks = {c.chunk_id: c for law in laws for c in law.chunks}
    doc_of = {law.file: law.chunks[0].doc_id for law in laws if law.chunks}
    title_of = {law.file: canonical(law.title) for law in laws}
    text_of = {cid: c.text for cid, c in chunks.items()}
    flt = SearchFilter(tenant_id="bench", groups=["all"], as_of=date.today(), hidden_keys=[])
    rows = []
    for q in questions:
        asked = q["target_title"] + (q.get("source_article") or "")
        if q.get("source_article"):
            asked = f"《{q['target_title']}》{q['source_article']}"
        started = time.perf_counter()
        answer = citation_answer(graph, lambda ids: {i: chunks[i] for i in ids if i in chunks},
                                 asked, flt)
        seconds = time.perf_counter() - started
        verdict = judge(q, answer, doc_of, title_of, text_of)
        rows.append({"id": q["id"], "kind": q["kind"], "asked": asked, "title": answer.title,
                     "rule": answer.rule, "gold": len(q["gold_files"]),
                     "citing": len(answer.incoming), "cited": len(answer.outgoing),
                     "seconds": round(seconds, 3)} | verdict)
    return rows


def report(rows: list[dict[str, Any]], store: str) -> str:
    lines = ["## Citation questions (bench/citation_questions.py)", "",
             f"{len(rows)} questions over the whole laws folder (eval/citation_questions.jsonl, "
             "written by a helper who had not read the graph code), answered by "
             f"`citation_answer` over a {store} graph of all 1,424 laws (parse, chunk, "
             "extract; no embedding). Complete: every gold file found.", "",
             "| kind | questions | complete | share |", "|---|---|---|---|"]
    for kind in ("who_cites", "cites_what", "two_hop", "all"):
        part = [r for r in rows if kind in ("all", r["kind"])]
        done = sum(r["complete"] for r in part)
        lines.append(f"| {kind} | {len(part)} | {done} | **{done / len(part):.1%}** |"
                     if part else f"| {kind} | 0 | 0 | - |")
    slow = max(rows, key=lambda r: r["seconds"])
    lines += ["", f"Slowest answer {slow['seconds']:.2f} s ({slow['asked']}).", "",
              "Incomplete answers:"]
    lines += [f"- {r['id']} {r['asked']} → {r['title']} ({r['rule']}): missed "
              + "; ".join(r["missed"][:6]) for r in rows if not r["complete"]] or ["- none"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--laws", type=Path, default=LAWS)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--graph", type=Path, default=GRAPH)
    parser.add_argument("--store", choices=["neo4j", "ladybug"], default="neo4j",
                        help="neo4j: the test server (deploy/local/engines.sh start); LadybugDB "
                             "writes the 80k relations far slower on this machine")
    parser.add_argument("--no-results", action="store_true")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8")
                 .splitlines() if line.strip()]
    laws = load(args.laws, args.cache)
    started = time.perf_counter()
    graph = open_store(args.store, args.graph)
    try:
        build(laws, graph)
        print(f"graph built in {time.perf_counter() - started:.0f} s")
        rows = run(questions, laws, graph)
    finally:
        if args.store == "neo4j":
            graph.drop()
        graph.close()
    text = report(rows, args.store)
    print(text)
    args.graph.mkdir(parents=True, exist_ok=True)
    (args.graph / "answers.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1),
                                             encoding="utf-8")
    if not args.no_results:
        write_section(RESULTS, "## Citation questions (bench/citation_questions.py)", text)


if __name__ == "__main__":
    main()
