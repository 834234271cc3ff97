"""Citation benchmark: the real citation graph of ../shared/realworld/laws, resolved (issue #44).

    .venv/bin/python -m bench.citations [--laws DIR] [--cache FILE] [--sample 200] [--seed 44]
        [--judged bench/citations_judged.jsonl] [--no-results]

Every law is parsed and chunked by kbflow's own parser and chunker (no embedding, no stores), and
its chunks' citations found and resolved as the graph extractor does (ingest/graph/citations.py
through the folder's titles). The gold does not come from the resolver: LawRefBook names each file
by the law's short name (刑法修正案（七）.md, 专利法(2020-10-17).md), so a 《…》 citation's gold
document is the one whose title or file name it spells (NFKC, without 〈〉, a leading
中华人民共和国 and a trailing (date) on both sides); a citation spelling no title or file name
has no gold (its target is not in the folder, or is written another way: then only the
hand-checked sample judges its resolution). An article reference 《X》第N条 is right when X
resolved to the gold document and that document has a clause chunk numbered 第N条.

Precision: a seeded random sample of resolutions (see `judged_sample`) is written to `--judged`
with its context; the judgement column is filled by hand (`ok` / `wrong`, and a note) and kept
across runs for the same rows. Writes the "Citations" section of
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import write_section
from ingest.chunk import ChunkParams, chunk_document
from ingest.graph.citations import Citation, citations
from ingest.graph.link import article_spellings
from ingest.graph.titles import DANGLING, TitleIndex
from ingest.models import Chunk, ChunkKind
from ingest.parse import parse_document, read_meta

LAWS = Path(__file__).resolve().parents[2] / "shared" / "realworld" / "laws"
# one cache per chunker version: a chunker change is never measured on the old chunks
CACHE = Path(f"/tmp/kbflow_law_chunks_{ChunkParams().version}.json")
JUDGED = Path(__file__).with_name("citations_judged.jsonl")
RESULTS = Path(__file__).with_name("RESULTS.md")
_DATE_SUFFIX = re.compile(r"\(\d{4}-\d{2}-\d{2}\)$")
_CONTEXT = 40  # characters of text shown either side of a judged citation


@dataclass
class Law:
    file: str
    title: str
    chunks: list[Chunk]  # its non-parent chunks


def load(laws: Path, cache: Path) -> list[Law]:
    """Every law's non-parent chunks, parsed once (the parse takes minutes) and cached."""
    if cache.exists():
        return [Law(row["file"], row["title"], [Chunk.model_validate(c) for c in row["chunks"]])
                for row in json.loads(cache.read_text(encoding="utf-8"))]
    found = []
    for path in sorted(laws.rglob("*.md")):
        meta, data = read_meta(path, laws, "bench", ["all"])
        doc = parse_document(meta, data)
        chunks = [c for c in chunk_document(doc) if c.kind != ChunkKind.PARENT]
        found.append(Law(str(path.relative_to(laws)), doc.meta.title or path.stem, chunks))
    cache.write_text(json.dumps([{"file": law.file, "title": law.title,
                                  "chunks": [c.model_dump(mode="json") for c in law.chunks]}
                                 for law in found], ensure_ascii=False), encoding="utf-8")
    return found


def spelling(name: str) -> str:
    """A name as the gold compares it: NFKC, no spaces or 〈〉《》, no leading country name,
    no trailing (date)."""
    text = re.sub(r"\s+", "", unicodedata.normalize("NFKC", name))
    text = _DATE_SUFFIX.sub("", text.replace("〈", "").replace("〉", "").strip("《》"))
    return text.removeprefix("中华人民共和国")


def gold_names(laws: list[Law]) -> dict[str, set[str]]:
    """Spelling → the titles of the files it names (by title or by file name)."""
    names: dict[str, set[str]] = {}
    for law in laws:
        for name in (law.title, Path(law.file).stem):
            names.setdefault(spelling(name), set()).add(law.title)
    return names


def resolve_all(laws: list[Law]) -> list[dict[str, Any]]:
    """One row per citation: where it is, what it says, what it resolved to."""
    index = TitleIndex(law.title for law in laws)
    rows = []
    for law in laws:
        aliases = index.aliases("\n".join(c.text for c in law.chunks), law.title)
        articles = {c.clause_no for c in law.chunks if c.clause_no}
        for chunk, after in zip(law.chunks, [*law.chunks[1:], None], strict=True):
            flat = unicodedata.normalize("NFKC", chunk.text + (after.text if after else ""))
            for cite in citations(chunk.text, law.title, index, aliases, articles,
                                  after.text if after else ""):
                rows.append(_row(law, chunk.chunk_id, chunk.clause_no or "", flat, cite))
    return rows


