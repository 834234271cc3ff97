"""What one document's own title and text say about which document and version it is: the
pure text rules behind `ingest.parse.identity` (titles without version markers, effective dates,
repeal statements, body similarity). Nothing here compares two files' paths, tenants or ids."""

from __future__ import annotations

import re
import unicodedata
from datetime import date

from ingest.models import DocumentIdentity, RepealStatement

GENERIC_TITLES = frozenset({
    "通知", "公告", "通告", "说明", "办法", "规定", "制度", "决定", "意见", "方案", "报告", "纪要",
    "会议纪要", "简报", "函", "请示", "批复", "目录", "附件", "说明书", "管理办法", "管理制度",
    "管理规定", "实施细则", "细则", "须知", "指南", "手册", "操作手册", "用户手册", "工作总结",
    "总结", "计划", "工作计划", "常见问题", "问答", "新建文档", "文档", "草稿", "备忘录",
    "readme", "index", "notes", "note", "untitled", "document", "draft", "changelog", "faq",
    "manual", "guide", "policy", "memo", "summary", "report", "introduction", "overview",
})

_YEAR = r"(?<!\d)(?:19|20)\d{2}(?!\d)"
_CN_DATE = rf"({_YEAR})\s*年\s*(\d{{1,2}})\s*月\s*(\d{{1,2}})\s*日"
_ISO_DATE = rf"({_YEAR})-(\d{{1,2}})-(\d{{1,2}})"
_BRACKET = re.compile(r"[(\[【〔]([^()\[\]【】〔〕]{0,24})[)\]】〕]")
_VERSIONISH = re.compile(rf"{_YEAR}|版|修订|修正|试行|[vV]\s*\d|第.{{1,3}}次")
_MARKERS = (
    re.compile(rf"{_YEAR}\s*年\s*\d{{1,2}}\s*月(?:\s*\d{{1,2}}\s*日)?(?:版|修订版?|修正版?)?"),
    re.compile(rf"{_YEAR}[-./]\d{{1,2}}(?:[-./]\d{{1,2}})?"),
    # a year, but not of an annual document (2025年度计划 is no version of 2024年度计划)
    re.compile(rf"{_YEAR}(?!\s*年度)\s*年?\s*(?:版|修订版?|修正版?)?"),
    re.compile(r"(?<![A-Za-z])[vV](?:ersion)?\s*\d+(?:\.\d+)*"),
    re.compile(r"第[一二三四五六七八九十\d]+(?:版|次修订|次修正)"),
    re.compile(r"(?:修订|修正)(?:版|稿)?|试行"),
)
_VERSION_NO = re.compile(r"[vV](?:ersion)?\s*(\d+(?:\.\d+)*)")
_YEAR_RE = re.compile(_YEAR)
_MARKER_DATE = re.compile(rf"({_YEAR})\s*[-./年]\s*(\d{{1,2}})\s*(?:[-./月]\s*(\d{{1,2}}))?")
_NOT_TITLE_CHARS = re.compile(r"[\W_]+")

_LABELLED = re.compile(
    rf"(?:生效日期|施行日期|实施日期|执行日期|Effective date)\s*[:：]?\s*"
    rf"(?:{_CN_DATE}|{_ISO_DATE})", re.I)
_STATED = re.compile(rf"自\s*{_CN_DATE}\s*起\s*(?:正式)?(?:施行|执行|生效|实施)")
_ON_ISSUE = re.compile(r"自(?:发布|印发|公布|颁布|下发)之日起\s*(?:正式)?(?:施行|执行|生效|实施)")
_ISSUED = re.compile(
    rf"(?:发布日期|印发日期|发文日期|颁布日期|发布时间|印发时间)\s*[:：]?\s*(?:{_CN_DATE}|{_ISO_DATE})")
_SENTENCE_END = re.compile(r"[。；;！!？?\n]")
_TITLE_REF = re.compile(r"《([^《》]{1,60})》")
_REPEAL_AFTER = re.compile(
    r"^[^，,。《》]{0,15}?(?:同时|一并|予以|即行|自行|随之)?(?:废止|停止执行|不再执行|失效|作废)")
_REPEAL_BEFORE = re.compile(r"(?:代替|替代|取代|废止|替换)(?:原|公司原|原有的?|此前的?)?\s*$")
_REFERENCE = re.compile(r"(?:根据|依据|按照|参照|遵照|结合|依照)\s*$")
_CONJUNCTION = re.compile(r"^\s*(?:和|及|与|以及|、|,|，)\s*$")


# ---- facts one document states about itself -----------------------------------------------------

