"""A spreadsheet number or date as its cell shows it, from the cell's number format (Excel's
codes, which LibreOffice writes for .xls/.ods too): 265.400 under "0.000", 1,000.30 € under
"#,##0.00 [$€-407]", 23/02/2005 under "dd/mm/yyyy", 0.20001 in General — not the binary
float 0.200009999999992 a calculation stored. Only the first section (positive numbers) is
used; a code it does not know gives None and the caller's plain rendering.
"""

from __future__ import annotations

import datetime as dt
import re

GENERAL_DIGITS = 10  # significant digits Excel's General shows in a column of standard width
_CURRENCY = re.compile(r"\[\$([^\]-]*)(?:-[0-9A-Fa-f]+)?\]")
_BRACKETS = re.compile(r"\[[^\]]*\]")  # colours, conditions, locales
_LITERALS = re.compile(r'"([^"]*)"|\\(.)|_.|\*.')  # quoted text, escaped char, spacing, fill
# the whole part's digits and the fraction's, or a fraction alone (".00": 0.25 shows ".25")
_NUMBER = re.compile(r"([#0,]*0[#0,]*|#[#,]*)(?:\.([0#]*))?|\.([0#]+)")
_PERCENT = re.compile(r"(?:\.([0#]+))?%")
_DATE_TOKENS = re.compile(r"(?i)yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|am/pm|a/p")


def shown_number(value: float, code: str) -> str:
    """A number as a cell or a chart with the number format `code` shows it: 25% not 0.25,
    265.400 under "0.000", General's digits otherwise."""
    percent = _PERCENT.search(code.split(";")[0])
    if percent:
        return f"{value * 100:.{len(percent.group(1) or '')}f}%"
    return number_text(value, code) or (general(value) if isinstance(value, float)
                                        else str(value))


def general(value: float) -> str:
    """The General format: integers whole, others to GENERAL_DIGITS significant digits."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{GENERAL_DIGITS}g}"


def number_text(value: float, code: str) -> str | None:
    """`value` under the number format `code`, or None for General and codes not read here."""
    section = _clean(code.split(";")[0])
    if (not section or section.lower() == "general" or any(c in section for c in "%?@")
            or re.search(r"[Ee][+-]", section)):  # percent is the caller's; no fractions, exponents
        return None
    match = _NUMBER.search(section)
    if match is None:
        return None
    digits, fraction_code = match.group(1) or "", match.group(2) or match.group(3) or ""
    decimals = len(fraction_code.rstrip("#"))
    places = len(fraction_code)
    text = f"{value:{',' if ',' in digits else ''}.{places}f}"
    if places > decimals:  # "0.0#": optional digits dropped when zero
        text = text.rstrip("0") if "." in text else text
        whole, _, fraction = text.partition(".")
        text = f"{whole}.{fraction.ljust(decimals, '0')}" if decimals or fraction else whole
    if "0" not in digits:  # no digit required before the point: "#.0" shows 0.5 as ".5"
        sign, unsigned = ("-", text[1:]) if text.startswith("-") else ("", text)
        text = sign + (unsigned[1:] if unsigned.startswith("0.") else unsigned)
    return section[:match.start()] + text + section[match.end():]


def date_text(value: dt.date | dt.time, code: str) -> str | None:
    """A date or time under the date format `code`, or None when it holds no date token."""
    section = _clean(code.split(";")[0])
    if not _DATE_TOKENS.search(section):
        return None
    if isinstance(value, dt.datetime) and value.microsecond >= 500_000:  # 39.9999 s shows 40
        value = value.replace(microsecond=0) + dt.timedelta(seconds=1)
    clock12 = bool(re.search(r"(?i)am/pm|a/p", section))
    tokens = list(_DATE_TOKENS.finditer(section))
    words = [token.group().lower() for token in tokens]
    words = ["n" * len(w) if w in ("m", "mm") and _minutes(words, i) else w  # minutes, not month
             for i, w in enumerate(words)]
    # a date-time at midnight is a date: its 0:00:00 is not shown (nor the text before it)
    midnight = isinstance(value, dt.datetime) and value.time() == dt.time() and any(
        w[0] in "ymd" for w in words)
    out, last = [], 0
    for token, word in zip(tokens, words, strict=True):
        if not (midnight and word[0] in "hnsa"):
            out.append(section[last:token.start()] + _part(value, word, clock12))
        last = token.end()
    out.append(section[last:])
    return "".join(out)


def _minutes(words: list[str], index: int) -> bool:
    before = words[index - 1] if index else ""
    after = words[index + 1] if index + 1 < len(words) else ""
    return before.startswith("h") or after.startswith("s")


def _part(value: dt.date | dt.time, word: str, clock12: bool) -> str:
    date = value if isinstance(value, dt.date) else None
    time = value.time() if isinstance(value, dt.datetime) else (
        value if isinstance(value, dt.time) else dt.time())
    hour = (time.hour % 12 or 12) if clock12 else time.hour
    parts = {"h": str(hour), "hh": f"{hour:02d}", "n": str(time.minute),
             "nn": f"{time.minute:02d}", "s": str(time.second), "ss": f"{time.second:02d}",
             "am/pm": "AM" if time.hour < 12 else "PM", "a/p": "A" if time.hour < 12 else "P"}
    if date is not None:
        parts |= {"yyyy": f"{date.year:04d}", "yy": f"{date.year % 100:02d}",
                  "mmmmm": date.strftime("%B")[0], "mmmm": date.strftime("%B"),
                  "mmm": date.strftime("%b"), "mm": f"{date.month:02d}", "m": str(date.month),
                  "dddd": date.strftime("%A"), "ddd": date.strftime("%a"),
                  "dd": f"{date.day:02d}", "d": str(date.day)}
    return parts.get(word, "")


def _clean(section: str) -> str:
    """The format's literal text as shown: currency symbols, quoted text, escaped characters;
    colours, spacing and fill codes dropped."""
    section = _CURRENCY.sub(lambda m: m.group(1), section)
    section = _BRACKETS.sub("", section)
    return _LITERALS.sub(lambda m: m.group(1) or m.group(2) or "", section).strip()
