#!/usr/bin/env bash
# Incremental cost on the sample corpus, as whole `kbflow ingest` commands timed by farm-bench:
# A = re-ingest after editing one clause (婚假10天 → 13天 in leave_policy.md) onto a copy of a
# finished ingest, B = a cold ingest of the same corpus. Each command appends its JSON summary
# to /tmp/kbflow-sample-edit/{edit,cold}.jsonl (the flow's own time and the chunks embedded).
set -euo pipefail
cd "$(dirname "$0")/.."
KB=.venv/bin/kbflow
W=/tmp/kbflow-sample-edit
rm -rf "$W" && mkdir -p "$W"
cp -r sample_docs "$W/corpus"
cp "$W/corpus/leave_policy.md" "$W/original.md"
sed 's/婚假10天/婚假13天/' "$W/original.md" > "$W/edited.md"
cmp -s "$W/original.md" "$W/edited.md" && { echo "the edit did not apply" >&2; exit 1; }
"$KB" --data-dir "$W/base" ingest "$W/corpus" --json > "$W/base.json"

EDIT="rm -rf $W/a && cp -r $W/base $W/a && cp $W/edited.md $W/corpus/leave_policy.md \
  && $KB --data-dir $W/a ingest $W/corpus --json >> $W/edit.jsonl \
  && cp $W/original.md $W/corpus/leave_policy.md"
COLD="rm -rf $W/b && $KB --data-dir $W/b ingest $W/corpus --json >> $W/cold.jsonl"
farm-bench -n "${RUNS:-3}" --warmup 0 --timeout 3600 --vs "sh -c '$COLD'" -- sh -c "$EDIT"
.venv/bin/python - "$W" <<'PY'
import json, pathlib, statistics, sys
w = pathlib.Path(sys.argv[1])
def runs(name):
    text = (w / name).read_text()
    return [json.loads(part) for part in text.replace("}\n{", "}\x00{").split("\x00") if part.strip()]
edit, cold = runs("edit.jsonl"), runs("cold.jsonl")
e = statistics.median(r["total_seconds"] for r in edit)
c = statistics.median(r["total_seconds"] for r in cold)
print(f"flow time (median): edit {e:.2f} s, cold {c:.2f} s, ratio {e / c:.3f}")
print(f"chunks embedded: edit {[r['embedded'] for r in edit]}, cold {[r['embedded'] for r in cold]}")
print(f"edit chunk counts: {edit[0]['chunks']}")
PY
