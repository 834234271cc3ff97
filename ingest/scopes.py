"""Tenant scopes: a tenant may have a parent (a subsidiary under its group), and a reader of a
tenant sees its own documents and its ancestors', never a sibling's.

The parents come from one file (`KBFLOW_TENANT_PARENTS`: YAML or JSON mapping each child tenant
to its parent, `hc-precision: default`), read and checked once by `TenantTree.load`: a cycle, a
parent that is neither declared as a child itself nor the default tenant (a typing mistake would
otherwise cut a subsidiary off from its group), or a name that cannot be an identifier is
refused with the reason, before anything is read or published. Stores never see the tree: a
search's filter names the reader's tenant and its ancestors (`SearchFilter.tenants`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ingest.config import Settings
from ingest.parse.names import identifier_problem, parse_yaml

MAX_PARENTS_BYTES = 1024 * 1024
# When a parent's and a child's documents conflict: the child's (narrower scope) wins, or the
# parent's (broader: group policy overrides local rules).
Precedence = Literal["narrower", "broader"]


class TenantTreeError(ValueError):
    """The tenant parents file cannot be used; the message says why."""


@dataclass(frozen=True)
class TenantTree:
    parents: Mapping[str, str] = field(default_factory=dict)
    precedence: Precedence = "narrower"

    @classmethod
    def load(cls, settings: Settings) -> TenantTree:
        """The configured tree (empty without KBFLOW_TENANT_PARENTS); TenantTreeError if the
        file is unreadable or its tree is not one."""
        path = settings.tenant_parents
        if path is None:
            return cls(precedence=settings.scope_precedence)
        return cls.of(_read(path), settings.default_tenant, settings.scope_precedence,
                      source=str(path))

    @classmethod
    def of(cls, parents: object, default_tenant: str, precedence: Precedence = "narrower",
           source: str = "tenant parents") -> TenantTree:
        """A checked tree from a child → parent mapping."""
        if not isinstance(parents, dict):
            raise TenantTreeError(f"{source}: expected a mapping of child tenant to parent")
        for child, parent in parents.items():
            for name in (child, parent):
                if not isinstance(name, str):
                    raise TenantTreeError(f"{source}: tenant {name!r} is not a name")
                if problem := identifier_problem(name):
                    raise TenantTreeError(f"{source}: tenant {name!r} {problem}")
            if parent not in parents and parent != default_tenant:
                raise TenantTreeError(
                    f"{source}: {child} → {parent}: parent {parent!r} is not declared (list it "
                    f"as a child of another tenant, or use the default tenant {default_tenant!r})")
        tree = cls(dict(parents), precedence)
        for child in parents:
            tree.visible(child, source)
        return tree

    def visible(self, tenant: str, source: str = "tenant parents") -> list[str]:
        """The tenants a reader of `tenant` sees: itself first, then its parent, grandparent…
        (so a tenant's position in this list is its distance from the reader)."""
        chain = [tenant]
        while (parent := self.parents.get(chain[-1])) is not None:
            if parent in chain:
                loop = " → ".join([*chain[chain.index(parent):], parent])
                raise TenantTreeError(f"{source}: the tenant parents form a cycle: {loop}")
            chain.append(parent)
        return chain

    def ancestors(self, tenant: str) -> list[str]:
        """Its parent, grandparent … (what a SearchFilter adds to the reader's own tenant)."""
        return self.visible(tenant)[1:]

    def within(self, tenant: str, scope: str) -> bool:
        """Whether `tenant` is `scope` or one of its descendants: a narrower or equal scope,
        one a reader of `scope`'s siblings and ancestors never sees."""
        return scope in self.visible(tenant)


def file_stamp(path: Path | None) -> tuple[int, int] | None:
    """A file's modification time and size (None when absent or unset): what a long-lived
    reader compares to notice that a configuration file changed."""
    try:
        stat = path.stat() if path is not None else None
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size) if stat else None


def _read(path: Path) -> object:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TenantTreeError(f"cannot read the tenant parents file {path}: "
                              f"{exc.strerror or exc}") from None
    if len(raw) > MAX_PARENTS_BYTES:
        raise TenantTreeError(f"tenant parents file {path} is over {MAX_PARENTS_BYTES} bytes")
    try:
        return parse_yaml(raw, path.name)
    except ValueError as exc:
        raise TenantTreeError(str(exc)) from None
