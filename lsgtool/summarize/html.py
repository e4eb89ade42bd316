"""A summary as one self-contained HTML page: the summary beside the text lsgtool read, every source span
highlighted in that text (stronger as its share is larger). Clicking or focusing a summary sentence scrolls the text
to its strongest source and emphasises all of them; clicking a highlight goes back to its sentence.

Nothing is fetched: the style and the script are in the page, which opens from ``file://``. With JavaScript off it
is still a page: highlights shown, sentences and highlights linked as anchors. Everything taken from the document
or the summary is escaped, so a document holding ``<script>`` shows it as text.

The text is cut into blocks (a chapter, a PDF page, ``CHUNK_LINES`` lines of a text file) that the browser lays
out only when they come into view (``content-visibility``): a whole book opens at once. A highlight is the part of
a source span inside one block and between two boundaries of other spans; ``data-s`` lists the sources it is part
of (``sentence.source``, strongest source 0), so the text of source ``n.k``, read in order, is exactly
``document.text[start:end]``."""

from __future__ import annotations

import bisect
import html
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from lsgtool.documents.model import Document
from lsgtool.summarize.render import heading

CHUNK_LINES = 200  # lines of a text file per block
LEVELS = 5  # highlight strengths: share 0-20%, ..., 80-100%
GENERATOR = "lsgtool"  # <meta name="generator">: a page (or index) lsgtool wrote


@dataclass
class _Block:
    start: int
    end: int
    chapter: int | None = None  # the chapter this block begins
    pages: list[int] = field(default_factory=list)  # the PDF pages this block begins (1-based; more: empty pages)
    line: int | None = None  # the first line's number (text files)


@dataclass
class _Span:
    start: int
    end: int
    sentence: int  # n
    rank: int  # k: the sentence's sources strongest first
    share: float

    @property
    def key(self) -> str:
        return f"{self.sentence}.{self.rank}"


@dataclass
class _Sentences:
    """The summary's sentences numbered across the whole page (book summary, then each chapter's), their sources
    as highlight spans, strongest first."""

    spans: list[_Span] = field(default_factory=list)
    count: int = 0

    def add(self, sentences: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
        numbered = []
        for sentence in sentences:
            n, self.count = self.count, self.count + 1
            ordered = sorted(sentence.get("sources", []), key=lambda s: -s["score"])
            self.spans += [_Span(s["start"], s["end"], n, k, s["score"]) for k, s in enumerate(ordered)
                           if s["end"] > s["start"]]
            numbered.append((n, sentence))
        return numbered


def page(record: dict[str, Any], document: Document) -> str:
    """The page of one summary ``record`` of ``document`` (the Document it was made from)."""
    numbered = _Sentences()
    parts = [_header(record)]
    chapters = record.get("chapters") or []
    book = numbered.add(record.get("sentences") or [])
    if chapters:
        parts.append(_chapter_list(chapters))
    parts.append(_summary_section("Summary" if not chapters else "The book", record["summary"], book, None, "sum"))
    for j, chapter in enumerate(chapters):
        sentences = numbered.add(chapter.get("sentences") or [])
        parts.append(_summary_section(_chapter_title(chapter, j), chapter["text"], sentences, chapter.get("index", j),
                                      f"cs{j}"))
    if record.get("sentences") is None and not any(c.get("sentences") for c in chapters):
        parts.append('<p class="note">This summary has no sources (they were not asked for, or this model cannot '
                     "trace them), so nothing is highlighted in the text.</p>")
    title = _escape(heading(record))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="{GENERATOR}"><title>{title} — summary</title>'
            f"<style>{STYLE}</style></head>\n<body>\n"
            f'<div id="summary">{"".join(parts)}</div>\n'
            f'<main id="doc" aria-label="The text lsgtool read"><h2 class="doctitle">The text lsgtool read: '
            f"{_escape(record['input'])}</h2>\n{_text(document, numbered.spans)}</main>\n"
            f"<script>{SCRIPT}</script>\n</body></html>\n")


