"""The HTML page of a summary at book scale, in headless Chromium: is every highlight the source text, how fast does
the page paint and answer a click, how large is it against the text.

    python benchmarks/html_page.py                       # the KJV EPUB per chapter and the Genesis PDF
    python benchmarks/html_page.py --inputs genesis      # one of them
    python benchmarks/html_page.py --screenshot docs/html-page.png

The inputs are built here from Debian's packages (apt-get install bible-kjv pandoc groff chromium): the King James
Bible as an EPUB (pandoc; a chapter per book, a `## Chapter N` heading per chapter, as published EPUBs of it are)
and the book of Genesis as a PDF (groff -ms, justified and hyphenated, a paragraph per six verses). Each is
summarised with `lsgtool summarize --format html` (the KJV with --per-chapter), the page loaded from file:// in
Chromium (Playwright driving Debian's chromium), and:

- every source span of every summary sentence is read back from the page (the highlights carrying its key, in
  document order) and compared with the text lsgtool read, ``text[start:end]``, as the run's record gives them;
- time to first contentful paint (the browser's own paint timing) and to the highlight of a click on a summary
  sentence (the first, the middle and the last: scrolled to its strongest source and painted), with a cold start
  (a new page each time);
- the page's size against the text's (UTF-8 bytes).

Exits 1 when a highlight differs from its source text.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

BOOKS = ("Genesis Exodus Leviticus Numbers Deuteronomy Joshua Judges Ruth 1_Samuel 2_Samuel 1_Kings 2_Kings "
         "1_Chronicles 2_Chronicles Ezra Nehemiah Esther Job Psalms Proverbs Ecclesiastes Song_of_Solomon Isaiah "
         "Jeremiah Lamentations Ezekiel Daniel Hosea Joel Amos Obadiah Jonah Micah Nahum Habakkuk Zephaniah Haggai "
         "Zechariah Malachi Matthew Mark Luke John Acts Romans 1_Corinthians 2_Corinthians Galatians Ephesians "
         "Philippians Colossians 1_Thessalonians 2_Thessalonians 1_Timothy 2_Timothy Titus Philemon Hebrews James "
         "1_Peter 2_Peter 1_John 2_John 3_John Jude Revelation").split()
VERSES_PER_PARAGRAPH = 6

# the text of each source key ("n.k") as the page holds it: its highlights' text, in document order
HIGHLIGHTS = """() => { const found = {};
  for (const a of document.querySelectorAll('#doc a[data-s]'))
    for (const key of a.dataset.s.split(' ')) found[key] = (found[key] || '') + a.textContent;
  return found; }"""
# when the browser first painted content (milliseconds from the navigation's start), waited for if not yet
PAINT = """() => new Promise(done => new PerformanceObserver(list => {
  for (const e of list.getEntries()) if (e.name === 'first-contentful-paint') done(e.startTime);
}).observe({type: 'paint', buffered: true}))"""
# a click on sentence n, until its strongest source is highlighted, scrolled to and painted (milliseconds)
CLICK = """async (n) => { const t = performance.now(); document.getElementById('s' + n).click();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const on = document.querySelector('#doc a.on'); const box = on.getBoundingClientRect();
  return {ms: performance.now() - t, visible: box.top >= 0 && box.bottom <= innerHeight}; }"""


def chapters() -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """(book, [(chapter, verses)]) of the KJV as `bible` prints it."""
    text = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], capture_output=True, text=True, check=True).stdout
    books: list[tuple[str, list[tuple[str, list[str]]]]] = []
    code = None
    for line in text.splitlines():
        found = re.match(r"(\w+?)(\d+):\d+ (.*)", line)
        if not found:
            if line.strip() and books:
                books[-1][1][-1][1][-1] += " " + line.strip()  # a verse printed over two lines
            continue
        book, chapter, verse = found.groups()
        if book != code:
            code = book
            books.append((BOOKS[len(books)].replace("_", " "), []))
        if not books[-1][1] or books[-1][1][-1][0] != chapter:
            books[-1][1].append((chapter, []))
        books[-1][1][-1][1].append(verse)
    return books


def build(folder: Path) -> dict[str, Path]:
    """kjv.epub and genesis.pdf in ``folder`` (made once)."""
    folder.mkdir(parents=True, exist_ok=True)
    epub, pdf = folder / "kjv.epub", folder / "genesis.pdf"
    if epub.exists() and pdf.exists():
        return {"kjv": epub, "genesis": pdf}
    for tool in ("bible", "pandoc", "groff"):
        if not shutil.which(tool):
            sys.exit(f"`{tool}` is not here: apt-get install bible-kjv pandoc groff")
    books = chapters()
    lines = ["% The Holy Bible", "% King James Version", ""]
    for book, its in books:
        lines += [f"# {book}", ""]
        for chapter, verses in its:
            lines += [f"## Chapter {chapter}", "", " ".join(verses), ""]
    (folder / "kjv.md").write_text("\n".join(lines))
    subprocess.run(["pandoc", str(folder / "kjv.md"), "-o", str(epub)], check=True)
    roff = [".TL", "The First Book of Moses, called Genesis", ".LP"]
    for chapter, verses in books[0][1]:
        roff += [".SH", f"Chapter {chapter}"]
        for i in range(0, len(verses), VERSES_PER_PARAGRAPH):
            roff += [".PP", " ".join(verses[i:i + VERSES_PER_PARAGRAPH])]
    (folder / "genesis.ms").write_text("\n".join(roff) + "\n")
    with open(pdf, "wb") as out:
        subprocess.run(["groff", "-ms", "-Tpdf", str(folder / "genesis.ms")], stdout=out, check=True)
    return {"kjv": epub, "genesis": pdf}


def summarise(source: Path, folder: Path, per_chapter: bool) -> tuple[Path, dict, float]:
    """(page, record, seconds): ``lsgtool summarize --format html`` run as a user runs it."""
    out = folder / f"{source.stem}.summary.html"
    command = [sys.executable, "-m", "lsgtool", "summarize", str(source), "--out", str(out), "--overwrite"]
    started = time.perf_counter()
    subprocess.run(command + (["--per-chapter"] if per_chapter else []), check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    records = sorted((folder / ".lsgtool-summaries" / "records").glob(f"{source.stem}.*.json"),
                     key=lambda p: p.stat().st_mtime)
    return out, json.loads(records[-1].read_text()), seconds


def sources(record: dict) -> dict[str, tuple[int, int]]:
    """Each source key ("n.k", numbered as the page numbers them: the book's sentences, then each chapter's, each
    sentence's sources strongest first) and its span."""
    found, n = {}, 0
    for sentences in [record.get("sentences") or []] + [c.get("sentences") or [] for c in record.get("chapters", [])]:
        for sentence in sentences:
            for k, s in enumerate(sorted(sentence["sources"], key=lambda s: -s["score"])):
                if s["end"] > s["start"]:
                    found[f"{n}.{k}"] = (s["start"], s["end"])
            n += 1
    return found


def measure(browser, page_path: Path, record: dict, text: str, screenshot: Path | None) -> dict:
    expected = sources(record)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(page_path.resolve().as_uri())
    paint = page.evaluate(PAINT)
    shown = page.evaluate(HIGHLIGHTS)
    wrong = [key for key, (a, b) in expected.items() if shown.get(key) != text[a:b]]
    count = max((int(key.split(".")[0]) for key in expected), default=-1) + 1
    page.close()
    clicks = []
    for n in sorted({0, count // 2, count - 1}) if count else []:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(page_path.resolve().as_uri())
        clicks.append(page.evaluate(CLICK, n))
        if screenshot is not None and n == count // 2:  # the sentence in view too, as a reader clicking it sees it
            page.evaluate("n => document.getElementById('s' + n).scrollIntoView({block: 'center'})", n)
            page.screenshot(path=str(screenshot))
        page.close()
    return {"sources": len(expected), "wrong": wrong[:5], "wrong_count": len(wrong), "first_paint_ms": paint,
            "click_ms": [round(c["ms"], 1) for c in clicks], "visible": all(c["visible"] for c in clicks),
            "page_bytes": page_path.stat().st_size, "text_bytes": len(text.encode())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", default="kjv,genesis", help="kjv, genesis or both (comma-separated)")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/lsgtool-html-bench"))
    parser.add_argument("--screenshot", type=Path, help="a PNG of the KJV page (a sentence clicked)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from lsgtool.documents import read

    built = build(args.folder)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("Chromium is not here: apt-get install chromium")
    rows, failed = [], False
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        for name in args.inputs.split(","):
            path, record, seconds = summarise(built[name], args.folder, per_chapter=name == "kjv")
            text = read(str(built[name])).text
            shot = args.screenshot if name == "kjv" or args.inputs == name else None
            row = {"input": path.name, "summarise_s": round(seconds, 1), **measure(browser, path, record, text, shot)}
            failed |= row["wrong_count"] > 0
            rows.append(row)
            print(json.dumps(row), flush=True)
        browser.close()
    print(f"\n{'page':<28}{'sources':>8}{'wrong':>7}{'paint ms':>10}{'clicks ms':>20}{'page/text':>11}")
    for r in rows:
        print(f"{r['input']:<28}{r['sources']:>8}{r['wrong_count']:>7}{r['first_paint_ms']:>10.0f}"
              f"{'/'.join(f'{c:.0f}' for c in r['click_ms']):>20}{r['page_bytes'] / r['text_bytes']:>10.2f}x")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
