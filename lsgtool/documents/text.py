"""Plain text and Markdown: decoding that refuses binary data, and chapters found at their headings.

Chapter headings: Markdown ``#`` / ``##`` lines, and short stand-alone lines such as ``Chapter 12``,
``CHAPTER XII. The Storm``, ``BOOK II``, ``Part Three`` (a blank line or the start before them). A book, part or
volume holds the chapters after it, which are titled with it (``BOOK II — Chapter 3``), as are chapters under
one of several Markdown ``#`` headings; where chapter numbering starts over (several ``Chapter 1``), the short
stand-alone line before each start names the book it opens (``Genesis`` in a Bible; not when one start has no
such line, as after a contents list).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lsgtool.documents.model import SEPARATOR, Chapter, DocumentError, kinds_said
from lsgtool.documents.prose import ATX, FRONT_MATTER, fenced, heading_words, readable, spoken_title, title_span, turns

MARKDOWN_HEADING = re.compile(r"^(#{1,2})\s+(.+?)\s*#*\s*$")
NAMED_HEADING = re.compile(
    r"^(chapter|book|part|canto|act|volume)\s+([0-9]+|[ivxlcdm]+|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|[a-z]+teen|twenty[- a-z]*|thirty[- a-z]*|forty[- a-z]*|fifty[- a-z]*)\b[.:]?(\s.*)?$",
    re.IGNORECASE,
)
CONTAINERS = ("book", "part", "volume")  # named headings that hold chapters
FIRST = ("1", "i", "one")  # a chapter number that starts the numbering (over)
MAX_HEADING = 80  # characters: longer lines are prose that happens to start with "Chapter ..."
SENTENCE_END = (".", "!", "?", ",", ";", ":", '"', "”", "’")


def decode(data: bytes, name: str) -> str:
    """UTF-8 (with or without BOM), or UTF-16 or UTF-32 with a BOM; binary or other encodings are refused, naming
    the file.

    Offsets index the text as ``open(path, encoding="utf-8", newline="")`` reads it (``"utf-16"``, ``"utf-32"``):
    ``\\r\\n`` kept, and a UTF-8 BOM, which that read keeps as U+FEFF, kept in its place as a space (no sentence
    or heading includes it); the UTF-16 and UTF-32 codecs drop their BOM, here as there."""
    if not data.strip():
        raise DocumentError(f"'{name}' is empty.", "pass a file with text in it.")
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # before UTF-16's, which begins the same
        return data.decode("utf-32")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    if b"\x00" in data[:8192]:
        office = OFFICE.get(Path(name).suffix.lower())
        if office:
            raise DocumentError(f"'{name}' is {office}, which lsgtool does not read.",
                                "save it as .docx, PDF or text first" + (
                                    f", or convert it, e.g. `pandoc {name} -o {Path(name).stem}.docx`."
                                    if name.lower().endswith(".odt") else "."))
        raise DocumentError(f"'{name}' is binary data, not text.",
                            f"pass a {kinds_said()} file (or text on standard input).")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"'{name}' is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r}).",
                            "convert it first, e.g. `iconv -f latin1 -t utf-8 FILE > FILE.utf8.txt`.") from None
    if text.lstrip("\ufeff \t\r\n").startswith("{\\rtf"):
        raise DocumentError(f"'{name}' is an RTF document: its text is in markup lsgtool does not read.",
                            "save it as .docx, PDF or text first.")
    if name.lower().endswith((".csv", ".tsv")):
        raise DocumentError(f"'{name}' is a table of values (CSV), not prose: it has no sentences to summarise.",
                            f"a CSV of documents is read with --dataset {name} --text-column COLUMN; else pass a "
                            f"{kinds_said()} file.")
    if name.lower().endswith(".ipynb") or '"nbformat"' in text[-2000:] and _is_json(text):
        raise DocumentError(f"'{name}' is a Jupyter notebook (JSON): its cells' code, outputs and keys would be read "
                            "as sentences.", f"convert it first, e.g. `jupyter nbconvert --to markdown {name}`, and "
                            f"pass the {Path(name).stem}.md it writes.")
    if _is_xml(text):
        raise DocumentError(f"'{name}' is XML data (a feed or a record), not prose: its tags would be read as "
                            "sentences.", "save the article itself as a web page (.html) or text and pass that; "
                            "many documents at once go in a JSON Lines or CSV file for --dataset.")
    if name.lower().endswith((".json", ".jsonl", ".ndjson")) or _is_json(text):
        raise DocumentError(f"'{name}' is JSON data, not prose: its keys and quotes would be read as sentences.",
                            f"a JSON or JSON Lines file of documents is read with --dataset {name} --text-column "
                            f"COLUMN; else pass the text itself as a {kinds_said()} file.")
    if name.lower().endswith((".tex", ".latex", ".ltx")) or LATEX.match(text):
        raise DocumentError(f"'{name}' is LaTeX source: its text is in markup lsgtool does not read (commands, "
                            "macros, environments).", f"pass the PDF it builds, or convert it first, e.g. `pandoc "
                            f"{name} -o {Path(name).stem}.md`.")
    return " " + text[1:] if text.startswith("\ufeff") else text


# XML that is not a web page (an RSS or Atom feed, a record): its declaration, then its root's name past
# processing instructions, comments and a doctype (``_is_xml``)
XML_ROOT = re.compile(r"[\ufeff\s]*(<\?xml\b[^>]*\?>\s*)?(?:<\?[^>]*\?>\s*|<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*"
                      r"<([A-Za-z][\w:.-]*)(\s+[\w:.-]+\s*=)?", re.DOTALL)
FEEDS = ("rss", "feed", "rdf:rdf")
# what the office formats lsgtool does not read are, by their suffix
OFFICE = {".doc": "a Word 97-2003 document", ".odt": "an OpenDocument text", ".pages": "a Pages document",
          ".ppt": "a PowerPoint presentation", ".pptx": "a PowerPoint presentation", ".xls": "an Excel workbook",
          ".xlsx": "an Excel workbook", ".odp": "an OpenDocument presentation", ".ods": "an OpenDocument spreadsheet"}
# LaTeX source (whatever its name): its first line, past blank lines and % comments, sets the document class or
# begins the document (not a Markdown guide that shows \documentclass in a code block)
LATEX = re.compile(r"(?:[ \t]*(?:%[^\n]*)?\r?\n)*[ \t]*\\(?:documentclass|begin\{document\})")


def _is_xml(text: str) -> bool:
    """Whether ``text`` is XML that is no web page: an XML declaration before a root not html, or a feed's root
    with its attributes (``<rss version="2.0">``; a text that opens on the words "<rss> is ..." is prose)."""
    root = XML_ROOT.match(text[:5000])
    if root is None or not (root.group(1) or root.group(3)):
        return False
    return root.group(2).lower() in FEEDS or bool(root.group(1)) and root.group(2).lower() != "html"


def _is_json(text: str) -> bool:
    """Whether ``text`` is one JSON object or array (a chat export, an API's answer): not prose."""
    body = text.strip(" \ufeff\t\r\n")
    if not body or body[0] not in "{[" or body[-1] not in "}]":
        return False
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


@dataclass
class Heading:
    start: int  # where its line begins in the text
    end: int  # where its line ends (its line break included)
    title: str
    level: int  # 1: a book, part or ``#`` heading; 2: a chapter or ``##`` heading
    number: str | None = None  # a named heading's number, as written
    container: bool = False  # it holds the chapters after it, which are titled with it


Line = tuple[int, str, bool, bool]  # (offset, line, a blank line or the start before it, a heading)


def _heading(line: str, previous_blank: bool, markdown: bool) -> tuple[int, str, str | None] | None:
    """(level, title, number) of a heading line, else None."""
    stripped = line.strip()
    if markdown and ATX.match(line):  # at most three spaces before its marks: more is an indented code block
        match = MARKDOWN_HEADING.match(stripped)
        if match:  # its words, as a reader sees them
            return len(match.group(1)), heading_words(stripped) or match.group(2), None
    if previous_blank and len(stripped) <= MAX_HEADING:
        match = NAMED_HEADING.match(stripped)
        if match:
            return 1 if match.group(1).lower() in CONTAINERS else 2, stripped.rstrip(".:"), match.group(2).lower()
    return None


@lru_cache(maxsize=4)
def headings(text: str, markdown: bool = False) -> tuple[Heading, ...]:
    """The headings of ``text`` in order, those that hold the chapters after them marked ``container`` (kept for
    the text's chapters and its title, which both ask)."""
    found: list[Heading] = []
    openers: list[Line | None] = []  # the last line before each `Chapter 1`
    previous_blank, last, offset, fence = True, None, 0, None
    for line in text.splitlines(keepends=True):
        fence, code = fenced(fence, line) if markdown else (None, False)
        heading = None if code else _heading(line, previous_blank, markdown)
        if heading is not None:
            level, title, number = heading
            found.append(Heading(offset, offset + len(line), title, level, number, level == 1 and number is not None))
            openers += [last] if level == 2 and number in FIRST else []
        if line.strip():
            last = (offset, line, previous_blank, heading is not None)
        previous_blank = not line.strip()
        offset += len(line)
    if sum(h.level == 1 and h.number is None for h in found) > 1:  # several Markdown `#`: each holds its `##`
        for h in found:
            h.container = h.container or h.level == 1
    books = [_book(line) for line in openers]
    if len(books) > 1 and all(books):  # numbering starts over, each time after a book's name (not a contents list)
        found += books
    return tuple(sorted(found, key=lambda h: h.start))


def _book(line: Line | None) -> Heading | None:
    """The line before a ``Chapter 1`` as the heading of the book it opens, if it is short and stands alone (not
    a heading already, nor the end of a sentence, which ends the chapter before)."""
    if line is None:
        return None
    offset, text, stand_alone, heading = line
    title = text.strip()
    if heading or not stand_alone or len(title) > MAX_HEADING or title.endswith(SENTENCE_END):
        return None
    return Heading(offset, offset + len(text), title, 1, container=True)


def chapters(text: str, markdown: bool = False) -> list[Chapter]:
    """Split at chapter headings; text before the first heading is a chapter without a title (if not blank).
    Each chapter's text is a slice of ``text`` (its surrounding blank lines left out) starting at its ``start``."""
    found: list[Chapter] = []
    marks, book = headings(text, markdown), None
    for heading, after in zip([None, *marks], [*marks, None]):
        start, end = heading.end if heading else 0, after.start if after else len(text)
        title = None
        if heading is not None:
            book = heading.title if heading.container else book if heading.level == 2 else None  # chapters stay in it
            title = book + SEPARATOR + heading.title if heading.level == 2 and book else heading.title
            if heading.container and not text[start:end].strip():
                continue  # a book's heading right before its first chapter: its chapters carry its name
        if text[start:end].strip() or title is not None:
            found.append(_slice(text, title, start, end))
    return merge_empty(found) or [_slice(text, None, 0, len(text))]


def title_of(text: str, markdown: bool = False, transcript: bool | None = None) -> str | None:
    """The document's title as a reader sees it: its YAML front matter's, an e-mail's subject, or its first line
    when that is a heading or stands alone (``prose.title_span``) and reads as words (not a badge, an image, HTML, a
    list item, a rule or a link); None without one, or when that line is the first of several chapters' headings of
    one level ("# The Storm" before "# The Morning", "CHAPTER I" before "CHAPTER II", two ``===`` headings)."""
    front = FRONT_MATTER.match(text)
    named = _yaml_title(front.group(1)) if front else None
    if named:
        return named
    mail = MAIL_HEADER.match(text)  # an e-mail's: its subject
    subject = re.search(r"(?im)^subject:[ \t]*(\S.*?)[ \t]*$", mail.group()) if mail else None
    if subject:
        return readable(subject.group(1))
    base = front.end() if named is not None else 0  # front matter without a title: the first line after it
    # (not YAML: "title: Rust: A Guide" is read as written, as prose.title_span reads it)
    base = DECORATION.match(text, base).end()  # a README's logo and badges before its heading
    span = title_span(text[base:], transcript) if base else title_span(text, transcript)
    if span is None and not base and turns(text, transcript):  # a transcript's title page
        found = spoken_title(text, transcript)
        return readable(text[found[0]:found[1]].replace("\n", " — ")) if found else None
    if span is None:
        return None
    span = (base + span[0], base + span[1])
    end = text.find("\n", span[0])
    line = text[text.rfind("\n", 0, span[0]) + 1:end if end >= 0 else len(text)]
    marks = headings(text, markdown)  # the same the chapters were split at
    first = next((h for h in marks if h.start <= span[0] < h.end), None)
    if first is not None and any(h is not first and h.level <= first.level for h in marks):
        return None
    if SETEXT_TITLE.search(text, span[1]) and UNDERLINED.match(text, span[0]):
        return None  # the first of several headings underlined with ===
    title = readable(text[span[0]:span[1]])
    if NOT_A_TITLE.match(line) or not re.search(r"[^\W\d_]{2}", title) or re.fullmatch(r"\S*://\S*|www\.\S+", title) \
            or NO_NAME.fullmatch(title):
        return None
    return title or None


# an e-mail's header: two or more of its fields, one a line, at the start
MAIL_HEADER = re.compile(r"(?:(?:from|to|cc|bcc|date|sent|subject|reply-to):[^\n]*\n){2,}", re.IGNORECASE)
# what a first line that is no title begins with: HTML, an image, a table row, a quote, a badge, a link, a list
# item, or it is a rule
NOT_A_TITLE = re.compile(r"\s*(?:[<!|>]|\[!?\[|\[[^\]]*\]\(|(?:[-*+•]|\d{1,3}[.)])\s|([-*_])(?:\s*\1){2,}\s*$)")
# a first line that names no document: a section every document has, a placeholder, or a letter's greeting
NO_NAME = re.compile(r"(?:(?:\d+(?:\.\d+)*\.?\s+)?(?:introduction|abstract|summary|executive summary|contents|"
                     r"table of contents|preface|foreword|overview|background|todo|tbd|draft|notes|untitled)"
                     r"|(?:dear|hi|hello|hey|greetings|to)\b[^\n]*,)[\s.:]*", re.IGNORECASE)
DECORATION = re.compile(r"(?:[ \t]*(?:(?:<|!\[|\[!\[)[^\n]*)?\r?\n)*")  # blank, HTML, image or badge lines
SETEXT_TITLE = re.compile(r"^[^\n]*\S[^\n]*\r?\n {0,3}=+[ \t]*\r?$", re.M)  # a heading underlined with ===
UNDERLINED = re.compile(r"[^\n]*\r?\n {0,3}=+[ \t]*\r?$", re.M)  # the title's own line is one


def _yaml_title(front: str) -> str | None:
    """The ``title`` of YAML front matter as a string ("" when it names none usable), None when it cannot be read."""
    try:
        import yaml

        data = yaml.safe_load(front)
    except Exception:  # no PyYAML, or not YAML after all
        return None
    if not isinstance(data, dict):  # "---" rules around a paragraph, not front matter
        return None
    value = data.get("title")
    if isinstance(value, list):
        value = " ".join(str(v) for v in value if isinstance(v, (str, int, float)))
    return " ".join(str(value).split()) if isinstance(value, (str, int, float)) else ""


def _slice(text: str, title: str | None, start: int, end: int) -> Chapter:
    """``text[start:end]`` without the whitespace around it, with the offset where what is kept begins."""
    part = text[start:end]
    lead = len(part) - len(part.lstrip())
    return Chapter(title, part.strip(), start + lead)


def merge_empty(found: list[Chapter]) -> list[Chapter]:
    """A heading with no text of its own (a Markdown title right before ``## Chapter 1``) joins the next one's
    title."""
    merged: list[Chapter] = []
    pending: list[str] = []
    for chapter in found:
        if not chapter.text:
            pending += [chapter.title] if chapter.title else []
            continue
        title = SEPARATOR.join(pending + ([chapter.title] if chapter.title else [])) or None
        merged.append(Chapter(title, chapter.text, chapter.start))
        pending = []
    return merged