def _escape(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _header(record: dict[str, Any]) -> str:
    what = [f"{record['method']} summary by {record['model']}", f"{record['words']:,} words",
            f"{record['input_tokens']:,} input tokens", f"route: {record['route']}"]
    lines = [f"<h1>{_escape(heading(record))}</h1>",
             f'<p class="meta">{_escape(" · ".join(what))}</p>']
    focus = record.get("focus")
    if focus:
        relevance = focus.get("relevance")
        lines.append(f'<p class="focus">Focused on <q>{_escape(focus["question"])}</q>'
                     + (f" (relevance {relevance:.2f})" if relevance is not None else "") + "</p>")
    length = record.get("length") or (record.get("book_summary") or {}).get("length")
    if length:
        lines.append(f'<p class="meta">Length asked: {_escape(length["asked"])}'
                     + (f" ({length['words']:,} words)" if length.get("words") else "") + "</p>")
    details = {"input": record["input"], "kind": record.get("kind"), "reading": record.get("reading"),
               "model": record["model"], "method": record["method"], "route": record["route"],
               "levels": record.get("levels"), "windows": len(record.get("windows") or []),
               "dropped tokens": record.get("dropped_tokens"), "why this model": record.get("why"),
               "digest": record.get("digest")}
    rows = "".join(f"<tr><th>{_escape(k)}</th><td>{_escape(v)}</td></tr>" for k, v in details.items() if v is not None)
    notes = "".join(f"<li>{_escape(n)}</li>" for n in record.get("notes") or [])
    lines.append('<p class="meta">Highlighted in the text: where each sentence came from, darker where the sentence '
                 "owes more to it. Click a sentence (or Tab to it) to see its sources; click a highlight to go back "
                 "to its sentence.</p>")
    lines.append(f"<details><summary>Model, route and settings</summary><table>{rows}</table>"
                 + (f"<ul>{notes}</ul>" if notes else "")
                 + f"<pre>{_escape(json.dumps(record.get('settings') or {}, indent=1, ensure_ascii=False))}</pre>"
                 + "</details>")
    return "".join(lines)


def _chapter_title(chapter: dict[str, Any], j: int) -> str:
    return chapter.get("title") or f"Chapter {chapter.get('index', j) + 1}"


def _chapter_list(chapters: list[dict[str, Any]]) -> str:
    items = "".join(f'<li><a href="#cs{j}">{_escape(_chapter_title(c, j))}</a></li>' for j, c in enumerate(chapters))
    return f'<nav><details open><summary>Chapters ({len(chapters)})</summary><ol>{items}</ol></details></nav>'


def _summary_section(title: str, text: str, sentences: list[tuple[int, dict[str, Any]]], chapter: int | None,
                     anchor: str) -> str:
    """A summary's text, each sentence a link to its strongest source followed by its marker."""
    from lsgtool.summarize.render import line_speaker, marker

    out, at = [], 0
    between = lambda a, b: _escape(text[a:b]).replace("\n", "<br>\n")  # noqa: E731 (a transcript's speakers' lines)
    for n, sentence in sentences:
        out.append(between(at, sentence["start"]))
        sources = sentence.get("sources") or []
        target = f' href="#m{n}"' if sources else ' tabindex="0"'
        out.append(f'<a class="s" id="s{n}" data-n="{n}"{target}>{_escape(text[sentence["start"]:sentence["end"]])}</a>')
        if sources:
            shown = marker(sources, line_speaker(text, sentence["start"]))  # the line's own speaker not repeated
            out.append(f' <small class="src">{_escape(shown)}</small>')
        at = sentence["end"]
    out.append(between(at, len(text)))
    heading = _escape(title) if chapter is None else f'<a href="#c{chapter}">{_escape(title)}</a>'
    return f'<section id="{anchor}" class="part"><h2>{heading}</h2><p>{"".join(out)}</p></section>\n'


def _blocks(document: Document) -> list[_Block]:
    """The text cut where the browser may lay it out on its own: chapters (and the gaps between them left out),
    PDF pages, and ``CHUNK_LINES`` lines of a text file (which is shown whole, line numbers in the margin; a cut
    there is at a line's start: a chapter whose text begins inside its first line is cut before that line)."""
    text = document.text
    cuts: dict[int, _Block] = {}
    line_starts = [0] + document.line_starts if document.source is not None else []

    def cut(at: int) -> _Block:
        if line_starts:
            at = line_starts[bisect.bisect_right(line_starts, at) - 1]
        return cuts.setdefault(at, _Block(at, 0))

    if document.source is not None:
        spans = [(0, len(text))]
        for number in range(0, len(line_starts), CHUNK_LINES):
            cut(line_starts[number])
    else:
        spans = [(c.start, c.start + len(c.text)) for c in document.chapters]
    for i, chapter in enumerate(document.chapters):
        block = cut(chapter.start)
        block.chapter = i if block.chapter is None else block.chapter
    for number, start in enumerate(document.pages, 1):
        cut(start).pages.append(number)  # pages without text begin where the next one does
    order = sorted(cuts)
    blocks = []
    for start, end in spans:
        inside = [cuts[c] for c in order[bisect.bisect_right(order, start):bisect.bisect_left(order, end)]]
        first = cuts.get(start, _Block(start, 0))
        for block, following in zip([first] + inside, inside + [None]):
            block.end = following.start if following is not None else end
            if line_starts:  # a block beginning at a chapter or page goes on with the line count
                block.line = bisect.bisect_right(line_starts, block.start)
            blocks.append(block)
    return [b for b in blocks if b.end > b.start or b.chapter is not None]


def _text(document: Document, spans: list[_Span]) -> str:
    """The document's text, block by block, each holding the highlights of the spans that reach into it."""
    text = document.text
    numbered = document.source is not None
    spans = sorted(spans, key=lambda s: (s.start, s.end))
    anchors: dict[int, list[int]] = {}  # where each sentence's strongest source begins: its anchor (#m<n>)
    for s in spans:
        if s.rank == 0:
            anchors.setdefault(s.start, []).append(s.sentence)
    headings = sorted((c.start + a, c.start + b) for c in document.chapters for a, b, _ in c.headings)
    out, active, taken = [], [], 0
    for block in _blocks(document):
        while taken < len(spans) and spans[taken].start < block.end:
            active.append(spans[taken])
            taken += 1
        active = [s for s in active if s.end > block.start]
        attributes = f"contain-intrinsic-size:auto {_height(text, block)}px"
        attributes = f' style="{attributes}"'
        if block.chapter is not None:
            attributes += f' id="c{block.chapter}"'
        elif block.pages:
            attributes += f' id="p{block.pages[0]}"'
        out.append(f'<section class="b{" n" if numbered else ""}"{attributes}>')
        if block.chapter is not None and not numbered:
            chapter = document.chapters[block.chapter]
            out.append(f"<h3>{_escape(chapter.title or f'Chapter {block.chapter + 1}')}</h3>")
        for page in block.pages:
            anchor = f' id="p{page}"' if block.chapter is not None or page != block.pages[0] else ""
            out.append(f'<div class="pg"{anchor}>Page {page}</div>')
        inside = headings[bisect.bisect_left(headings, (block.start,)):bisect.bisect_left(headings, (block.end,))]
        line = block.line if numbered else None
        out.append(f'<div class="t">{_highlighted(text, block.start, block.end, active, anchors, line, inside)}'
                   "</div></section>\n")
    return "".join(out)


def _height(text: str, block: _Block) -> int:
    """About how tall a block is before the browser lays it out (pixels), so the scroll bar is near right."""
    return 24 * (text.count("\n", block.start, block.end) + (block.end - block.start) // 90) + 40


def _highlighted(text: str, start: int, end: int, spans: list[_Span], anchors: dict[int, list[int]],
                 line: int | None = None, headings: list[tuple[int, int]] = ()) -> str:
    """``text[start:end]`` escaped, every piece covered by ``spans`` (sorted by start) a highlight linking back
    to its strongest sentence; ``line``: the number of the line at ``start`` (a line's start), each line's start
    then an ``<i data-n>`` with its number, which the style draws in the margin (a CSS counter would start over in
    each block: a block's ``content-visibility`` contains its counters);
    ``headings``: (start, end) of the headings in it (an EPUB chapter's sections), shown as such."""
    bounds = [p for s in spans for p in (s.start, s.end)] + [p for h in headings for p in h]
    cuts = sorted({start, end} | {p for p in bounds if start < p < end})
    out, active, taken, heading = [], [], 0, 0
    for a, b in zip(cuts, cuts[1:]):
        out += [f'<span id="m{n}"></span>' for n in anchors.get(a, [])]
        parts = text[a:b].split("\n")
        escaped = [_escape(part).replace("\r", "&#13;") for part in parts]  # a raw CR would be read as a line break
        if line is not None:
            for k in range(len(parts)):
                # a line begins here, unless at ``b``: after a piece's last newline its number goes with the next
                if (k or a == 0 or text[a - 1] == "\n") and not (k and k == len(parts) - 1 and not parts[k]):
                    escaped[k] = f'<i data-n="{line}"></i>' + escaped[k]
                    line += 1
        piece = "\n".join(escaped)
        while taken < len(spans) and spans[taken].start <= a:
            active.append(spans[taken])
            taken += 1
        while heading < len(headings) and headings[heading][1] <= a:
            heading += 1
        if heading < len(headings) and headings[heading][0] <= a:  # cuts hold its end: [a, b) is in it
            piece = f'<b class="hd">{piece}</b>'
        active = [s for s in active if s.end > a]  # cuts hold every end: what is left covers [a, b)
        if active:
            best = max(active, key=lambda s: s.share)
            level = min(int(best.share * LEVELS), LEVELS - 1)
            keys = " ".join(s.key for s in active)
            piece = f'<a class="h h{level}" href="#s{best.sentence}" data-s="{keys}">{piece}</a>'
        out.append(piece)
    return "".join(out)


def show(path: Path) -> str:
    """The page opened in the user's browser where there is a display; what happened, in a line."""
    import webbrowser

    display = sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if display and webbrowser.open(path.resolve().as_uri()):
        return f"Opened {path} in your browser."
    return f"The page is {path} (no display to open a browser on{'' if not display else ', or no browser found'})."


def written_by_lsgtool(path: Path) -> bool:
    """Whether the HTML file at ``path`` says lsgtool wrote it (its generator tag, in its first kilobytes)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return f'<meta name="generator" content="{GENERATOR}">' in file.read(4096)
    except OSError:
        return False


def index(records: list[dict[str, Any]]) -> str:
    """A page listing a folder run's pages: each input's title, words, route and its summary's first sentence."""
    rows = []
    for r in records:
        sentences = r.get("sentences") or []
        first = sentences[0]["text"] if sentences else r["summary"].split(". ")[0]
        link = "./" + quote(r["output"])  # a file name is never read as a scheme ("javascript:...") or a fragment
        rows.append(f'<tr><td><a href="{_escape(link)}">{_escape(heading(r))}'
                    f'</a></td><td>{r["words"]:,}</td><td>{_escape(r["route"])}</td><td>{_escape(first)}</td></tr>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="{GENERATOR}">'
            f"<title>Summaries</title><style>{INDEX_STYLE}</style></head><body><h1>Summaries ({len(records)})</h1>"
            "<table><thead><tr><th>Document</th><th>Words</th><th>Route</th><th>Summary begins</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></body></html>\n")


STYLE = """
:root{color-scheme:light dark;--hl:255,196,0}
body{margin:0;font:16px/1.5 system-ui,sans-serif;display:grid;grid-template-columns:minmax(16em,2fr) 3fr;height:100vh}
#summary,#doc{overflow:auto;padding:0 1.5em 40vh}
#summary{border-right:1px solid #8886}
h1{font-size:1.4em;margin:.8em 0 .2em}
h2{font-size:1.1em;margin:1.2em 0 .4em}
.meta,.focus,details{font-size:.85em;color:#666}
details table{border-collapse:collapse}details th{text-align:left;padding-right:1em;font-weight:600}
details pre{white-space:pre-wrap}
nav ol{padding-left:2em;margin:.3em 0;max-height:40vh;overflow:auto}
a.s{color:inherit;text-decoration:none;border-radius:3px}
a.s:hover,a.s:focus{background:rgba(var(--hl),.25);outline:none}
a.s.cur{background:rgba(var(--hl),.45);box-shadow:0 0 0 2px #d08000}
.src{color:#888;font-size:.75em}
.note{color:#a40}
.doctitle{color:#666;font-weight:500}
.b{content-visibility:auto;contain-intrinsic-size:auto 1200px}
.b h3{margin:1.5em 0 .5em}
.hd{font:600 1.05em system-ui,sans-serif}
.t{white-space:pre-wrap;overflow-wrap:anywhere;font:15px/1.55 Georgia,serif}
.n .t{padding-left:4.5em}
.n i{font-style:normal}
.n i::before{content:attr(data-n);display:inline-block;width:4em;margin:0 .5em 0 -4.5em;text-align:right;color:#999;
 font:11px ui-monospace,monospace;user-select:none}
.pg{margin:1em 0 .3em;color:#888;font-size:.8em;border-top:1px dashed #8888;padding-top:.2em}
a.h{color:inherit;text-decoration:none;border-radius:2px}
a.h0{background:rgba(var(--hl),.15)}a.h1{background:rgba(var(--hl),.25)}a.h2{background:rgba(var(--hl),.35)}
a.h3{background:rgba(var(--hl),.45)}a.h4{background:rgba(var(--hl),.6)}
a.h.on{background:rgba(255,120,0,.65);box-shadow:0 0 0 2px #d06000}
@media (max-width:50em){body{display:block;height:auto}#summary,#doc{overflow:visible;padding-bottom:1em}}
"""

INDEX_STYLE = """
:root{color-scheme:light dark}body{font:16px/1.5 system-ui,sans-serif;margin:1em 2em}
table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #8884;text-align:left;vertical-align:top}
"""

SCRIPT = """
(function(){
var doc=document.getElementById("doc"),summary=document.getElementById("summary"),marks=null,cur=null;
function build(){marks={};var all=doc.querySelectorAll("a[data-s]");
 for(var i=0;i<all.length;i++){var keys=all[i].getAttribute("data-s").split(" ");
  for(var j=0;j<keys.length;j++){var n=keys[j].split(".")[0];(marks[n]=marks[n]||[]).push([all[i],keys[j]]);}}}
function show(n,scroll){if(!marks)build();
 var on=doc.querySelectorAll("a.on");for(var i=0;i<on.length;i++)on[i].classList.remove("on");
 if(cur)cur.classList.remove("cur");cur=document.getElementById("s"+n);if(cur)cur.classList.add("cur");
 var best=null,mine=marks[n]||[];
 for(var i=0;i<mine.length;i++){mine[i][0].classList.add("on");if(!best&&mine[i][1]===n+".0")best=mine[i][0];}
 if(scroll&&best)best.scrollIntoView({block:"center"});}
summary.addEventListener("click",function(e){var s=e.target.closest("a.s");if(!s)return;e.preventDefault();
 show(s.getAttribute("data-n"),true);});
summary.addEventListener("focusin",function(e){var s=e.target.closest("a.s");if(s&&s!==cur)show(s.getAttribute("data-n"),true);});
doc.addEventListener("click",function(e){var h=e.target.closest("a[data-s]");if(!h)return;e.preventDefault();
 var n=h.getAttribute("href").slice(2),s=document.getElementById("s"+n);if(!s)return;
 show(n,false);s.scrollIntoView({block:"center"});s.focus({preventScroll:true});});
})();
"""
