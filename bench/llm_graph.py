"""Graph triples from the rules and from a real LLM, side by side, on the same chunks.

    .venv/bin/python -m bench.llm_graph [--docs sample_docs] [--chunks 40] [--label L]
        [--base-url URL --model NAME]   # an OpenAI-compatible endpoint instead of the local model
        [--results]                     # write the table into bench/RESULTS.md

The chunks are a fixed subset of the documents' indexed chunks: evenly spaced over all of them
in file order, so every document is represented in proportion to its size. The LLM is asked
with an empty cache (timings are real). Reported per extractor: triples per chunk, precision on
the hand-checked judgements in bench/llm_graph_judged.jsonl (each triple judged against its
chunk text: does the chunk state it? a triple not judged yet is listed, never counted), and, for
the LLM, the share of chunks whose reply could not be used, triples dropped by reason, tokens
per second and minutes per 100 chunks. Every triple of the run goes to
bench/llm_graph_results/<label>.jsonl, so new ones can be judged next to their chunk, and
every reply to <label>.replies.jsonl: `--replay LABEL` runs those replies through the current
validator again (the cost columns stay the recorded run's).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash

from bench import write_section
from ingest.chunk import chunk_document
from ingest.config import Settings
from ingest.graph import extract_triples
from ingest.graph.llm import TripleCache, extract_with
from ingest.llm import Endpoint, LLMClient, LLMError
from ingest.models import Chunk, ChunkKind, Triple
from ingest.parse import discover, parse_document, read_meta
from ingest.text import content_hash

HERE = Path(__file__).parent
JUDGED = HERE / "llm_graph_judged.jsonl"
OUT = HERE / "llm_graph_results"
RESULTS = HERE / "RESULTS.md"
SECTION = "## Graph triples: rules vs a real LLM"


@dataclass
class Recording:
    """An endpoint that notes each reply's tokens and time (the bench's view, not the client's)."""

    inner: Endpoint
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replies: list[dict[str, Any]] = field(default_factory=list)

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        body = self.inner.complete(payload)
        self.seconds += time.perf_counter() - started
        self.replies.append({"key": request_key(payload), "body": body})
        usage = body.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        return body

    def close(self) -> None:
        self.inner.close()


@dataclass
class Replay:
    """The replies a recorded run got, by request: a validator change measured on the very
    replies the model gave, without asking it again."""

    bodies: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, label: str) -> Replay:
        lines = (OUT / f"{label}.replies.jsonl").read_text(encoding="utf-8").splitlines()
        return cls({r["key"]: r["body"] for r in map(json.loads, lines)})

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        if request_key(payload) not in self.bodies:
            raise LLMError("this request was not recorded")
        return self.bodies[request_key(payload)]

    def close(self) -> None:
        pass


def request_key(payload: dict[str, Any]) -> str:
    return xxhash.xxh64_hexdigest(json.dumps(payload["messages"], ensure_ascii=False).encode())


