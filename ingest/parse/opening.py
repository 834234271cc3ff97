"""Opening a document file once, safely: what is read is what was checked.

A path checked first and read later can change in between (a file swapped for a symlink to a
secret, a folder swapped for a link out of the root). So a file is opened once, without
following a link in its last component, and every check runs on the opened descriptor: it is a
regular file (never a FIFO, which blocks forever, or a device, read until memory runs out), its
real path (what the descriptor refers to now) lies inside the allowed folders and in no hidden
folder, it has a single name (a hard link inside a root may name a file kept elsewhere: its
other name cannot be checked), and its size is within the limit. The bytes are read from that
descriptor, never more than the limit.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1 << 20


class RefusedFile(ValueError):
    """A file that is not read: a link, not a regular file, outside the roots, too large."""


def read_checked(path: Path, allowed: Sequence[Path], max_bytes: int, *,
                 what: str = "file", hidden_below: Sequence[Path] = ()) -> bytes:
    """The bytes of the regular file at `path`, whose real path must lie under one of the
    (real) folders in `allowed` and have no hidden part below them (nor below any folder of
    `hidden_below` holding it, such as the document root above a folder); RefusedFile with the
    reason otherwise."""
    try:
        before = os.lstat(path)
    except OSError as exc:
        raise RefusedFile(f"cannot read the {what}: {exc.strerror or exc}") from None
    _check_kind(before, what)  # a device or FIFO is not even opened (opening one can act)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        reason = "it is a symbolic link" if exc.errno == 40 else (exc.strerror or str(exc))
        raise RefusedFile(f"{what} not read: {reason}") from None
    try:
        opened = os.fstat(fd)
        _check_kind(opened, what)
        if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            raise RefusedFile(f"{what} not read: it was replaced while being opened")
        _check_place(_real_path(fd, path), allowed, [*allowed, *hidden_below], what)
        if opened.st_nlink > 1:
            raise RefusedFile(f"{what} not read: it has {opened.st_nlink} hard links, and a "
                              "file with another name may lie outside the document roots")
        _check_size(opened.st_size, max_bytes, what)
        return _read_at_most(fd, max_bytes, what)
    finally:
        os.close(fd)


def _check_kind(info: os.stat_result, what: str) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise RefusedFile(f"{what} not read: it is a symbolic link")
    if not stat.S_ISREG(info.st_mode):
        raise RefusedFile(f"{what} not read: not a regular file ({_kind(info.st_mode)})")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "a special file"


def _real_path(fd: int, path: Path) -> Path:
    """Where the opened file really is now: the kernel's name for the descriptor."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:  # no /proc: resolve the path (the descriptor's identity was checked)
        return path.resolve()


def _check_place(real: Path, allowed: Sequence[Path], bases: Sequence[Path], what: str) -> None:
    if not any(real.is_relative_to(base) for base in allowed):
        shown = ", ".join(str(b) for b in allowed) or "no allowed folder"
        raise RefusedFile(f"{what} not read: {real} lies outside {shown}")
    top = min((b for b in bases if real.is_relative_to(b)), key=lambda b: len(b.parts))
    if any(part.startswith(".") for part in real.relative_to(top).parts):
        raise RefusedFile(f"{what} not read: {real} is hidden (a name starting with '.')")


def _check_size(size: int, max_bytes: int, what: str) -> None:
    if size > max_bytes:
        raise RefusedFile(f"{what} is {size / 1024 / 1024:.1f} MB, over the "
                          f"{max_bytes / 1024 / 1024:g} MB limit (the max_file_mb setting)")


def _read_at_most(fd: int, max_bytes: int, what: str) -> bytes:
    """The file's bytes; a file that grows past the limit while read is refused all the same."""
    parts, total = [], 0
    while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
        parts.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            _check_size(total, max_bytes, what)
    return b"".join(parts)
