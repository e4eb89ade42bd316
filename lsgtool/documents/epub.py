"""EPUB chapters in reading order (the spine) through EbookLib, front matter left out.

Left out: navigation documents, spine items marked non-linear, and items the book marks as front matter
(EPUB 3 ``epub:type`` cover, titlepage, toc, copyright-page, frontmatter, ...; EPUB 2 guide references of
those types). A chapter's title is its first heading, else the table of contents' label for it.
"""

from __future__ import annotations

import io
import re
import zipfile

from lsgtool.documents.model import Chapter, DocumentError, counted
from lsgtool.documents.webpage import headings_of, text_of

FRONT_MATTER = {"cover", "titlepage", "title-page", "toc", "copyright-page", "copyright", "frontmatter", "halftitlepage",
                "dedication", "epigraph", "imprint", "colophon", "landmarks", "loi", "lot"}
HEADINGS = ("h1", "h2", "h3")  # a chapter's title is its first of these
FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")


def _encrypted(data: bytes) -> bool:
    """Content encryption (DRM), not the font obfuscation many EPUBs carry."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if "META-INF/encryption.xml" not in archive.namelist():
            return False
        xml = archive.read("META-INF/encryption.xml").decode("utf-8", "replace")
    methods = re.findall(r'EncryptionMethod[^>]*Algorithm="([^"]+)"', xml)
    return any(method not in FONT_OBFUSCATION for method in methods)


def _types(element) -> set[str]:
    value = next((v for k, v in element.attrib.items() if k.endswith("}type") or k == "epub:type"), "")
    return set(value.split())


def _toc_labels(book) -> dict[str, str]:
    labels: dict[str, str] = {}

    def walk(entries) -> None:
        for entry in entries:
            if isinstance(entry, tuple):
                walk([entry[0]])
                walk(entry[1])
            elif getattr(entry, "href", None):
                labels.setdefault(entry.href.split("#")[0], entry.title)

    walk(book.toc)
    return labels


def read_epub(data: bytes, name: str) -> tuple[list[Chapter], str | None, list[str]]:
    """(chapters in spine order, title, notes)."""
    try:
        from ebooklib import ITEM_DOCUMENT, epub
        from lxml import html
    except ImportError:
        raise DocumentError(f"'{name}' is an EPUB, and reading EPUBs needs EbookLib.",
                            "pip install 'lsgtool[books]' (PyMuPDF and EbookLib, AGPL-3.0 licensed).") from None
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise DocumentError(f"'{name}' is not an EPUB (not a zip archive).", "pass an .epub file.")
    if _encrypted(data):
        raise DocumentError(f"'{name}' is an encrypted (DRM) EPUB.", "only EPUBs without DRM can be read.")
    try:
        book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": False})
    except Exception as exc:  # EbookLib raises EpubException, KeyError, lxml errors for broken books
        raise DocumentError(f"'{name}' is not a readable EPUB: {type(exc).__name__}: {exc}.", "check the file.") from None
    guide = {ref.get("href", "").split("#")[0] for ref in book.guide
             if ref.get("type", "").lower() in {"cover", "title-page", "toc", "copyright-page"}}
    labels, chapters, skipped = _toc_labels(book), [], []
    for idref, linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ITEM_DOCUMENT:
            continue
        body = html.fromstring(item.get_content()).find(".//body")
        types = _types(body) if body is not None else set()
        sections = {t for el in (body.iter() if body is not None else []) if isinstance(el.tag, str) for t in _types(el)}
        label = labels.get(item.get_name(), None)
        if (linear == "no" or "nav" in (getattr(item, "properties", None) or []) or item.get_name() in guide
                or types & FRONT_MATTER or (sections & FRONT_MATTER and not sections - FRONT_MATTER)):
            skipped.append(label or item.get_name())
            continue
        text = text_of(body) if body is not None else ""
        if not text:
            continue
        heading = next((el for tag in HEADINGS for el in body.iter(tag)), None)
        title = heading.text_content().strip() if heading is not None else label
        taken = title and text.startswith(title)
        text = text[len(title):].strip() if taken else text
        chapters.append(Chapter(title, text, headings=headings_of(text, body, heading if taken else None)))
    if not chapters:
        raise DocumentError(f"'{name}' has no text in its spine.", "check that the EPUB is not empty.")
    titles = book.get_metadata("DC", "title")
    title = titles[0][0] if titles else None  # (pandoc's title page is named by the book's title: so said)
    skipped = ["the title page" if title and " ".join(part.split()) == " ".join(title.split()) else part
               for part in skipped]
    notes = [f"EPUB: {counted(len(chapters), 'chapter')} from the spine"
             + (f"; front matter left out: {', '.join(skipped)}" if skipped else "")]
    return chapters, title, notes
