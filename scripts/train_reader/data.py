"""The reader's training pairs, from public data only (licences in the model card).

Groups of one positive and a few negatives, each negative with a weight (1: truly not an answer;
lower: probably not, but near):
- STARD's public split (MIT), minus a fixed seeded 20 % held out for evaluation (`split_stard`):
  the question and each gold article; negatives mined by BM25 over every article of
  shared/realworld/laws, from OTHER laws than the question's gold files (an article of another
  law answering it too is dropped when it holds a gold phrase) at weight 1, and articles of the
  gold laws at least NEIGHBOUR articles away from every gold one at a softer weight (STARD's
  lawyers marked some same-law articles and not their neighbours: same-law is partly relevant).
- LawRefBook article statements (laws outside copyright in China), from law files holding no
  gold article of a held-out question: the query keeps the content words of one sentence of an
  article; the positive is the article; negatives are other laws' articles BM25 finds for it and
  the same article with that sentence removed (the topic is there, the fact is not: what the
  verdict must tell apart).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import jieba

from bench.realworld import Article, ArticleBM25, load_articles, normalise
from ingest.rerank.window import bigrams, pieces

HELDOUT_SHARE = 0.2
NEIGHBOUR = 3  # same-law articles closer than this to a gold one are left out of negatives
SAME_LAW_WEIGHT = 0.3
MINED = 60  # BM25 candidates looked at per query
TITLE = re.compile(r"^#\s*(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Passage:
    prefix: str  # the law's title: the contextual prefix a chunk carries
    text: str


@dataclass(frozen=True)
class Group:
    """One query, its positive (first) and negatives, with the weight of each negative."""

    source: str
    query: str
    passages: tuple[Passage, ...]
    weights: tuple[float, ...]  # per negative


def split_stard(rows: Sequence[dict[str, object]], seed: int) -> tuple[list[int], list[int]]:
    """STARD ids for training and the fixed held-out 20 %: the ids sorted, shuffled with `seed`."""
    ids = sorted(int(str(r["id"])) for r in rows)
    random.Random(seed).shuffle(ids)
    cut = round(len(ids) * HELDOUT_SHARE)
    return sorted(ids[cut:]), sorted(ids[:cut])


def read_stard(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def law_titles(laws: Path) -> dict[str, str]:
    titles = {}
    for path in sorted(laws.rglob("*.md")):
        found = TITLE.search(path.read_text(encoding="utf-8")[:2000])
        titles[path.relative_to(laws).as_posix()] = found.group(1).strip() if found else path.stem
    return titles


class Corpus:
    """Every article, its law's title, a BM25 index over all of them."""

    def __init__(self, laws: Path, only_files: set[str] | None = None) -> None:
        self.articles = [a for a in load_articles(laws)
                         if only_files is None or a.doc_id in only_files]
        self.titles = law_titles(laws)
        self.position = {a.chunk_id: i for i, a in enumerate(self.articles)}
        self.bm25 = ArticleBM25([a.text for a in self.articles])

    def passage(self, article: Article) -> Passage:
        return Passage(self.titles.get(article.doc_id, ""), article.text)


def _number(article: Article) -> int:
    return int(article.chunk_id.rsplit("#", 1)[1])


def stard_groups(corpus: Corpus, rows: Sequence[dict[str, object]], size: int,
                 rng: random.Random) -> Iterator[Group]:
    for row in rows:
        golds = [g for g in row["gold"] if isinstance(g, dict)]  # type: ignore[attr-defined]
        phrases = [normalise(str(g["phrase"])) for g in golds]
        gold_files = {str(g["file"]) for g in golds}
        gold_ids = {str(g["corpus_id"]) for g in golds}
        question = str(row["question"])
        other, same = [], []
        for i in corpus.bm25.search(question, MINED):
            a = corpus.articles[i]
            text = normalise(a.text)
            if a.chunk_id in gold_ids or any(p in text for p in phrases):
                continue
            if a.doc_id not in gold_files:
                other.append(a)
            elif all(abs(_number(a) - int(g.rsplit("#", 1)[1])) >= NEIGHBOUR
                     for g in gold_ids if g.startswith(a.doc_id + "#")):
                same.append(a)
        for gold in golds:
            index = corpus.position.get(str(gold["corpus_id"]))
            if index is None or normalise(str(gold["phrase"])) not in normalise(
                    corpus.articles[index].text):
                continue
            hard = other[:2 * size]
            rng.shuffle(hard)
            soft = [(a, SAME_LAW_WEIGHT) for a in same[:1]]
            picked = [(a, 1.0) for a in hard[:size - 1 - len(soft)]] + soft
            if len(picked) < size - 1:
                continue
            yield Group("stard", question,
                        (corpus.passage(corpus.articles[index]),
                         *(corpus.passage(a) for a, _ in picked)),
                        tuple(w for _, w in picked))


def statement_query(sentence: str, rng: random.Random) -> str:
    """The content words of a sentence (two characters or more), most of them, in order."""
    words = [w for w in jieba.lcut(sentence) if len(w) >= 2 and not w.startswith("第")]
    kept = [w for w in words if rng.random() < 0.7] or words
    return " ".join(kept[:10])


def statement_groups(corpus: Corpus, excluded_files: set[str], count: int, size: int,
                     rng: random.Random) -> Iterator[Group]:
    """`count` groups from articles of laws outside `excluded_files`."""
    pool = [a for a in corpus.articles if a.doc_id not in excluded_files and len(a.text) >= 40]
    made = 0
    for article in rng.sample(pool, min(len(pool), count * 3)):
        parts = pieces(article.text)
        choices = [i for i, s in enumerate(parts) if 12 <= len(s) <= 80]
        if len(parts) < 2 or not choices:
            continue
        chosen = rng.choice(choices)
        sentence = re.sub(r"^第\S+条\s*", "", parts[chosen])
        query = statement_query(sentence, rng)
        said = bigrams(sentence)
        rest = "".join(p for i, p in enumerate(parts) if i != chosen)
        if len(query) < 6 or len(rest) < 20:
            continue
        others = [corpus.articles[i] for i in corpus.bm25.search(query, MINED)
                  if corpus.articles[i].doc_id != article.doc_id
                  and len(said & bigrams(corpus.articles[i].text)) < 0.5 * len(said)][:size - 2]
        if len(others) < size - 2:
            continue
        prefix = corpus.titles.get(article.doc_id, "")
        yield Group("statement", query,
                    (Passage(prefix, article.text), Passage(prefix, rest),
                     *(corpus.passage(a) for a in others)),
                    (1.0,) * (size - 1))
        made += 1
        if made >= count:
            return


def build(laws: Path, stard: Path, seed: int, size: int, statements: int,
          limit: int | None = None) -> tuple[list[Group], list[int]]:
    """Training groups (shuffled with `seed`) and the held-out STARD ids."""
    rng = random.Random(seed)
    rows = read_stard(stard)
    _, heldout = split_stard(rows, seed)
    held = set(heldout)
    train_rows = [r for r in rows if int(str(r["id"])) not in held][:limit]
    excluded = {str(g["file"]) for r in rows if int(str(r["id"])) in held
                for g in r["gold"]}  # type: ignore[attr-defined]
    corpus = Corpus(laws)
    groups = list(stard_groups(corpus, train_rows, size, rng))
    groups += list(statement_groups(corpus, excluded, statements, size, rng))
    rng.shuffle(groups)
    return groups, heldout
