"""Vectors in Milvus: a server from an http(s) URI, or Milvus Lite from a file path.

The same pymilvus code serves both; the reads a writer relies on are strong (see `_visible`).
The collection records the embedding model and dimension it was built with; opening it with
another model is refused instead of mixing vector spaces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pymilvus import DataType, MilvusClient, MilvusException

from ingest.embed import Embedding
from ingest.models import OPEN_END, OPEN_START, Chunk, Hit, SearchFilter, day_number
from ingest.stores.protocols import EmbeddingMismatchError

_BATCH = 500
_KEYS_PER_QUERY = 200  # version keys per stale-row look-up
_MODEL_PROPERTY = "kbflow.embedding_model"
# pymilvus pings every 10 s even on an idle connection, while Milvus Lite's Python gRPC server
# keeps gRPC's default policy (one ping per 5 min without data, 2 strikes): ~30 s after the last
# call it closes the connection with GOAWAY "too_many_pings", and the next client on that URI
# can fail to reconnect. pymilvus health-checks an idle connection before reusing it, so idle
# pings add nothing; pings during a call, at a slower pace, still detect a dead server.
_GRPC_OPTIONS = {"grpc.keepalive_permit_without_calls": 0, "grpc.keepalive_time_ms": 60_000}


# The escapes Milvus' expression parser knows; it takes every other character, control
# characters included, as it stands inside a literal (checked on Milvus Lite and the server).
_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def acl_key(groups: Sequence[str]) -> str:
    """A row's groups as one string, `|hex|hex|`, that `like "%|hex|%"` searches. Milvus Lite
    has no index for ARRAY fields, and `array_contains_any` cost 6.9 s a query at 100,000 rows
    against 0.26 s for this (bench/RESULTS.md "Scale"). Hex leaves no character that `like`
    reads as a wildcard (`%`, `_`) or that ends a literal, so a group name cannot widen the
    match."""
    return "|" + "|".join(group.encode().hex() for group in groups) + "|"


def _groups_filter(groups: Sequence[str]) -> str:
    return "(" + " or ".join(f'acl_key like "%|{g.encode().hex()}|%"' for g in groups) + ")"


def _quoted(values: Sequence[str]) -> str:
    """A filter-expression list of string literals. A raw line break in a tenant or group name
    would end the literal and break the expression (or change it), so every character the
    parser treats specially is escaped."""
    return "[" + ", ".join('"' + v.translate(_ESCAPES) + '"' for v in values) + "]"


class MilvusVectorStore:
    def __init__(self, uri: str, dimension: int, model: str, generation: str = "g1",
                 collection: str = "kbflow_chunks") -> None:
        self._client = MilvusClient(uri, grpc_options=_GRPC_OPTIONS)
        self._written = False  # rows upserted since the last flush
        self._alias = collection
        self._name = f"{collection}_{generation}"
        if not self._client.has_collection(self._name):
            self._create(dimension)
            self._client.alter_collection_properties(
                self._name, properties={_MODEL_PROPERTY: model}
            )
        self._client.load_collection(self._name)  # a reopened Milvus Lite file comes back unloaded
        recorded, fields = self._recorded_model()
        self._has_acl_key = "acl_key" in fields
        # Milvus Lite 3 (pure Python) has no index for ARRAY fields: it filters groups by
        # `acl_key`. Milvus proper evaluates `array_contains_any` natively, and before 2.4 it
        # reads only prefix patterns in `like`. A Lite collection built before `acl_key`
        # existed keeps the array filter until a full rebuild creates the next generation.
        self._lite = self._client.get_server_version().startswith("milvus_lite")
        self._groups_by_key = self._lite and self._has_acl_key
        if recorded != (model, dimension):
            raise EmbeddingMismatchError(
                f"collection {self._name} holds {recorded[0]} vectors (dim {recorded[1]}), "
                f"not {model} (dim {dimension}); run a full rebuild for a new model"
            )

    def _create(self, dimension: int) -> None:
        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("chunk_id", DataType.VARCHAR, max_length=64, is_primary=True)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
        schema.add_field("version_key", DataType.VARCHAR, max_length=512)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=256)
        schema.add_field("tenant_id", DataType.VARCHAR, max_length=128)
        schema.add_field("acl", DataType.ARRAY, element_type=DataType.VARCHAR,
                         max_capacity=64, max_length=128)
        schema.add_field("acl_key", DataType.VARCHAR, max_length=65535)
        schema.add_field("eff_from", DataType.INT64)
        schema.add_field("eff_to", DataType.INT64)
        schema.add_field("coverage", DataType.FLOAT)
        schema.add_field("kind", DataType.VARCHAR, max_length=16)
        schema.add_field("text", DataType.VARCHAR, max_length=65535)
        index = self._client.prepare_index_params()
        index.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
        self._client.create_collection(self._name, schema=schema, index_params=index)


    def _recorded_model(self) -> tuple[tuple[str, int], set[str]]:
        """(model, dimension) the collection was built with, and its field names."""
        described = self._client.describe_collection(self._name)
        dim = next(f["params"]["dim"] for f in described["fields"] if f["name"] == "vector")
        model = described.get("properties", {}).get(_MODEL_PROPERTY, "")
        return (model, int(dim)), {f["name"] for f in described["fields"]}

    def close(self) -> None:
        """On Milvus Lite, flush what this instance wrote first: until sealed, new rows sit in
        growing segments that every search scans unindexed (at 10,000 rows Lite took 1 s a
        query before a flush and 0.1 s after; bench/scale.py). Milvus proper seals and indexes
        segments by itself, and a flush there waits 2.5 s for nothing a reader needs."""
        if self._written and self._lite:
            self._client.flush(self._name)
        self._written = False
        self._client.close()

    def activate(self) -> None:
        """Point the alias consumers query at this generation's collection."""
        try:
            self._client.alter_alias(self._name, self._alias)
        except MilvusException:
            self._client.create_alias(self._name, self._alias)

    def drop(self) -> None:
        self._client.drop_collection(self._name)

    def upsert(self, chunks: Sequence[Chunk], vectors: Mapping[str, Embedding]) -> None:
        rows = [
            {
                "chunk_id": c.chunk_id, "vector": vectors[c.chunk_id].values,
                "version_key": c.version_key, "doc_id": c.doc_id, "tenant_id": c.tenant_id,
                "acl": c.acl, **({"acl_key": acl_key(c.acl)} if self._has_acl_key else {}),
                "eff_from": day_number(c.effective_from, OPEN_START),
                "eff_to": day_number(c.effective_to, OPEN_END),
                "coverage": vectors[c.chunk_id].coverage, "kind": c.kind, "text": c.text,
            }
            for c in chunks
        ]
        for start in range(0, len(rows), _BATCH):
            self._client.upsert(self._name, rows[start : start + _BATCH])
        self._written = self._written or bool(rows)
        self._visible(bool(rows))

    def delete(self, chunk_ids: Sequence[str]) -> None:
        ids = list(chunk_ids)
        for start in range(0, len(ids), _BATCH):
            self._client.delete(self._name, ids=ids[start : start + _BATCH])
        self._visible(bool(ids))

    def _visible(self, wrote: bool) -> None:
        """Return once every reader sees the writes, as the state machine's MILVUS_READY says.
        Milvus Lite applies a write before answering it. Milvus proper answers searches at a
        bounded staleness (up to 5 s) unless a read asks to be strong, which waits for the
        server's time tick: one strong read here lets every later search keep the fast
        default (a strong search took 200 ms against 8 ms at 100,000 rows)."""
        if wrote and not self._lite:
            self._client.query(self._name, filter='chunk_id == ""', output_fields=["chunk_id"],
                               limit=1, consistency_level="Strong")

    def search(self, vector: Sequence[float], flt: SearchFilter, k: int,
               min_coverage: float) -> list[Hit]:
        if not flt.groups:
            return []
        day = day_number(flt.as_of, OPEN_END)
        hidden = f" and version_key not in {_quoted(flt.hidden_keys)}" if flt.hidden_keys else ""
        groups = (_groups_filter(flt.groups) if self._groups_by_key
                  else f"array_contains_any(acl, {_quoted(flt.groups)})")
        expr = (
            f"tenant_id in {_quoted(flt.tenants)} and {groups}"
            f" and eff_from <= {day} and eff_to >= {day}"
            f" and coverage >= {min_coverage}{hidden}"
        )
        try:
            result = self._client.search(
                self._name, data=[list(vector)], limit=k, filter=expr,
                output_fields=["chunk_id"], search_params={"metric_type": "COSINE"},
            )
        except MilvusException as exc:  # its message quotes the whole filter
            raise RuntimeError(f"vector search failed (Milvus error code {exc.code})") from None
        return [Hit(chunk_id=h["entity"]["chunk_id"], score=h["distance"]) for h in result[0]]

    def chunk_ids(self, version_key: str) -> set[str]:
        rows = self._client.query(
            self._name, filter=f"version_key == {_quoted([version_key])[1:-1]}",
            output_fields=["chunk_id"], consistency_level="Strong",
        )
        return {r["chunk_id"] for r in rows}

    def chunk_ids_of(self, version_keys: Sequence[str]) -> dict[str, set[str]]:
        """`chunk_ids` of many versions in one query per _KEYS_PER_QUERY keys: a writer's
        stale-row look-up costs a few round trips per group, not one scan per version."""
        found: dict[str, set[str]] = {key: set() for key in version_keys}
        keys = list(found)
        for start in range(0, len(keys), _KEYS_PER_QUERY):
            rows = self._client.query(
                self._name,
                filter=f"version_key in {_quoted(keys[start : start + _KEYS_PER_QUERY])}",
                output_fields=["chunk_id", "version_key"], consistency_level="Strong",
            )
            for r in rows:
                found[r["version_key"]].add(r["chunk_id"])
        return found

    def count(self) -> int:
        rows = self._client.query(self._name, filter="", output_fields=["count(*)"],
                                  consistency_level="Strong")
        return int(rows[0]["count(*)"])