def normalize(text: str) -> str:
    """NFKC, and line breaks inside CJK text removed (PDF lines break mid-sentence)."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"(?<=[^\x00-\x7f])[ \t]*\n[ \t]*(?=[^\x00-\x7f])", "", text)


def split_title(title: str) -> tuple[str, str | None]:
    """(base title, version marker): the title compared across files, and what told it apart."""
    text = unicodedata.normalize("NFKC", title).strip().strip("《》")
    found: list[str] = []

    def bracketed(match: re.Match[str]) -> str:
        if _VERSIONISH.search(match.group(1)):
            found.append(match.group(1))
            return ""
        whole: str = match.group(0)
        return whole

    text = _BRACKET.sub(bracketed, text)
    for pattern in _MARKERS:
        found += [m.group(0) for m in pattern.finditer(text)]
        text = pattern.sub("", text)
    base = _NOT_TITLE_CHARS.sub("", text).lower()
    return base, _marker(" ".join(found)) if found else None


def _marker(raw: str) -> str:
    """"2025" for a year, "2024-03-01" for a date, "v2.0" for a version number, else the text."""
    day = _MARKER_DATE.search(raw)
    if day:
        return "-".join(f"{int(g):02d}" for g in day.groups() if g)
    year = _YEAR_RE.search(raw)
    if year:
        return year.group(0)
    number = _VERSION_NO.search(raw)
    if number:
        return f"v{number.group(1)}"
    return _NOT_TITLE_CHARS.sub("", raw)


def is_generic(base_title: str) -> bool:
    """Too common to identify a document by itself: listed, or very short."""
    if base_title in GENERIC_TITLES:
        return True
    cjk = sum(1 for ch in base_title if "\u4e00" <= ch <= "\u9fff")
    return cjk <= 3 if cjk else len(base_title) <= 6


def effective_date(text: str, known: date | None = None) -> tuple[date | None, str | None]:
    """The date a document takes effect and the text that says so: a 生效日期 line, "自2025年1月1日
    起施行", or "自发布之日起执行" with a 发布日期. `known` (sidecar or parser) wins."""
    stated_dates: list[tuple[date | None, str]] = []
    for match in _LABELLED.finditer(text):
        stated_dates.append((_date(match), match.group(0)))
    for sentence in _sentences(text):
        stated = _STATED.search(sentence) or _ON_ISSUE.search(sentence)
        if stated is None or "《" in sentence[: stated.start()]:
            continue  # no start date, or another document's (《…》自…起施行)
        if stated.re is _STATED:
            stated_dates.append((_date(stated), sentence))
        elif issued := _ISSUED.search(text):
            stated_dates.append((_date(issued), f"{sentence}; {issued.group(0)}"))
    candidates = [(d, s) for d, s in stated_dates if d is not None]
    if known is not None:
        basis = next((s for d, s in candidates if d == known), None)
        return known, basis
    return candidates[0] if candidates else (None, None)


def _date(match: re.Match[str]) -> date | None:
    numbers = [int(g) for g in match.groups() if g is not None][:3]
    try:
        return date(*numbers)
    except (TypeError, ValueError):
        return None


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def repeal_statements(text: str) -> list[RepealStatement]:
    """Sentences that repeal or replace a document named by its 《title》. 代替 without a 《title》
    object ("不得代替下一级审批人审批") and references (根据《…》) are not repeals."""
    found: list[RepealStatement] = []
    for sentence in _sentences(text):
        refs = list(_TITLE_REF.finditer(sentence))
        repealed: list[bool] = [False] * len(refs)
        for i in range(len(refs) - 1, -1, -1):
            ref = refs[i]
            end = refs[i + 1].start() if i + 1 < len(refs) else len(sentence)
            after = sentence[ref.end():end]
            marker = _BRACKET.match(after)
            if marker and _VERSIONISH.search(marker.group(1)):
                after = after[marker.end():]
            before = sentence[refs[i - 1].end() if i else 0: ref.start()]
            if _REFERENCE.search(before):
                continue  # 根据《…》…: the title is what the text relies on
            if _REPEAL_AFTER.match(after) or _REPEAL_BEFORE.search(before):
                repealed[i] = True
            elif i + 1 < len(refs) and _CONJUNCTION.match(after):
                repealed[i] = repealed[i + 1]  # 《A》和《B》同时废止
        for ref, hit in zip(refs, repealed, strict=True):
            if hit:
                following = sentence[ref.end():]
                marker = _BRACKET.match(following)
                named = ref.group(1)
                if marker and _VERSIONISH.search(marker.group(1)):
                    named += f"({marker.group(1)})"
                found.append(RepealStatement(title=named, sentence=sentence))
    return found


def facts(title: str, text: str, known_from: date | None = None) -> DocumentIdentity:
    """What a document's own title and text say about which document and version it is."""
    text = normalize(text)
    base, marker = split_title(title)
    effective, basis = effective_date(text, known_from)
    return DocumentIdentity(title=title, base_title=base, marker=marker, effective_from=effective,
                            effective_basis=basis, repeals=repeal_statements(text))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the bodies' character 3-grams (letters, digits and CJK only)."""
    grams_a, grams_b = _grams(a), _grams(b)
    if not grams_a or not grams_b:
        return 0.0
    return len(grams_a & grams_b) / len(grams_a | grams_b)


def _grams(text: str) -> set[str]:
    chars = _NOT_TITLE_CHARS.sub("", normalize(text))
    return {chars[i:i + 3] for i in range(len(chars) - 2)}

