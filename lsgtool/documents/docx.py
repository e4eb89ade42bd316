"""Word documents (``.docx``) through mammoth, which turns their paragraph styles into HTML (headings, lists, tables,
footnotes), read as web pages and EPUB chapters are (``documents.webpage``): a chapter for each ``Heading 1``
(text before the first is a chapter of its own), the document's title its ``Title`` paragraph (which is not its
text), else its core properties' title, footnote and endnote markers left out and the notes kept at the end.
"""

from __future__ import annotations

import io
import re
import zipfile

from lsgtool.documents.model import Chapter, DocumentError
from lsgtool.documents.webpage import chapter

STYLES = "p[style-name='Title'] => p.docx-title:fresh"  # mammoth maps headings, lists and tables itself
MARKERS = ("#footnote-", "#endnote-")  # a note's marker in the text and its link back from the note


def is_docx(data: bytes) -> bool:
    """Whether ``data`` is a zip archive holding a Word document's main part."""
    if not data.startswith(b"PK"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except zipfile.BadZipFile:
        return False


def _core_title(data: bytes) -> str | None:
    """The title the document's properties give (File > Info > Title), None when blank."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if "docProps/core.xml" not in archive.namelist():
            return None
        core = archive.read("docProps/core.xml").decode("utf-8", "replace")
    found = re.search(r"<dc:title>([^<]*)</dc:title>", core)
    title = " ".join(found.group(1).split()) if found else ""
    return None if not title or title.startswith("Microsoft Word - ") else title  # a converted file's old name


def read_docx(data: bytes, name: str) -> tuple[list[Chapter], str | None, list[str]]:
    """(a chapter per ``Heading 1`` section, title, notes)."""
    try:
        import mammoth
        from lxml import html
    except ImportError:
        raise DocumentError(f"'{name}' is a Word document, and reading Word documents needs mammoth and lxml.",
                            "pip install 'lsgtool[books]' (or mammoth and lxml), or save it as PDF or text.") from None
    if not is_docx(data):
        raise DocumentError(f"'{name}' is not a Word document (no word/document.xml in a zip archive).",
                            "pass a .docx file (Word 2007 or later; save a .doc as .docx first).")
    try:
        title = _core_title(data)
        converted = mammoth.convert_to_html(io.BytesIO(data), style_map=STYLES,
                                            convert_image=mammoth.images.img_element(lambda image: {}))
    except Exception as exc:  # mammoth raises KeyError, ValueError, lxml errors for broken documents
        raise DocumentError(f"'{name}' is not a readable Word document: {type(exc).__name__}: {exc}.",
                            "check the file.") from None
    body = html.fragment_fromstring(converted.value or "<p></p>", create_parent="body")
    named = body.findall(".//p[@class='docx-title']")  # the Title paragraph: a name, not text
    title = next((" ".join(el.text_content().split()) for el in named if el.text_content().strip()), None) or title
    for element in named:
        element.drop_tree()
    links = [a for a in body.iter("a") if a.get("href", "").startswith(MARKERS)]
    markers = sum("-ref-" not in a.get("href", "") for a in links)  # in the text, not a note's link back to it
    for element in links:
        parent = element.getparent()
        alone = parent.tag == "sup" and not (parent.text or "").strip() and len(parent) == 1
        (parent if alone else element).drop_tree()  # the text after it stays
    sections = [html.Element("div")]
    for element in list(body):
        if element.tag == "h1" and len(sections[-1]):
            sections.append(html.Element("div"))
        sections[-1].append(element)
    chapters = [found for found in (chapter(section, None) for section in sections) if found.text.strip()]
    if not chapters:
        raise DocumentError(f"'{name}' is a Word document without text.", "check the file.")
    notes = [f"Word: {len(chapters)} chapter{'s' * (len(chapters) != 1)} (one per Heading 1)"
             + (f"; {markers} note mark{'s' * (markers != 1)} left out" if markers else "")]
    return chapters, title, notes
