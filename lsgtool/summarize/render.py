"""A summary record as the output formats write it: plain text, Markdown, JSON, a JSON line, or an HTML page
(``summarize.html``, which shows the document too)."""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

from lsgtool.documents.model import SEPARATOR
from lsgtool.documents.prose import ANSWERER, ASKER

FORMATS = ("text", "md", "json", "jsonl", "html")
SUFFIX = {"text": ".txt", "md": ".md", "json": ".json", "jsonl": ".jsonl", "html": ".html"}


MARKED_SHARE = 0.2  # sources below this share of a sentence are left out of its marker (they stay in JSON)
TITLE_CHARACTERS = 40
BOOK_CHARACTERS = 8  # of a book's name cut before its chapter's, at least


def _sections(record: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [(_heading(c, i), _marked(c["text"], c.get("sentences"))) for i, c in enumerate(record.get("chapters", []))]


def _heading(chapter: dict[str, Any], i: int) -> str:
    title = chapter.get("title") or f"Chapter {chapter.get('index', i) + 1}"
    if "rank" in chapter:
        title += f" (relevance {chapter['focus_score']:.2f}, rank {chapter['rank']})"
    return title


def marker(sources: list[dict[str, Any]], named: str | None = None) -> str:
    """A compact pointer to a sentence's sources: ``[Genesis, p. 12]``, ``[Chapter 3, line 120 (64%); line 40 (21%)]``,
    in a transcript ``[Project Manager, line 95]`` and in captions ``[Alice, 00:12:31]``; a speaker the summary's
    line names already (``named``: ``Alice: ...``) is not repeated (``[00:12:31]``), nor an interview's role ("A",
    "Q": it names no one)."""
    shown = [s for s in sources if s["score"] >= MARKED_SHARE][:2] or sources[:1]
    parts = []
    for s in shown:
        where = (s["time"] if s.get("time") else f"p. {s['page']}" if s.get("page") else
                 f"line {s['line']}" if s.get("line") else
                 f"¶ {s['paragraph']}" if s.get("paragraph") else f"chars {s['start']}-{s['end']}")
        speaker = s.get("speaker") if s.get("speaker") != named else None
        speaker = None if speaker and (ASKER.fullmatch(speaker) or ANSWERER.fullmatch(speaker)) else speaker  # "A"
        title = speaker or (_short(s["chapter"]) if s.get("chapter") and not s.get("speaker") else None)
        label = f"{title}, {where}" if title else where
        parts.append(label + (f" ({100 * s['score']:.0f}%)" if len(shown) > 1 or s["score"] < 0.95 else ""))
    return f"[{'; '.join(parts)}]" if parts else ""


def _short(title: str) -> str:
    """``title`` in at most ``TITLE_CHARACTERS``, a book's name cut rather than its chapter's ("The First Book of
    Mos… — Chapter 17"), and left out where fewer than ``BOOK_CHARACTERS`` of it would be left ("Verdict: should
    you buy the Kestrel K7…", not "Kestrel K7 Pro review: great mopping, f…", which names no section)."""
    if len(title) <= TITLE_CHARACTERS:
        return title
    book, separator, chapter = title.rpartition(SEPARATOR)
    room = TITLE_CHARACTERS - len(separator) - len(chapter)
    if book and room > BOOK_CHARACTERS:
        return book[:room - 1].rstrip() + "…" + separator + chapter
    title = chapter if book else title
    return title if len(title) <= TITLE_CHARACTERS else title[:TITLE_CHARACTERS - 1].rstrip() + "…"


def line_speaker(text: str, start: int) -> str | None:
    """The speaker the summary's line names before the sentence at ``start`` (``Grad B: ...``: a transcript's
    summary, ``extractive.labelled``), if any."""
    line = text[text.rfind("\n", 0, start) + 1:start]
    return line.split(": ", 1)[0] if ": " in line else None


def _marked(text: str, sentences: list[dict[str, Any]] | None) -> str:
    """``text`` with each sentence followed by the marker of its sources (as it is, without sources)."""
    for s in reversed(sentences or []):
        found = marker(s["sources"], line_speaker(text, s["start"]))
        if found:
            text = text[:s["end"]] + f" {found}" + text[s["end"]:]
    return text


def _lines(text: str) -> str:
    """``text``'s lines (a transcript's summary: one per speaker) kept apart in Markdown, which joins lines."""
    return text.replace("\n", "\n\n")


def _focus(focus: dict[str, Any]) -> str:
    """The heading's part on a question: with the relevance found, and a word when nothing is close to it."""
    from lsgtool.summarize.focus import WEAK

    relevance = focus.get("relevance")
    found = "" if relevance is None else f" (relevance {relevance:.2f}" + (
        ": nothing in the text is close to it)" if relevance < WEAK else ")")
    return f"; focused on “{focus['question']}”{found}"


def render(record: dict[str, Any], fmt: str, document=None) -> str:
    """The record in ``fmt``; text and Markdown keep the chapter titles after the whole summary; HTML shows
    ``document`` (the Document the record summarises) beside it."""
    if fmt == "html":
        from lsgtool.summarize.html import page

        return page(record, document)
    if fmt == "json":
        return json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    if fmt == "jsonl":
        return json.dumps(record, ensure_ascii=False) + "\n"
    title = heading(record)
    chapters = _sections(record)
    if fmt == "md":
        focus = _focus(record["focus"]) if record.get("focus") else ""
        lines = [f"# {title}", "", f"*{record['method']} summary by {record['model']}; {record['input_tokens']:,} input "
                                   f"tokens, {record['route']}{focus}*", "",
                 _lines(_marked(record["summary"], record.get("sentences"))), ""]
        for chapter_title, text in chapters:
            lines += [f"## {chapter_title}", "", _lines(text), ""]
        return "\n".join(lines)
    parts = [_marked(record["summary"], record.get("sentences"))]
    parts += [f"{chapter_title}\n{text}" for chapter_title, text in chapters]
    return "\n\n".join(parts) + "\n"


def heading(record: dict[str, Any]) -> str:
    """What a summary is headed by: its document's title, else its input's file name (not the path it was given
    by: "/home/ana/Downloads/report.pdf" or "C:\\Users\\ana\\report.pdf" reads as "report.pdf"), or the address of a
    page without a title."""
    given = str(record["input"])
    return record.get("title") or (given if "://" in given or given == "-" else
                                    PurePath(given.replace("\\", "/")).name or given)
