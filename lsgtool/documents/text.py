"""Plain text and Markdown: decoding that refuses binary data, and chapters found at their headings.

Chapter headings: Markdown ``#`` / ``##`` lines, and short stand-alone lines such as ``Chapter 12``,
``CHAPTER XII. The Storm``, ``BOOK II``, ``Part Three`` (a blank line or the start before them).
"""

from __future__ import annotations

import re

from lsgtool.documents.model import Chapter, DocumentError

MARKDOWN_HEADING = re.compile(r"^(#{1,2})\s+(.+?)\s*#*\s*$")
NAMED_HEADING = re.compile(
    r"^(chapter|book|part|canto|act|volume)\s+([0-9]+|[ivxlcdm]+|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|[a-z]+teen|twenty[- a-z]*|thirty[- a-z]*|forty[- a-z]*|fifty[- a-z]*)\b[.:]?(\s.*)?$",
    re.IGNORECASE,
)
MAX_HEADING = 80  # characters: longer lines are prose that happens to start with "Chapter ..."


def decode(data: bytes, name: str) -> str:
    """UTF-8 (with or without BOM) or UTF-16 with a BOM; binary or other encodings are refused, naming the file."""
    if not data.strip():
        raise DocumentError(f"'{name}' is empty.", "pass a file with text in it.")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    if b"\x00" in data[:8192]:
        raise DocumentError(f"'{name}' is binary data, not text.",
                            "pass a .txt, .md, .pdf or .epub file (or text on standard input).")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"'{name}' is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r}).",
                            "convert it first, e.g. `iconv -f latin1 -t utf-8 FILE > FILE.utf8.txt`.") from None


def _heading(line: str, previous_blank: bool, markdown: bool) -> str | None:
    stripped = line.strip()
    if markdown:
        match = MARKDOWN_HEADING.match(stripped)
        if match:
            return match.group(2)
    if previous_blank and len(stripped) <= MAX_HEADING and NAMED_HEADING.match(stripped):
        return stripped.rstrip(".:")
    return None


def chapters(text: str, markdown: bool = False) -> list[Chapter]:
    """Split at chapter headings; text before the first heading is a chapter without a title (if not blank).
    Each chapter's text is a slice of ``text`` (its surrounding blank lines left out) starting at its ``start``."""
    found: list[Chapter] = []
    title, first, previous_blank, offset = None, 0, True, 0
    for line in text.splitlines(keepends=True):
        heading = _heading(line, previous_blank, markdown)
        if heading is not None:
            if text[first:offset].strip() or title is not None:
                found.append(_slice(text, title, first, offset))
            title, first = heading, offset + len(line)
        previous_blank = not line.strip()
        offset += len(line)
    if text[first:].strip() or title is not None:
        found.append(_slice(text, title, first, len(text)))
    return merge_empty(found) or [_slice(text, None, 0, len(text))]


def _slice(text: str, title: str | None, start: int, end: int) -> Chapter:
    """``text[start:end]`` without the whitespace around it, with the offset where what is kept begins."""
    part = text[start:end]
    lead = len(part) - len(part.lstrip())
    return Chapter(title, part.strip(), start + lead)


def merge_empty(found: list[Chapter]) -> list[Chapter]:
    """A heading with no text of its own (``BOOK II`` right before ``Chapter 1``) joins the next one's title."""
    merged: list[Chapter] = []
    pending: list[str] = []
    for chapter in found:
        if not chapter.text:
            pending += [chapter.title] if chapter.title else []
            continue
        title = " — ".join(pending + ([chapter.title] if chapter.title else [])) or None
        merged.append(Chapter(title, chapter.text, chapter.start))
        pending = []
    return merged
