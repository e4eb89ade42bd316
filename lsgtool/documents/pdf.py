"""PDF text through PyMuPDF, cleaned into running text: page furniture removed, typesetter hyphenation undone.

PyMuPDF was chosen by measurement: on a justified, hyphenated groff PDF and a pandoc PDF of the GPL-3 text
(5,688 words), its text after this cleaning misses 0 and 6 of the source's words with 7 and 6 extra; pdfminer.six
misses 43 and 37 (kerned words split: "v ersions"), pypdfium2 93 and 304 (words run together), pypdf 413 and 480
(benchmarks/RESULTS.md). It is AGPL-3.0 licensed, hence the optional extra ``lsgtool[books]``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from itertools import accumulate

from lsgtool.documents.model import Chapter, DocumentError, counted
from lsgtool.documents.prose import HYPHENS, rejoined, word_counts
from lsgtool.documents.text import title_of

PAGE_NUMBER = re.compile(r"^\W*(page\s*)?[0-9ivxlc]+\W*$", re.IGNORECASE)
PAGE = "\ufdd0"  # a noncharacter (Unicode keeps them for a program's internal use): marks where a page's text begins
HYPHENATED = re.compile(rf"(\w+)[-\u00ad\u2010]\n({PAGE}*)(\w+)")  # a word hyphenated across pages joins too
EDGE_LINES = 2  # furniture sits in the first or last lines of a page
# a page's footnotes: the run of lines at its foot (below its last line of body text; a page number may follow)
# set smaller than the document's body text, most of whose characters are of one size. Left where they are, they
# join the paragraph that goes on over the page ("... please contact FEMA officials stated that ..."); they are moved
# to the end, under a heading of their own (``FOOTNOTES``), which a summary reads as back matter
SMALLER = 0.9  # a footnote's type is at most this share of the body's
NOTE_LINES = 0.4  # footnotes are at most this share of a page's lines
BODY_ABOVE = 5  # under at least this many lines of body text
FOOTNOTES = "Footnotes"


def _furniture(pages: list[list[str]]) -> set[str]:
    """Lines (digits masked) at the top or bottom of at least half the pages (and 3), or of every page but the first
    at most (and 2: a letter of two pages, a report's head that skips its first page): running heads and feet."""
    counts: Counter[str] = Counter()
    for lines in pages:
        counts.update({_mask(line) for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]})
    return {line for line, n in counts.items() if n >= max(3, len(pages) // 2) or n >= max(2, len(pages) - 1)}


def _mask(line: str) -> str:
    return re.sub(r"\d+", "#", line.strip().lower())


def page_lines(pages: list[str]) -> list[list[str]]:
    return [[line.rstrip() for line in unicodedata.normalize("NFKC", page).splitlines() if line.strip()] for page in pages]


def clean_pages(split: list[list[str] | tuple[list[str], int, int]], common: set[str],
                tail: list[str] | None = None, usual: int | None = None) -> tuple[str, list[int], dict[str, int]]:
    """Running text from the pages' lines without the furniture lines ``common`` (and the lines ``tail`` after the
    last page's: its footnotes), the offset in it where each page begins (a page keeping no line: where the next
    one's text does, or the end), and counts of what changed. A page given as (lines, first, end) gives only those
    lines (a chapter that begins or ends where a heading stands on it); it begins here only where ``first`` is 0
    (its furniture is told by its place on the whole page); ``usual``: the width of a full line (``usual_width``), of
    these lines where not given."""
    kept, removed, marks = [], 0, ""
    for page in split:
        lines, first, end = page if isinstance(page, tuple) else (page, 0, len(page))
        marks += PAGE if first == 0 else ""
        for i, line in enumerate(lines[first:end], first):
            edge = i < EDGE_LINES or i >= len(lines) - EDGE_LINES
            if edge and (_mask(line) in common or PAGE_NUMBER.match(line)):
                removed += 1
            else:
                indent = len(line) - len(line.lstrip())
                kept.append(line[:indent] + marks + line[indent:])
                marks = ""
    kept += tail or []
    text = "\n".join(kept)
    vocabulary = word_counts(text, HYPHENATED)
    joined = 0

    def join(match: re.Match) -> str:
        nonlocal joined
        head, page, tail = match.groups()
        compound = match.start() > 0 and match.string[match.start() - 1] in HYPHENS  # "direct-to-" and "consumer"
        if rejoined(head, tail, vocabulary, compound) != head + tail:
            return f"{head}-{page}{tail}"  # a real compound the document writes with its hyphen elsewhere
        joined += 1
        return head + page + tail

    text = HYPHENATED.sub(join, _paragraphs(text, usual))  # the lines' widths as printed tell paragraphs
    parts = re.sub(r"([-\u00ad\u2010])\n(?!\n)", r"\1 ", text).split(PAGE)  # "2015-" and "(2016)": a space
    text, starts = "".join(parts), list(accumulate(len(part) for part in parts[:-1]))
    counts = {"furniture line|s removed": removed, "hyphenated word|s joined": joined}
    return text, starts + [len(text)] * len(marks), counts


HEADING_WIDTH = 0.6  # of the usual line: a line this short that ends no sentence may be a heading
SECTION_WIDTH = 0.8  # and a numbered section's heading this short ("1. Where your water comes from", in a column)
MARKS = r"[•▪●◦‣∙·–*]|\d{1,2}[.)]|\([a-z\d]\)"  # a list item's mark (a hyphen's only alone on its line: ``BULLET``)
BULLET = re.compile(rf"-|{MARKS}")  # a list item's mark alone on its line ("1.", "(a)")
# a section's heading: "1. Introduction", "2.3 Radio-tracking", "IV. RESULTS", a paper's "ABSTRACT"
SECTION_WORD = re.compile(r"(?:ABSTRACT|Abstract|INTRODUCTION|REFERENCES|References|ACKNOWLEDGE?MENTS?|"
                          r"Acknowledge?ments?|SUMMARY|Footnotes)")  # (and the footnotes' heading: ``FOOTNOTES``)
SECTION_LINE = re.compile(rf"(?:\d{{1,2}}(?:\.\d{{1,2}})*\.?|[IVX]{{1,5}}\.)[ \t]+[A-Z][^.!?]{{0,60}}"
                          rf"|{SECTION_WORD.pattern}")
# a list's item with its words on its line ("2. Design and commission a fixed radio network ...;", "• Leak alerts"),
# and how an item ends before the next: a sentence's end, a semicolon, "; and", "; or" (not "... Schedule No." over
# "2 of this Agreement")
LIST_ITEM = re.compile(rf"(?:{MARKS})[ \t]+\S")
ITEM_LAST = re.compile(r"(?<!\b[A-Z])(?<!\bNo)(?<!\bpp)(?<!\bal)(?<!\bVol)[.!?][\"”’)]*[ \t]*$")  # the last's (not an
# author's initial, "Gold A.", over a title's words)
ITEM_END = re.compile(r"(?:[.!?:;]|; (?:and|or))[\"”’)]*[ \t]*$")
HEADING_NEXT = re.compile(r"[A-Z0-9•▪●◦\-–—*\"“‘(\[]")  # what the line after a heading begins with
# a table's row set in columns with spaces ("Hurricane Ian (2022)      47,413      41"; a justified line's words are
# one space apart) and a table's or a figure's caption: lines of their own, not words of the paragraph above ("...
# until they receive payment. Event Claims Percent ... Table 1: Share of ... 3.2. FEMA's Reinspection ...")
TABLE_ROW = re.compile(r" {3,}|\t")  # the gap between two cells


def _row(line: str) -> bool:
    """Whether a PDF's line is a table's row set in columns: two cells or more with a gap of spaces between them,
    one holding a number (a line of justified monospace text has gaps between its words too: "repair   any")."""
    cells = [cell for cell in TABLE_ROW.split(line.strip()) if cell]
    return len(cells) >= 2 and any(any(ch.isdigit() for ch in cell) for cell in cells)
NOTED_END = re.compile(r"(?:[^\W\d_]|[%)\]])[.!?][\"”’]?\d{1,2}$")  # a sentence's end with a footnote's mark: "...
# wet year.1", "... to 44%.3"
CAPTION_LINE = re.compile(r"(?:Table|TABLE|Figure|FIGURE|Fig\.|Exhibit)\s+[\dA-Z]+(?:\.\d+)?[:.]\s")


def usual_width(lines: list[str]) -> int:
    """A full line's width: wider than 80% of the lines (a document's, not a short chapter's: two lines of which one
    is its heading)."""
    widths = sorted(size for size in (len(line) - line.count(PAGE) for line in lines) if size)
    return widths[int(0.8 * (len(widths) - 1))] if widths else 0


def _paragraphs(text: str, usual: int | None = None) -> str:
    """Lines back into paragraphs: a line ending a sentence well short of the usual width ends its paragraph; so
    does a line far shorter that ends no sentence and is followed by one that begins with a capital, a number or a
    bullet (a heading, a title's lines: "What Amoxicillin is" before "Amoxicillin is an antibiotic.")."""
    lines = text.split("\n")
    sizes = [len(line) - line.count(PAGE) for line in lines]
    usual = usual_width(lines) if usual is None else usual
    out, current = [], []
    for k, (line, size) in enumerate(zip(lines, sizes)):
        bare = line.replace(PAGE, "").strip()
        after = lines[k + 1].replace(PAGE, "").lstrip() if k + 1 < len(lines) else ""
        section = size < SECTION_WIDTH * usual and SECTION_LINE.fullmatch(bare) is not None \
            and HEADING_NEXT.match(after) is not None  # (not "2 Kings and Chronicles, which the" over "library")
        if current and section and (
                current[-1].endswith((".", "!", "?", '"', "”", "’")) or NOTED_END.search(current[-1])
                or SECTION_WORD.fullmatch(bare)):
            out.append(_joined(current))  # a numbered section's heading after a sentence's end (a line of a wider
            current = []  # abstract above two columns), or a paper's "ABSTRACT" after its affiliation: its own
        row = _row(bare)
        ended = not current or current[-1].endswith((".", "!", "?", ":", ";", '"', "”", "’"))
        # a list item's mark alone on its line ("•"; a number, "12.", only after a sentence's end and before a
        # capital: not "... until March" over "12." over "Members asked ...")
        mark = BULLET.fullmatch(bare) is not None and (not bare[:1].isdigit() and not bare.startswith("(")
                                                       or ended and HEADING_NEXT.match(after) is not None)
        # a heading after a sentence's end: a short line that ends no sentence over one that begins one ("...
        # ejection fraction." over "Secondary Diagnoses" over "1. Acute kidney injury ...", "... [8 marks]" over
        # "Section B (60 marks)")
        heading = current and current[-1].endswith((".", "!", "?", ":", ";", '"', "”", "’", ")", "]")) \
            and size < HEADING_WIDTH * usual and not bare.endswith((".", "!", "?", ":", ";", ",", "-", "–", "—")) \
            and HEADING_NEXT.match(after) is not None
        item = ended and LIST_ITEM.match(bare) is not None  # a list's item after a sentence's or an item's end
        if current and (row or mark or item or heading or CAPTION_LINE.match(bare) and ended):  # a table's row, a
            out.append(_joined(current))  # caption after a sentence's end (not "... as shown in" over "Figure 3."),
            current = []  # a list item's mark or its line, a heading: each begins a paragraph
        current.append(line.strip())
        if mark:
            continue  # a bullet on a line of its own goes with its item
        if row or LIST_ITEM.match(current[0]) and ITEM_END.search(line) and (LIST_ITEM.match(after) or ITEM_LAST.search(
                line) and re.match(r"[A-Z][a-z]", after)) or \
                size < 0.8 * usual and (line.rstrip().endswith((".", "!", "?", ":", '"', "”", "’"))
                                          or NOTED_END.search(line.rstrip())) or \
                (size < HEADING_WIDTH * usual or section and len(current) == 1) and \
                not line.rstrip().endswith((",", ";", "-", "–", "—")) and HEADING_NEXT.match(after) or \
                CAPTION_LINE.match(current[0]) and SECTION_LINE.fullmatch(after) is not None:
            out.append(_joined(current))
            current = []
    if current:
        out.append(_joined(current))
    return "\n\n".join(out)


def _joined(lines: list[str]) -> str:
    """A paragraph's lines joined by spaces; a line ending in a hyphen keeps its line break (``HYPHENATED`` then
    tells a word broken across lines from a compound)."""
    return "".join(line + ("\n" if line.endswith(("-", "\u00ad", "\u2010")) else " ") for line in lines)[:-1]


def page_texts(doc) -> tuple[list[str], list[str]]:
    """Each page's text (PyMuPDF's), and the footnotes taken out of it, in order: the run of lines at a page's foot
    set smaller than the body (``SMALLER``; above its page number or running foot), at most ``NOTE_LINES`` of the
    page's lines, under ``BODY_ABOVE`` lines of body text or more (not a crowded slide's smaller bullets under its
    title); a line of such runs on half the pages or more is the page's foot (furniture, removed as the others
    are), not a note."""
    lines = [[_line(line) for block in page.get_text("dict")["blocks"] if block.get("type") == 0
              for line in block["lines"]] for page in doc]
    sizes: Counter[float] = Counter()
    for page in lines:
        for text, size in page:
            sizes[size] += len(text.strip())
    small = SMALLER * (sizes.most_common(1)[0][0] if sizes else 0.0)
    common = _furniture([[text.strip() for text, _ in page if text.strip()] for page in lines])
    runs: list[tuple[int, int] | None] = []
    for page in lines:
        foot = len(page)
        while foot and (not page[foot - 1][0].strip() or PAGE_NUMBER.match(page[foot - 1][0].strip())
                        or _mask(page[foot - 1][0]) in common):
            foot -= 1  # a page's number or running foot below the footnotes stays where it is
        first = foot
        while first and page[first - 1][1] < small:
            first -= 1
        above = sum(1 for text, size in page[:first] if size >= small and text.strip())
        runs.append((first, foot) if first < foot and above >= BODY_ABOVE and foot - first <= NOTE_LINES * len(page)
                    else None)
    repeated = Counter(_mask(text) for page, run in zip(lines, runs) if run for text, _ in page[run[0]:run[1]])
    feet = {line for line, n in repeated.items() if n >= max(3, len(lines) // 2)}
    texts, notes = [], []
    for page, run in zip(lines, runs):  # PyMuPDF's "text" is these lines, each ended by a line break: read once
        noted = set(k for k in range(*run) if _mask(page[k][0]) not in feet) if run else set()
        notes += [page[k][0] for k in sorted(noted)]
        texts.append("".join(text + "\n" for k, (text, _) in enumerate(page) if k not in noted))
    return texts, notes


def _line(line: dict) -> tuple[str, float]:
    """A line of PyMuPDF's "dict" text: its text, and the size of most of its characters."""
    sizes: Counter[float] = Counter()
    for span in line["spans"]:
        sizes[round(span["size"], 1)] += len(span["text"].strip())
    return "".join(span["text"] for span in line["spans"]), (sizes.most_common(1)[0][0] if sizes else 0.0)


def read_pdf(data: bytes, name: str) -> tuple[list[Chapter], str | None, list[str], list[int]]:
    """(chapters from the PDF outline, or one; title; notes; the offset in the chapters' texts joined by blank lines
    where each page begins)."""
    try:
        import pymupdf
    except ImportError:
        raise DocumentError(f"'{name}' is a PDF, and reading PDFs needs PyMuPDF.",
                            "pip install 'lsgtool[books]' (PyMuPDF and EbookLib, AGPL-3.0 licensed).") from None
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises its own FileDataError and RuntimeErrors for broken files
        raise DocumentError(f"'{name}' is not a readable PDF: {exc}.", "check that the file is a complete PDF.") from None
    if doc.needs_pass:
        raise DocumentError(f"'{name}' is an encrypted PDF.", "decrypt it first, e.g. `qpdf --decrypt --password=... in.pdf out.pdf`.")
    texts, footnotes = page_texts(doc)
    pages = page_lines(texts)
    common = _furniture(pages)
    tail = [FOOTNOTES, *page_lines(["\n".join(footnotes)])[0]] if footnotes else []  # at the end, under a heading
    if not any(pages):
        raise DocumentError(f"'{name}' has no text layer ({len(pages)} pages of images?).",
                            "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`).")
    title = GROFF_NAMED.sub(lambda m: GROFF_CHARACTERS[m.group(1) or m.group(2)],
                            (doc.metadata or {}).get("title") or "") or None
    bounds = _bounds(doc.get_toc(), pages)
    if len(bounds) < 2:
        text, offsets, counts = clean_pages(pages, common, tail)
        return [Chapter(None, text)], title or title_of(text), _notes(len(pages), counts, len(footnotes)), offsets
    chapters, offsets, totals, at = [], [], Counter(), 0  # at: where the next chapter's text begins
    usual = usual_width([line for lines in pages for line in lines])
    if bounds[0][1] > 0:
        bounds.insert(0, (None, 0, 0))
    bounds[0] = (bounds[0][0], 0, 0)  # what stands above the first heading on its page (a title) is its chapter's
    for (chapter_title, first, line), (_, after, stop) in zip(bounds, bounds[1:] + [(None, len(pages), 0)]):
        split = [(pages[p], line if p == first else 0, stop if p == after else len(pages[p]))
                 for p in range(first, after + (stop > 0))]  # (the page the next begins at the top of: none)
        text, found, counts = clean_pages(split, common, tail if after == len(pages) else [], usual)
        totals.update(counts)
        end = at + len(text) + 2 if text.strip() else at
        offsets += [at + offset if offset < len(text) else end for offset in found]
        if text.strip():
            chapters.append(Chapter(chapter_title, text))
        at = end
    length = max(at - 2, 0)  # of the chapters' texts joined: pages after the last text begin at its end
    title = title or (title_of(chapters[0].text) if chapters and chapters[0].title is None else None)
    return chapters, title, _notes(len(pages), totals, len(footnotes)), [min(offset, length) for offset in offsets]


# a character groff names in a PDF's metadata as written (pandoc's "-t ms" titles: "Northcape Foods plc [em] Annual
# Report 2025"), where its page shows the character
GROFF_CHARACTERS = {"em": "—", "en": "–", "lq": "“", "rq": "”", "oq": "‘", "cq": "’", "aq": "'", "dq": '"', "hy": "-"}
GROFF_NAMED = re.compile(r"\\\[(" + "|".join(GROFF_CHARACTERS) + r")\]|\[(em|lq|rq|oq|cq)\]")  # (a bare "[en]": a
# language's tag, "Estuary Water Quality [en]", as likely)


def _bounds(toc: list, pages: list[list[str]]) -> list[tuple[str | None, int, int]]:
    """Where each chapter of a PDF's outline (its first level) begins: (title, page, line), at the line of its page
    that is its heading (the title, or its first words where it wraps: several sections on one page, a section that
    begins half-way down a page), else at the top of the page, as an outline names only the page; an entry not after
    the one before it is dropped."""
    bounds: list[tuple[str | None, int, int]] = []
    names = {_plain(name) for _, name, _ in toc}
    for level, name, page in toc:
        p = page - 1
        if level != 1 or not 0 <= p < len(pages) or bounds and p < bounds[-1][1]:
            continue
        lowest = bounds[-1][2] + 1 if bounds and bounds[-1][1] == p else 0
        line = _heading_line(pages[p], name, lowest, names)
        if line is None and lowest:
            continue  # a second section on the page whose heading is not found: the page is the first's
        bounds.append((name.strip(), p, line or 0))
    return bounds


def _heading_line(lines: list[str], name: str, lowest: int, names: set[str]) -> int | None:
    """The first of ``lines`` from ``lowest`` that is the heading ``name`` (the same words, or the first line of
    them where the heading wraps) and not an entry of a contents list (the line after it another entry's, of
    ``names``, with its page number or not: a contents list above the sections on their page names them first);
    else the last such line, if any."""
    wanted = _plain(name)
    found = [i for i in range(lowest, len(lines)) if (line := _plain(lines[i])) == wanted
             or len(line) >= max(8, len(wanted) // 2) and wanted.startswith(line)]
    listed = {i for i in found if i + 1 < len(lines) and ({_plain(lines[i + 1]), _plain(LEADER.sub("", lines[i + 1]))}
                                                           & (names - {wanted}))}
    return next((i for i in found if i not in listed), found[-1] if found else None)


LEADER = re.compile(r"(?:\s*[.·…]{2,}\s*|\s+)\d+\s*$")  # a contents entry's page number, after dots or not


def _plain(line: str) -> str:
    return " ".join(line.split()).casefold()


def _notes(pages: int, counts: dict[str, int], footnotes: int = 0) -> list[str]:
    moved = {f"footnote line|s moved to the end (under '{FOOTNOTES}')": footnotes} if footnotes else {}
    return [f"PDF: {counted(pages, 'page')}; " + ", ".join(counted(n, what) for what, n in {**counts, **moved}.items())]
