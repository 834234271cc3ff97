"""A cheaper bge sentence encoder distilled here (issue #43): students that reproduce the int8
bge-small-zh-v1.5's passage vectors of single sentences, so queries still go through bge and
cosines keep their scale. Judged by cost first, then on STARD (bench.late_sentences' probe).

    .venv/bin/python -m bench.sentence_student --build DIR
    .venv/bin/python -m bench.sentence_student --cost DATA_DIR DIR [N]
    .venv/bin/python -m bench.sentence_student --texts DIR laws|formats
    .venv/bin/python -m bench.sentence_student --train DIR KIND MINUTES
    .venv/bin/python -m bench.sentence_student --probe DATA_DIR DIR KIND ...
    .venv/bin/python -m bench.sentence_student --replace DATA_DIR DIR KIND

`--build` (bench/sentence_student_train.py) makes the students from the teacher's own weights
(the fp32 ONNX mapped into a torch BERT, scripts/train_reader/weights.py): `layer1` (the
teacher's first layer only), `layer2` (its first and last), each exported to ONNX and quantised
to int8 as the reader is, and `static` (every vocabulary token's vector: the teacher's CLS of
`[CLS] token [SEP]`; a sentence is the normalised sum of its tokens' rows, no transformer at
run time). `--cost` times each against the shipped int8 teacher on N real law sentences of
DATA_DIR's chunks, batched as OnnxEncoder batches, interleaved, best of three. `--texts`
collects the training sentences (law files that hold no STARD gold article: STARD's gold index
stays unseen; the text of bench/format_corpus files the parsers read) and held-out ones (every
tenth other law file), with the teacher's vectors, in pieces training picks up as they come.
`--train` distils one student (cosine loss, AdamW) for MINUTES, checkpointing, logging the
held-out cosine. `--probe` ranks DATA_DIR's chunks by the students' sentence vectors as
bench.late_sentences does; `--replace` writes one student's sentence vectors into a COPY's
vector cache for `bench.late_sentences --stard-part`.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.late_sentences import best_of_three, embedded_chunks, probe_matrices
from bench.realworld import SHARED
from bench.sentence_student_train import KINDS, build, load, teacher, train
from ingest.config import Settings
from ingest.embed import SENTENCE_DTYPE
from ingest.embed.encoders import OnnxEncoder
from ingest.text import sentences

LAWS = SHARED / "laws"
PICTURES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp"}


def student_encoder(directory: Path, kind: str) -> Callable[[Sequence[str]], np.ndarray]:
    """A student's passage vectors of texts, the way OnnxEncoder computes the teacher's."""
    encoder = teacher()
    if (directory / f"{kind}.npy").exists():
        table = np.load(directory / f"{kind}.npy")
        return lambda texts: static_vectors(encoder, table, texts)
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.log_severity_level = 3
    encoder._session = ort.InferenceSession(str(directory / f"{kind}-int8.onnx"), options,
                                            providers=["CPUExecutionProvider"])
    return lambda texts: encoder.encode(list(texts))


def static_vectors(encoder: OnnxEncoder, table: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    """Each text's tokens' rows summed, normalised (the same tokenisation as the teacher's)."""
    parts = []
    for start in range(0, len(texts), 512):  # a batch's token rows stay a few MB
        encodings = encoder._tokenizer.encode_batch(list(texts[start:start + 512]))
        ids = np.concatenate([e.ids for e in encodings])
        starts = np.r_[0, np.cumsum([len(e.ids) for e in encodings])[:-1]]
        parts.append(np.add.reduceat(table[ids], starts, axis=0))
    sums = np.concatenate(parts) if parts else np.zeros((0, table.shape[1]), np.float32)
    out: np.ndarray = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    return out


def law_sentences(data_dir: Path, n: int, seed: int = 0) -> list[str]:
    said = sorted({s for c in embedded_chunks(data_dir) for s in sentences(c.text)})
    return random.Random(seed).sample(said, min(n, len(said)))


def cost(data_dir: Path, directory: Path, n: int) -> list[str]:
    """Each student against the teacher on the same sentences: interleaved, best of three."""
    texts = law_sentences(data_dir, n)
    bge = teacher()
    runs: dict[str, Callable[[], object]] = {"teacher (bge int8)": lambda: bge.encode(texts)}
    for kind in KINDS:
        encode = student_encoder(directory, kind)
        runs[kind] = lambda encode=encode: encode(texts)  # type: ignore[misc]
    best = best_of_three(runs)
    base = best["teacher (bge int8)"]
    chars = sum(map(len, texts)) / len(texts)
    lines = [f"{len(texts)} law sentences ({chars:.0f} characters on average) of `{data_dir}`, "
             f"best of 3 interleaved, load {load()}", "", "| encoder | s | × teacher |",
             "|---|---:|---:|"]
    lines += [f"| {name} | {s:.2f} | {s / base:.3f} |" for name, s in best.items()]
    return [*lines, ""]


def texts(directory: Path, part: str, n_train: int = 40_000, n_held: int = 2_000) -> None:
    """Training and held-out sentences with the teacher's passage vectors, saved in DIR:
    `laws` (training and held-out law sentences) or `formats` (more training sentences)."""
    if part == "formats":
        encode_texts(directory, "train-formats", format_sentences())
        return
    questions = SHARED / "stard_public.jsonl"
    gold = {g["file"] for line in questions.read_text(encoding="utf-8").splitlines()
            if line.strip() for g in json.loads(line)["gold"]}
    laws = sorted(str(p.relative_to(LAWS)) for p in LAWS.rglob("*.md"))
    rest = [f for f in laws if f not in gold]
    held_files = set(rest[::10])
    train = law_lines([f for f in rest if f not in held_files])
    rng = random.Random(0)
    held = rng.sample(sorted(set(law_lines(sorted(held_files))) - set(train)), n_held)
    train = rng.sample(train, min(n_train, len(train)))
    print(f"{len(laws)} law files, {len(gold)} gold (unseen), {len(held_files)} held out; "
          f"{len(train)} training sentences, {len(held)} held-out", flush=True)
    encode_texts(directory, "held", held)
    encode_texts(directory, "train-laws", train)


def encode_texts(directory: Path, name: str, said: list[str]) -> None:
    """The teacher's vectors of `said`, saved 2,000 at a time (`name-NNN.npy` / `.json`), so
    training can start on the pieces already there."""
    bge = teacher()
    started = time.perf_counter()
    for piece, i in enumerate(range(0, len(said), 2000)):
        if (directory / f"{name}-{piece:03d}.npy").exists():
            continue
        np.save(directory / f"{name}-{piece:03d}.npy", bge.encode(said[i:i + 2000]))
        (directory / f"{name}-{piece:03d}.json").write_text(
            json.dumps(said[i:i + 2000], ensure_ascii=False))
        print(f"{name}: {i + 2000} encoded, {time.perf_counter() - started:.0f} s, "
              f"load {load()}", flush=True)


def law_lines(files: Sequence[str]) -> list[str]:
    """The distinct sentences of the laws' text lines (headings and comments left out)."""
    said: dict[str, None] = {}
    for name in files:
        for line in (LAWS / name).read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "<!--")):
                said.update(dict.fromkeys(sentences(line)))
    return list(said)