def _row(law: Law, chunk_id: str, clause_no: str, text: str, cite: Citation) -> dict[str, Any]:
    at = cite.start if cite.start >= 0 else text.find(cite.surface)
    at = at if at >= 0 else text.find(cite.surface.partition("第")[0])
    context = text[max(0, at - _CONTEXT): at + len(cite.surface) + _CONTEXT] if at >= 0 else ""
    return {"file": law.file, "citing": law.title, "chunk_id": chunk_id, "clause": clause_no,
            "surface": cite.surface, "article": cite.article, "quoted": cite.surface[:1] == "《",
            "resolved": cite.resolution.title, "rule": cite.resolution.rule,
            "confidence": round(cite.resolution.confidence, 3), "context": context}


def score(laws: list[Law], rows: list[dict[str, Any]]) -> dict[str, Any]:
    names = gold_names(laws)
    clauses = {(law.title, spelling) for law in laws for c in law.chunks if c.clause_no
               for spelling in article_spellings(c.clause_no)}
    numbered = {title for title, _ in clauses}
    documents = [r for r in rows if r["quoted"] and r["article"] is None]
    articles = [r for r in rows if r["quoted"] and r["article"] is not None]

    def gold(row: dict[str, Any]) -> set[str]:
        cited = row["surface"].split("》")[0].replace("《", "")  # 最高人民法院《关于…》 too
        return names.get(spelling(cited), set())

    in_folder = [r for r in documents if len(gold(r)) == 1]
    right = [r for r in in_folder if r["resolved"] in gold(r)]
    art_in = [r for r in articles if len(gold(r)) == 1]
    art_right = [r for r in art_in if r["resolved"] in gold(r)
                 and (r["resolved"], r["article"]) in clauses]
    art_absent = [r for r in art_in if (next(iter(gold(r))), r["article"]) not in clauses]
    unnumbered = [r for r in art_absent if next(iter(gold(r))) not in numbered]
    own = [r for r in rows if r["rule"] == "self" and r["article"] is not None]
    return {
        "laws": len(laws), "citations": len(rows), "quoted_documents": len(documents),
        "in_folder": len(in_folder), "gold_ambiguous": sum(len(gold(r)) > 1 for r in documents),
        "resolved_right": len(right), "document_recall": _share(len(right), len(in_folder)),
        "article_refs_in_folder": len(art_in), "article_right": len(art_right),
        "article_recall": _share(len(art_right), len(art_in)),
        "article_absent_in_target": len(art_absent), "target_unnumbered": len(unnumbered),
        "self_article_refs": len(own),
        "self_article_found": sum((r["citing"], r["article"]) in clauses for r in own),
        "rules": dict(Counter(r["rule"] for r in documents).most_common()),
        "unquoted_article_refs": sum(r["rule"] == "unquoted" and r["article"] is not None
                                     for r in rows),
        "unquoted_documents": sum(r["rule"] == "unquoted" and r["article"] is None
                                  for r in rows),
        "misses": Counter(f"{r['surface']} → {r['resolved'] or r['rule']}"
                          for r in in_folder if r not in right).most_common(15),
        "dangling_examples": {kind: Counter(r["surface"] for r in documents
                                            if r["rule"] == f"dangling:{kind}").most_common(6)
                              for kind in DANGLING},
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def judged_sample(rows: list[dict[str, Any]], size: int, seed: int, path: Path
                  ) -> list[dict[str, Any]]:
    """A seeded random sample of resolutions, with the judgements already written for them:
    `size` resolutions to a document by name (《…》, short names, abbreviations, amendments),
    `size` // 2 bare article numbers read as the citing text's own (第五条, 本法第五条: nine in
    ten citations, so a sample of all would be mostly those) and `size` // 2 laws named without
    《》 or article (依照国家赔偿法的规定). Rows judged before that a run still finds are kept;
    the rest of a stratum is drawn at random from the rows not judged yet."""
    def document(r: dict[str, Any]) -> bool:
        return r["rule"] == "unquoted" and r["article"] is None

    named = [r for r in rows if r["resolved"] is not None and not document(r)
             and not (r["rule"] == "self" and not r["quoted"])]
    bare = [r for r in rows if r["rule"] == "self" and not r["quoted"]]
    old = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            old[(row["stratum"], *_key(row))] = (row.get("judgement", ""), row.get("note", ""))
    pick = random.Random(seed)
    strata: list[tuple[str, dict[str, Any]]] = []
    for stratum, population, want in (("named", named, size), ("bare", bare, size // 2),
                                      ("document", [r for r in rows if document(r)],
                                       size // 2)):
        kept = [r for r in population if (stratum, *_key(r)) in old][:want]
        rest = [r for r in population if (stratum, *_key(r)) not in old]
        strata += [(stratum, r) for r in kept + pick.sample(rest, min(want - len(kept),
                                                                      len(rest)))]
    out = []
    for i, (stratum, r) in enumerate(strata, start=1):
        judgement, note = old.get((stratum, *_key(r)), ("", ""))
        out.append({"n": i, "stratum": stratum, "citing": r["citing"], "clause": r["clause"],
                    "surface": r["surface"], "resolved": r["resolved"], "rule": r["rule"],
                    "context": r["context"], "judgement": judgement, "note": note})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out),
                    encoding="utf-8")
    return out


def _key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return row["citing"], row["clause"], row["surface"], row["resolved"]


def report(result: dict[str, Any], sample: list[dict[str, Any]]) -> str:
    judged = {stratum: [r for r in sample if r["stratum"] == stratum
                        and r["judgement"] in ("ok", "wrong")]
              for stratum in ("named", "bare", "document")}
    ok = {stratum: sum(r["judgement"] == "ok" for r in rows) for stratum, rows in judged.items()}
    dangling = {k.split(":")[1]: v for k, v in result["rules"].items() if k.startswith("dangling")}
    present = result["article_refs_in_folder"] - result["article_absent_in_target"]
    lines = [
        "## Citations (bench/citations.py)", "",
        f"{result['laws']} laws of ../shared/realworld/laws parsed and chunked by kbflow, "
        f"{result['citations']} citations found ({result['quoted_documents']} 《…》 document "
        "citations). Gold: the cited name spells a file's title or LawRefBook file name "
        "(without 中华人民共和国 and dates); see the module docstring.", "",
        "| measure | value |", "|---|---|",
        f"| 《…》 citations whose target is in the folder | {result['in_folder']} |",
        f"| resolved to the right document | {result['resolved_right']} "
        f"(**{result['document_recall']:.1%}**) |",
        f"| article references (《X》第N条) to a law in the folder | "
        f"{result['article_refs_in_folder']} |",
        f"| resolved to the right clause | {result['article_right']} "
        f"(**{result['article_recall']:.1%}**) |",
        f"| … of these, the cited article number is absent from the target's text | "
        f"{result['article_absent_in_target']} ({result['target_unnumbered']} in targets "
        "numbering no 第N条 at all: amendments itemised 一、二、…) |",
        f"| right clause, of the references whose article the target has | "
        f"{result['article_right']} / {present} "
        f"(**{_share(result['article_right'], present):.1%}**) |",
        f"| self article references (本法第N条, 第N条) found as a clause of the citing law | "
        f"{result['self_article_found']} / {result['self_article_refs']} |",
        f"| unquoted short names before an article (依照刑法第N条) resolved | "
        f"{result['unquoted_article_refs']} |",
        f"| precision of resolutions by name (《…》, short names, abbreviations), hand-checked "
        f"random sample | {ok['named']} / {len(judged['named'])} "
        f"(**{_share(ok['named'], len(judged['named'])):.1%}**) |",
        f"| precision of bare article numbers read as the text's own, hand-checked random "
        f"sample | {ok['bare']} / {len(judged['bare'])} "
        f"(**{_share(ok['bare'], len(judged['bare'])):.1%}**) |",
        f"| laws named without 《》 or article (依照国家赔偿法的规定) resolved to a document | "
        f"{result['unquoted_documents']} |",
        f"| precision of those, hand-checked random sample | {ok['document']} / "
        f"{len(judged['document'])} (**{_share(ok['document'], len(judged['document'])):.1%}**) "
        "|", "",
        "Document citations by resolution rule: "
        + ", ".join(f"{k} {v}" for k, v in result["rules"].items() if ":" not in k) + ".",
        "Dangling by kind: " + ", ".join(f"{k} {v}" for k, v in dangling.items()) + ".", "",
    ]
    for kind, examples in result["dangling_examples"].items():
        if examples:
            lines.append(f"- {kind}: " + ", ".join(f"{s} ×{n}" for s, n in examples))
    if result["misses"]:
        lines += ["", "Misses (gold in the folder, resolved otherwise): "
                  + "; ".join(f"{m} ×{n}" for m, n in result["misses"])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--laws", type=Path, default=LAWS)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--judged", type=Path, default=JUDGED)
    parser.add_argument("--no-results", action="store_true", help="do not write RESULTS.md")
    args = parser.parse_args()
    laws = load(args.laws, args.cache)
    rows = resolve_all(laws)
    result = score(laws, rows)
    sample = judged_sample(rows, args.sample, args.seed, args.judged)
    text = report(result, sample)
    print(text)
    if not args.no_results:
        write_section(RESULTS, "## Citations (bench/citations.py)", text)


if __name__ == "__main__":
    main()
