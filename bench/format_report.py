"""The table bench.format_public writes to bench/RESULTS.md: recall per format against Tika's
text and against the visible reference (bench.format_visible), failures apart from files
that hold no text, and the visible reference's exclusions by place."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench import format_visible

SECTION = "## Format phrase recall (public test documents of other projects, issue #40)"


@dataclass
class FileResult:
    collection: str
    name: str
    held_out: bool
    phrases: int
    recalled: int
    status: str  # "ok", "failed: …", "no text: …", "ready-with-nothing"
    seconds: float
    visible: int  # of `phrases`, those the visible reference keeps (bench.format_visible)
    visible_recalled: int
    # the phrases it leaves out: (phrase, kbflow's chunks hold it, where Tika's XHTML puts it)
    excluded: list[tuple[str, bool, str]]


def report(results: list[FileResult]) -> str:
    by_format: dict[str, list[FileResult]] = defaultdict(list)
    for r in results:
        by_format[Path(r.name).suffix.lower()].append(r)

    def recall(rs: list[FileResult], visible: bool = False) -> str:
        total = sum(r.visible if visible else r.phrases for r in rs)
        hits = sum(r.visible_recalled if visible else r.recalled for r in rs)
        return f"{hits / total:.3f}" if total else "–"

    def row(name: str, rs: list[FileResult]) -> str:
        held = [r for r in rs if r.held_out]
        return (f"| {name} | {len(rs)} | {sum(r.phrases for r in rs)} | {recall(rs)} | "
                f"{recall(held)} | {sum(r.visible for r in rs)} | {recall(rs, True)} | "
                f"{recall(held, True)} | {sum(r.status.startswith('failed') for r in rs)} | "
                f"{sum(r.status.startswith('no text') for r in rs)} | "
                f"{sum(r.status == 'ready-with-nothing' for r in rs)} |")

    lines = [SECTION, "",
             f"{len(results)} files from {len({r.collection for r in results})} collections "
             "(`bench/format_corpus/PROVENANCE.md`); reference phrases from Apache Tika 2.9.2's "
             "plain text (OFD: its raw TextCodes; web pages: of readability's expected main "
             "content; chardet's text: decoded as declared; a file Tika prints nothing of: a "
             "person's reading); `python -m bench.format_public`. "
             "Visible: of an office file's phrases, those LibreOffice's rendering shows "
             "(bench/format_visible.py), of a picture's those a person's transcription holds, "
             "pictures inside office, EPUB and mail files included; Tika's own labels that the "
             "file's application does not show are left out (other formats keep all their "
             "phrases). No text: failed, and "
             "neither the rendering (office files) nor the reference holds a letter or digit.",
             "",
             "| format | files | phrases | recall | held-out recall | visible phrases "
             "| visible recall | held-out visible | failed | no text | READY with nothing |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [row(suffix, rs) for suffix, rs in sorted(by_format.items())]
    lines += [row("**all**", results), "",
              "Excluded from the visible reference, by where Tika's XHTML puts each phrase "
              f"(listed one by one in `bench/{format_visible.EXCLUDED.name}`):", ""]
    lines += format_visible.exclusion_table(
        [(Path(r.name).suffix.lower(), where, ok) for r in results for _, ok, where in r.excluded])
    lines += ["", "Files under 0.9 on the visible reference, failed, without text or READY with "
              "nothing:", ""]
    for r in results:
        low = r.visible and r.visible_recalled / r.visible < 0.9
        if low or r.status != "ok":
            lines.append(f"- {r.collection}/{r.name}: {r.recalled}/{r.phrases}, visible "
                         f"{r.visible_recalled}/{r.visible}, {r.status}")
    return "\n".join(lines) + "\n"
