"""SmartArt text in decks (ingest.parse.diagrams): the Open XML SDK's Bug571679_Brownbag.pptx
(bench/format_corpus/open-xml-sdk, PROVENANCE.md), a Microsoft talk whose slides hold three
SmartArt diagrams; their boxes were read as nothing (15 paragraphs, one slide's code sample
entirely), though PowerPoint shows them like any text box."""

from __future__ import annotations

from pathlib import Path

from ingest.parse import parse_document, read_meta
from ingest.parse.diagrams import diagram_lines

DECK = Path(__file__).parents[1] / "bench" / "format_corpus" / "open-xml-sdk" / \
    "Bug571679_Brownbag.pptx"


def test_smartart_boxes_are_read_in_outline_order_on_their_slide() -> None:
    meta, data = read_meta(DECK, DECK.parent, "default", ["all-staff"])
    blocks = parse_document(meta, data).blocks
    texts = [block.text for block in blocks]
    first = texts.index("Invoking a method using a methodinfo, given a previously "
                        "instantiated object, o.")
    assert texts[first:first + 4] == [
        texts[first], "MethodInfo mInfo = t.GetMethod(“MethodName”);",
        "minfo.Invoke(o, new object[]{});", "Invoking a property"]
    assert "Invoke the Get property. The second value is optional and is only used for " \
        "indexing." in texts
    assert blocks[first].page == next(b.page for b in blocks
                                      if b.text == "Invoking Methods and Properties")
    assert {"Application level add-ins", "Custom Task Pane support",
            "Visual Studio “Orcas” Beta1"} <= set(texts)


def test_transitions_and_the_diagram_point_hold_no_text() -> None:
    """Only boxes: the model's connection points carry empty paragraphs, never a line."""
    xml = (b'<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram"'
           b' xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>'
           b'<dgm:pt modelId="0" type="doc"><dgm:t><a:p><a:r><a:t>doc</a:t></a:r></a:p></dgm:t>'
           b'</dgm:pt><dgm:pt modelId="2"><dgm:t><a:p><a:r><a:t>second</a:t></a:r></a:p>'
           b'</dgm:t></dgm:pt><dgm:pt modelId="1"><dgm:t><a:p><a:r><a:t>first</a:t></a:r>'
           b'</a:p></dgm:t></dgm:pt><dgm:pt modelId="3" type="sibTrans"><dgm:t><a:p><a:r>'
           b'<a:t>x</a:t></a:r></a:p></dgm:t></dgm:pt></dgm:ptLst><dgm:cxnLst>'
           b'<dgm:cxn modelId="c2" srcId="0" destId="2" srcOrd="1"/>'
           b'<dgm:cxn modelId="c1" srcId="0" destId="1" srcOrd="0"/></dgm:cxnLst>'
           b'</dgm:dataModel>')
    assert diagram_lines(xml) == ["first", "second"]
