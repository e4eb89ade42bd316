"""One entry point for every kind of input file; the kind comes from the content, the suffix breaks ties."""

from __future__ import annotations

import hashlib
from pathlib import Path

from lsgtool.documents.docx import is_docx
from lsgtool.documents.model import Chapter, Document, DocumentError
from lsgtool.documents.prose import is_captions, turns
from lsgtool.documents.text import chapters, decode, title_of
from lsgtool.documents.webpage import SUFFIXES as PAGES
from lsgtool.documents.webpage import looks_like_html

SUFFIXES = (".txt", ".md", ".markdown", ".text", ".vtt", ".srt", ".pdf", ".epub", ".docx", *PAGES)


def supported(path: Path) -> bool:
    return path.suffix.lower() in SUFFIXES


def read_bytes(data: bytes, name: str, suffix: str = "", transcript: bool | None = None) -> Document:
    """A document from bytes: PDF, EPUB, Word and HTML by their signature, else UTF-8 text (Markdown by its suffix,
    captions by their format); ``transcript``: read its text as a transcript (True) or prose (False), None: detected."""
    digest = hashlib.sha256(data).hexdigest()
    suffix = suffix.lower()
    if data.startswith(b"%PDF") or suffix == ".pdf":
        from lsgtool.documents.pdf import read_pdf

        found, title, notes, pages = read_pdf(data, name)
        return Document(name, "pdf", found, digest, title, notes, pages=pages, transcript=transcript)
    if (data.startswith(b"PK") and b"application/epub+zip" in data[:200]) or suffix == ".epub":
        from lsgtool.documents.epub import read_epub

        found, title, notes = read_epub(data, name)
        return Document(name, "epub", found, digest, title, notes, transcript=transcript)
    if suffix == ".docx" or is_docx(data):
        from lsgtool.documents.docx import read_docx

        found, title, notes = read_docx(data, name)
        return Document(name, "docx", found, digest, title, notes, transcript=transcript)
    if suffix in PAGES or looks_like_html(data):
        from lsgtool.documents.webpage import read_html

        found, title, notes = read_html(data, name)
        return Document(name, "html", found, digest, title, notes, transcript=transcript)
    text = decode(data, name)
    captions = is_captions(text)
    if suffix in (".vtt", ".srt") or captions:  # WebVTT, SubRip: cues, read as turns (documents.prose)
        if not (captions and turns(text)):
            raise DocumentError(f"'{name}' holds no caption cues with words (a timing line such as "
                                "'00:00:01.000 --> 00:00:04.000' followed by what was said).",
                                "pass a WebVTT or SubRip file, or the text as .txt.")
        return Document(name, "captions", [Chapter(None, text)], digest, source=text, transcript=transcript)
    markdown = suffix in (".md", ".markdown")
    kind = "stdin" if name == "-" else "markdown" if markdown else "text"
    markdown = markdown or text.lstrip().startswith("# ")
    return Document(name, kind, chapters(text, markdown), digest, title_of(text, markdown, transcript), source=text,
                    transcript=transcript)


def read(path: str | Path, transcript: bool | None = None) -> Document:
    """Read a file (``-``: standard input); a missing, unreadable or text-less file raises DocumentError.
    ``transcript``: as ``read_bytes`` takes it."""
    if str(path) == "-":
        import sys

        return read_bytes(sys.stdin.buffer.read(), "-", transcript=transcript)
    path = Path(path)
    if not path.exists():
        raise DocumentError(f"no such file: '{path}'.", "check the path (a folder reads every supported file in it).")
    if path.is_dir():
        raise DocumentError(f"'{path}' is a folder.", "pass the folder as an input of its own: its files are read.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read '{path}': {exc.strerror or exc}.", "check its permissions.") from None
    return read_bytes(data, str(path), path.suffix, transcript)
