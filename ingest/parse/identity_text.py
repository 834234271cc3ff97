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
_BRACKET = re.compile(r"[(\[【〔〈<]([^()\[\]【】〔〕〈〉<>]{0,24})[)\]】〕〉>]")
_VERSIONISH = re.compile(rf"{_YEAR}|版|修订|修正|更正|试行|[vV]\s*\d|第.{{1,3}}次")
# a marker saying the file re-issues its title: newer than the same title without a marker
_REISSUE = re.compile(r"更正|修订|修正|第[二三四五六七八九十\d]+版")
# a bracket that says only that the file re-issues its title: kept in the marker next to a year
# the title itself holds (关于发放2026年…的通知（更正） is 2026更正, not the 2026 it corrects)
_REISSUE_ONLY = re.compile(r"(?:更正|修订|修正)(?:稿|版)?|第[二三四五六七八九十\d]+版")
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
# 自2025年1月1日起施行, or a rule that starts then: 自2026年3月1日起，…补贴调整为…
_STATED = re.compile(rf"自\s*{_CN_DATE}\s*起\s*(?:(?:正式)?(?:施行|执行|生效|实施)|[，,])")
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
# 原通知同时作废: a repeal naming the document by its kind, the 《title》 sentences before; only the
# whole document (原办法第五条废止 repeals an article, 原通知中…的规定废止 a part)
_BACK_REFERENCE = re.compile(
    r"原(?:来的?|有的?)?(通知|办法|规定|制度|文件|细则|规则|规范|方案|意见|标准|决定|条例|公告|通告|"
    r"规程|守则|章程|政策)[^，,。；;第《》]{0,6}?(?:同时|一并|予以|即行|自行|随之|即|均)?"
    r"(?:废止|作废|停止执行|不再执行|失效)")
_BACK_REFERENCE_REACH = 3  # sentences back from 原通知… to the 《title》 it means
_ANY_KIND = frozenset({"文件"})
# law-style opening lines: "1995年2月28日第八届…会议通过　根据2012年10月26日…的决定》修正"
_OPENING_END = re.compile(r"^\s*(?:#+\s*)?第[一二三四五六七八九十百零〇\d]+\s*[编章节条]", re.M)
_OPENING_CHARS = 1500
_AMENDED = re.compile(
    rf"(?:^|(?<=[(\s])|(?<=根据))\s*{_CN_DATE}(?:(?!{_YEAR}\s*年)[^。；;\n]){{0,120}}?"
    r"(?:通过|修正|修订|公布|发布|颁布|批准|施行)", re.M)
# a leading organisation name: …集团, …有限公司, …人民政府, 国务院办公厅, 中华人民共和国
_ORG_SUFFIX = re.compile(
    r"股份有限公司|有限责任公司|有限公司|集团公司|集团|公司|委员会|人民政府|政府|办公厅|办公室|总局|"
    r"分局|厅|局|部|委|院|署|中心|银行|分行|支行|大学|学院|学校|医院|协会|学会|研究所")
_COUNTRY = "中华人民共和国"
_MAX_ORG = 24  # characters an organisation name may take
_MIN_REST = 5  # characters the title needs without it to still name one document


# ---- facts one document states about itself -----------------------------------------------------

