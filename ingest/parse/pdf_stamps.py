"""A PDF page that shows its picture only through a Stamp annotation, drawn into the page.

Annotating apps (Readdle's PDF Expert among them) place a scanned or pasted page as a
full-page Stamp annotation over an empty content stream (`q Q`). A reader sees the page; the
parser sees neither text nor a picture in the page's content, so nothing is OCR'd and a valid
file fails with "no text found" (Pix2Text's test-doc.pdf). When some page holds no text and no
picture of its own but a Stamp, the document's annotations are drawn into its pages (PyMuPDF's
`bake`; form fields left as fields) before it is read. Other files are passed on untouched,
and so is a file MuPDF had to repair, which the repaired-PDF policy must still see.
"""

from __future__ import annotations

import pymupdf


def with_stamps_drawn(data: bytes, max_pages: int) -> bytes:
    """`data`, or the same PDF with its annotations drawn into the pages when a page shows
    nothing but a Stamp annotation (see the module docstring). A file over `max_pages` is
    not looked into: the PDF parser refuses it."""
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except RuntimeError:  # the PDF parser gives the reason for a file MuPDF cannot open
        return data
    with doc:
        if (doc.is_repaired or doc.needs_pass or doc.page_count > max_pages
                or not any(_stamp_only(page) for page in doc.pages())):
            return data
        doc.bake(annots=True, widgets=False)
        return bytes(doc.tobytes(garbage=0, deflate=True))


def _stamp_only(page: pymupdf.Page) -> bool:
    if page.first_annot is None:  # most pages: no annotation, nothing more to load
        return False
    stamped = any(annot.type[1] == "Stamp" for annot in page.annots())
    return stamped and not page.get_images() and not page.get_text("text").strip()
