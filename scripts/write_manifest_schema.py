"""Write manifests/export.schema.json, the JSON Schema of `kbflow status --json`, from the
ManifestExport model (tests/test_cli.py fails while the two disagree).

    python scripts/write_manifest_schema.py
"""

from pathlib import Path

from ingest.manifest import ManifestExport

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "manifests" / "export.schema.json"
    target.write_text(ManifestExport.schema_text(), encoding="utf-8")
    print(f"wrote {target}")
