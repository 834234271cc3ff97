"""The three store roles. Each has an embedded default and a production engine.

A store instance is bound to one generation: its own physical collection, index, tables or graph
file. `activate()` points the role's serving alias at that generation (one atomic switch per
engine); `drop()` deletes the generation's physical data.

Query contract (every implementation, and any consumer reading the stores directly): filter by
`version_key NOT IN <hidden keys from the manifest>`, tenant, ACL groups and effective dates
inside the store's own query. The hidden keys are the versions not READY (in flight, failed,
deleted and not yet cleaned), so a half-written or deleted version is never visible, whatever
its rows in a store, and the filter stays small however many versions are published. Hits are
then read back from the manifest's chunk records, which hold the last published set: a new
version begun between the two reads has none yet and is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from ingest.embed import Embedding
from ingest.models import Chunk, GraphNode, GraphPath, Hit, SearchFilter, Triple
from ingest.stores.graph_paths import Direction


class EmbeddingMismatchError(RuntimeError):
    """The vectors were written with another embedding model or dimension."""


@runtime_checkable
class VectorStore(Protocol):
    def upsert(self, chunks: Sequence[Chunk], vectors: Mapping[str, Embedding]) -> None: ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def search(self, vector: Sequence[float], flt: SearchFilter, k: int,
               min_coverage: float) -> list[Hit]: ...

    def chunk_ids(self, version_key: str) -> set[str]: ...

    def chunk_ids_of(self, version_keys: Sequence[str]) -> dict[str, set[str]]:
        """`chunk_ids` of many versions at once (every key present, empty when none)."""
        ...

    def count(self) -> int: ...

    def activate(self) -> None: ...

    def drop(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class LexicalStore(Protocol):
    def upsert(self, chunks: Sequence[Chunk]) -> None: ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def search(self, query: str, flt: SearchFilter, k: int) -> list[Hit]: ...

    def chunk_ids(self, version_key: str) -> set[str]: ...

    def count(self) -> int: ...

    def vocabulary(self) -> dict[str, int]:
        """Indexed jieba term -> number of chunks holding it (typo correction's dictionary)."""
        ...

    def term_counts(self, terms: Sequence[str], flt: SearchFilter) -> dict[str, int]:
        """Per term, the chunks holding it that `flt` lets through: the vocabulary as one
        reader sees it (a typo is corrected only to a term the reader can find)."""
        ...

    def activate(self) -> None: ...

    def drop(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class GraphStore(Protocol):
    def upsert(self, chunks: Sequence[Chunk], triples: Sequence[Triple],
               titles: Mapping[str, str] | None = None) -> None:
        """Document and chunk nodes for `chunks` (documents titled by `titles`, version key →
        title, when given), and the triples they are the source of."""
        ...

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        """Chunk nodes and every triple whose source is one of them."""
        ...

    def triples(self, version_key: str) -> list[Triple]: ...

    def relations(self, predicates: Sequence[str]) -> list[Triple]:
        """Every relation of these predicates, of any version (citations to re-resolve when the
        corpus's titles change: graph/relink.py)."""
        ...

    def paths(self, start: Sequence[str], flt: SearchFilter, *,
              predicates: Sequence[str] | None = None, hops: int = 2,
              direction: Direction = "both", max_nodes: int = 200,
              max_paths: int = 100) -> list[GraphPath]:
        """Simple paths of 1..hops relations from the entities named `start`, shortest first,
        over relations of `predicates` (all when None) that `flt` lets the reader see (each
        relation is as visible as its source chunk, checked inside the store's query). At most
        `max_nodes` entities are reached and `max_paths` paths returned, whatever the degree."""
        ...

    def clause_chunks(self, clauses: Sequence[tuple[str, str]],
                      flt: SearchFilter) -> dict[tuple[str, str], list[str]]:
        """The visible (non-parent) chunks of each (document title, clause number): where a
        clause entity such as 《差旅费管理办法》第十条 is written down."""
        ...

    def entities(self, tenants: Sequence[str],
                 flt: SearchFilter | None = None) -> list[GraphNode]:
        """Entities with at least one relation of these tenants (a reader's own and its
        ancestors'), and one `flt` lets the reader see when given: names for linking a query
        (a reader's vocabulary never names what only a restricted document states)."""
        ...

    def chunk_ids(self, version_key: str) -> set[str]: ...

    def count(self) -> int: ...

    def reading(self) -> AbstractContextManager[object]:
        """A block whose reads share one connection: an embedded file is otherwise opened and
        closed per read (SharedGraph); a store that stays connected returns a no-op."""
        ...

    def activate(self) -> None: ...

    def drop(self) -> None: ...

    def close(self) -> None: ...