def sample_chunks(docs: Path, count: int) -> tuple[list[tuple[Chunk, str]], int]:
    """`count` indexed chunks with their document titles, evenly spaced over the documents'
    chunks in file order; and how many indexed chunks the documents have in all."""
    per_doc: list[list[tuple[Chunk, str]]] = []
    for path in discover(docs):
        meta, data = read_meta(path, docs, "default", ["all-staff"])
        doc = parse_document(meta, data)
        title = doc.meta.title or path.stem
        per_doc.append([(c, title) for c in chunk_document(doc) if c.kind != ChunkKind.PARENT])
    every = [item for chunks in per_doc for item in chunks]
    step = max(1, len(every) // max(1, count))
    return every[::step][:count], len(every)


def judgements() -> dict[tuple[str, str], bool]:
    """(chunk text hash, "subject|predicate|object") → does the chunk state it."""
    if not JUDGED.exists():
        return {}
    rows = [json.loads(line) for line in JUDGED.read_text(encoding="utf-8").splitlines() if line]
    return {(r["chunk"], r["triple"]): bool(r["correct"]) for r in rows}


def triple_key(t: Triple) -> str:
    return f"{t.subject}|{t.predicate}|{t.object}"


def precision(triples: list[Triple], texts: dict[str, str],
              judged: dict[tuple[str, str], bool]) -> tuple[float | None, int, int]:
    """(precision over the judged triples, judged, not judged)."""
    marks = [judged.get((content_hash(texts[t.source_chunk_id]), triple_key(t)))
             for t in triples]
    known = [m for m in marks if m is not None]
    return (sum(known) / len(known) if known else None), len(known), len(marks) - len(known)


def run(args: argparse.Namespace) -> dict[str, Any]:
    picked, total = sample_chunks(args.docs, args.chunks)
    texts = {c.chunk_id: c.text for c, _ in picked}
    rules = [t for c, title in picked for t in extract_triples([c], title)]
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="kbflow-llm-graph-")),
                        llm_backend="http" if args.base_url else "local",
                        llm_base_url=args.base_url or "", llm_model=args.model,
                        llm_concurrency=1)
    client = LLMClient.from_settings(settings) if not args.replay else LLMClient(
        Replay.of(args.replay), settings.llm_local_model)
    assert client is not None
    recording = Recording(client.endpoint)
    client.endpoint = recording
    cache = TripleCache(settings.llm_cache_path)
    tally: Counter[str] = Counter()
    llm: list[Triple] = []
    started = time.perf_counter()
    try:
        for c, title in picked:
            llm += extract_with([c], title, client, cache, tally)
    finally:
        cache.close()
        client.close()
    seconds = time.perf_counter() - started
    judged = judgements()
    OUT.mkdir(exist_ok=True)
    if not args.replay:
        with (OUT / f"{args.label}.replies.jsonl").open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in recording.replies)
    with (OUT / f"{args.label}.jsonl").open("w", encoding="utf-8") as out:
        for t in [*rules, *llm]:
            out.write(json.dumps({
                "chunk": content_hash(texts[t.source_chunk_id]), "triple": triple_key(t),
                "extractor": t.extractor, "confidence": t.confidence,
                "correct": judged.get((content_hash(texts[t.source_chunk_id]), triple_key(t))),
                "text": texts[t.source_chunk_id],
            }, ensure_ascii=False) + "\n")
    asked = tally["chunks asked"] or 1
    cost = _cost(seconds, len(picked), recording)
    if args.replay:  # the cost is the recorded run's
        recorded = json.loads((OUT / f"{args.replay}.json").read_text(encoding="utf-8"))
        cost = {name: recorded[name] for name in cost}
    rows = {}
    for name, triples in (("rules", rules), (f"llm ({client.model})", llm)):
        p, n_judged, unjudged = precision(triples, texts, judged)
        rows[name] = {"triples": len(triples), "per_chunk": round(len(triples) / len(picked), 2),
                      "precision": None if p is None else round(p, 3), "judged": n_judged,
                      "unjudged": unjudged,
                      "chunks_with_triples": len({t.source_chunk_id for t in triples})}
    return {
        "label": args.label, "chunks": len(picked), "chunks_in_documents": total,
        "extractors": rows, "llm_tally": dict(sorted(tally.items())),
        "unusable_share": round((tally["replies unusable"] + tally["requests failed"]) / asked, 3),
        "replayed_from": args.replay or None, **cost,
    }


def _cost(seconds: float, chunks: int, recording: Recording) -> dict[str, Any]:
    return {
        "llm_seconds": round(seconds, 1),
        "minutes_per_100_chunks": round(seconds / chunks * 100 / 60, 1),
        "prompt_tokens": recording.prompt_tokens,
        "completion_tokens": recording.completion_tokens,
        "tokens_per_second": round((recording.prompt_tokens + recording.completion_tokens)
                                   / max(recording.seconds, 1e-9), 1),
        "completion_tokens_per_second": round(recording.completion_tokens
                                              / max(recording.seconds, 1e-9), 1),
        "load_average": os.getloadavg()[0],
    }


def table(result: dict[str, Any]) -> str:
    lines = [SECTION, "",
             f"`python -m bench.llm_graph --chunks {result['chunks']}`: {result['chunks']} of "
             f"{result['chunks_in_documents']} indexed chunks of sample_docs (evenly spaced), "
             f"load average {result['load_average']:.1f}. Precision: triples "
             "the chunk states, of those hand-checked in bench/llm_graph_judged.jsonl.", "",
             "| extractor | triples | per chunk | chunks with triples | precision (judged) |",
             "|---|---|---|---|---|"]
    for name, row in result["extractors"].items():
        p = "–" if row["precision"] is None else f"{row['precision']:.2f}"
        lines.append(f"| {name} | {row['triples']} | {row['per_chunk']} | "
                     f"{row['chunks_with_triples']} | {p} ({row['judged']}) |")
    lines += ["", f"LLM cost: {result['minutes_per_100_chunks']} min per 100 chunks, "
              f"{result['completion_tokens_per_second']} generated tokens/s "
              f"({result['tokens_per_second']} tokens/s with the prompt); replies unusable "
              f"{result['unusable_share']:.0%}. What happened to the replies: "
              + ", ".join(f"{k} {v}" for k, v in result["llm_tally"].items()) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=Path("sample_docs"))
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--label", default="local")
    parser.add_argument("--base-url", default="")
    parser.add_argument("--model", default="")
    parser.add_argument("--replay", default="", help="the label of a recorded run: its "
                        "replies again, through the current validator")
    parser.add_argument("--results", action="store_true")
    args = parser.parse_args()
    result = run(args)
    (OUT / f"{args.label}.json").write_text(json.dumps(result, ensure_ascii=False, indent=1))
    print(table(result))
    if args.results:
        write_section(RESULTS, SECTION, table(result))


if __name__ == "__main__":
    main()
