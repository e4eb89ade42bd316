"""HTML's text, for web pages (``.html``, ``.htm``) and EPUB chapters alike, through lxml: a blank line after each
block element, scripts and styles left out, and where each heading's paragraph is.

A web page is read from its main content (``<main>``, else its one ``<article>``, else ``<body>``), without
navigation, asides, forms and, outside ``<main>``/``<article>``, the site's header and footer; its first heading
(else its ``<title>``, which often carries the site's name too) is its title and its headings mark its sections, as
an EPUB chapter's do.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict

from lsgtool.documents.model import Chapter, DocumentError
from lsgtool.documents.prose import RUN_IN_WORDS

BLOCKS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "blockquote", "pre", "section", "article", "tr", "td",
          "th", "br", "dt", "dd", "figcaption", "header", "footer"}
SECTIONS = ("h1", "h2", "h3", "h4", "h5", "h6")  # headings: markers name the one above a sentence
HIDDEN = ("script", "style", "noscript", "template")
CHROME = ("nav", "aside", "form", "button", "select", "svg")  # a page's furniture, never its text
SITE = ("header", "footer")  # a site's, when the page has no <main> or <article> to read instead
SUFFIXES = (".html", ".htm")
# Furniture inside the main text, as content extractors (Readability, trafilatura) find it: an ARIA landmark other
# than the main one, a class naming what a site wraps around an article, or a short block that is mostly links
ROLES = {"navigation", "complementary", "banner", "contentinfo", "search", "toolbar", "menu", "menubar", "dialog"}
NAMED = re.compile(r"(?:^|[-_\s])(?:breadcrumbs?|share|sharing|social|related|comments?|newsletter|subscribe|"
                   r"sidebar|promo|sponsored|advert|ads?|cookies?|popup|modal|jump|print|toolbar|pagination|tags|"
                   r"byline|author-bio|skip-link|post-signature|post-menu|votecell|vote-count|corrections?|"
                   r"site-header|site-footer|global-header|global-footer|masthead|utility-nav|"
                   r"clarifications?|editors?-note|"
                   r"(?<!no[-_])spoilers?(?![-_]?free))(?:$|[-_\s])",  # (a review's ending, kept from a reader; not
                   # its "spoiler-free" verdict)
                   re.IGNORECASE)
# a wiki's furniture, whatever element holds it: MediaWiki's "[edit]" links, hatnotes ("For other uses, see ..."),
# navigation boxes, infoboxes (a table of facts, not text: its cells would count as paragraphs), its contents box,
# its menus' buttons ("14 languages", the dropdown of a page's other languages) and its categories
WIKI = re.compile(r"(?:^|\s)(?:(?:mw-)?editsection|mw-jump-link|noprint|navbox|vertical-navbox|hatnote|infobox|"
                  r"sistersitebox|toc|vector-dropdown|mw-portlet(?:-[\w-]+)?|mw-indicators|catlinks)(?:$|\s)")
ROWS = (BLOCKS - {"br", "tr", "td", "th", *SECTIONS}) | {"ul", "ol", "dl", "aside"}  # the blocks that may be furniture
CODE_CLASS = re.compile(r"(?i)\b(?:code|highlight|source|sourceCode|lang(?:uage)?-\w+|console|shell|terminal|"
                        r"prettyprint|hljs)\b")
CODE_LINE = re.compile(r"[=;{}<>]|^\s*[$#]\s|->|::|\(\)")  # "heat = 2", "$ git add .", "f();", "a::b"
CODE = ("pre", "code")  # a class in code (rustdoc's "comment") names no furniture
LINKED_WORDS = 40  # a block of at most this many words
LINKED_SHARE = 0.8  # at least this share of them in two links or more: a row ("Jump to Recipe · Print Recipe")
THREAD = 0.5  # a page's comments are its text only where they are more than this share of its words (below)
MOST = 0.25  # furniture never holds more than this share of the main text's words (a wrapper's class says little)
# a comment of a page's (its class "comment", as Reddit's and WordPress's are; not a wrapper's "comments-open"):
# furniture, all of them, unless they hold more than ``THREAD`` of its words (a forum's thread: they had been dropped
# in page order until ``MOST`` was reached, and a Reddit page's top answers went first; a short review's three
# comments, more than a quarter of its words, had been read as its text, a commenter's "far too slow" as the review's)
DISCUSSION = re.compile(r"(?:^|\s)comments?(?:$|\s)", re.IGNORECASE)
# an id that names a page's side column ("sidebar": a Q&A site's "Linked" and "Hot Network Questions"), which a class
# would; other ids name no furniture (``furniture``)
SIDE_ID = re.compile(r"(?:^|[-_])(?:sidebar|side-bar|right-?rail|hot-network-questions)(?:$|[-_])", re.IGNORECASE)


def _code(pre) -> bool:
    """Whether a ``<pre>`` holds code (a ``<code>`` inside, a class that names code or a language, or lines most of
    which read as code: ``CODE_LINE``), not a message's or an RFC's text set in a fixed font (a mailing list
    archive's)."""
    if pre.find(".//code") is not None or CODE_CLASS.search(pre.get("class") or ""):
        return True
    lines = [line for line in pre.text_content().splitlines() if line.strip()]
    return 2 * sum(1 for line in lines if CODE_LINE.search(line)) >= len(lines) > 0


HIDDEN_WORDS = 30  # a hidden element of at most this many words is no text (a hidden FAQ answer or tab is)


def _hidden(node) -> bool:
    """Whether an element is not shown and no text a reader opens: its ``hidden`` attribute, ``aria-hidden="true"``,
    or a style that hides it, on at most ``HIDDEN_WORDS`` words and no block of its own (an e-mail's preview line,
    "display:none", which an inbox shows and the message does not; not an accordion's answer or a tab's panel, its
    heading and paragraphs shown on a click)."""
    if not isinstance(node.tag, str):
        return False
    style = (node.get("style") or "").replace(" ", "").lower()
    hides = node.get("hidden") not in (None, "until-found") or node.get("aria-hidden") == "true" \
        or "display:none" in style or "visibility:hidden" in style
    return hides and (node.get("role") or "") not in ("tabpanel", "region") \
        and len(node.text_content().split()) <= HIDDEN_WORDS and not _holds_blocks(node)


def _holds_blocks(node) -> bool:
    """Whether an element holds a block element (a paragraph, a heading, a list; not a line break)."""
    return any(isinstance(el.tag, str) and el.tag.split("}")[-1] in BLOCKS - {"br"} for el in node.iterdescendants())


def _cell(node) -> bool:
    return isinstance(node.tag, str) and node.tag.split("}")[-1] in ("td", "th")


def _data_row(row) -> bool:
    """Whether a ``<tr>`` is a row of data: two cells or more, none holding a block of its own (a layout table's
    cells hold paragraphs and headings: an e-mail's columns are text), or each holding one short paragraph at most
    (a Word table's cells as mammoth writes them: "Personnel", "$92,400"; not a table of causes and actions, each a
    sentence, nor a newsletter's columns)."""
    cells = [cell for cell in row if _cell(cell)]
    return len(cells) >= 2 and all(not _holds_blocks(cell) or _one_paragraph(cell)
                                   and len(cell.text_content().split()) <= CELL_WORDS for cell in cells)


CELL_WORDS = 8  # a cell holding one paragraph of at most this many words is data


def _one_paragraph(cell) -> bool:
    """Whether a table's cell holds one paragraph and no other block."""
    blocks = [el for el in cell.iterdescendants() if isinstance(el.tag, str) and el.tag.split("}")[-1] in BLOCKS]
    return len(blocks) == 1 and blocks[0].tag.split("}")[-1] == "p"


def _opening(parts: list[str]) -> bool:
    """Whether what ``text_of`` writes next opens a paragraph or a list item (only blanks since a block's start)."""
    for part in reversed(parts):
        if part.strip():
            return re.fullmatch(r"-|\d+\.", part.strip()) is not None  # a list item's mark
        if "\n\n" in part:
            return True
    return True


RUN_IN = re.compile(RUN_IN_WORDS + r"\.")  # a run-in heading in bold: "Year 2 (2026–27)." (not "It is hard to read.")


def text_of(element, flow: bool = False) -> str:
    """Text of an element, a blank line after each block element; ``flow``: a line break in the markup is a space
    (HTML's own rule; not inside ``<pre>``), as a web page's source wraps its paragraphs."""
    parts: list[str] = []
    marked: list[int] = []  # where a list item's mark is in ``parts``, until its words begin (its first block goes
    # on after the mark)

    def walk(node, pre: bool) -> None:
        tag = node.tag.split("}")[-1] if isinstance(node.tag, str) else ""
        if tag in HIDDEN or _hidden(node):
            return
        fence = tag == "pre" and not pre and _code(node)  # code: fenced, as Markdown writes it, so it is no prose
        block = tag in BLOCKS or tag == "cite" and _opening(parts) and any(
            str(a.tag).split("}")[-1] == "blockquote" for a in node.iterancestors())
        # (a quoted post's opening "crumb wrote: ↑Tue Feb 11, 9:14 pm" is a line of its own; a cited work's title,
        # "As the <cite>Wiring Regulations</cite> put it", is not)
        pre = pre or tag == "pre"
        said = (lambda words: words) if pre or not flow else (lambda words: words.replace("\n", " "))
        if block and marked and "".join(parts[marked[0] + 1:]).strip():
            marked.clear()  # the item's words have begun (looked for until then only: no join over a long page)
        if block and parts and not parts[-1].endswith("\n") and not marked:
            parts.append("\n\n")  # a block begins a paragraph ("Heating<div>Is it worth ...": not "HeatingIs")
        if tag == "tr" and _data_row(node):  # a table's row of cells: one line, its cells apart as Markdown's are
            cells = [" ".join(cell.text_content().split()) for cell in node if _cell(cell) and not _hidden(cell)]
            parts.append(f"\n\n| {' | '.join(cells)} |\n\n")  # (each cell had been a paragraph: a description
            return  # shown without the name of what it describes, and a paragraph's count past the table wrong)
        if tag == "li":  # a list's item, marked as Markdown marks it: what goes on from the line above it is read so
            parent = node.getparent()  # ("Do not take Velotrex:" over "- if you are allergic to ...;")
            ordered = parent is not None and parent.tag.split("}")[-1] == "ol"
            start = parent.get("start") or "1" if ordered else "1"
            number = (int(start) if start.isdigit() else 1) + sum(1 for _ in node.itersiblings("{*}li", preceding=True))
            marked[:] = [len(parts)]
            parts.append(f"{number}. " if ordered else "- ")
        if tag in ("strong", "b") and node.tail and node.tail[:1].isspace() and node.tail.strip() \
                and RUN_IN.fullmatch(" ".join(node.text_content().split())) and _opening(parts):
            parts.append(" ".join(node.text_content().split())[:-1] + ":")  # a run-in heading, "<b>Year 2.</b>
            return  # Monitoring ...": "Year 2: Monitoring ...", as prose.INLINE reads Markdown's (not a sentence)
        if fence:
            marks = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", node.text_content())), default=0))
            parts.append(f"\n\n{marks}\n")
        if node.text and tag and not (tag == "li" and not node.text.strip()):  # (a pretty-printed item's indent)
            parts.append(said(node.text))
        for child in node:
            walk(child, pre)
            if child.tail:
                parts.append(said(child.tail))
        if fence:
            parts.append(f"\n{marks}")
        if block:
            parts.append("\n\n")

    walk(element, False)
    text = re.sub(r"[ \t\r\f\v]+", " ", "".join(parts))
    return re.sub(r"\s*\n\s*\n\s*", "\n\n", text).strip()


def headings_of(text: str, body, title_element) -> list[tuple[int, int, str]]:
    """(start, end, title) of the paragraphs of ``text`` that are the body's headings (but ``title_element``, taken
    out of the text as its title), matched in order; a heading that is not a paragraph of its own is passed over."""
    breaks = list(re.finditer("\n\n", text))
    spans = list(zip([0] + [m.end() for m in breaks], [m.start() for m in breaks] + [len(text)]))
    where = defaultdict(list)  # a paragraph's text -> the indices of the paragraphs with it, in order
    for i, (a, b) in enumerate(spans):
        where[" ".join(text[a:b].split())].append(i)
    found, after = [], 0
    for element in body.iter(*SECTIONS, "summary"):  # (and a disclosure's summary: a FAQ's question over its answer)
        title = " ".join(element.text_content().split())
        if element.tag == "summary" and not title.endswith("?"):
            continue  # (a question's, not a "Show more" button's)
        indices = where.get(title, []) if element is not title_element else []
        j = bisect.bisect_left(indices, after)
        if title and j < len(indices):
            after = indices[j] + 1
            found.append((*spans[indices[j]], title))
    return found


def chapter(body, title: str | None) -> Chapter:
    """``body``'s text as a chapter: its first h1 is its title, else its first h2 or h3 where that opens the text (a
    newsletter's first item's heading, after its opening words, is no title of the whole), else ``title``; taken
    out of the text when it is the text's first paragraph."""
    heading = next((el for tag in SECTIONS[:3] for el in body.iter(tag)), None)
    own = " ".join(heading.text_content().split()) if heading is not None else ""
    text = text_of(body, flow=True)
    first = text.split("\n\n", 1)[0]
    taken = bool(own) and " ".join(first.split()) == own  # the title, out of the text
    if heading is not None and not taken and heading.tag.split("}")[-1] != "h1":
        heading, own = None, ""
    text = text[len(first):].strip() if taken else text
    return Chapter(own or title, text, headings=headings_of(text, body, heading if taken else None))


def _words(element) -> int:
    return len(element.text_content().split())


def furniture(body) -> list:
    """The elements inside ``body`` that are a site's furniture rather than its text, outermost first: a role in
    ``ROLES``, a wiki's furniture (``WIKI``: any element), a class in ``NAMED`` (not an id: ``<section
    id="comments">`` is a documentation page's section on comments; but a side column's, ``SIDE_ID``), a picture's
    caption (``_pictured``), a row of links that holds no heading, table or code; none inside a table or code, and
    never more than a quarter (``MOST``) of the words in all, but a page's comments (``DISCUSSION``) all; none of them
    where they are more than half (``THREAD``) of its words: a thread's."""
    total = _words(body)
    heading = next((el for tag in SECTIONS[:3] for el in body.iter(tag)), None)  # the title: never furniture
    kept = set() if heading is None else {heading, *heading.iterancestors()}
    said = {el for el in body.iter() if isinstance(el.tag, str) and DISCUSSION.search(el.get("class") or "")}
    outermost = [el for el in said if not any(up in said for up in el.iterancestors())]  # (a set: no scan per one)
    thread = sum(map(_words, outermost)) > THREAD * total
    if thread:  # a forum's thread: its comments are what it says (their rows of links, "Reply Share Report", are
        kept.update(said)  # still furniture)
    found: list = []
    inside: set = set()  # the elements found and all they hold
    left = max(MOST * total, LINKED_WORDS)  # the words that may still be left out
    for element in body.iter():
        wiki = isinstance(element.tag, str) and WIKI.search(element.get("class") or "") is not None
        if element.tag not in ROWS and not wiki or element is body or element in inside or element in kept \
                or any(el.tag in (*CODE, "table") for el in element.iterancestors()):
            continue
        words = _words(element)
        comment = element in said  # (a page's comments, not a thread's: all of them, whatever their words, and its
        comment = comment or SIDE_ID.search(element.get("id") or "") is not None  # side column)
        if words > left and not comment:
            continue
        named = wiki or element.get("role") in ROLES or NAMED.search(element.get("class") or "") is not None \
            or comment or "signature" in (element.get("class") or "").split() or _pictured(element)  # (a forum
        # post's; not a firm's "signature-projects")
        if named or element.tag in ROWS and 0 < words <= LINKED_WORDS \
                and next(element.iter(*SECTIONS, *CODE, "table"), None) is None \
                and _linked(element) >= LINKED_SHARE * words:
            found.append(element)
            inside.update(element.iter())
            left -= 0 if comment else words
    return found


def _pictured(element) -> bool:
    """Whether ``element`` is the caption of a figure that shows a picture ("Map of the area affected by the flood"):
    it says what a picture shows, which a summary of the text does not (a figure of a quotation or a code listing
    keeps its caption)."""
    figure = element.getparent()
    return element.tag == "figcaption" and figure is not None and \
        next(figure.iter("img", "picture", "video", "svg"), None) is not None


def _linked(element) -> int:
    """The words of ``element`` in links, when it holds two or more; else 0."""
    links = [_words(link) for link in element.iter("a")]
    return sum(links) if len(links) > 1 else 0


def looks_like_html(data: bytes) -> bool:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html"))


def _summary_box(element, body) -> bool:
    """Whether ``element`` is an ``<aside>`` that holds the page's own summary: its heading is a summary's ("The short
    version", "Key points", "At a glance": ``SUMMARY_BOX``), as a policy's or an explainer's box above its text (before
    the first ``<h2>`` of the page that is not its own; not a news site's rail of "The latest", a "Key facts" box)."""
    heading = next(element.iter(*SECTIONS, "strong", "b"), None) if element.tag == "aside" else None
    if heading is None or not SUMMARY_BOX.fullmatch(" ".join(heading.text_content().split())):
        return False
    first = next((h for h in body.iter("h2") if element not in h.iterancestors()), None)
    return first is None or any(el is element for el in _before(body, first))


def _before(body, stop):
    """The elements of ``body`` before ``stop``, in document order."""
    for el in body.iter():
        if el is stop:
            return
        yield el


SUMMARY_BOX = re.compile(r"(?:the )?short version|in (?:short|brief)|at a glance|key (?:points|takeaways|findings)|"
                         r"tl;? ?dr|summary|in a nutshell|what you need to know", re.IGNORECASE)


def read_html(data: bytes, name: str) -> tuple[list[Chapter], str | None, list[str]]:
    """(one chapter: the page's main text, its title, notes)."""
    try:
        from lxml import html
    except ImportError:
        raise DocumentError(f"'{name}' is a web page, and reading HTML needs lxml.",
                            "pip install 'lsgtool[books]' (or lxml), or save the page as text.") from None
    try:
        try:  # UTF-8 when it reads as such, whatever a <meta> says or leaves unsaid (lxml's guess is Latin-1)
            data.decode("utf-8")
            parser = html.HTMLParser(encoding="utf-8")
        except UnicodeDecodeError:
            parser = None
        root = html.document_fromstring(data, parser=parser)
    except Exception as exc:  # lxml's ParserError for an empty or broken page
        raise DocumentError(f"'{name}' is not a readable HTML page: {exc}.", "check the file.") from None
    page_title = " ".join((root.findtext(".//title") or "").split()) or None
    articles = root.findall(".//article")
    body = root.find(".//main")
    body = body if body is not None else articles[0] if len(articles) == 1 else root.find(".//body")
    body = body if body is not None else root
    dropped = [el for el in body.iter(*CHROME, *(SITE if body.tag == "body" else ())) if el is not body
               and not _summary_box(el, body)]
    for element in dropped:
        element.drop_tree()  # its tail (the text after it) stays
    rows = furniture(body)
    for element in rows:
        element.drop_tree()
    found = chapter(body, page_title)
    if not found.text.strip():
        raise DocumentError(f"'{name}' is a web page without text in its body.", "check the file.")
    left = [f"{len(dropped)} navigation, aside, form or site header/footer elements"] if dropped else []
    left += [f"{len(rows)} blocks of links, sharing, comments, bylines, captions or corrections"] if rows else []
    notes = [f"HTML: the text of its <{body.tag}>" + (f"; {' and '.join(left)} left out" if left else "")]
    return [found], found.title, notes  # its h1 before its <title> ("Recipe | Site")
