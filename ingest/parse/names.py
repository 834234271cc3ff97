"""Names and YAML that come from outside (sidecars, folder files, the tenant parents file):
identifiers checked before they key stores and filters, and YAML without objects, numbers or
duplicate keys. One owner for both, used by document metadata (ingest.parse.metadata) and by
tenant scopes (ingest.scopes), neither of which imports the other for them."""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable

import yaml

from ingest.parse.roots import has_control_chars

MAX_ID_CHARS = 128  # the vector store keeps tenant and group names up to 128 characters
TENANT_SEPARATOR = ":"  # a doc id of a tenant other than the default is "<tenant>:<doc id>"


def identifier_problem(value: str) -> str | None:
    """Why `value` cannot be a doc id, version or tenant name (None: it can). Identifiers go
    into store filters and keys, and a tenant's name scopes its doc ids ("<tenant>:<doc id>")."""
    if has_control_chars(value):
        return "must not contain control characters or line breaks"
    if not value.strip() or value != value.strip():
        return "must not be empty or start or end with spaces"
    if len(value) > MAX_ID_CHARS:
        return f"must be at most {MAX_ID_CHARS} characters"
    if "@" in value:  # version keys are doc_id@version: one "@" only
        return "must not contain '@'"
    if TENANT_SEPARATOR in value:  # scopes a doc id by its tenant
        return f"must not contain {TENANT_SEPARATOR!r}"
    if has_invisible_chars(value):
        return "must not contain invisible or direction-changing characters"
    return None


def has_invisible_chars(text: str) -> bool:
    """Zero-width and bidirectional controls (Unicode format characters): an id that holds one
    looks like another id on screen while it is a different key."""
    return any(unicodedata.category(c) == "Cf" for c in text)


class PlainLoader(yaml.SafeLoader):
    """YAML without numbers: `version: 1.10` stays "1.10" (a float would make it 1.1) and
    `version: 010` stays "010" (YAML 1.1 reads it as octal 8). Dates stay dates. A key given
    twice in one mapping is refused: YAML keeps the last silently, so `acl: [board]` followed
    by a forgotten `acl: [all-staff]` would publish to everyone."""

    def construct_mapping(self, node: yaml.MappingNode,
                          deep: bool = False) -> dict[Hashable, object]:
        self.flatten_mapping(node)
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable):
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is given twice (only one may hold)",
                        key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)


PlainLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def parse_yaml(raw: bytes, name: str) -> object:
    """Safe YAML (no objects, no numbers, no key twice) from UTF-8 bytes; ValueError naming
    the file."""
    try:
        return yaml.load(raw.decode("utf-8"), Loader=PlainLoader)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name} is not valid YAML: {exc}") from exc