def normalize(text: str) -> str:
    """NFKC, and line breaks inside CJK text removed (PDF lines break mid-sentence)."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"(?<=[^\x00-\x7f])[ \t]*\n[ \t]*(?=[^\x00-\x7f])", "", text)


def split_title(title: str) -> tuple[str, str | None]:
    """(base title, version marker): the title compared across files, and what told it apart."""
    text = unicodedata.normalize("NFKC", title).strip().strip("《》")
    found: list[str] = []
    reissue: list[str] = []

    def bracketed(match: re.Match[str]) -> str:
        if _REISSUE_ONLY.fullmatch(match.group(1).strip()):
            reissue.append(match.group(1).strip())
            return ""
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
    if not found and not reissue:
        return base, None
    return base, (_marker(" ".join(found)) if found else "") + "".join(reissue)


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


def reissues(newer: str | None, older: str | None) -> bool:
    """Whether marker `newer` is `older` (or none) with a re-issue word added (更正, 修订, 修正,
    第二版): 更正 re-issues an unmarked title, 2026更正 the 2026 one."""
    return bool(newer and _REISSUE.search(newer) and newer != (older or "")
                and newer.startswith(older or ""))


def organisation_variants(base_title: str) -> dict[str, str]:
    """The base title without a leading organisation name → that name, for each reading of one
    (XX市人民政府办公厅…: without XX市人民政府 and without XX市人民政府办公厅). Only names ending in
    an organisation suffix with two characters or more before it (内部审计 has no organisation),
    and only what still names one document (not generic, five characters or more)."""
    ends = [m.end() for m in _ORG_SUFFIX.finditer(base_title[:_MAX_ORG]) if m.start() >= 2]
    if base_title.startswith(_COUNTRY):
        ends.append(len(_COUNTRY))
    return {base_title[end:]: base_title[:end] for end in sorted(ends)
            if len(base_title) - end >= _MIN_REST and not is_generic(base_title[end:])}


def title_match(a: str, b: str) -> str | None:
    """Whether base titles `a` and `b` name one document: "" when equal, the organisation name
    when one is the other with a leading organisation name, None otherwise. Two titles that
    both carry a name never match without it: 《A集团差旅办法》 is not 《B公司差旅办法》."""
    if not a or not b:
        return None
    if a == b:
        return ""
    return organisation_variants(a).get(b) or organisation_variants(b).get(a)


def amendment_dates(text: str) -> list[tuple[date, str]]:
    """The adoption and amendment dates a law-style opening states, each with its clause: lines
    before the first article or chapter that begin with a date and end in 通过, 修正, 修订, 公布,
    发布, 施行… ("2012年10月26日…《关于修改〈…〉的决定》修正")."""
    opening = _OPENING_END.search(text)
    head = text[: min(opening.start() if opening else len(text), _OPENING_CHARS)]
    found = [(_date(m), m.group(0).strip()) for m in _AMENDED.finditer(head)]
    return [(d, clause) for d, clause in found if d is not None]


def effective_date(text: str, known: date | None = None) -> tuple[date | None, str | None]:
    """The date a document takes effect and the text that says so: a 生效日期 line; for a law, its
    latest adoption or amendment date in the opening lines, or a later "自…起施行" (a revision's
    own start: the 本法自2000年7月1日起施行 a later amendment kept is the first version's); else
    "自2025年1月1日起施行", or "自发布之日起执行" with a 发布日期. `known` (sidecar) wins."""
    labelled: list[tuple[date | None, str]] = []
    stated_dates: list[tuple[date | None, str]] = []
    for match in _LABELLED.finditer(text):
        labelled.append((_date(match), match.group(0)))
    for sentence in _sentences(text):
        stated = _STATED.search(sentence) or _ON_ISSUE.search(sentence)
        if stated is None or "《" in sentence[: stated.start()]:
            continue  # no start date, or another document's (《…》自…起施行)
        if stated.re is _STATED:
            stated_dates.append((_date(stated), sentence))
        elif issued := _ISSUED.search(text):
            stated_dates.append((_date(issued), f"{sentence}; {issued.group(0)}"))
    starts = [(d, s) for d, s in stated_dates if d is not None]
    history = sorted(amendment_dates(text), key=lambda found: found[0])
    candidates = [(d, s) for d, s in labelled if d is not None]
    if history:
        latest = history[-1][0]
        candidates += [(d, s) for d, s in starts if d > latest] + history[-1:]
    candidates += starts
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


def repeal_statements(text: str, own_title: str = "") -> list[RepealStatement]:
    """Sentences that repeal or replace a document named by its 《title》, directly (《X》同时废止,
    代替《X》) or by its kind a few sentences later (《X》… 原通知同时作废). 代替 without a
    《title》 object ("不得代替下一级审批人审批") and references (根据《…》) are not repeals."""
    sentences = _sentences(text)
    found = [s for sentence in sentences for s in _named_repeals(sentence)]
    named = {s.title for s in found}
    for statement in _back_references(sentences, split_title(own_title) if own_title else None):
        if statement.title not in named:
            named.add(statement.title)
            found.append(statement)
    return found


def _named_repeals(sentence: str) -> list[RepealStatement]:
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
    return [RepealStatement(title=_as_named(ref, sentence), sentence=sentence)
            for ref, hit in zip(refs, repealed, strict=True) if hit]


def _as_named(ref: re.Match[str], text: str) -> str:
    """A 《title》 as named, with the version marker bracketed after it: 《…》（V2.0）."""
    marker = _BRACKET.match(text[ref.end():])
    if marker and _VERSIONISH.search(marker.group(1)):
        return f"{ref.group(1)}({marker.group(1)})"
    return ref.group(1)


def _back_references(sentences: list[str], own: tuple[str, str | None] | None
                     ) -> list[RepealStatement]:
    """原通知/原办法…同时废止 taken as a repeal of the nearest 《title》 of that kind in its
    sentence or the few before it; a title relied on (根据《…》) or naming the document's own
    marked version (its 《…》（更正）) is passed over."""
    found: list[RepealStatement] = []
    for k, sentence in enumerate(sentences):
        for match in _BACK_REFERENCE.finditer(sentence):
            kind = match.group(1)
            for i in range(k, max(k - _BACK_REFERENCE_REACH, 0) - 1, -1):
                span = sentences[i][: match.start()] if i == k else sentences[i]
                title = _nearest_title(span, kind, own)
                if title:
                    found.append(RepealStatement(title=title,
                                                 sentence="。".join(sentences[i:k + 1])))
                    break
    return found


def _nearest_title(span: str, kind: str, own: tuple[str, str | None] | None) -> str | None:
    for ref in reversed(list(_TITLE_REF.finditer(span))):
        named = _as_named(ref, span)
        base, version = split_title(named)
        if _REFERENCE.search(span[: ref.start()]) or (version and (base, version) == own):
            continue
        if kind in _ANY_KIND or base.endswith(kind):
            return named
    return None


def facts(title: str, text: str, known_from: date | None = None) -> DocumentIdentity:
    """What a document's own title and text say about which document and version it is."""
    text = normalize(text)
    base, marker = split_title(title)
    effective, basis = effective_date(text, known_from)
    amended = [d for d, clause in amendment_dates(text) if not clause.endswith("施行")]
    return DocumentIdentity(title=title, base_title=base, marker=marker, effective_from=effective,
                            effective_basis=basis, amended=max(amended, default=None),
                            repeals=repeal_statements(text, title))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the bodies' character 3-grams (letters, digits and CJK only)."""
    grams_a, grams_b = _grams(a), _grams(b)
    if not grams_a or not grams_b:
        return 0.0
    return len(grams_a & grams_b) / len(grams_a | grams_b)


def _grams(text: str) -> set[str]:
    chars = _NOT_TITLE_CHARS.sub("", normalize(text))
    return {chars[i:i + 3] for i in range(len(chars) - 2)}

