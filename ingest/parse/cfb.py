"""A minimal compound file (OLE2, [MS-CFB] version 3) writer: some streams at the root, no
storages. A Word or Excel 97 document embedded in a legacy Office file is a storage inside
that file's compound file; copied into a compound file of its own it is a .doc or .xls file
LibreOffice reads. Streams under 4,096 bytes go to the mini stream, as the format requires.
"""

from __future__ import annotations

import struct

SECTOR = 512
MINI = 64
CUTOFF = 4096
MAX_CFB_BYTES = 6 * 1024 * 1024  # what 109 FAT sectors in the header address, with room to spare
_END, _FREE, _FATSECT, _NOSTREAM = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD, 0xFFFFFFFF


def write_cfb(streams: dict[str, bytes]) -> bytes:
    """A compound file holding `streams` (name -> bytes, names under 32 characters) at its
    root; ValueError past MAX_CFB_BYTES."""
    names = sorted(streams, key=lambda n: (len(n), n.upper()))  # the directory's order
    if sum(map(len, streams.values())) > MAX_CFB_BYTES or any(len(n) > 31 for n in names):
        raise ValueError("streams too large or names too long for a compound file")
    mini = bytearray()
    mini_fat: list[int] = []
    big = bytearray()
    starts: dict[str, int] = {}
    chains: list[tuple[int, int]] = []  # (first sector, sector count) of regular-sector chains
    for name in names:
        data = streams[name]
        if not data:
            starts[name] = _END
        elif len(data) < CUTOFF:
            first, count = len(mini) // MINI, -(-len(data) // MINI)
            starts[name] = first
            mini_fat += [*range(first + 1, first + count), _END]
            mini += data.ljust(count * MINI, b"\0")
        else:
            first, count = len(big) // SECTOR, -(-len(data) // SECTOR)
            starts[name] = first
            chains.append((first, count))
            big += data.ljust(count * SECTOR, b"\0")
    sector = len(big) // SECTOR
    mini_start = sector if mini else _END
    mini_sectors = -(-len(mini) // SECTOR)
    chains.append((sector, mini_sectors))
    sector += mini_sectors
    minifat_bytes = b"".join(struct.pack("<I", v) for v in mini_fat)
    minifat_bytes += b"\xff" * (-len(minifat_bytes) % SECTOR)
    minifat_start = sector if minifat_bytes else _END
    chains.append((sector, len(minifat_bytes) // SECTOR))
    sector += len(minifat_bytes) // SECTOR
    directory = _directory(names, streams, starts, mini_start, len(mini))
    dir_start = sector
    chains.append((sector, len(directory) // SECTOR))
    sector += len(directory) // SECTOR
    fat_count = 1
    while (sector + fat_count) > fat_count * (SECTOR // 4):
        fat_count += 1
    fat = [_FREE] * (fat_count * (SECTOR // 4))
    for first, count in chains:
        for i in range(first, first + count):
            fat[i] = i + 1 if i < first + count - 1 else _END
    for i in range(sector, sector + fat_count):
        fat[i] = _FATSECT
    difat = [*range(sector, sector + fat_count)] + [_FREE] * (109 - fat_count)
    header = struct.pack("<8s16sHHHHH6sIIIIIIIII", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
                         b"\0" * 16, 0x3E, 3, 0xFFFE, 9, 6, b"\0" * 6, 0, fat_count, dir_start,
                         0, CUTOFF, minifat_start, len(minifat_bytes) // SECTOR, _END, 0)
    header += struct.pack("<109I", *difat)
    return (header + bytes(big) + bytes(mini).ljust(mini_sectors * SECTOR, b"\0")
            + minifat_bytes + directory + struct.pack(f"<{len(fat)}I", *fat))


def _directory(names: list[str], streams: dict[str, bytes], starts: dict[str, int],
               mini_start: int, mini_size: int) -> bytes:
    """The root entry and one entry per stream, as a balanced tree in the directory's order
    (all nodes black: readers follow the links, none checks the colouring)."""
    left = [_NOSTREAM] * (len(names) + 1)
    right = [_NOSTREAM] * (len(names) + 1)

    def subtree(low: int, high: int) -> int:  # entry ids low..high-1 are names[low-1..]
        if low >= high:
            return _NOSTREAM
        middle = (low + high) // 2
        left[middle], right[middle] = subtree(low, middle), subtree(middle + 1, high)
        return middle

    child = subtree(1, len(names) + 1)
    entries = [_entry("Root Entry", 5, _NOSTREAM, _NOSTREAM, child, mini_start, mini_size)]
    entries += [_entry(name, 2, left[i], right[i], _NOSTREAM, starts[name], len(streams[name]))
                for i, name in enumerate(names, 1)]
    while len(entries) % (SECTOR // 128):
        entries.append(_entry("", 0, _NOSTREAM, _NOSTREAM, _NOSTREAM, 0, 0))
    return b"".join(entries)


def _entry(name: str, kind: int, left: int, right: int, child: int, start: int,
           size: int) -> bytes:
    encoded = name.encode("utf-16-le")
    length = len(encoded) + 2 if name else 0
    return struct.pack("<64sHBBIII16sIQQIQ", encoded.ljust(64, b"\0"), length, kind, 1, left,
                       right, child, b"\0" * 16, 0, 0, 0, start, size)
