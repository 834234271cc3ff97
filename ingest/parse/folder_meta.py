"""Folder-level metadata: a `_meta.yaml` in a folder declares tenant, ACL, authority and
effective dates for every file below it (companies set permissions per folder, not per file).

Which folders apply depends on where the file lies, never on the folder a run was given: as
with .editorconfig, the folders from the file's own up to the nearest of a configured document
root, a folder whose `_meta.yaml` says `root: true`, or the highest folder others cannot write
into (a `_meta.yaml` in /tmp or a shared drop folder is nobody's declaration). So a first run
given `docs/sub-a/east/` applies `docs/sub-a/_meta.yaml` as a run given `docs/` does.

The nearest folder wins per key, and a file's own sidecar wins over every folder. A nested
folder may narrow its parent folder's tenant to a child tenant, never name another one (a
subfolder must not move a subsidiary's files into its group's scope). The file is read with a
sidecar's care (a regular file, no link, size cap, YAML without objects or numbers, known keys
only) and is never a document itself.
"""

from __future__ import annotations

import functools
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import StrictBool

from ingest.parse.metadata import MAX_SIDECAR_BYTES, DeclaredMeta, FolderDefaults, validated
from ingest.parse.names import parse_yaml
from ingest.parse.opening import read_checked

if TYPE_CHECKING:
    from ingest.scopes import TenantTree

FOLDER_META_NAME = "_meta.yaml"


class FolderMeta(DeclaredMeta):
    """A folder file: what it declares for the files below it, and whether the folders above
    it are left out (`root: true`, the top of a company's tree)."""

    root: StrictBool = False


def read_folder_meta(folder: Path) -> FolderMeta | None:
    """The folder's own `_meta.yaml`, None when it has none; ValueError with the reason when
    it is unreadable or declares something it may not. A file is read and checked once while
    it stays the same (same inode, size and time), not once per file below it."""
    path = folder / FOLDER_META_NAME
    try:
        stat = path.lstat()
    except FileNotFoundError:
        return None
    outcome = _checked(path, (stat.st_ino, stat.st_size, stat.st_mtime_ns))
    if isinstance(outcome, str):
        raise ValueError(outcome)
    return outcome


@functools.lru_cache(maxsize=1024)
def _checked(path: Path, _stamp: tuple[int, int, int]) -> FolderMeta | str:
    """The file's declarations, or why it cannot be used (kept too: a bad file is refused for
    every file below it without being parsed again)."""
    try:
        raw = read_checked(path, [path.parent.resolve()], MAX_SIDECAR_BYTES,
                           what="folder metadata")
        data = parse_yaml(raw, str(path))
        if data is None:
            raise ValueError(f"{path} is empty: declare at least one of "
                             f"{', '.join(FolderMeta.model_fields)}, or remove it")
        return validated(FolderMeta, data, str(path))
    except ValueError as exc:
        return str(exc)


def metadata_top(folder: Path) -> Path:
    """The highest folder whose `_meta.yaml` applies to the files of `folder` (a real path)
    when no document root holds it: walking up, the first folder saying `root: true`, else the
    last folder before one that everyone may write into or the filesystem root."""
    top = folder
    for place in (folder, *folder.parents):
        if place.parent == place or _open_to_all(place):
            break
        top = place
        declared = read_folder_meta(place)
        if declared is not None and declared.root:
            break
    return top


def _open_to_all(folder: Path) -> bool:
    try:
        return bool(folder.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return True


def folder_defaults(path: Path, top: Path, scopes: TenantTree | None = None) -> FolderDefaults:
    """What the folders from `top` (the document root holding `path`, else metadata_top's)
    down to `path`'s own real folder declare for `path`. A file outside `top` gets
    nothing from any folder."""
    folder, top = path.resolve().parent, top.resolve()
    if not folder.is_relative_to(top):
        return FolderDefaults()
    parts = folder.relative_to(top).parts
    chain = [top.joinpath(*parts[:n]) for n in range(len(parts) + 1)]
    merged: dict[str, object] = {}
    tenant_from = ""
    for place in chain:
        declared = read_folder_meta(place)
        if declared is None:
            continue
        given = declared.model_dump(exclude_none=True, exclude={"root"})
        tenant = given.get("tenant_id")
        outer = merged.get("tenant_id")
        if isinstance(tenant, str) and isinstance(outer, str) and not (
                scopes.within(tenant, outer) if scopes else tenant == outer):
            raise ValueError(
                f"{place / FOLDER_META_NAME}: tenant_id {tenant!r} is not {tenant_from}'s "
                f"tenant {outer!r} nor a child of it: a folder may narrow its parent folder's "
                "tenant, never move to its parent or a sibling")
        if tenant is not None:
            tenant_from = str(place / FOLDER_META_NAME)
        merged |= given
    if not merged:
        return FolderDefaults()
    joined = validated(DeclaredMeta, merged, f"the _meta.yaml files above {path.name}")
    return FolderDefaults(declared=joined, tenant_from=tenant_from)
