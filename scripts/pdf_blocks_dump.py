"""Parse every PDF under the given folders and write each one's blocks as JSON under OUT (same
relative path + .json), so two codes' outputs can be compared with `diff -r`. Usage (the code
read is the one on PYTHONPATH): python scripts/pdf_blocks_dump.py OUT FOLDER..."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ingest.parse import parse_document, read_meta


def dump(path: Path) -> str:
    try:
        try:
            meta, data = read_meta(path, path.parent, "bench", ["all"])
        except ValueError:  # a sidecar naming its tenant (sample_docs/)
            meta, data = read_meta(path, path.parent, "default", ["all"])
        parsed = parse_document(meta, data)
    except Exception as exc:  # noqa: BLE001 - a failure is an output to compare too
        return f"FAILED {type(exc).__name__}: {exc}\n"
    rows = [[b.kind.value, b.level, b.page, b.text] for b in parsed.blocks]
    return json.dumps({"pages": parsed.pages, "blocks": rows}, ensure_ascii=False, indent=0)


def main(out: Path, folders: list[Path]) -> None:
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix.lower() == ".pdf":
                target = out / folder.name / f"{path.relative_to(folder)}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(dump(path), "utf-8")
                print(path, flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), [Path(a) for a in sys.argv[2:]])
