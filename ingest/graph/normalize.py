"""Entity and predicate names in one canonical spelling, so that the graph has one node per thing.

Policies name the same role several ways (部门负责人 / 部门主管 / 部门领导), OCR and models add
full-width characters, spaces and quotes. Both extractors pass every name through `canonical()`:
NFKC, no whitespace except between Latin words, no sentence punctuation at the ends, no quotes
or 《》 around the whole name, then a small alias table. Graph stores key entities by
(type, name), so equal names merge.
"""

from __future__ import annotations

import re
import unicodedata

# Variant → canonical spelling. Only names that mean the same office in every policy belong here.
ALIASES: dict[str, str] = {
    "部门主管": "部门负责人",
    "部门领导": "部门负责人",
    "部门经理": "部门负责人",
    "部门主要负责人": "部门负责人",
    "直接上级": "直属上级",
    "直属领导": "直属上级",
    "分管副总": "分管副总经理",
    "分管副总裁": "分管副总经理",
    "公司总经理": "总经理",
    "人事部": "人力资源部",
    "人力资源部门": "人力资源部",
    "财务部门": "财务部",
    "财务管理部": "财务部",
}
# The rule-based extractor writes every approval verb as 审批; LLM replies are brought in line.
PREDICATE_ALIASES: dict[str, str] = {"批准": "审批", "核准": "审批", "签批": "审批"}

# After NFKC, full-width ，：；！？ are ASCII; the ideographic 、。 stay as they are.
_EDGE_PUNCT = ",.;:!?、。"
_PAIRS = ("《》", "「」", "『』", "【】", "“”", "‘’", '""', "''")
# Spaces mean something only between two Latin letters or digits ("Department Head").
_SPACE_INSIDE_CJK = re.compile(r"(?<![A-Za-z0-9])\s+|\s+(?![A-Za-z0-9])")
_SPACE = re.compile(r"\s+")


def canonical(name: str) -> str:
    """The canonical spelling of an entity name ("" when nothing is left)."""
    text = _squeeze(name)
    while len(text) > 2 and any(_wraps(pair, text) for pair in _PAIRS):
        text = text[1:-1].strip(_EDGE_PUNCT)
    return ALIASES.get(text, text)


def _wraps(pair: str, text: str) -> bool:
    """《差旅费管理办法》 is wrapped; 《A》与《B》 and 《A》第十条 are not."""
    left, right = pair[0], pair[1]
    inner = text[1:-1]
    return text[0] == left and text[-1] == right and left not in inner and right not in inner


def canonical_predicate(name: str) -> str:
    text = _squeeze(name)
    return PREDICATE_ALIASES.get(text, text)


def _squeeze(name: str) -> str:
    text = _SPACE.sub(" ", unicodedata.normalize("NFKC", name).strip())
    return _SPACE_INSIDE_CJK.sub("", text).strip(_EDGE_PUNCT)
