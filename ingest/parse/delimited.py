"""CSV and TSV: rows become tables of "header: value; …" rows, as spreadsheet rows do (the
header is the first row that is neither a single-field title line nor mostly numbers).

The text is decoded as it is read (UTF-8 with or without a BOM, else GB18030, which Excel on
Chinese Windows saves CSV in) and no line is read past MAX_LINE_CHARS: a broken export with one
50 MB line fails with a reason instead of being held whole.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator

from ingest.parse.encoding import Decoded, decode
from ingest.parse.errors import ParseError
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.spreadsheet import Line, RowCount, SheetTable
from ingest.parse.tables import cell_text

MAX_LINE_CHARS = 1024 * 1024
SAMPLE_BYTES = 1024 * 1024  # what the encoding is told from, cut at a line break
SNIFF_LINES = 50  # what the delimiter is told from
# csv.Sniffer's quote-guessing regular expression is quadratic in the sample: 48 KB of `,"`
# took 31 s. It is told from whole lines within this prefix (one cut line if the first is longer).
SNIFF_CHARS = 4096
DELIMITERS = ",;\t|"
# a number or date ("1,200.5", "25%", "2026-01-05"): a row of them is data, not a header
_NUMERIC = re.compile(r"[-+]?[\d,]*\.?\d+%?|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}")


def parse_csv(data: bytes, limits: ParseLimits) -> ParseResult:
    return _parse(data, limits, ",")


def parse_tsv(data: bytes, limits: ParseLimits) -> ParseResult:
    return _parse(data, limits, "\t")


def _parse(data: bytes, limits: ParseLimits, default_delimiter: str) -> ParseResult:
    decoded = _encoding(data)
    encoding = decoded.encoding
    try:
        result = _read(data, encoding, limits, default_delimiter)
        result.encoding_confidence = decoded.confidence
        return result
    except UnicodeDecodeError as exc:  # UTF-8 at the start (often plain ASCII), not further on
        if encoding != "utf-8":
            raise ParseError(f"not {encoding.upper()} text: {exc.reason}") from None
    try:
        return _read(data, "gb18030", limits, default_delimiter)
    except UnicodeDecodeError as exc:
        raise ParseError(f"text file is in an unknown encoding: not UTF-8, not GB18030 "
                         f"({exc.reason})") from None


def _encoding(data: bytes) -> Decoded:
    """The encoding the start of the file is in (ingest.parse.encoding's rules on a sample that
    ends at a line break, so no character is cut in two: no GB18030 or UTF-8 byte sequence holds a
    newline byte)."""
    sample = data[:SAMPLE_BYTES]
    if len(data) > SAMPLE_BYTES:
        end = sample.rfind(b"\n")
        if end < 0:
            raise ParseError(f"line 1 has no line break in its first {SAMPLE_BYTES >> 20} MB: "
                             "not a table (a broken export, or not a CSV file)")
        sample = sample[:end + 1]
    return decode(sample)


def _read(data: bytes, encoding: str, limits: ParseLimits, default_delimiter: str
          ) -> ParseResult:
    stream = io.TextIOWrapper(io.BytesIO(data), encoding=encoding, newline="")
    lines = _lines(stream)
    first: list[str] = []
    while len(first) < SNIFF_LINES and sum(map(len, first)) < SNIFF_CHARS:
        line = next(lines, None)
        if line is None:
            break
        first.append(line)
    reader = csv.reader(_chain(first, lines), delimiter=_delimiter(first, default_delimiter))
    result = ParseResult(blocks=[], pages=1, encoding=encoding)
    table = SheetTable(1, result.blocks, result.skipped)
    count = RowCount(limits.max_rows)
    try:
        for fields in reader:
            cells = [cell_text(field) for field in fields]
            while cells and not cells[-1]:
                cells.pop()
            if not cells:
                table.empty()
                continue
            count.take(f"line {reader.line_num:,}")
            numeric = sum(1 for cell in cells if _NUMERIC.fullmatch(cell))
            table.add(Line(reader.line_num, cells, numeric))
    except csv.Error as exc:  # a NUL byte, a field over csv.field_size_limit() characters
        raise ParseError(f"not a readable CSV file at line {reader.line_num:,}: {exc}") from None
    table.close()
    return result


def _lines(stream: io.TextIOWrapper) -> Iterator[str]:
    """The stream's lines, none read further than MAX_LINE_CHARS."""
    number = 0
    while line := stream.readline(MAX_LINE_CHARS + 1):
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise ParseError(f"line {number:,} is longer than {MAX_LINE_CHARS:,} characters: "
                             "not a table (a broken export, or not a CSV file)")
        yield line


def _chain(first: list[str], rest: Iterator[str]) -> Iterator[str]:
    """The lines read ahead for sniffing, handed over one by one so none is held after use."""
    while first:
        yield first.pop(0)
    yield from rest


def _delimiter(lines: list[str], default: str) -> str:
    sample = "".join(lines)
    if len(sample) > SNIFF_CHARS:
        sample = sample[:SNIFF_CHARS]
        sample = sample[:sample.rfind("\n") + 1] or sample
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:  # one column, or nothing regular enough to tell
        return default
