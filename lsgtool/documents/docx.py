"""Word documents (``.docx``) through mammoth, which turns their paragraph styles into HTML (headings, lists, tables,
footnotes), read as web pages and EPUB chapters are (``documents.webpage``): a chapter for each ``Heading 1`` (else
for each heading of the first level there are several of; text before the first is a chapter of its own, and a
heading with no text of its own names the next chapter too), the notes a chapter of their own with their markers
left out of the text, the table of contents left out; the title the ``Title`` paragraphs it opens with (not its
text), else its core properties' title, else its first line where that is a title as in a text file."""

from __future__ import annotations

import io
import re
import zipfile

from lsgtool.documents.model import SEPARATOR, Chapter, DocumentError
from lsgtool.documents.text import title_of
from lsgtool.documents.webpage import chapter

STYLES = "\n".join([  # mammoth maps headings, lists and tables itself
    "p[style-name='Title'] => p.docx-title:fresh", "p[style-name='Subtitle'] => p.docx-subtitle:fresh",
    "p[style-name='Author'] => p.docx-front:fresh", "p[style-name='Date'] => p.docx-front:fresh",
    "p[style-name='TOC Heading'] => p.docx-front:fresh"])
FRONT = ("docx-title", "docx-subtitle", "docx-front")  # a title page's paragraphs, when the document opens with them
CONTENTS = re.compile(r"(?:table of )?contents", re.IGNORECASE)  # the heading of a table of contents
MARKERS = ("#footnote-", "#endnote-")  # a note's marker in the text and its link back from the note
NOTE_IDS = ("footnote-", "endnote-")  # the list of notes mammoth puts at the end
MARK = re.compile(r"\[?(?:\d{1,3}|[a-z]|[ivx]{1,4}|[*†‡§]{1,3})?\]?|↑")  # a note's marker ("[1]"), its link back
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # a compound file: Word 97-2003, or an encrypted .docx
SPLIT = ("h1", "h2", "h3")  # a chapter per heading of the first of these levels that has several


def _contents(paragraph) -> bool:
    """Whether ``paragraph`` is a line of Word's table of contents: mostly a link to a heading's ``_Toc`` mark."""
    words = len(paragraph.text_content().split())
    linked = sum(len(a.text_content().split()) for a in paragraph.iter("a") if a.get("href", "").startswith("#_Toc"))
    return linked > 0 and linked >= words / 2


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
    if not data.strip():
        raise DocumentError(f"'{name}' is empty.", "pass a Word document with text in it.")
    if data.startswith(OLE):
        raise DocumentError(f"'{name}' is password-protected, or a Word 97-2003 document under a .docx name.",
                            "remove its password, or save it as .docx (Word 2007 or later), PDF or text.")
    if not is_docx(data):
        damaged = data.startswith(b"PK") and not zipfile.is_zipfile(io.BytesIO(data))
        raise DocumentError(f"'{name}' is " + ("damaged (an incomplete zip archive)." if damaged else
                                               "not a Word document (no word/document.xml in a zip archive)."),
                            "pass a .docx file (Word 2007 or later; save a .doc as .docx first).")
    try:
        title = _core_title(data)
        converted = mammoth.convert_to_html(io.BytesIO(data), style_map=STYLES,
                                            convert_image=mammoth.images.img_element(lambda image: {}))
    except Exception as exc:  # mammoth raises KeyError, ValueError, lxml errors for broken documents
        raise DocumentError(f"'{name}' is not a readable Word document: {type(exc).__name__}: {exc}.",
                            "check the file.") from None
    body = html.fragment_fromstring(converted.value or "<p></p>", create_parent="body")
    leading = []  # the title page it opens with (a title maybe over two lines, a subtitle, author, date): not text
    for element in body:
        if element.get("class") not in FRONT and element.text_content().strip():
            break
        leading.append(element)
    said = {kind: " ".join(" ".join(el.text_content().split()) for el in leading if el.get("class") == kind)
            for kind in FRONT[:2]}
    title = (said["docx-title"] + (": " + said["docx-subtitle"] if said["docx-subtitle"] else "")) or title
    lines = [p for p in body.iter("p") if _contents(p)]  # Word's table of contents: lines linking to its headings
    contents = [p for p in lines if p.getprevious() in lines or p.getnext() in lines]  # several, one after another
    before = contents[0].getprevious() if contents else None
    if before is not None and CONTENTS.fullmatch(" ".join(before.text_content().split())):  # its heading
        contents.append(before)
    for element in [*leading, *contents, *body.findall(".//p[@class='docx-front']")]:
        if element.getparent() is not None:
            element.drop_tree()
    links = [a for a in body.iter("a") if a.get("href", "").startswith(MARKERS)]
    marks = [a for a in links if MARK.fullmatch(a.text_content().strip())]  # "[1]", "*"; a note's way back: "↑"
    markers = sum("-ref-" not in a.get("href", "") for a in marks)  # in the text, not a note's link back to it
    for element in links:
        if element not in marks:  # a cross-reference in words ("see the note on counts"): its words stay
            element.drop_tag()
            continue
        parent = element.getparent()
        alone = parent.tag == "sup" and not (parent.text or "").strip() and len(parent) == 1
        (parent if alone else element).drop_tree()  # the text after it stays
    notes_list = [el for el in body if el.tag == "ol" and len(el) and (el[0].get("id") or "").startswith(NOTE_IDS)]
    for element in notes_list:
        body.remove(element)
    counts = {tag: len(body.findall(tag)) for tag in SPLIT}
    opening = next((el for el in body if el.text_content().strip()), None)
    if title is None and counts["h1"] == 1 and opening is not None and opening.tag == "h1":  # one Heading 1, over
        title = " ".join(opening.text_content().split())  # all of it: the document's title ("Chapter 7: Leave")
    level = next((tag for tag in SPLIT if counts[tag] > 1), "h1")  # the top headings there are several of
    splits = SPLIT[:SPLIT.index(level) + 1]  # a heading above that level starts a chapter too
    sections = [html.Element("div")]
    for element in list(body):
        if element.tag in splits and len(sections[-1]):
            sections.append(html.Element("div"))
        sections[-1].append(element)
    if notes_list:
        sections.append(html.Element("div"))
        sections[-1].extend(notes_list)
    chapters, pending = [], []
    for i, section in enumerate(sections):
        found = chapter(section, "Notes" if notes_list and i == len(sections) - 1 else None)
        if not found.text.strip():  # a heading right before another ("Part A", then "Chapter 1"): in its title
            pending += [found.title] if found.title else []
            continue
        if pending:
            found.title = SEPARATOR.join(pending + ([found.title] if found.title else []))
            pending = []
        chapters.append(found)
    if not chapters:
        raise DocumentError(f"'{name}' is a Word document without text.", "check the file.")
    notes = [f"Word: {len(chapters)} chapter{'s' * (len(chapters) != 1)} (one per {level.upper()} heading"
             + (", and its notes" if notes_list else "") + ")"
             + (f"; {markers} note mark{'s' * (markers != 1)} left out" if markers else "")]
    if title is None and chapters[0].title is None:  # no Title paragraph, no title in its properties: its first
        title = title_of(chapters[0].text)  # line where that is one, as a text file's ("HOMEOWNERS POLICY")
    return chapters, title, notes
