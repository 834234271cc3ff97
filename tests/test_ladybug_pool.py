"""The embedded graph's buffer pool is sized to its file, not to the machine's memory: LadybugDB's
default (80 % of the memory) is paid on every open and close, and the webhook worker opens the
file for every edit, `kbflow serve` for every search that reads the graph."""

from __future__ import annotations

import os
from pathlib import Path

from ingest.stores.ladybug_graph import buffer_pool

GIB = 1 << 30


def test_the_pool_holds_the_file_twice_over_and_never_exceeds_the_default(tmp_path: Path) -> None:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    path = tmp_path / "g1.lbug"
    assert buffer_pool(path) == min(GIB, int(0.8 * memory))  # a new file
    with open(path, "wb") as f:  # sparse: the size is what counts
        f.truncate(3 * GIB)
    with open(path.with_name("g1.lbug.wal"), "wb") as f:
        f.truncate(GIB // 2)
    assert buffer_pool(path) == min(7 * GIB, int(0.8 * memory))
    with open(path, "wb") as f:
        f.truncate(100 * GIB)
    assert buffer_pool(path) == int(0.8 * memory)

