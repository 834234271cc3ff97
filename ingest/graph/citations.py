"""Citations in a clause's text: which document, which articles, and how sure.

Three ways a text cites: a 《title》 (perhaps followed by 第十条第二款、第十二条), a self-reference
(本法第五条, 本办法第三条) and a bare article number (第五条: the citing document's own), or a
law's short name written without 《》 right before an article (依照刑法第二百六十六条), which
counts only when the corpus resolves the name. Each citation is resolved through the corpus's
titles (titles.py); a number inside a cited title (《关于〈刑法〉第三十条的解释》) is not a
reference of the citing text.

A law named without 《》 and without an article is a document citation only where the text
really cites it, and only when the corpus resolves the name: right after a citing verb, alone or
in a list (依照国家赔偿法, 根据宪法、立法法和国务院组织法的有关规定), or right before 的规定
(企业破产法规定的). A name that goes on into a longer title (劳动合同法实施条例, 刑法修正案) is
not the shorter law, and the citing document's own title is never its citation. An issuer
written before the 《》 (最高人民法院《关于…的规定》) belongs to the cited title.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from ingest.graph.link import article_spellings
from ingest.graph.titles import DANGLING_CONFIDENCE, RULES, Resolution, TitleIndex
from ingest.text import CN_NUM

_CITED = re.compile(r"《([^《》\n]{1,120})》")
_ARTICLE = rf"第{CN_NUM}条(?:之{CN_NUM})?(?:第{CN_NUM}款)?(?:第{CN_NUM}项)?"
_JOIN = r"\s*(?:、|,|和|及|以及|或者|或|至|到)\s*"
_CHAIN = re.compile(rf"\s*({_ARTICLE}(?:{_JOIN}{_ARTICLE})*)")
_ONE = re.compile(rf"(第{CN_NUM}条(?:之{CN_NUM})?)(?:第{CN_NUM}款)?(?:第{CN_NUM}项)?")
_SELF = re.compile(r"本(?:法|法典|办法|条例|规定|细则|规则|解释|决定|制度|规范|章程|准则|通知|意见|"
                   r"措施|标准|守则)")
_DECIMAL_SELF = re.compile(r"(?<=本规范)\d+(?:\.\d+)+")
# a short name without 《》 right before an article: the longest run of CJK characters before it
_UNQUOTED = re.compile(r"([\u4e00-\u9fff]{2,20})$")
_LAW_NAME = re.compile(r"(?:法|法典|条例|通则|细则|规则|办法|规定|解释)$")
_MAX_UNQUOTED = 12
# words before a name nothing resolves (依照民法通则第五条 → 民法通则): cut up to the last one
_LEAD = re.compile(r"^.*(?:依照|依据|根据|按照|参照|适用|违反|符合|属于|认定为|以及|或者|"
                   r"的|和|及|与|对|将|是|为|在|由|经)")
_HEADING = re.compile(rf"第{CN_NUM}条(?:之{CN_NUM})?\s")
_AMENDS = re.compile(r"关于修改《([^《》]+)》|^(.+?)修正案")
# a law named without 《》 or article: after a citing verb (and list joiners), or before 的规定
_CITES = re.compile(r"依照|依据|根据|按照|参照|适用|违反|遵守|遵循")
_LIST = re.compile(r"以及|或者|、|和|及|与|或")
_RULE_CUE = re.compile(r"(?:法典|法|条例|细则|办法|通则)(?=(?:的)?(?:有关|相关)?规定)")
_NAME_END = re.compile(r"(?:法典|法|条例|细则|办法|通则)$")
_RUN = re.compile(r"[\u4e00-\u9fff]+")
_LEAD_END = re.compile(r"(?:依照|依据|根据|按照|参照|适用|违反|符合|遵守|遵循|以及|或者|"
                       r"的|和|及|与|对|将|是|为|在|由|经|、)$")
# what makes a law's name part of a longer title or word: 劳动合同法实施条例, 刑法修正案(九),
# 社会保险法律、法规 and 文物保护法规 (laws of a field), 刑法定罪 stays 刑法
_GOES_ON = re.compile(r"实施|施行|修正案|暂行|条例|细则|办法|规则|律|规(?!定)|人|院|官|庭|学|制|治|"
                      r"定(?!罪)")
_MAX_NAME = 24
_MAX_CUT = 200  # characters of the next chunk read to finish a title cut at a chunk's end
# an issuer written before a 《关于…》 title: 最高人民法院《关于执行〈刑法〉确定罪名的规定》
_ISSUERS = "最高人民法院|最高人民检察院|国务院办公厅|国务院|全国人民代表大会常务委员会"
_ISSUER = re.compile(rf"((?:{_ISSUERS})(?:、(?:{_ISSUERS}))*)$")


@dataclass(frozen=True)
class Citation:
    """One cited document (and article when `article` is set), as the text wrote it."""

    surface: str  # 《公司法》第十条第二款, 本法第五条, 第五条
    resolution: Resolution
    article: str | None  # 第十条 (the clause number chunks carry), None: the whole document
    name: str = ""  # the cited title as written (公司法), when the text names one
    start: int = -1  # where a law named without 《》 or article starts in the (NFKC) text


def citations(text: str, citing: str, index: TitleIndex,
              aliases: Mapping[str, Resolution] | None = None,
              articles: Collection[str] | None = None, after: str = "") -> Iterator[Citation]:
    """Every citation in `text`, written in the document titled `citing`, whose own article
    numbers are `articles` (None: unknown). A bare number the document does not have is not its
    own: it belongs to the law its title names (罪名 lists: 《刑法》's), else it dangles; in an
    amendment none is its own (将《解释》原第六条修改为: the amended text's).
    `after` is the next chunk's text: a title the chunk boundary cuts (《中华人民共 | 和国刑法》
    第五条) is read whole in the chunk where it starts, and skipped where it ends."""
    text = unicodedata.normalize("NFKC", text)
    limit = len(text)
    if text.rfind("《") > text.rfind("》"):
        text += unicodedata.normalize("NFKC", after)[:_MAX_CUT]
    taken: list[tuple[int, int]] = [_cut_tail(text)]
    own = amended(citing, index) or Resolution(citing, "self", RULES["self"])
    if articles is not None and _AMENDS.search(unicodedata.normalize("NFKC", citing)):
        articles = ()  # its items (第N条 as cited from outside) are not what its text numbers
    mine = {s for a in articles for s in article_spellings(a)} if articles is not None else None
    elsewhere = (named_in_title(citing, index)
                 or Resolution(None, "dangling:unknown_article", DANGLING_CONFIDENCE))
    for match in _CITED.finditer(text):
        chain = _CHAIN.match(text, match.end())
        taken.append((match.start(), chain.end() if chain else match.end()))
        if match.start() >= limit:
            continue  # in the next chunk's text: that chunk's citation
        surface, name = match.group(0), match.group(1)
        issuer = _ISSUER.search(text, 0, match.start())
        if issuer and name.startswith("关于"):  # 最高人民法院《关于…》
            surface, name = issuer.group(1) + surface, issuer.group(1) + name
            resolution = index.resolve(name, citing, aliases)
            if resolution.title is None:
                resolution = index.resolve(match.group(1), citing, aliases)
        else:
            resolution = index.resolve(name, citing, aliases)
        yield Citation(surface, resolution, None, name)
        if chain:
            for one in _ONE.finditer(chain.group(1)):
                yield Citation(surface + one.group(0), resolution, one.group(1), name)
    text = text[:limit]
    yield from _named_laws(text, citing, index, taken)
    for match in _SELF.finditer(text):
        chain = _CHAIN.match(text, match.end())
        if chain and not _inside(match.start(), taken):
            taken.append((match.start(), chain.end()))
            for one in _ONE.finditer(chain.group(1)):
                yield Citation(match.group(0) + one.group(0), own, one.group(1))
    for match in _CHAIN.finditer(text):
        start = match.start(1)
        if _inside(start, taken) or (_HEADING.match(text, start)
                                     and text[start - 1:start] in ("", "\n", " ")):
            continue  # an article's heading (第五条 opening a line, then a space) cites nothing
        named = _unquoted(text[:start], citing, index)
        for one in _ONE.finditer(match.group(1)):
            if named is None and (mine is None or one.group(1) in mine):
                yield Citation(one.group(0), own, one.group(1))  # the text's own article
            elif named is None:
                yield Citation(one.group(0), elsewhere, one.group(1))
            else:
                yield Citation(named[0] + one.group(0), named[1], one.group(1), named[0])
    for match in _DECIMAL_SELF.finditer(text):
        yield Citation("本规范" + match.group(0), own, match.group(0))


def amended(citing: str, index: TitleIndex) -> Resolution | None:
    """The document an amendment amends (关于修改《X》的决定, X修正案(九)): its bare article
    numbers (将第九条修改为) are that document's, not the amendment's own."""
    match = _AMENDS.search(unicodedata.normalize("NFKC", citing))
    if match is None:
        return None
    found = index.resolve(match.group(1) or match.group(2), citing)
    if found.title is None or found.rule == "self":
        return None
    return Resolution(found.title, "amended", RULES["amended"] * found.confidence)


def named_in_title(citing: str, index: TitleIndex) -> Resolution | None:
    """The other document a title is about: its first 《X》 (关于执行《中华人民共和国刑法》确定
    罪名的规定), else the first law it names without 《》 (关于适用刑法分则规定的…意见)."""
    title = unicodedata.normalize("NFKC", citing)
    quoted = _CITED.search(title)
    if quoted:
        found = index.resolve(quoted.group(1), citing)
        return found if found.title is not None else None
    for end in (m.end() for m in re.finditer(r"法典|法|条例", title)):
        named = _unquoted(title[:end], citing, index)
        if named is not None and named[1].title is not None:
            return named[1]
    return None


def _cut_tail(text: str) -> tuple[int, int]:
    """The tail of a title the previous chunk started (…和国刑法》第五条 before any 《): the
    previous chunk's citation, not this one's."""
    close, first = text.find("》"), text.find("《")
    if close < 0 or 0 <= first < close:
        return 0, 0
    chain = _CHAIN.match(text, close + 1)
    return 0, chain.end() if chain else close + 1


def _named_laws(text: str, citing: str, index: TitleIndex, taken: list[tuple[int, int]]
                ) -> Iterator[Citation]:
    """Laws named without 《》 or an article where the text cites them: the names after a citing
    verb (and its list: 宪法、立法法和国务院组织法), and a name right before 的规定."""
    for verb in _CITES.finditer(text):
        at = verb.end()
        while not _inside(verb.start(), taken):
            quoted = next((end for start, end in taken if start == at), None)
            own = _SELF.match(text, at)
            named = None if quoted or own else _name_at(text, at, citing, index)
            if named is not None:
                taken.append((at, at + len(named[0])))
                if named[1] is not None:
                    yield Citation(named[0], named[1], None, named[0], at)
            end = quoted or (own.end() if own else at + len(named[0]) if named else None)
            join = _LIST.match(text, end) if end is not None else None
            if join is None:
                break
            at = join.end()
    for cue in _RULE_CUE.finditer(text):
        run = _RUN.search(text, max(0, cue.end() - _MAX_NAME), cue.end())
        while run is not None and run.end() != cue.end():
            run = _RUN.search(text, run.end(), cue.end())
        if run is None or _inside(cue.start(), taken):
            continue
        word, whole = run.group(0), not _RUN.match(text, run.start() - 1) if run.start() else True
        for start in range(len(word) - 1):
            found = index.resolve(word[start:], citing)
            if found.title is None:
                continue
            lead = _LEAD_END.search(word[:start]) if start else whole
            if lead and _cites_other(found, citing):
                yield Citation(word[start:], _unquoted_document(found), None, word[start:],
                               run.start() + start)
            break


def _name_at(text: str, at: int, citing: str, index: TitleIndex
             ) -> tuple[str, Resolution | None] | None:
    """The longest law name starting at `at` that the corpus resolves, with its resolution
    (None: the citing document itself); None when no name starts there. A name followed by an
    article is an article citation, and one going on into a longer title is not this law."""
    run = _RUN.match(text, at)
    if run is None:
        return None
    word = run.group(0)[:_MAX_NAME]
    for end in range(len(word), 1, -1):
        if not _NAME_END.search(word[:end]):
            continue
        found = index.resolve(word[:end], citing)
        if found.title is None:
            continue
        if _GOES_ON.match(word, end) or _CHAIN.match(text, at + end):
            return None
        return word[:end], _unquoted_document(found) if _cites_other(found, citing) else None
    return None


def _cites_other(found: Resolution, citing: str) -> bool:
    return found.rule != "self" and found.title != citing


def _unquoted_document(found: Resolution) -> Resolution:
    return Resolution(found.title, "unquoted", RULES["unquoted"] * found.confidence)


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= at < end for start, end in spans)


def _unquoted(before: str, citing: str, index: TitleIndex) -> tuple[str, Resolution] | None:
    """(name, resolution) of a law named without 《》 right before an article number: the
    longest tail of the CJK run that resolves to a document by its title or short name. A
    name nothing resolves (民法通则第五条, a repealed law) dangles: never the text's own article."""
    run = _UNQUOTED.search(before)
    if run is None:
        return None
    name = run.group(1)[-_MAX_UNQUOTED:]
    if not _LAW_NAME.search(name):
        return None
    for start in range(len(name) - 1):
        tail = name[start:]
        found = index.resolve(tail, citing)
        if found.rule == "self":
            return None
        if found.title is not None:
            return tail, Resolution(found.title, "unquoted", RULES["unquoted"] * found.confidence)
    name = _LEAD.sub("", name)
    return name, Resolution(None, "dangling:not_in_corpus", DANGLING_CONFIDENCE)
