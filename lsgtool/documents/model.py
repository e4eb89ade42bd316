"""What a read document is: chapters of plain text, a title, notes on the extraction, a content digest, and where
each chapter (and each PDF page) sits in the document's text, so a character offset can be named for a reader."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property

from lsgtool.core.errors import UsageError

NAMED_KINDS = (".txt", ".md", ".vtt", ".srt", ".pdf", ".epub", ".docx", ".html")  # what messages say is read


def kinds_said(conjunction: str = "or") -> str:
    """``NAMED_KINDS`` as a message says them: ".txt, .md, ... or .html"."""
    return ", ".join(NAMED_KINDS[:-1]) + f" {conjunction} {NAMED_KINDS[-1]}"


def counted(n: int, thing: str) -> str:
    """``n`` of a ``thing`` as a note says them: "1 chapter", "2 chapters"; in a phrase, "|s" marks where the
    plural's "s" goes ("footnote line|s moved": "1 footnote line moved", "3 footnote lines moved")."""
    return f"{n:,} " + (thing.replace("|s", "" if n == 1 else "s", 1) if "|s" in thing else
                        thing if n == 1 else thing + "s")


SEPARATOR = " — "  # between the title of a book (or chapter) and that of a chapter (or section) in it


class DocumentError(UsageError):
    """An input that gives no text: the message names the file and says why."""


@dataclass
class Chapter:
    title: str | None
    text: str
    start: int = 0  # where ``text`` begins in its Document's ``text`` (set by the Document)
    # EPUB: (start, end, title) of each heading paragraph in ``text``, not counted as a paragraph
    headings: list[tuple[int, int, str]] = field(default_factory=list)

    def paragraph(self, at: int) -> tuple[str | None, int]:
        """The title of the section ``text[at]`` is in (the chapter's, or that and the heading above it) and the
        number of its paragraph there, counted from that heading (blank lines separate paragraphs)."""
        i = bisect.bisect_right([start for start, _, _ in self.headings], at) - 1
        if i < 0:
            return self.title, self.text.count("\n\n", 0, max(at, 0)) + 1
        _, end, heading = self.headings[i]
        title = self.title + SEPARATOR + heading if self.title and heading != self.title else self.title or heading
        return title, max(self.text.count("\n\n", end, at), 1)


@dataclass
class Place:
    """Where a character offset of a document's text is, in the words a reader uses to find it."""

    chapter: int  # index into Document.chapters
    title: str | None  # the chapter's, and in an EPUB the heading above the offset in it ("Jeremiah — Chapter 2")
    page: int | None = None  # PDF page (1-based, as a viewer counts)
    line: int | None = None  # line of a text or Markdown file (1-based)
    paragraph: int | None = None  # paragraph within its chapter (1-based)
    speaker: str | None = None  # in a transcript or caption file: who said it
    time: str | None = None  # and when ("00:12:31"), where the file says


@dataclass
class Document:
    name: str  # the path as given, "-" for standard input, or "<dataset>[i]"
    kind: str  # text, markdown, captions, pdf, epub, docx, html, stdin, dataset
    chapters: list[Chapter]
    digest: str  # sha256 of the bytes the text came from
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    reference: str | None = None  # a gold summary (dataset rows)
    # The text offsets index: a text or Markdown file's own text as read (chapters are slices of it, headings
    # between them); None for PDF, EPUB and dataset rows, whose text is their chapters joined by blank lines.
    source: str | None = None
    pages: list[int] = field(default_factory=list)  # PDF: offset in ``text`` where page i + 1 begins
    transcript: bool | None = None  # the reader's say (--transcript/--no-transcript); None: detected (``reading``)

    def __post_init__(self) -> None:
        if self.source is None:
            offset = 0
            for chapter in self.chapters:
                chapter.start = offset
                offset += len(chapter.text) + 2

    @property
    def text(self) -> str:
        if self.source is not None:
            return self.source
        return "\n\n".join(chapter.text for chapter in self.chapters)

    @property
    def words(self) -> int:
        """Words of the text, a caption file's said words alone (not its cues' numbers and timings)."""
        from lsgtool.documents.prose import said_only

        return sum(len(said_only(chapter.text).split()) for chapter in self.chapters)

    @cached_property
    def _chapter_starts(self) -> list[int]:
        return [chapter.start for chapter in self.chapters]

    @cached_property
    def line_starts(self) -> list[int]:
        """Offsets in ``source`` where a line begins after the first (a book's sources are many lookups)."""
        return [match.end() for match in re.finditer("\n", self.source or "")]

    @cached_property
    def reading(self) -> str:
        """How the text is read (``documents.prose.reading``): captions, transcript or prose."""
        from lsgtool.documents.prose import reading

        return reading(self.text, self.transcript)

    def place(self, offset: int) -> Place:
        """The chapter (and page, line or paragraph) the character at ``offset`` of ``text`` is in."""
        i = max(bisect.bisect_right(self._chapter_starts, offset) - 1, 0)
        chapter = self.chapters[i]
        found = Place(i, chapter.title)
        if self.pages:
            found.page = max(bisect.bisect_right(self.pages, offset), 1)
        if self.source is not None:
            found.line = bisect.bisect_right(self.line_starts, offset) + 1
        elif not self.pages:
            found.title, found.paragraph = chapter.paragraph(offset - chapter.start)
        from lsgtool.documents.prose import speakers

        turn = speakers(self.text, [offset], self.transcript)[0]
        if turn is not None:
            found.speaker, found.time = turn.speaker, turn.time(offset)
        return found