def format_sentences() -> list[str]:
    """Sentences of the text kbflow's parsers read from bench/format_corpus (pictures, which
    would need OCR, left out: it would take longer than the rest of the recipe)."""
    from ingest.parse import SUPPORTED_SUFFIXES, parse_document, read_meta
    from ingest.parse.result import ParseLimits

    TEXT_ONLY = ParseLimits(max_pictures=0, max_image_frames=0)

    root = Path(__file__).parent / "format_corpus"
    signal.signal(signal.SIGALRM, _too_long)
    said: dict[str, None] = {}
    for path in sorted(root.rglob("*")):
        if (not path.is_file() or path.suffix.lower() not in SUPPORTED_SUFFIXES
                or path.suffix.lower() in PICTURES or "_expected" in path.parts):
            continue
        signal.alarm(30)  # a file that takes longer (a big scan) is left out
        try:
            doc = parse_document(*read_meta(path, root, "default", ["all-staff"]), TEXT_ONLY)
        except Exception as exc:  # noqa: BLE001 - a file the parsers refuse adds no sentences
            print(f"{path.name}: {type(exc).__name__}", flush=True)
            continue
        finally:
            signal.alarm(0)
        print(f"{path.relative_to(root)}: {len(doc.blocks)} blocks", flush=True)
        for block in doc.blocks:
            said.update(dict.fromkeys(s for s in sentences(block.text) if len(s) < 400))
    return list(said)


