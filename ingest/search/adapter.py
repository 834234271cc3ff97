"""A query adapter learned from a knowledge base's own labelled questions.

The dense model was trained on other people's questions. The people who ask a knowledge base
word things their own way (a layperson's "我老公" for a statute's 配偶) and ask about some clauses
far more than others. A few hundred questions with their answers (`kbflow eval` cases) teach a
small correction: the query vector moves by a low-rank linear map, v + (v·down)·upᵀ, fitted so
each question's answering chunks rank above every other chunk of the index (softmax over all
of them). Passages and the index are untouched: the adapter can be fitted, replaced or deleted
without re-embedding anything.

STARD's public questions, 5-fold cross-validated (bench/RESULTS.md): dense Recall@100 over whole
articles 0.795 → 0.876. The gain comes from clauses asked about before: on questions whose gold
articles no training question had, it is about neutral. So it is fitted per index, from that
index's questions, and `kbflow tune` keeps it only when cross-validation says it helps.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

ADAPTER_FILE = "query_adapter.npz"
# Chosen by 5-fold cross-validation on STARD's public questions (dense Recall@100 over whole
# articles): temperature 0.03 of 0.02, 0.03, 0.05 and 0.1 (0.880, 0.881, 0.874, 0.863); rank 128
# or 256 and more epochs changed nothing (0.875, 0.878).
RANK = 64  # the correction's rank: 2 × 512 × 64 numbers, little to overfit a few hundred cases
EPOCHS = 20
BATCH = 64
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-3
TEMPERATURE = 0.03  # bge's cosines of related texts sit within ~0.2: a sharp softmax
# A fitted adapter's numbers are near zero (weight decay): entries this large only overflow or
# swamp the query, whatever file holds them.
MAX_WEIGHT = 1e3
MAX_MODEL_CHARS = 1000  # the model name stored with it


@dataclass(frozen=True)
class QueryAdapter:
    model: str  # the embedding model whose query vectors it moves
    down: np.ndarray  # (dimension, rank)
    up: np.ndarray  # (dimension, rank)

    def apply(self, vector: np.ndarray) -> np.ndarray:
        """The moved query vector, unit length (cosine ranking is unchanged in kind); the
        vector as it was when the map gives no usable direction (zero or not finite)."""
        raw = np.asarray(vector, np.float64)
        moved: np.ndarray = raw + (raw @ self.down) @ self.up.T
        norm = float(np.linalg.norm(moved))
        if not (np.isfinite(norm) and norm > 0):
            log.warning("query adapter not applied: it maps this query to no direction")
            return vector
        return (moved / norm).astype(np.float32)

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, model=np.array(self.model), down=self.down, up=self.up)
        tmp.replace(path)  # a reader never sees half a file

    @classmethod
    def load(cls, path: Path, model: str, dimension: int) -> QueryAdapter | None:
        """The adapter saved for this model and dimension; None (and why, logged) when there is
        none, or the file is not one: a damaged or foreign file never changes a search."""
        if not path.exists():
            return None
        try:
            if problem := _header_problem(path, dimension):
                log.warning("query adapter %s not used: %s", path, problem)
                return None
            with np.load(path, allow_pickle=False) as saved:
                found = cls(str(saved["model"]), np.asarray(saved["down"], np.float32),
                            np.asarray(saved["up"], np.float32))
        except Exception as exc:  # noqa: BLE001 - whatever the file does, search goes on
            log.warning("query adapter %s not used: unreadable (%s: %s)", path,
                        type(exc).__name__, exc)
            return None
        bounded = all(np.isfinite(a).all() and float(np.abs(a).max(initial=0)) <= MAX_WEIGHT
                      for a in (found.down, found.up))
        if found.model != model or found.down.shape != found.up.shape or not bounded:
            log.warning("query adapter %s not used: fitted for %s, %s, or holds numbers no "
                        "fit gives; this index is %s, %d dimensions", path, found.model[:80],
                        found.down.shape, model, dimension)
            return None
        return found


def _header_problem(path: Path, dimension: int) -> str | None:
    """Why the file cannot be an adapter for `dimension`, judged from its arrays' headers
    before any array is read (a declared shape of 10¹² floats would be allocated by the
    read): None when `model` is text and `down` and `up` are float matrices of `dimension`
    rows, at most that many columns."""
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        for name in ("model", "down", "up"):
            if f"{name}.npy" not in names:
                return f"no {name} array"
            with archive.open(f"{name}.npy") as member:
                version = np.lib.format.read_magic(member)
                header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                          else np.lib.format.read_array_header_2_0)
                shape, _, dtype = header(member)
            if name == "model":
                if dtype.kind != "U" or shape != () or dtype.itemsize > 4 * MAX_MODEL_CHARS:
                    return f"model is {dtype} {shape}, not a name"
            elif (dtype.kind != "f" or dtype.fields is not None or len(shape) != 2
                  or shape[0] != dimension or not 0 < shape[1] <= dimension):
                return f"{name} is {dtype} {shape}, not a float {dimension} × rank matrix"
    return None


def fit(model: str, questions: np.ndarray, answers: Sequence[Sequence[int]],
        chunks: np.ndarray, seed: int = 0) -> QueryAdapter:
    """Fit on question vectors (n × d), each question's answering rows of `chunks` (m × d,
    unit vectors), by softmax cross-entropy over every chunk. Deterministic for a seed."""
    import torch  # training only: a search never loads it

    torch.manual_seed(seed)
    dimension = questions.shape[1]
    up = torch.zeros(dimension, RANK, requires_grad=True)  # starts as the identity map
    down = torch.nn.Parameter(torch.randn(dimension, RANK) * 0.01)
    optimizer = torch.optim.Adam([up, down], lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    q_all, c_all = torch.from_numpy(questions), torch.from_numpy(chunks)
    usable = np.array([i for i, a in enumerate(answers) if a])
    rng = np.random.default_rng(seed)
    for _ in range(EPOCHS):
        order = rng.permutation(usable)
        for start in range(0, len(order), BATCH):
            batch = order[start:start + BATCH]
            q = q_all[batch]
            moved = q + (q @ down) @ up.T
            moved = moved / moved.norm(dim=1, keepdim=True)
            log_p = torch.log_softmax(moved @ c_all.T / TEMPERATURE, dim=1)
            loss = -torch.stack([log_p[row, list(answers[i])].mean()
                                 for row, i in enumerate(batch)]).mean()
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
    return QueryAdapter(model, down.detach().numpy().copy(), up.detach().numpy().copy())
