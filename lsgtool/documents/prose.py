"""The prose of a document and its sentences as a reader sees them.

A summary picks sentences, and what it shows must read as text: not a heading glued to the sentence after it,
not a line of a code block, not Markdown or reStructuredText markup. Two things here:

- ``prose_sentences(text)``: the spans of the sentences of the document's prose, each inside one block. Blocks
  end at blank lines, headings (``#`` lines, and a line underlined with ``===`` / ``---``), list items and
  block quotes; code (fenced with backticks or tildes, or indented after a blank line), tables, link reference
  definitions, HTML lines and rules are not prose. In a transcript (most lines ``Speaker: words``) each line
  is a turn, a block of its own.
- ``readable(span_text)``: a sentence as the summary writes it: inline markup removed (emphasis, inline code,
  links and images, footnote markers, reStructuredText roles and literals), list and quote markers dropped,
  whitespace collapsed. The sentence's source is still its exact span in the text.
"""

from __future__ import annotations

import re
from typing import Iterator

FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
ATX = re.compile(r" {0,3}#{1,6}(?:\s|$)")
ATX_MARKS = re.compile(r" {0,3}#{1,6}\s+")  # a heading's marks, up to its text
SETEXT = re.compile(r" {0,3}(?:=+|-+)\s*$")
RULE = re.compile(r" {0,3}([-*_])(?:\s*\1){2,}\s*$")
TABLE = re.compile(r"\s*\|")
DEFINITION = re.compile(r" {0,3}\[[^\]]+\]:\s*\S")
HTML = re.compile(r"\s*</?[A-Za-z!][^>]*>\s*$")
ITEM = re.compile(r"\s*(?:[-*+•]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+")
QUOTE = re.compile(r"\s*>")
DIRECTIVE = re.compile(r"\s*\.\. ")  # reStructuredText: .. note::, .. code-block::
TURN = re.compile(r"[A-Z][\w.'’ -]{0,40}:\s+\S")  # a transcript's "Speaker: words"
TRANSCRIPT = 0.5  # the share of a text's lines that must be turns for each line to be read as one


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end without the line break, line) of each line."""
    start = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        yield start, start + len(body), body
        start += len(line)


def is_transcript(text: str) -> bool:
    """Whether most of ``text``'s lines are turns (``Speaker: words``): a meeting or interview transcript."""
    filled = [line for _, _, line in _lines(text) if line.strip()]
    return len(filled) >= 4 and sum(1 for line in filled if TURN.match(line)) >= TRANSCRIPT * len(filled)


def blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) of each block of prose (see the module docstring), in order."""
    lines = list(_lines(text))
    transcript = is_transcript(text)
    found: list[tuple[int, int]] = []
    current: list[int] = []  # start and end of the block being read

    def close() -> None:
        if current:
            found.append((current[0], current[1]))
            current.clear()

    fence: str | None = None
    blank_before, in_item, code = True, False, False
    for i, (start, end, line) in enumerate(lines):
        stripped = line.strip()
        if fence is not None:  # inside a fenced code block: until its closing fence
            if line.strip().startswith(fence):
                fence = None
            blank_before = False
            continue
        opening = FENCE.match(line)
        if opening:
            close()
            fence, blank_before = opening.group(1)[0] * 3, False
            continue
        if not stripped:
            close()
            blank_before = True
            continue
        heading_next = (not current and len(stripped) <= 80 and i + 1 < len(lines)
                        and SETEXT.match(lines[i + 1][2]) is not None)  # a heading underlined on the next line
        if (heading_next or SETEXT.match(line) or ATX.match(line) or RULE.match(line) or TABLE.match(line)
                or DEFINITION.match(line) or HTML.match(line) or DIRECTIVE.match(line)):
            close()
            blank_before = False
            continue
        indented = len(line) - len(line.lstrip(" ")) >= 4 or line.startswith("\t")
        code = indented and (code or blank_before and not in_item)  # an indented code block, until a line is not
        if code:
            blank_before = False
            continue
        item = ITEM.match(line) or QUOTE.match(line)
        if item or transcript:
            close()
            in_item = bool(item) or (in_item and indented)
        elif blank_before and not indented:
            in_item = False
        if not current:
            current.extend([start + len(line) - len(line.lstrip()), end])
        else:
            current[1] = end
        blank_before = False
    close()
    return [(a, b) for a, b in found if text[a:b].strip()]


def prose_sentences(text: str) -> list[tuple[int, int]]:
    """The spans of the sentences of ``text``'s prose blocks, in order."""
    from lsgtool.documents.sentences import sentence_spans

    return [span for a, b in blocks(text) for span in sentence_spans(text, a, b)]


INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), ""),  # an image
    (re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)"), r"\1"),  # [text](url)
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # [text][ref]
    (re.compile(r"\[\^[^\]]+\]"), ""),  # a footnote marker [^1]
    (re.compile(r"<(https?://[^>\s]+)>"), r"\1"),
    (re.compile(r"`([^`\n]+?)`_{1,2}"), r"\1"),  # reStructuredText link `text`_
    (re.compile(r":[\w:+-]+:`([^`]+)`"), r"\1"),  # reStructuredText role :func:`name`
    (re.compile(r"(`+)(.+?)\1"), r"\2"),  # inline code, ``literal``
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # strong
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),  # *emphasis*
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),  # _emphasis_
    (re.compile(r"\s\[\d{1,3}\](?=[\s.,;:]|$)"), ""),  # a numbered footnote marker: " [3]"
]
MARKER = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+•]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+)?")


def readable(span: str) -> str:
    """``span`` (a sentence's text) as a summary shows it: markup removed, whitespace collapsed."""
    text = " ".join(MARKER.sub("", line) for line in span.splitlines())
    for pattern, replacement in INLINE:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


TITLE_WORDS = 15  # a first line longer than this is prose, not a title


def title_span(text: str) -> tuple[int, int] | None:
    """Where the document's title is: its first Markdown heading (``# ...``, or a line underlined with ``===``)
    when the text begins with one, else its first line when that line stands alone (a blank line after it), is
    short and does not end a sentence (``CULTURAL EXCHANGE``); None when it has none (a transcript, prose)."""
    lines = [line for line in _lines(text) if line[2].strip()][:2]
    if not lines:
        return None
    start, end, line = lines[0]
    if ATX.match(line):
        marks = ATX_MARKS.match(line)
        return (start + marks.end(), start + len(line.rstrip())) if marks and line[marks.end():].strip() else None
    underlined = len(lines) > 1 and SETEXT.match(lines[1][2]) is not None and not text[end:lines[1][0]].strip()
    alone = re.match(r"[ \t]*\r?\n[ \t]*\r?\n", text[end:]) is not None
    if underlined or (alone and len(line.split()) <= TITLE_WORDS and not TURN.match(line)
                      and not line.rstrip().endswith((".", "!", "?", ":", ";", ","))):
        return start + len(line) - len(line.lstrip()), start + len(line.rstrip())
    return None
