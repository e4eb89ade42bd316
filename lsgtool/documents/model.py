"""What a read document is: chapters of plain text, a title, notes on the extraction, a content digest."""

from __future__ import annotations

from dataclasses import dataclass, field

from lsgtool.core.errors import UsageError


class DocumentError(UsageError):
    """An input that gives no text: the message names the file and says why."""


@dataclass
class Chapter:
    title: str | None
    text: str


@dataclass
class Document:
    name: str  # the path as given, "-" for standard input, or "<dataset>[i]"
    kind: str  # text, markdown, pdf, epub, stdin, dataset
    chapters: list[Chapter]
    digest: str  # sha256 of the bytes the text came from
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    reference: str | None = None  # a gold summary (dataset rows)

    @property
    def text(self) -> str:
        return "\n\n".join(chapter.text for chapter in self.chapters)

    @property
    def words(self) -> int:
        return sum(len(chapter.text.split()) for chapter in self.chapters)
