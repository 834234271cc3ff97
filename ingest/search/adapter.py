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


@dataclass(frozen=True)
class QueryAdapter:
    model: str  # the embedding model whose query vectors it moves
    down: np.ndarray  # (dimension, rank)
    up: np.ndarray  # (dimension, rank)

    def apply(self, vector: np.ndarray) -> np.ndarray:
        """The moved query vector, unit length (cosine ranking is unchanged in kind)."""
        moved = vector + (vector @ self.down) @ self.up.T
        norm = float(np.linalg.norm(moved))
        return (moved / norm).astype(np.float32) if norm > 0 else vector

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
            with np.load(path, allow_pickle=False) as saved:
                found = cls(str(saved["model"]), np.asarray(saved["down"], np.float32),
                            np.asarray(saved["up"], np.float32))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            log.warning("query adapter %s not used: unreadable (%s)", path, exc)
            return None
        shape_ok = (found.down.ndim == 2 and found.down.shape == found.up.shape
                    and found.down.shape[0] == dimension and found.down.shape[1] <= dimension)
        if found.model != model or not shape_ok or not (
                np.isfinite(found.down).all() and np.isfinite(found.up).all()):
            log.warning("query adapter %s not used: fitted for %s, %s; this index is %s, %d "
                        "dimensions", path, found.model, found.down.shape, model, dimension)
            return None
        return found


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
