#!/usr/bin/env bash
# LibreOffice for the legacy and open office formats (.doc .xls .ppt .rtf .odt .ods .odp .wps
# .et .dps, read through ingest/parse/convert.py): Debian's packages, installed with apt-get
# when `soffice` is missing (≈370 MB without recommends, works offline). Idempotent.
set -euo pipefail
command -v soffice >/dev/null && exit 0
if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "libreoffice.sh: soffice not found: install libreoffice-core, -writer, -calc and" \
    "-impress (apt-get install --no-install-recommends ...); those formats fail until then" >&2
  exit 1
fi
echo "libreoffice.sh: installing LibreOffice (Debian packages)"
log=$(mktemp)
{ apt-get update -q && apt-get install -y -q --no-install-recommends libreoffice-core \
    libreoffice-writer libreoffice-calc libreoffice-impress; } >"$log" 2>&1 ||
  { tail -n 20 "$log" >&2; echo "libreoffice.sh: apt-get install failed" >&2; exit 1; }
rm -f "$log"