def student_sentences(data_dir: Path, directory: Path, kind: str) -> Path:
    """A student's sentence vectors of every embedded chunk of DATA_DIR, saved once
    (`<kind>-sentences.npz`: content hashes, sentence counts, rows)."""
    out = directory / f"{kind}-sentences.npz"
    if not out.exists():
        chunks = embedded_chunks(data_dir)
        parts = [sentences(c.text) for c in chunks]
        said = list(dict.fromkeys(s for p in parts for s in p))
        started = time.perf_counter()
        vectors = dict(zip(said, student_encoder(directory, kind)(said), strict=True))
        print(f"{kind}: {len(said)} sentences of {len(chunks)} chunks in "
              f"{time.perf_counter() - started:.0f} s, load {load()}", flush=True)
        np.savez(out, hashes=np.array([c.content_hash for c in chunks]),
                 counts=np.array([len(p) for p in parts]),
                 rows=np.stack([vectors[s] for p in parts for s in p]).astype(SENTENCE_DTYPE))
    return out


def load_sentences(path: Path) -> tuple[list[str], list[np.ndarray]]:
    saved = np.load(path)
    cuts = np.cumsum(saved["counts"])[:-1]
    return saved["hashes"].tolist(), np.split(saved["rows"].astype(np.float32), cuts)


def probe(data_dir: Path, directory: Path, kinds: Sequence[str]) -> list[str]:
    """bench.late_sentences' probe with each student's sentence vectors."""
    hashes: list[str] = []
    matrices = {}
    for kind in kinds:
        hashes, matrices[kind] = load_sentences(student_sentences(data_dir, directory, kind))
    return probe_matrices(data_dir, hashes, matrices, None)


def replace(data_dir: Path, directory: Path, kind: str) -> None:
    """A COPY's bge sentence vectors replaced by the student's (as late_sentences.replace)."""
    settings = Settings(data_dir=data_dir)
    hashes, matrices = load_sentences(student_sentences(data_dir, directory, kind))
    rows = [(settings.embedding_model, h, m.astype(SENTENCE_DTYPE).tobytes())
            for h, m in zip(hashes, matrices, strict=True)]
    with sqlite3.connect(settings.vector_cache_path) as cache:
        held = cache.execute("SELECT count(*) FROM sentences WHERE model=?",
                             (settings.embedding_model,)).fetchone()[0]
        cache.execute("DELETE FROM sentences WHERE model=?", (settings.embedding_model,))
        cache.executemany("INSERT INTO sentences VALUES (?,?,?)", rows)
    print(f"{len(rows)} chunks' sentence vectors ({held} held) replaced by {kind}'s")


def _too_long(signum: int, frame: object) -> None:
    raise TimeoutError("parse over 30 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, metavar="DIR")
    parser.add_argument("--cost", nargs="+", metavar="ARG")
    parser.add_argument("--texts", nargs=2, metavar=("DIR", "PART"))
    parser.add_argument("--train", nargs=3, metavar=("DIR", "KIND", "MINUTES"))
    parser.add_argument("--probe", nargs="+", metavar="ARG", help="DATA_DIR DIR KIND ...")
    parser.add_argument("--replace", nargs=3, metavar=("DATA_DIR", "DIR", "KIND"))
    args = parser.parse_args()
    if args.probe:
        print("\n".join(probe(Path(args.probe[0]), Path(args.probe[1]), args.probe[2:])))
    if args.replace:
        replace(Path(args.replace[0]), Path(args.replace[1]), args.replace[2])
    if args.train:
        train(Path(args.train[0]), args.train[1], float(args.train[2]))
    if args.texts:
        texts(Path(args.texts[0]), args.texts[1])
    if args.build:
        build(args.build)
    if args.cost:
        n = int(args.cost[2]) if len(args.cost) > 2 else 2000
        print("\n".join(cost(Path(args.cost[0]), Path(args.cost[1]), n)))


if __name__ == "__main__":
    main()
