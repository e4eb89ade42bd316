"""Reading documents: text and Markdown chapters, a groff-typeset PDF, a pandoc EPUB, and every way a file
can fail to give text (each names the file)."""

import difflib
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from lsgtool.documents import DocumentError, read, read_bytes
from lsgtool.documents.sentences import sentence_spans
from lsgtool.documents.text import chapters

DATA = Path(__file__).parents[1] / "data"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.replace("’", "'").lower())


def test_typeset_pdf_reads_as_the_source_text():
    """groff: justified, hyphenated, a running head and a page foot on every page."""
    pytest.importorskip("pymupdf")
    source, document = _words((DATA / "genesis.txt").read_text()), read(DATA / "genesis-groff.pdf")
    got = _words(document.text)
    matcher = difflib.SequenceMatcher(None, source, got, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    assert len(source) - matched <= len(source) // 200 and len(got) - matched <= len(source) // 200  # <= 0.5 % off
    assert "The First Book of Moses" not in document.text and not re.search(r"Page \d", document.text)
    assert re.search(r"(\d+) hyphenated words? joined", document.notes[0]).group(1) != "0"


def test_pandoc_epub_gives_its_chapters_without_the_title_page():
    pytest.importorskip("ebooklib")
    document = read(DATA / "genesis-pandoc.epub")
    assert document.kind == "epub" and document.title == "The First Book of Moses"
    assert [c.title for c in document.chapters] == ["Chapter 1", "Chapter 2", "Chapter 3", "Chapter 4"]
    assert document.chapters[0].text.startswith("In the beginning God created")
    assert _words(document.text) == _words((DATA / "genesis.txt").read_text())
    # the note says what was left out as a reader would ("the title page", not the book's own title) and counts well
    assert document.notes == ["EPUB: 4 chapters from the spine; front matter left out: the title page"]
    from lsgtool.documents.model import counted

    assert [counted(1, "chapter"), counted(2, "page"), counted(1, "footnote line|s moved"),
            counted(1200, "footnote line|s moved")] == ["1 chapter", "2 pages", "1 footnote line moved",
                                                       "1,200 footnote lines moved"]


def test_text_chapters_from_headings():
    text = ("Preface words.\n\nCHAPTER I. The Storm\n\nIt rained.\n\nBOOK II\n\nChapter 2\n\nIt cleared.\n\n"
            "Chapter 3 was a long day and this line is prose that starts like a heading but goes on and on and on.")
    found = chapters(text)
    assert [c.title for c in found] == [None, "CHAPTER I. The Storm", "BOOK II — Chapter 2"]
    assert found[2].text.endswith("on and on.")
    assert [c.title for c in chapters("# One\n\ntext\n\n## Two\n\nmore", markdown=True)] == ["One", "Two"]
    assert [c.title for c in chapters("no headings here")] == [None]
    marked = "# And *so* it [begins](https://example.org)\n\ntext\n\n## `unsafe_pinned` **now**\n\nmore"
    assert [c.title for c in chapters(marked, markdown=True)] == ["And so it begins", "unsafe_pinned now"]  # as read


def test_pandoc_docx_gives_a_chapter_per_heading_1_and_the_whole_text():
    pytest.importorskip("mammoth")
    document = read(DATA / "genesis-pandoc.docx")
    assert document.kind == "docx" and document.title == "The First Book of Moses"  # its properties' title
    assert [c.title for c in document.chapters] == ["Chapter 1", "Chapter 2", "Chapter 3", "Chapter 4"]
    assert document.chapters[0].text.startswith("In the beginning God created")
    assert _words(document.text) == _words((DATA / "genesis.txt").read_text())


def test_a_word_report_keeps_its_text_and_notes_without_their_marks():
    """A title paragraph is the title, not text; text before the first Heading 1 is a chapter of its own; a Heading 2
    is a heading in its chapter; a footnote's marker is left out and its text kept at the end."""
    pytest.importorskip("mammoth")
    document = read(DATA / "report-pandoc.docx")
    assert document.title == "Grain Stores Review" and "Grain Stores Review" not in document.text
    assert [c.title for c in document.chapters] == [None, "Findings", "Recommendations", "Notes"]
    findings = document.chapters[1]
    assert findings.text.startswith("The granaries held enough grain for seven years. Stores were counted")
    assert [title for _, _, title in findings.headings] == ["Method"]
    assert "- Each tally was checked by a second clerk." in findings.text.split("\n\n")  # a list's item
    assert document.chapters[3].text == "1. The count of the second year was lost in a fire."  # not Recommendations'
    assert "↑" not in document.text and "[1]" not in document.text and "1 note mark left out" in document.notes[0]


def _docx(tmp_path, markdown: str) -> Path:
    """A Word document pandoc writes from ``markdown`` (its title block a Title paragraph)."""
    if shutil.which("pandoc") is None:
        pytest.skip("pandoc writes the Word documents of this test")
    source, out = tmp_path / "source.md", tmp_path / "doc.docx"
    source.write_text(markdown, encoding="utf-8")
    subprocess.run(["pandoc", str(source), "-o", str(out)], check=True)
    return out


def _edited(source: Path, out: Path, part: str, old: bytes, new: bytes) -> Path:
    """A copy of the Word document ``source`` at ``out`` with the first ``old`` in its ``part`` (an XML file of the
    zip) made ``new``: what Word writes that pandoc does not."""
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(out, "w") as target:
        for item in archive.infolist():
            data = archive.read(item.filename)
            if item.filename == part:
                assert old in data
                data = data.replace(old, new, 1)
            target.writestr(item, data)
    return out


@pytest.mark.parametrize("markdown, titles", [
    ("## One\n\nThe first.\n\n## Two\n\nThe second.\n", ["One", "Two"]),  # only Heading 2s: a chapter each
    ("# Report\n\n## One\n\nThe first.\n\n## Two\n\nThe second.\n", ["Report — One", "Two"]),  # one Heading 1
    ("# Part A\n\n# Chapter 1\n\nThe first.\n\n# Chapter 2\n\nThe second.\n",
     ["Part A — Chapter 1", "Chapter 2"]),  # a heading without text of its own names the next chapter too
    ("% Annual Report\n\nThe first.\n", [None]),
    ("## Background\n\nThe first.\n\n## Scope\n\nThe second.\n\n# Appendix\n\n## Figures\n\nThe third.\n",
     ["Background", "Scope", "Appendix — Figures"]),  # a Heading 1 among the Heading 2 chapters starts one too
])
def test_a_word_document_s_chapters_are_its_top_headings_that_are_several(tmp_path, markdown, titles):
    pytest.importorskip("mammoth")
    path = _docx(tmp_path, markdown)
    if markdown.startswith("%"):  # a title over two Title paragraphs, as Word users write one
        second = (b'<w:p><w:pPr><w:pStyle w:val="Title" /></w:pPr>'
                  b'<w:r><w:t xml:space="preserve">of the Northern Granaries</w:t></w:r></w:p>')
        path = _edited(path, tmp_path / "titled.docx", "word/document.xml", b"</w:p>", b"</w:p>" + second)
    document = read(path)
    assert [c.title for c in document.chapters] == titles
    if markdown.startswith("%"):  # both lines, and neither in the text
        assert document.title == "Annual Report of the Northern Granaries" and document.text == "The first."
    else:
        assert "first." in document.chapters[0].text and "second." in document.text


@pytest.mark.parametrize("markdown, title", [
    ("HOMEOWNERS POLICY\n\nYour home is covered. Claims are paid in thirty days.\n", "HOMEOWNERS POLICY"),
    ("# Chapter 7: Leave\n\n## 7.1 Annual leave\n\nYou get 25 days.\n\n## 7.2 Sick leave\n\nTell us by 9 am.\n",
     "Chapter 7: Leave"),  # its one Heading 1, over all of it
    ("Your home is covered. Claims are paid in thirty days.\n\nMore follows.\n", None),  # prose: no title
])
def test_a_word_document_without_a_title_paragraph_is_titled_by_its_first_line_as_text_is(tmp_path, markdown,
                                                                                           title):
    pytest.importorskip("mammoth")
    document = read(_docx(tmp_path, markdown))
    assert document.title == title
    if not markdown.startswith("#"):  # its first line stays in its text, as a text file's does
        assert document.text.startswith(markdown.split("\n")[0])


def test_a_word_tables_rows_are_a_line_each_as_a_web_pages_are(tmp_path):
    """mammoth writes a paragraph in each of a Word table's cells: each cell had been a paragraph of its own (a
    budget's sentence under a table of two rows counted as its section's fourteenth paragraph)."""
    pytest.importorskip("mammoth")
    markdown = ("| Category | Year 1 | Total |\n|---|---:|---:|\n| Personnel | $92,400 | $187,600 |\n\n"
                "Equipment is for a seed-curing system of six tanks.\n")
    assert read(_docx(tmp_path, markdown)).text == (
        "| Category | Year 1 | Total |\n\n| Personnel | $92,400 | $187,600 |\n\n"
        "Equipment is for a seed-curing system of six tanks.")
    causes = ("| Cause | Action |\n|---|---|\n| A forklift battery with a damaged cell was charged overnight. | "
              "Batteries that fail the daily check are taken out of use at once. |\n")
    assert "\n\nA forklift battery with a damaged cell was charged overnight.\n\n" in read(_docx(tmp_path, causes)).text
    # (a table of sentences is prose, its cells paragraphs, as before)


def test_a_word_cross_reference_to_a_note_keeps_its_words(tmp_path):
    pytest.importorskip("mammoth")
    link = b'<w:p><w:hyperlink w:anchor="footnote-1"><w:r><w:t>See the note on counts.</w:t></w:r></w:hyperlink></w:p>'
    path = _edited(DATA / "report-pandoc.docx", tmp_path / "report.docx", "word/document.xml", b"</w:p>",
                   b"</w:p>" + link)  # after the Title paragraph
    document = read(path)
    assert document.chapters[0].text == "See the note on counts.\n\nPrepared for the harvest committee."
    assert "1 note mark left out" in document.notes[0]


def test_a_word_document_s_table_of_contents_is_not_its_text(tmp_path):
    pytest.importorskip("mammoth")
    line = '<w:p><w:hyperlink w:anchor="_Toc{0}"><w:r><w:t xml:space="preserve">{1}</w:t></w:r></w:hyperlink></w:p>'
    contents = ('<w:p><w:r><w:t>Contents</w:t></w:r></w:p>' + line.format(1, "Findings 1")
                + line.format(2, "Recommendations 2")).encode()
    path = _edited(DATA / "report-pandoc.docx", tmp_path / "report.docx", "word/document.xml", b"</w:p>",
                   b"</w:p>" + contents)  # after the Title paragraph
    document = read(path)
    assert [c.title for c in document.chapters] == [None, "Findings", "Recommendations", "Notes"]
    assert "Contents" not in document.text and "Findings 1" not in document.text
    assert document.chapters[0].text == "Prepared for the harvest committee."


def test_a_word_document_s_title_paragraph_names_it_before_its_properties(tmp_path):
    pytest.importorskip("mammoth")
    renamed = _edited(DATA / "report-pandoc.docx", tmp_path / "report.docx", "docProps/core.xml",
                      b"<dc:title>Grain Stores Review</dc:title>", b"<dc:title>Template 2019</dc:title>")
    assert read(renamed).title == "Grain Stores Review"


def test_a_word_document_that_is_not_one_is_refused_and_a_lock_file_is_passed_over(tmp_path):
    from lsgtool.summarize.inputs import files

    pytest.importorskip("mammoth")
    fake = tmp_path / "minutes.docx"
    with zipfile.ZipFile(fake, "w") as archive:
        archive.writestr("content.xml", "<office:document/>")
    with pytest.raises(DocumentError, match="'.*minutes.docx' is not a Word document"):
        read(fake)
    (tmp_path / "report.docx").write_bytes((DATA / "report-pandoc.docx").read_bytes())
    (tmp_path / "~$report.docx").write_bytes(b"\x0bAna Ruiz" + b"\x00" * 40)  # Word's lock file beside it
    assert [Path(job.name).name for job in files([str(tmp_path)])] == ["minutes.docx", "report.docx"]


def test_a_scene_break_of_tildes_is_no_code_fence():  # "~~~ * ~~~" opens no code block that hides the rest
    from lsgtool.documents.prose import prose_sentences

    text = "The Lighthouse\n\nThe keeper climbed the stairs.\n\n~~~ * ~~~\n\nWinter came. The wick froze.\n"
    assert "The wick froze." in [text[a:b] for a, b in prose_sentences(text)]


def test_code_is_no_chapter_heading():  # a shell comment in a fenced or indented code block is code
    text = ("# Setup\n\nInstall it.\n\n```sh\n# install the tool\npip install x\n```\n\n~~~\n# also code\n~~~\n\n"
            "    # indented code\n\n## Motivation\n\nWhy.\n")
    found = chapters(text, markdown=True)
    assert [c.title for c in found] == ["Setup", "Motivation"]
    assert "# install the tool" in found[0].text and "# indented code" in found[0].text
    for inner in ("````md\n```bash\n# inner\n```\n````", "~~~~\n~~~\n# inner\n~~~\n~~~~",  # a shorter fence, or
                  "```\n```python\n# inner\n```"):  # one with an info string, closes none (CommonMark)
        nested = f"# Setup\n\nInstall it.\n\n{inner}\n\n## Motivation\n\nWhy.\n"
        assert [c.title for c in chapters(nested, markdown=True)] == ["Setup", "Motivation"], inner


@pytest.mark.parametrize("text, suffix, title", [
    ("# RFC: `async` **closures**\n\nWords.\n\n## Motivation\n\nWhy.\n", ".md", "RFC: async closures"),
    ("---\ntitle: \"Sparse Gated Retrieval\"\nauthor: Me\n---\n\n# Introduction\n\nA.\n\n# Method\n\nB.\n", ".md",
     "Sparse Gated Retrieval"),  # front matter names it, whatever the headings
    ("Harvest Report\n==============\n\nThe granary was full.\n", ".md", "Harvest Report"),
    ("CULTURAL EXCHANGE\n\nBy Keith Laumer. It was a cold day.\n", ".txt", "CULTURAL EXCHANGE"),
    ("# Genesis\n\n## Chapter 1\n\nA.\n\n## Chapter 2\n\nB.\n", ".md", "Genesis"),
    ("# The Storm\n\nRain.\n\n# The Morning\n\nSun.\n", ".md", None),  # the first of several chapters
    ("CHAPTER I\n\nIt was.\n\nCHAPTER II\n\nIt is.\n", ".txt", None),
    ("It rained all day. The river rose.\n", ".txt", None),  # prose
    ("Anna: Shall we start?\nBen: Yes, the budget first.\nAnna: Fine.\n", ".txt", None),  # a transcript
    ("---\ntitle: >-\n  Folded Over\n  Two Lines # kept\n---\n\nBody.\n", ".md", "Folded Over Two Lines # kept"),
    ("---\ntitle: Harvest # a comment\n---\n\nBody.\n", ".md", "Harvest"),  # YAML as YAML reads it
    ("---\ntitle: ''\nauthor: Me\n---\n\nBody text here.\n", ".md", None),
    ("---\nauthor: Me\n---\n\n# Heading Title\n\nBody.\n", ".md", "Heading Title"),  # no title: the heading
    ("[![CI](https://ci.example.org/b.svg)](https://ci.example.org)\n\nA tool. It works.\n", ".md", None),  # a badge
    ('<p align="center"><img src="logo.png"></p>\n\nA tool. It works.\n', ".md", None),
    ('<p align="center"><img src="logo.png"></p>\n[![CI](b.svg)](https://ci.example.org)\n\n# Granary\n\nA tool.\n',
     ".md", "Granary"),  # a README's logo and badges, then its heading
    ("- one item\n\nA tool. It works.\n", ".md", None),
    ("* * *\n\nA tool. It works.\n", ".md", None),
    ("https://example.org/tool\n\nA tool. It works.\n", ".txt", None),
    ("Title\n=====\n\nText.\n\nOther\n=====\n\nMore.\n", ".md", None),  # the first of two === headings
    ("Title\n=====\n\nText.\n\nPart\n----\n\nMore.\n", ".md", "Title"),
    ("---\ntitle: Rust: A Practical Guide\n---\n\nBody.\n", ".md", "Rust: A Practical Guide"),  # not YAML: as written
    ("---\n\nA paragraph between rules.\n\n---\n\n# Part two\n\nMore.\n", ".md", None),  # rules, no front matter
    ("[DRAFT] Budget Proposal 2025\n\nThe budget grows. It is late.\n", ".txt", "[DRAFT] Budget Proposal 2025"),
    ("# Why http:// links break\n\nThey do. Often.\n", ".md", "Why http:// links break"),
    ("# Introduction\n\nThe granary was full.\n", ".md", None),  # a section every document has names none
    ("1. Introduction\n\nThe granary was full.\n", ".txt", None),
    ("TODO\n\nThe granary was full.\n", ".txt", None),
    ("# Dear John,\n\nThe granary was full.\n", ".md", None),  # a letter's greeting
    ("Dear John\n\nThe granary was full.\n", ".txt", "Dear John"),  # a novel's name
    ("# Introduction to Granaries\n\nThe granary was full.\n", ".md", "Introduction to Granaries"),
    ("HEARTHSTONE MUTUAL INSURANCE COMPANY\nHOMEOWNERS POLICY\n\nYour home is covered.\n", ".txt",
     "HEARTHSTONE MUTUAL INSURANCE COMPANY HOMEOWNERS POLICY"),  # a title block in capitals
    ("From: Tamsin Hale <tamsin@example.org>\nTo: Gareth Lowe\nSubject: My resignation\n\nHi Gareth,\n\nI resign.\n",
     ".txt", "My resignation"),  # an e-mail's subject
])
def test_a_text_document_is_titled_as_its_reader_sees_it(text, suffix, title):
    assert read_bytes(text.encode(), "doc" + suffix, suffix).title == title


BIBLE = ("The Holy Bible\n\nGenesis\n\nChapter 1\n\nIn the beginning.\nAnd the earth.\n\nChapter 2\n\nThus.\n\n"
         "Exodus\n\nChapter 1\n\nNow these.\n\nChapter 2\n\nAnd there went.\n")


@pytest.mark.parametrize("text, titles", [  # issue 29, item 20: a chapter is named with the book it is in
    (BIBLE, [None, "Genesis — Chapter 1", "Genesis — Chapter 2", "Exodus — Chapter 1", "Exodus — Chapter 2"]),
    ("BOOK I\n\nChapter 1\n\nA.\n\nChapter 2\n\nB.\n\nBOOK II\n\nIts preface.\n\nChapter 3\n\nC.\n",
     ["BOOK I — Chapter 1", "BOOK I — Chapter 2", "BOOK II", "BOOK II — Chapter 3"]),
    ("# Genesis\n\n## Chapter 1\n\nA.\n\n## Chapter 2\n\nB.\n\n# Exodus\n\n## Chapter 1\n\nC.\n",
     ["Genesis — Chapter 1", "Genesis — Chapter 2", "Exodus — Chapter 1"]),
    ("Prologue\n\nChapter 1\n\nA.\n\nChapter 2\n\nB.\n", [None, "Chapter 1", "Chapter 2"]),  # numbered once: no books
    ("Contents\n\nChapter 1\nChapter 2\n\nMy Novel\nby Me\n\nChapter 1\n\nA.\n\nChapter 2\n\nB.\n",  # a contents
     [None, "Chapter 1", "Chapter 1", "Chapter 2"]),                                         # list: no books
])
def test_chapters_are_titled_with_their_book(text, titles):
    found = chapters(text, markdown=text.startswith("#"))
    assert [c.title for c in found] == titles
    assert all(text[c.start:c.start + len(c.text)] == c.text for c in found)
    assert not any("Genesis" in c.text or "Exodus" in c.text for c in found)  # a book's line is not its text


@pytest.mark.parametrize("data, suffix, message", [
    (b"", ".txt", "is empty"),
    (b"   \n\t\n", ".txt", "is empty"),
    (b"\x7fELF\x02\x01\x00\x00binary", ".txt", "is binary data"),
    ("caf\u00e9".encode("latin-1"), ".txt", "is not UTF-8 text"),
    (b"%PDF-1.4\n%broken", ".pdf", "is not a readable PDF"),
    (b"not a zip", ".epub", "is not an EPUB"),
    (b"not a zip", ".docx", "is not a Word document"),
    (b"PK\x03\x04broken", ".docx", "is damaged"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", ".docx", "is password-protected"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", ".doc", "is a Word 97-2003 document"),  # save it as .docx
    (b"{\\rtf1\\ansi {\\pard Some text here.\\par}}", ".rtf", "is an RTF document"),
    (b"a,b\n1,2\n", ".csv", "is a table of values"),
    (b'{"messages": [{"user": "Ann", "text": "On it."}]}', ".json", "is JSON data"),  # a chat export
    (b'{"text": "One."}\n{"text": "Two."}\n', ".jsonl", "is JSON data"),
    (b'[{"text": "One."}]', ".txt", "is JSON data"),  # by its content
    (b"\\documentclass{article}\n\\begin{document}\nWords.\n\\end{document}\n", ".tex", "is LaTeX source"),
    (b"% a chapter\n\\begin{document}\nWords.\n", ".txt", "is LaTeX source"),
    (b'<?xml version="1.0"?>\n<rss version="2.0"><channel><title>News</title></channel></rss>', ".xml", "is XML data"),
    (b'<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title></feed>', ".txt", "is XML data"),  # Atom
    (b'{"cells": [{"cell_type": "markdown", "source": ["# Title"]}], "nbformat": 4}', ".ipynb", "Jupyter notebook"),
    (b"PK\x03\x04\x00\x00mimetypeapplication/vnd.oasis.opendocument.text", ".odt", "is an OpenDocument text"),
    (b"<!DOCTYPE html><html><head><title>T</title></head><body><nav>Home</nav></body></html>", ".html",
     "web page without text"),
])
def test_files_without_text_are_refused_naming_them(data, suffix, message):
    if suffix == ".pdf":
        pytest.importorskip("pymupdf")
    if suffix == ".epub":
        pytest.importorskip("ebooklib")
    if suffix == ".html":
        pytest.importorskip("lxml")
    if suffix == ".docx":
        pytest.importorskip("mammoth")
    with pytest.raises(DocumentError, match=message) as info:
        read_bytes(data, f"bad{suffix}", suffix)
    assert f"'bad{suffix}'" in info.value.message and info.value.hint
    assert suffix not in (".doc", ".rtf", ".odt") or "save it as .docx" in info.value.hint
    assert suffix != ".odt" or "pandoc bad.odt -o bad.docx" in info.value.hint
    assert suffix != ".ipynb" or "jupyter nbconvert --to markdown bad.ipynb" in info.value.hint
    assert "JSON" not in message or f"--dataset bad{suffix}" in info.value.hint
    assert "LaTeX" not in message or "pandoc" in info.value.hint


@pytest.mark.parametrize("text", ["[Intro] The parser is fast. It reads [a] file.", "{braces} around words.",
                                  "The \\section command is LaTeX's, as this sentence says.",
                                  "# A LaTeX guide\n\nStart with:\n\n```latex\n\\documentclass{article}\n```",
                                  "<rss> is the root of a feed, as this sentence says."])
def test_text_that_only_looks_like_json_or_latex_is_read(text):
    assert read_bytes(text.encode(), "notes.txt", ".txt").text.strip() == text


@pytest.mark.parametrize("encoding, bom", [("utf-8", b""), ("utf-8", b"\xef\xbb\xbf"), ("utf-16", b""),
                                           ("utf-32", b"")])  # issue 29, item 8 (UTF-32 read as UTF-16 before)
def test_offsets_index_the_file_as_the_readme_reads_it(tmp_path, encoding, bom):  # issue 29, item 8
    """`open(path, encoding=..., newline="").read()[start:end]` (README) is the sentence: a UTF-8 BOM is a
    character there, `\r\n` two; the UTF-16 codec drops its BOM."""
    path = tmp_path / "doc.txt"
    text = "Chapter 1\r\n\r\nIt rained. It poured.\r\n\r\nChapter 2\r\n\r\nIt cleared.\r\n"
    path.write_bytes(bom + text.encode(encoding))
    document, own = read(path), open(path, encoding=encoding, newline="").read()
    assert len(document.text) == len(own) and [c.title for c in document.chapters] == ["Chapter 1", "Chapter 2"]
    for chapter in document.chapters:
        assert own[chapter.start:chapter.start + len(chapter.text)] == chapter.text
    found = [own[a:b] for a, b in sentence_spans(document.text)]
    assert found[1:3] == ["It rained.", "It poured."] and found[-1] == "It cleared."
    assert document.place(own.index("It cleared")).line == own.count("\n", 0, own.index("It cleared")) + 1 == 7


def test_encrypted_pdf_and_drm_epub_are_refused(tmp_path):
    pymupdf = pytest.importorskip("pymupdf")
    pytest.importorskip("ebooklib")
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret text")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")
    with pytest.raises(DocumentError, match="encrypted PDF"):
        read_bytes(data, "locked.pdf", ".pdf")
    epub = tmp_path / "drm.epub"
    with zipfile.ZipFile(DATA / "genesis-pandoc.epub") as source, zipfile.ZipFile(epub, "w") as target:
        for item in source.infolist():
            target.writestr(item, source.read(item))
        target.writestr("META-INF/encryption.xml", '<encryption><EncryptedData><EncryptionMethod '
                        'Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/></EncryptedData></encryption>')
    with pytest.raises(DocumentError, match=r"encrypted \(DRM\) EPUB"):
        read(epub)


def test_pdf_without_a_text_layer_is_refused():
    pymupdf = pytest.importorskip("pymupdf")
    doc = pymupdf.open()
    doc.new_page().draw_rect(pymupdf.Rect(10, 10, 100, 100))
    with pytest.raises(DocumentError, match="has no text layer"):
        read_bytes(doc.tobytes(), "scan.pdf", ".pdf")


def test_pdf_pages_are_the_offsets_where_each_page_begins():
    pymupdf = pytest.importorskip("pymupdf")
    document, pdf = read(DATA / "genesis-groff.pdf"), pymupdf.open(DATA / "genesis-groff.pdf")
    pages, text = document.pages, document.text
    assert len(pages) == pdf.page_count and pages == sorted(pages) and 0 <= pages[0] and pages[-1] < len(text)
    for page, start, end in zip(pdf, pages, pages[1:] + [len(text)]):
        lines = [line for line in page.get_text().splitlines()
                 if not re.match(r"The First Book of Moses|Page \d", line.strip())]  # the running head and foot
        own, got = _words(re.sub(r"-\n", "", "\n".join(lines))), _words(text[start:end])
        matched = sum(block.size for block in difflib.SequenceMatcher(None, own, got, autojunk=False).get_matching_blocks())
        assert len(own) - matched <= 1 and len(got) - matched <= 1  # a word hyphenated across the boundary
    assert document.place(pages[-1] + 10).page == pdf.page_count == document.place(len(text) - 1).page


def test_pdf_pages_across_outline_chapters():
    """Chapters from the outline are cleaned apart and joined by blank lines; a page keeping no text (a blank
    page, a chapter of only a blank page) begins where the next text does; a word can break across pages."""
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    for words in ["One starts here.", "Two starts with an extra-", "ordinary word.", "", "Three ends it."]:
        pdf.new_page().insert_text((72, 72), words)
    pdf.set_toc([[1, "One", 1], [1, "Two", 2], [1, "Blank", 4], [1, "Three", 5]])
    document = read_bytes(pdf.tobytes(), "book.pdf", ".pdf")
    one, two, three = document.chapters
    assert [c.title for c in document.chapters] == ["One", "Two", "Three"]
    assert two.text == "Two starts with an extraordinary word." and document.text[three.start:] == "Three ends it."
    word = two.start + two.text.index("ordinary")
    assert document.pages == [0, two.start, word, three.start, three.start]
    assert [document.place(offset).page for offset in (two.start - 1, word - 1, word, three.start)] == [1, 2, 3, 5]


def test_pdf_outline_chapters_begin_at_their_headings_not_at_the_top_of_their_pages():
    """An outline names a section's page: a section that begins half-way down a page, and two on one page, were cut
    at whole pages (a sentence running over the page break split between two chapters, the text above a heading
    labelled with it); each now begins at the line that is its heading, and a page begins where its first line is."""
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    full = "In {} the harbour master repaired the quay and the old pier was painted again by the"
    first = ["Part One: The Harbour"] + [full.format(1800 + k) + " town." for k in range(6)] + [
        full.format(1877) + " council, who"]
    second = ["met the traders on the quay in the spring.", "", "Part Two: The Railway",
              "The railway arrived in 1871 and brought visitors from the city.", "",
              "Part Three: The Mill", "The mill closed in 1931 after the great flood of that year."]
    for lines in (first, second):
        pdf.new_page().insert_text((40, 72), "\n".join(lines), fontsize=9)
    pdf.set_toc([[1, "Part One: The Harbour", 1], [1, "Part Two: The Railway", 2], [1, "Part Three: The Mill", 2]])
    document = read_bytes(pdf.tobytes(), "harbour.pdf", ".pdf")
    one, two, three = document.chapters
    assert [c.title for c in document.chapters] == ["Part One: The Harbour", "Part Two: The Railway",
                                                    "Part Three: The Mill"]
    assert one.text.endswith("painted again by the council, who met the traders on the quay in the spring.")
    assert two.text == "Part Two: The Railway\n\nThe railway arrived in 1871 and brought visitors from the city."
    assert three.text.startswith("Part Three: The Mill\n\nThe mill closed")
    met = document.text.index("met the traders")
    assert document.pages == [0, met] and document.place(three.start).page == 2
    listed = pymupdf.open()  # a contents list above the sections on their page names them first
    listed.new_page().insert_text((40, 72), "\n".join(["Report", "Contents", "Introduction", "Methods", "Results", "",
                                                       "Introduction", "We counted the birds on the estuary.",
                                                       "Methods", "Each count took an hour at low tide."]))
    listed.new_page().insert_text((40, 72), "Results\nThe counts rose by a third over the decade.")
    listed.set_toc([[1, "Introduction", 1], [1, "Methods", 1], [1, "Results", 2]])
    found = read_bytes(listed.tobytes(), "report.pdf", ".pdf").chapters
    assert [c.text.split("\n\n")[-1] for c in found] == ["We counted the birds on the estuary.",
                                                          "Each count took an hour at low tide.",
                                                          "The counts rose by a third over the decade."]
    from lsgtool.documents.pdf import _heading_line

    names = {"introduction", "methods"}
    assert _heading_line(["Contents", "Introduction", "Methods .... 2", "Introduction", "We counted."],
                         "Introduction", 0, names) == 3  # a contents list's entry, its page number after dots
    assert _heading_line(["Introduction", "We counted.", "Introduction"], "Introduction", 0, names) == 0  # its foot


def test_pdf_a_title_groff_wrote_with_a_named_character_reads_as_its_page_shows_it():
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "Revenue rose by eight per cent to 412 million pounds in the year.")
    pdf.set_metadata({"title": "Northcape Foods plc [em] Annual Report 2025"})
    assert read_bytes(pdf.tobytes(), "annual.pdf", ".pdf").title == "Northcape Foods plc — Annual Report 2025"
    pdf.set_metadata({"title": "Estuary Water Quality [en]"})  # a language's tag, not groff's en dash
    assert read_bytes(pdf.tobytes(), "estuary.pdf", ".pdf").title == "Estuary Water Quality [en]"


def _page_of(lines: list[str], name: str) -> str:
    """The text lsgtool reads from a one-page PDF of ``lines`` set in 9 pt."""
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    pdf.new_page().insert_text((40, 72), "\n".join(lines), fontsize=9)
    return read_bytes(pdf.tobytes(), name, ".pdf").text


def test_pdf_a_heading_after_a_sentence_that_fills_its_line_is_a_paragraph_of_its_own():
    """A short line that ends no sentence after a line that does is a heading over what follows, not the end of the
    paragraph above ("... ejection fraction. Secondary Diagnoses")."""
    lines = ["The patient was admitted with breathlessness and swollen ankles over two weeks before",
             "and was treated for acute heart failure with a reduced ejection fraction of twenty-five.",
             "Secondary Diagnoses",
             "Acute kidney injury on chronic kidney disease, resolved to its baseline before discharge.",
             "Estimate the half-life of the compound at 330 K and explain your reasoning. [8 marks]",
             "Section B (60 marks)",
             "Answer two of the three questions in this section, each on a new page of the booklet."]
    text = _page_of(lines, "discharge.pdf")
    assert "twenty-five.\n\nSecondary Diagnoses\n\nAcute kidney" in text
    assert "[8 marks]\n\nSection B (60 marks)\n\nAnswer two" in text


def test_pdf_headings_and_a_bullet_on_its_own_line_are_paragraphs_of_their_own():
    """A typeset heading ends no sentence: it was glued to the paragraph under it ("What it is Amoxicillin is an
    antibiotic."); a bullet on a line of its own goes with its item; a word hyphenated at a line's end is joined,
    and the short line it ends still ends its paragraph."""
    lines = ["Package leaflet: Information for the patient",
             "Read all of this leaflet carefully before you start taking this medicine because it contains",
             "important information for you.",
             "\u2022",
             "If you get any side effects, talk to your doctor or pharmacist. This includes any possible side ef-",
             "fects not listed in this leaflet.",
             "What Amoxicillin is",
             "Amoxicillin is an antibiotic. The active ingredient is amoxicillin, which belongs to a group of",
             "medicines called penicillins that treat infections caused by bacteria in different parts of the",
             "body.",
             "How to take it",
             "Always take this medicine exactly as your doctor has told you, with a glass of water and food."]
    paragraphs = _page_of(lines, "leaflet.pdf").split("\n\n")
    assert paragraphs[2][:2] in ("\u2022 ", "\u00b7 ")  # the base font draws the bullet as a middle dot
    assert [paragraphs[0], paragraphs[1], paragraphs[2][2:], *paragraphs[3:]] == [
        "Package leaflet: Information for the patient",
        "Read all of this leaflet carefully before you start taking this medicine because it contains important "
        "information for you.",
        "If you get any side effects, talk to your doctor or pharmacist. This includes any possible side "
        "effects not listed in this leaflet.",
        "What Amoxicillin is",
        "Amoxicillin is an antibiotic. The active ingredient is amoxicillin, which belongs to a group of medicines "
        "called penicillins that treat infections caused by bacteria in different parts of the body.",
        "How to take it",
        "Always take this medicine exactly as your doctor has told you, with a glass of water and food."]


@pytest.mark.parametrize("end", ["in the dry year and by less in the wet year.1", "in the dry year, from 61% to 44%.3"])
def test_a_pdfs_section_number_after_a_sentence_ending_on_a_footnote_mark_begins_a_paragraph(end):
    """A thesis's "... in the wet year.1" (its footnote's mark) had been read on into the next section's number,
    and the summary had shown "... wet year.1 3.4"."""
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    lines = ["Net recharge averaged 96 mm per year at Site A and 71 mm per year at Site B, and under drip",
             "irrigation it averaged 37 mm and 44 mm, and when irrigation stops on 15 September the reduction at",
             f"Site A falls {end}",
             "3.4 Discussion",
             "These results contradict the assumption that irrigation return flow increases the recharge of the",
             "aquifer under the fields, which the district's plan had taken for granted since the drought of 2012."]
    pdf.new_page().insert_text((40, 72), "\n".join(lines), fontsize=9)
    paragraphs = read_bytes(pdf.tobytes(), "thesis.pdf", ".pdf").text.split("\n\n")
    assert paragraphs[0].endswith(end) and paragraphs[1] == "3.4 Discussion"


def test_a_pdf_without_a_title_in_its_properties_is_titled_by_its_first_line_as_text_is():
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    lines = ["IN THE COURT OF APPEALS OF THE STATE OF MINNESOTA", "",
             "The tenant withheld the rent and placed it in a private escrow account instead of depositing it",
             "with the court administrator, as the statute requires of a tenant who withholds rent."]
    pdf.new_page().insert_text((40, 72), "\n".join(lines), fontsize=9)
    assert read_bytes(pdf.tobytes(), "judgment.pdf", ".pdf").title == lines[0]
    pdf.set_metadata({"title": "Hallworth v. Brenner"})
    assert read_bytes(pdf.tobytes(), "judgment.pdf", ".pdf").title == "Hallworth v. Brenner"  # its own first


def test_epub_places_name_the_heading_above_and_count_paragraphs_after_it(bible_epub):  # issue 29, item 20
    """A book per spine item with a heading per chapter (as pandoc makes a Bible): a place names the chapter
    heading above it and counts text paragraphs from it, headings not counted."""
    data = bible_epub(lambda name, c, v: f"{name} {c}:{v} says this.")
    document = read_bytes(data, "bible.epub", ".epub")
    for name in ("Jeremiah", "Lamentations"):
        for c in range(1, 4):
            for v in range(1, 5):
                place = document.place(document.text.index(f"{name} {c}:{v} "))
                assert (place.title, place.paragraph) == (f"{name} — Chapter {c}", v)


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Chickpea Curry | Weeknight Kitchen</title>
<style>p {{ color: red }}</style><script>var hidden = "never shown";</script></head>
<body><header><a href="/">Weeknight Kitchen</a><nav><a href="/recipes">Recipes</a></nav></header>
{open}<h1>Chickpea
Curry</h1>
<p>This curry comes together in thirty
minutes from pantry staples.</p>
<pre>heat = 2
stir = 3</pre>
<h2>Method</h2>
<ol><li>Heat the oil and soften the onion.</li><li>Stir in the spices.</li></ol>
<aside>Sign up for our newsletter!</aside>{close}
<footer>Copyright Weeknight Kitchen</footer></body></html>"""


@pytest.mark.parametrize("open_, close, suffix", [("<main>", "</main>", ".html"), ("<article>", "</article>", ".htm"),
                                                  ("", "", "")])
def test_a_web_page_is_read_from_its_main_text_without_its_furniture(open_, close, suffix):
    """A page's text: its <main> (else its one <article>, else its <body>, without the site's header and footer),
    never its navigation, aside, script or style; its h1 is its title and its h2 a heading; a line break in the
    markup is a space but in <pre>, which is fenced as code; known by its suffix or, without one, by its doctype."""
    pytest.importorskip("lxml")
    document = read_bytes(PAGE.format(open=open_, close=close).encode(), f"curry{suffix}", suffix)
    assert document.kind == "html" and document.title == "Chickpea Curry"
    assert document.text.split("\n\n") == ["This curry comes together in thirty minutes from pantry staples.",
                                            "```\nheat = 2\nstir = 3\n```", "Method",
                                            "1. Heat the oil and soften the onion.", "2. Stir in the spices."]
    (chapter,) = document.chapters
    assert [title for _, _, title in chapter.headings] == ["Method"]
    assert "left out" in document.notes[0]


BLOG = """<!DOCTYPE html><html><head><title>Lemon Dal | Ana Cooks</title></head><body><main>
<header role="banner"><h1>Lemon Dal</h1><p class="entry-byline">By Ana Ruiz, March 3, 2025</p></header>
<div class="wprm-recipe-jump"><a href="#recipe">Jump to Recipe</a> · <a href="/print/12">Print Recipe</a></div>
<div class="entry-content comments-open">
<p>This dal is the one I cook when the week has gone wrong, because it needs one pot, crème fraîche and {words}.</p>
<p>Red lentils cook in twenty minutes, and the lemon goes in at the end, as <a href="/lemons">the guide to
citrus</a> explains at length for anyone who wants to know why the juice is added off the heat.</p>
<ol><li>Rinse the lentils twice.</li><li>Simmer them with turmeric until soft.</li></ol>
<ul class="social-share"><li><a href="/fb">Facebook</a></li><li><a href="/pin">Pinterest</a></li></ul>
<div role="complementary">Get the cookbook, out now in every good bookshop.</div>
<ul><li><a href="/dal-2">Ten-minute dal</a></li><li><a href="/rice">Lemon rice with cashews</a></li></ul>
</div>
<section class="comments-area"><h2>2 Comments</h2><p>Made this last night and the kids loved it!</p></section>
<section id="comments"><h2>Comments</h2><p>A documentation page's section on comments is text.</p></section>
<table><tr><td><a href="/v1">Version 1</a></td><td><a href="/v2">Version 2</a></td></tr></table>
</main></body></html>"""


def test_a_pages_own_summary_box_is_its_text_but_its_spoilers_are_not():
    """A policy's <aside> "The short version" (its own summary) is read, another aside is not; a review's spoiler
    section (its class) is left out: a summary of a review does not give its book's ending away."""
    pytest.importorskip("lxml")
    page = ('<html><body><main><h1>Privacy Policy</h1><aside class="summary-box"><h2>The short version</h2><ul>'
            '<li>We never sell personal data.</li></ul></aside><aside><p>Sign up for our newsletter!</p></aside>'
            '<p>We keep account data while the account is open.</p><div class="spoiler-warning"><h2>Spoilers</h2>'
            '<p>In the last chapter Nia finds the deed.</p></div></main></body></html>')
    text = read_bytes(page.encode(), "policy.html", ".html").text
    assert "We never sell personal data." in text and "The short version" in text
    assert "newsletter" not in text and "Nia" not in text and "We keep account data" in text
    kept = page.replace('"spoiler-warning"', '"verdict spoiler-free"')  # a review's verdict without spoilers
    assert "Nia" in read_bytes(kept.encode(), "policy.html", ".html").text
    rail = page.replace("<p>We keep", "<h2>Sharing</h2><p>We keep").replace("<h1>Privacy Policy</h1>", "").replace(
        '<aside class="summary-box">', '<h2>Policy</h2><p>Our policy.</p><aside class="summary-box">')
    assert "never sell" not in read_bytes(rail.encode(), "policy.html", ".html").text  # a box after the text's
    # first section is a sidebar's, not the page's summary (a news site's rail of "The latest")


def test_a_pages_hidden_text_site_banner_and_first_items_heading_are_not_its_text_or_title():
    """An e-mail's hidden preview line and a site's banner (by its class) are not read; a block inside running text
    begins a paragraph ("Heating" then "Is it worth it?", not "HeatingIs"); a newsletter's first item's h2, after
    its opening words, is no title of the whole (its <title> is); an h2 that opens the text is."""
    pytest.importorskip("lxml")
    words = " ".join(["The new bike lane on Alder Street carries nine hundred cyclists a day."] * 3)
    page = ('<html><head><title>The Greenway Gazette</title></head><body>'
            '<div style="display: none">Bike lanes, books and a market</div><span aria-hidden="true">*</span>'
            '<div class="site-header"><a href="/">Office of the Governor</a> An official website of the State.</div>'
            f'<p>Dear neighbours, November has been busy.</p><h2>Alder Street bike lane opens</h2><p>{words}</p>'
            '<div>Heating<div>Is it worth it?</div></div></body></html>')
    document = read_bytes(page.encode(), "gazette.html", ".html")
    assert document.title == "The Greenway Gazette"
    assert document.text.split("\n\n") == ["Dear neighbours, November has been busy.", "Alder Street bike lane opens",
                                           words, "Heating", "Is it worth it?"]
    opening = page.replace("<p>Dear neighbours, November has been busy.</p>", "")
    assert read_bytes(opening.encode(), "gazette.html", ".html").title == "Alder Street bike lane opens"
    shown_on_a_click = ('<html><body><main><h1>FAQ</h1><p>Answers to what residents ask.</p><div hidden><p>Council '
                        'tax is due on the first of each month.</p></div><div style="display:none"><h2>macOS</h2>'
                        '<p>Drag it into Applications.</p></div><ul>\n  <li>\n    <p>you are allergic;</p>\n  </li>'
                        '\n</ul></main></body></html>')  # an accordion's answer, a tab's panel; a pretty-printed list
    assert read_bytes(shown_on_a_click.encode(), "faq.html", ".html").text.split("\n\n") == [
        "Answers to what residents ask.", "Council tax is due on the first of each month.", "macOS",
        "Drag it into Applications.", "- you are allergic;"]


def test_a_pages_data_table_is_a_line_a_row_and_a_layout_tables_cells_are_text():
    """A table of data had been a paragraph a cell ("One of draft, rated, purchased." shown without the field it
    describes, and the paragraphs after it counted wrong): a row is one line, its cells apart as Markdown's are (no
    sentence of prose); a layout table's cells, which hold paragraphs, are text."""
    pytest.importorskip("lxml")
    from lsgtool.documents.prose import prose_sentences

    data = ("<html><body><main><h1>Shipments</h1><p>A shipment moves a parcel from you to a customer.</p><table>"
            "<tr><th>Field</th><th>Description</th></tr><tr><td><code>status</code></td><td>One of draft, rated or "
            "purchased.</td></tr></table><p>Create one with a POST request.</p></main></body></html>")
    document = read_bytes(data.encode(), "api.html", ".html")
    assert document.text.split("\n\n") == ["A shipment moves a parcel from you to a customer.",
                                           "| Field | Description |", "| status | One of draft, rated or purchased. |",
                                           "Create one with a POST request."]
    assert [document.text[a:b] for a, b in prose_sentences(document.text)] == [
        "A shipment moves a parcel from you to a customer.", "Create one with a POST request."]
    layout = ("<html><body><table><tr><td><h2>Bike lane opens</h2><p>The lane opened on Monday.</p></td>"
              "<td><p>The library opens in March.</p></td></tr></table></body></html>")
    assert read_bytes(layout.encode(), "mail.html", ".html").text.split("\n\n") == [
        "The lane opened on Monday.", "The library opens in March."]
    lists = '<html><body><main><ol start="x"><li>One.</li></ol><ol start="4"><li>Four.</li></ol></main></body></html>'
    assert read_bytes(lists.encode(), "l.html", ".html").text == "1. One.\n\n4. Four."  # (a start that is no number)


def test_a_faqs_question_in_a_disclosure_summary_heads_its_answer():
    """A shop's FAQ writes each question as a ``<details>``'s ``<summary>``: the answers' sources had named only the
    page, and a picked answer read without its question; the question is now its section's heading."""
    page = ("<html><head><title>Returns FAQ | Pebble &amp; Pine</title></head><body><main><h1>Returns FAQ</h1>"
            "<details><summary>Can I exchange an item?</summary><p>We don't offer direct exchanges. Please return the "
            "item for a refund and place a new order.</p></details><details><summary>When will I get my refund?"
            "</summary><p>We refund you within 5 working days of receiving your return.</p></details>"
            "</main></body></html>").encode()
    document = read_bytes(page, "faq.html", ".html")
    chapter = document.chapters[0]
    at = chapter.text.index("Please return")
    assert chapter.paragraph(at)[0] == "Returns FAQ — Can I exchange an item?"
    assert chapter.paragraph(chapter.text.index("We refund"))[0] == "Returns FAQ — When will I get my refund?"
    button = page.replace(b"<summary>When will I get my refund?</summary>", b"<summary>Show more</summary>")
    chapter = read_bytes(button, "faq.html", ".html").chapters[0]  # a button's label is no question
    assert chapter.paragraph(chapter.text.index("We refund"))[0] == "Returns FAQ — Can I exchange an item?"


def test_a_web_page_s_links_sharing_comments_and_byline_are_left_out():
    """Inside <main>: a byline, a row of links ("Jump to Recipe · Print Recipe"), share buttons, a complementary
    box, a list of related links and the comments are furniture (by their class, role, or share of words in links);
    a sentence with a link in it, a list of steps, a wrapper whose class names comments, a section whose id does
    and a table of links are text."""
    pytest.importorskip("lxml")
    page = BLOG.format(words=" ".join(["it is quick"] * 30))
    document = read_bytes(page.encode(), "dal.html", ".html")
    assert document.title == "Lemon Dal"
    paragraphs = document.text.split("\n\n")
    assert [p.split()[0] for p in paragraphs] == ["This", "Red", "1.", "2.", "Comments", "A", "|"]
    assert paragraphs[-1] == "| Version 1 | Version 2 |"  # a table's row: one line, its cells apart
    assert "as the guide to citrus explains" in paragraphs[1]
    assert "crème fraîche" in paragraphs[0]  # UTF-8 though no <meta charset> says so
    assert "6 blocks of links, sharing, comments, bylines, captions or corrections left out" in document.notes[0]


WIKI = """<!DOCTYPE html><html><head><title>Lise Meitner - Wikipedia</title></head><body><main>
<h1>Lise Meitner</h1>
<div id="p-lang-btn" class="vector-dropdown mw-portlet mw-portlet-lang"><span>14 languages</span></div>
<div class="hatnote navigation-not-searchable">For the asteroid, see 6999 Meitner.</div>
<table class="infobox biography vcard"><tr><th>Born</th><td>7 November 1878</td></tr>
<tr><th>Known for</th><td>Nuclear fission</td></tr></table>
<p>Lise Meitner was a physicist who was instrumental in the discovery of nuclear fission. {words}</p>
<div class="mw-heading mw-heading2"><h2 id="Early_life">Early life</h2><span class="mw-editsection"><span
class="mw-editsection-bracket">[</span><a href="?action=edit">edit</a><span class="mw-editsection-bracket">]</span>
</span></div>
<p>She was born in Vienna in 1878, the third of eight children.</p>
<h2><span class="mw-headline">Career in Berlin</span><span class="mw-editsection">[<a href="?e">edit</a>]</span></h2>
<p>In 1912 she moved to the Kaiser Wilhelm Institute for Chemistry.</p>
</main></body></html>"""


def test_a_wiki_page_s_edit_links_hatnotes_and_infobox_are_left_out():
    """MediaWiki's "[edit]" links (in a heading, old markup, or beside it, new), a hatnote, the infobox (a table
    of facts whose cells counted as paragraphs) and the languages' button ("14 languages", taken for the page's
    title) are furniture: headings read as written, paragraphs as a reader counts them."""
    pytest.importorskip("lxml")
    document = read_bytes(WIKI.format(words=" ".join(["She is known for it."] * 20)).encode(), "m.html", ".html")
    (chapter,) = document.chapters
    assert [title for _, _, title in chapter.headings] == ["Early life", "Career in Berlin"]
    assert [p.split()[0] for p in document.text.split("\n\n")] == ["Lise", "Early", "She", "Career", "In"]
    assert "edit" not in document.text


def test_a_q_and_a_pages_side_column_by_its_id_and_an_older_wikis_edit_links_are_left_out():
    """A Q&A page's side column named by its id alone ("Linked", "Hot Network Questions": other questions' titles
    had been shown as its summary, the words left to leave out spent on its signatures and comments), and a wiki's
    "[edit]" links in an older skin's "editsection" class (they had stayed in its headings)."""
    pytest.importorskip("lxml")
    page = ("<!DOCTYPE html><html><head><title>Why is my query not using the index?</title></head><body>"
            "<div id='content'><h1>Why is my query not using the index?</h1><div class='question'><p>My query does "
            "a sequential scan on forty million rows.</p><div class='post-signature'>asked Jul 20, 2023 at 14:02 "
            "tomasz_k 1,203 2 11 24</div><div class='comments'><ul><li>Does created_at have a time zone? That matters "
            "a lot here. Erwin B. Jul 20, 2023</li></ul></div></div><div class='answer'><p>An index on the raw column "
            "cannot serve a predicate that wraps the column in a function.</p><div class='post-signature'>answered "
            "Jul 20, 2023 at 14:25 Erwin B. 612k 54 840 1,020</div></div></div><div id='sidebar'><div class='module'>"
            "<h4>Linked</h4><ul><li><a href='#'>Index on date part of timestamptz not used</a></li></ul></div><div "
            "class='module'><h4>Hot Network Questions</h4><ul><li><a href='#'>Why did medieval armies march in "
            "winter?</a></li><li><a href='#'>Is it rude to decline a colleague's lunch invitation?</a></li></ul>"
            "</div></div><h2>History<span class='editsection'>[<a href='#'>edit</a>]</span></h2><p>The question "
            "was asked in 2023 and answered within the hour by a regular.</p></body></html>")
    text = read_bytes(page.encode(), "q.html", ".html").text
    assert "medieval" not in text and "Linked" not in text and "timestamptz" not in text
    assert "sequential scan" in text and "raw column" in text and "History\n\nThe question" in text
    assert "edit" not in text


def test_a_folder_s_summary_pages_are_not_read_as_its_documents(tmp_path):
    """A folder holding the pages lsgtool wrote beside a web page of the user's: only the user's is an input."""
    pytest.importorskip("lxml")
    from lsgtool.summarize.html import GENERATOR
    from lsgtool.summarize.inputs import files

    (tmp_path / "curry.html").write_text(PAGE.format(open="<main>", close="</main>"), encoding="utf-8")
    (tmp_path / "index.html").write_text(f'<!DOCTYPE html><html><head><meta name="generator" content="{GENERATOR}">'
                                         "<title>Summaries</title></head><body><p>A summary.</p></body></html>",
                                         encoding="utf-8")
    assert [job.name for job in files([str(tmp_path)])] == [str(tmp_path / "curry.html")]


QA = """<!DOCTYPE html><html><head><title>How do I undo the most recent local commits in Git?</title></head><body>
<div id="question"><p>I committed the wrong files to Git, but did not push the commit to the server yet. {words}</p>
<div class="post-signature"><a>Share</a> <a>Improve this question</a> <a>Follow</a> asked May 29, 2009 at 18:09
<a>Hamza Yerlikaya</a> 49.9k · 44 · 147</div></div>
<div class="answers-subheader"><h2>101 Answers</h2> Sorted by: <select><option>Highest score (default)</option>
<option>Trending</option></select></div>
<div class="answer"><div class="js-vote-count">28459</div><pre><code>$ git commit -m "Something misguided"
$ git reset HEAD~
$ git add .
</code></pre>
<p>git reset is the command responsible for the undo.</p></div></body></html>"""


FORUM = """<!DOCTYPE html><html><head><title>Starter smells of acetone - Forum</title></head><body><main>
<div class="post"><h3>Is my starter dead after I switched it to white flour</h3>
<div class="content">My rye starter smells of nail polish remover and barely rises. Should I throw it out?</div>
<div class="signature">Baking since Jan 2025. Loaf count: 2 (and a brick).</div></div>
<div class="post"><h3>Re: Is my starter dead?</h3>
<div class="content"><blockquote><div><cite>crumb wrote: <a href="#p1">↑</a>Tue Feb 11, 2025 9:14 pm</cite>Should I
throw it out?</div></blockquote>
No, it is not dead, it is hungry. In <cite>The Bread Book</cite>, Ortiz says the same.</div></div>
<blockquote><p>As the <cite>Wiring Regulations</cite> put it, isolate every circuit first.</p></blockquote>
<div class="signature-projects"><p>Our signature loaf is a rye sourdough fed twice a day.</p></div>
<p>Re: the feeding, I think twice a day is enough.</p>
</main></body></html>"""


def test_a_forums_quoted_header_is_a_line_of_its_own_its_signatures_furniture_and_a_reply_subject_a_heading():
    """A forum thread: a quoted post's "crumb wrote: ↑Tue Feb 11, 2025 9:14 pm" had been glued to the quote ("9:14
    pmShould I ..."), a signature (class "signature") and a reply's subject "Re: Is my starter dead?" shown as
    sentences; a cited work's title in a sentence stays in it."""
    pytest.importorskip("lxml")
    from lsgtool.documents.prose import headings, prose_sentences

    document = read_bytes(FORUM.encode(), "forum.html", ".html")
    assert "crumb wrote: ↑Tue Feb 11, 2025 9:14 pm\n\nShould I throw it out?" in document.text
    assert "Loaf count" not in document.text
    assert "In The Bread Book, Ortiz says the same." in document.text
    assert "As the Wiring Regulations put it, isolate every circuit first." in document.text  # (a cited title)
    assert "Our signature loaf" in document.text  # a class "signature-projects" is no post's signature
    text = document.text
    assert text.index("Re: Is my starter dead?") in headings(text)
    assert "Re: Is my starter dead?" not in [text[a:b] for a, b in prose_sentences(text)]
    assert "Re: the feeding, I think twice a day is enough." in [text[a:b] for a, b in prose_sentences(text)]


@pytest.mark.parametrize("markup", [
    "<p><strong>Year 1 (2025–26).</strong> Site characterization at all three bays.</p>"
    "<p><b>Year 2 (2026–27).</b> Monitoring of the plots at 6 and 12 months.</p>",
    "<ul><li><strong>Year 1 (2025–26).</strong> Site characterization at all three bays.</li>"
    "<li><strong>Year 2 (2026–27).</strong> Monitoring of the plots at 6 and 12 months.</li></ul>",
])
def test_a_run_in_heading_in_bold_goes_with_its_sentence_on_a_web_page(markup):
    """A web page's (and a Word document's, read as one) run-in heading "<b>Year 2 (2026–27).</b> Monitoring ..."
    had been a sentence of its own, and its sentence shown without it: which year it told of was lost. Not a
    sentence in bold ("<b>It is hard to read.</b>"), nor a bold word inside a sentence."""
    pytest.importorskip("lxml")
    from lsgtool.documents.prose import prose_sentences, readable

    page = (f"<html><body><main>{markup}<p><b>It is hard to read.</b> We tried. The <b>plot</b>. Done.</p>"
            "<p><b>Dr.</b> Helen Marsh wired the school.</p><p>The plots lie in three bays.</p></main></body></html>")
    text = read_bytes(page.encode(), "grant.html", ".html").text
    said = [readable(text[a:b]) for a, b in prose_sentences(text)]
    assert "Year 2 (2026–27): Monitoring of the plots at 6 and 12 months." in said
    assert "It is hard to read." in said and "The plot." in said and "Dr. Helen Marsh wired the school." in said


def test_a_run_in_heading_in_bold_goes_with_its_sentence_in_a_word_document(tmp_path):
    pytest.importorskip("mammoth")
    from lsgtool.documents.prose import prose_sentences, readable

    text = read(_docx(tmp_path, "**Year 2 (2026–27).** Monitoring of the plots at 6 and 12 months.\n")).text
    assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
        "Year 2 (2026–27): Monitoring of the plots at 6 and 12 months."]


def test_a_q_and_a_pages_code_blocks_are_code_and_its_menus_and_signatures_furniture():
    """A Stack Exchange page: a <pre> block is fenced as code (its commands had been picked as one flattened
    sentence), the sort menu's options, the posts' "Share Improve this question Follow" signatures and vote counts
    are furniture."""
    pytest.importorskip("lxml")
    from lsgtool.documents.prose import prose_sentences

    document = read_bytes(QA.format(words=" ".join(["It is urgent."] * 20)).encode(), "qa.html", ".html")
    assert "```\n$ git commit -m \"Something misguided\"\n$ git reset HEAD~\n$ git add .\n\n```" in document.text
    assert not any(word in document.text for word in ("Share", "Trending", "Highest", "28459", "Yerlikaya"))
    shown = [document.text[a:b] for a, b in prose_sentences(document.text)]
    assert "git reset is the command responsible for the undo." in shown and not any("$ git" in s for s in shown)
    teaching = QA.replace('<pre><code>', '<pre><code>```python\n').replace('</code></pre>', '```\n</code></pre>')
    assert "````\n```python" in read_bytes(teaching.format(words="It is urgent.").encode(), "md.html", ".html").text
    archive = ("<!DOCTYPE html><html><head><title>[dev] Build failures</title></head><body><h1>[dev] Build failures"
               "</h1><pre>The ARM64 runners have failed every build since Friday.\nWe are moving them to new hosts."
               "\n</pre></body></html>")  # a mailing list archive's message, set in <pre>: its text, not code
    document = read_bytes(archive.encode(), "msg.html", ".html")
    assert "```" not in document.text and "The ARM64 runners have failed every build since Friday." in [
        document.text[a:b] for a, b in prose_sentences(document.text)]


def test_a_pdfs_section_heading_after_a_wider_abstract_is_its_own_paragraph():
    """A two-column paper (``groff -ms`` with ``.2C``): the abstract spans the page, so its last line is no shorter
    than a column's and had not ended its paragraph: "... at least 3 m. 1. Introduction" was one; a heading after a
    sentence's end, and a paper's "ABSTRACT" after its affiliation, begin their own; a list's number inside a
    sentence does not."""
    from lsgtool.documents.pdf import _paragraphs

    wide = "We radio-tracked 86 dormice in 14 hedgerow networks in Devon over two winters and related"
    column = "Hedgerows are the most extensive semi-natural"
    lines = ["School of Biological Sciences, University of Exeter, UK", "ABSTRACT", wide, wide,
             "widen to at least 3 m.", "1. Introduction", *[column] * 12, "habitat in Britain.", "2.1. Study sites",
             column, column, "2 Kings and Chronicles, which", column + "."]
    paragraphs = _paragraphs("\n".join(lines)).split("\n\n")
    assert paragraphs[:3] == ["School of Biological Sciences, University of Exeter, UK", "ABSTRACT",
                              f"{wide} {wide} widen to at least 3 m."]
    assert paragraphs[3] == "1. Introduction" and paragraphs[5] == "2.1. Study sites"
    assert paragraphs[6].endswith(f"{column} 2 Kings and Chronicles, which {column}.")
    narrow = ["The Authority supplied 41.7 million cubic metres", "of water to the homes of the city last year.",
              "1. Where your water comes from", "The Authority draws its water from the two",
              "sources in the hills above the city and treats", "all of it at the plant by the river each day.",
              "2 Kings and Chronicles, which", "the library has, are read by the children."]
    assert _paragraphs("\n".join(narrow)).split("\n\n")[1:] == [  # a column's numbered heading, wider than 0.6
        "1. Where your water comes from", "The Authority draws its water from the two sources in the hills above the "
        "city and treats all of it at the plant by the river each day. 2 Kings and Chronicles, which the library "
        "has, are read by the children."]  # (a line that begins with a number, going on in lower case, no heading)


def test_a_pdfs_table_rows_caption_and_numbered_items_are_not_read_into_the_paragraph_above():
    """A table set in columns with spaces, its caption and the next section's heading had been read into the
    paragraph above ("... receive payment. Event Claims Percent ... Table 1: Share ... 3.2. FEMA's Reinspection"): a
    row and a caption are lines of their own, a heading after a caption its own; a list's number alone on its line
    goes with its item."""
    from lsgtool.documents.pdf import _paragraphs

    body = "Without monitoring timeliness, FEMA cannot identify companies that are slow to pay policyholders who"
    lines = [body, body, "may be unable to begin repairs until they receive payment of their claims in full.",
             "Event                Claims      Closed after 60 days", "Hurricane Ian (2022)        47,413       41",
             "Table 1: Share of NFIP Claims Closed More Than 60 Days After Proof of Loss, Selected Events",
             "3.2. FEMA's Reinspection Program Is Too Small", body, "work.", "We recommend two things to FEMA:", "1.",
             "The FEMA Administrator should select claims with a sample that lets it estimate the errors it makes.",
             "2.",
             "The FEMA Administrator should estimate the cost of updating all flood maps."]
    date = ["The meeting to review the results of the survey of the households was adjourned until March", "12.",
            "Members asked the board to publish the data for each district of the region separately."]
    assert _paragraphs("\n".join(date)).split("\n\n")[0].endswith("adjourned until March 12.")  # no item's mark
    cited = [body, "and the response rates were similar in both rounds of the survey of the households, as shown in",
             "Figure 3. The share of households that reported a fall in their income was highest in the north."]
    assert len(_paragraphs("\n".join(cited)).split("\n\n")) == 1  # a figure named in a sentence: no caption
    justified = [body, "shall repair   any   damage   caused   by   such   events   within   a   reasonable", body]
    assert len(_paragraphs("\n".join(justified)).split("\n\n")) == 1  # justified monospace text: no table's row
    assert _paragraphs("\n".join(lines)).split("\n\n") == [
        f"{body} {body} may be unable to begin repairs until they receive payment of their claims in full.",
        lines[3], lines[4], lines[5], lines[6], f"{body} work.", lines[9], f"1. {lines[11]}", f"2. {lines[13]}"]


def test_a_pdfs_list_items_with_their_words_on_their_line_are_paragraphs_of_their_own():
    """A tender's scope ("The selected vendor shall, at a minimum:" over "1. Supply and install ...;" and three more)
    had been read as one paragraph, its items one "sentence" without the lead-in; each item is a paragraph, an item
    over two lines one, and the sentence after the list its own."""
    from lsgtool.documents.pdf import _paragraphs

    lines = ["Scope of Work", "The selected vendor shall, at a minimum:",
             "1. Supply and install approximately 45,000 water meters with integrated radio end-", "points;",
             "2. Design and commission a fixed radio network covering the whole service area;",
             "3. Provide a meter data management system that integrates with the billing system; and",
             "4. Provide a customer portal in English and Spanish that sends leak alerts.",
             "The vendor shall complete installation within 30 months of notice to proceed, as the contract says."]
    assert _paragraphs("\n".join(lines)).split("\n\n") == [
        lines[0], lines[1], f"{lines[2]}\n{lines[3]}", lines[4], lines[5], lines[6], lines[7]]
    clause = ["The Supplier and the Customer agree to the following terms and conditions herein.",
              "1. The Supplier shall deliver the Goods to the address set out in Schedule No.",
              "2 of this Agreement within thirty days of the date of the Customer's written order."]
    assert _paragraphs("\n".join(clause)).split("\n\n")[1:] == [f"{clause[1]} {clause[2]}"]  # no item's end


def test_a_short_pdfs_running_head_and_foot_are_furniture():
    """A letter of two pages repeats its foot on both, a report's head skips its first page: a line at the edge of
    every page, or of every page but the first, is furniture once it is on two (it had been read into the sentence
    going on over the page); a line at the edge of one page of two is text."""
    pymupdf = pytest.importorskip("pymupdf")

    def pdf(pages, head=None, foot=None):
        document = pymupdf.open()
        for n, body in enumerate(pages, 1):
            page = document.new_page()
            if head and n > 1:
                page.insert_text((72, 40), head, fontsize=10)
            page.insert_text((72, 90), body, fontsize=10)
            if foot:
                page.insert_text((72, 800), foot(n), fontsize=10)
        return read_bytes(document.tobytes(), "letter.pdf", ".pdf").text

    two = pdf(["We had a strong year, and the company sold windows and doors in many", "markets at once."],
              foot=lambda n: f"Letter to Shareholders, page {n}")
    assert "Letter to Shareholders" not in two and "in many markets at once." in two
    three = pdf(["Our first page.", "Our second page.", "Our third page."], head="Harrow Holdings, Annual Report")
    assert "Harrow" not in three and "Our third page." in three
    once = pdf(["Our first page.", "Our second page."], foot=lambda n: "Signed by the chair." if n == 2 else "")
    assert "Signed by the chair." in once


def test_a_pdfs_footnotes_are_moved_to_its_end_out_of_the_paragraph_going_on_over_the_page():
    """A page's footnotes (set smaller, at its foot) had been read into the paragraph that goes on over the page
    ("... please FEMA officials stated ..."): they go to the end under a heading of their own, and the note says so."""
    pymupdf = pytest.importorskip("pymupdf")
    from lsgtool.documents.prose import back_matter

    pdf = pymupdf.open()
    first = pdf.new_page()
    body = ["The agency pays flood claims through private insurers, who process and service most of the policies.",
            "It relies on them to pay promptly and accurately, and on its own maps to say who must buy cover.",
            "We found that it monitors neither well. Its staff review only a few claims in each region, and",
            "its reports do not say how long the insurers take to pay, or how often they pay the wrong amount.",
            "The agency checks fewer than one percent of the claims it pays each year, and it does not select",
            "them in a way that would let it estimate how many payments are wrong. If you have any questions",
            "about this report, please"]
    first.insert_text((72, 72), "\n".join(body), fontsize=10)
    first.insert_text((72, 700), "Agency officials said that the sample is chosen by professional judgment.",
                      fontsize=8)
    first.insert_text((290, 760), "3", fontsize=10)  # the page's number, below its footnote
    pdf.new_page().insert_text((72, 72), "contact me at the number on the cover of this report.", fontsize=10)
    document = read_bytes(pdf.tobytes(), "report.pdf", ".pdf")
    text = document.text
    assert "If you have any questions about this report, please contact me at the number" in text
    notes = text.index("Footnotes")
    assert text.index("Agency officials said") > notes > text.index("contact me")
    assert [text[a:b].split("\n")[0] for a, b in back_matter(text)] == ["Footnotes"]
    assert "1 footnote line moved to the end (under 'Footnotes')" in document.notes[0]  # (one line: "line")
    assert document.pages[1] == text.index("contact me")  # the pages still begin where they did
    slides = pymupdf.open()  # a crowded slide's bullets, smaller than the deck's usual type: no footnotes
    words = "pumps valves seals hoses motors gauges filters tanks pipes cables fans belts".split()
    for title, did, many in [("Why we recalled", "checked", 4), ("What failed", "replaced", 4),
                             ("What we do next", "tested", 8)]:
        slide = slides.new_page()
        slide.insert_text((72, 72), title, fontsize=14)
        bullets = [f"The {words[j]} of the batch were {did} by the engineers in March." for j in range(many)]
        slide.insert_text((72, 110), "\n".join(bullets), fontsize=10 if many == 8 else 14)
    read = read_bytes(slides.tobytes(), "deck.pdf", ".pdf")
    assert "Footnotes" not in read.text and "footnote line" not in read.notes[0]
    assert "The tanks of the batch were tested" in read.text


def test_a_pdfs_pages_are_read_once_and_as_pymupdfs_own_text_where_they_have_no_footnotes():
    """Each page is read once (its lines, with their sizes): a page without footnotes is PyMuPDF's own plain text of
    it, line for line, on a PDF groff wrote and on one with a footnote on its first page only."""
    pymupdf = pytest.importorskip("pymupdf")
    from lsgtool.documents.pdf import page_texts

    groff = pymupdf.open(DATA / "genesis-groff.pdf")
    assert page_texts(groff) == ([page.get_text("text") for page in groff], [])
    pdf = pymupdf.open()
    first = pdf.new_page()
    first.insert_text((72, 72), "\n".join(["A line of the body text, set in its usual type."] * 6), fontsize=10)
    first.insert_text((72, 700), "A footnote set smaller.", fontsize=8)
    pdf.new_page().insert_text((72, 72), "The second page, with no footnote.", fontsize=10)
    texts, notes = page_texts(pdf)
    assert notes == ["A footnote set smaller."] and "footnote" not in texts[0]
    assert texts[1] == pdf[1].get_text("text")


def test_a_compound_broken_after_its_hyphen_is_told_from_the_joined_paragraphs_text():
    """Whether a word broken across lines is a compound ("direct-to-" and "consumer") was read at an offset of the
    text before its lines were joined into paragraphs: it drifted, joined "direct-toconsumer", and past the end of
    a PDF made of many short paragraphs, crashed (IndexError)."""
    from lsgtool.documents.pdf import clean_pages

    lines = ["A title", "Short."] + ["One more short paragraph ends here.", "Ok."] * 6 + [
        "The long line of the last paragraph that ends with an extra-", "ordinary word and a direct-to-",
        "consumer sale."]
    assert clean_pages([lines], set())[0].endswith("an extraordinary word and a direct-to-consumer sale.")


def test_a_threads_comments_are_its_text_where_they_are_most_of_it():
    """A page's comments are furniture, but a forum's thread is its comments: dropped in page order until a quarter
    of its words were gone, a Reddit page had lost its top answers."""
    pytest.importorskip("lxml")
    thread = """<html><body><main><h1>Is a heat pump worth it?</h1><div class="post"><p>{ask}</p></div>
    <div class="comment level-1"><p>{answer}</p><div class="comment level-2"><p>{reply}</p></div></div>
    </main></body></html>""".format(ask="Our boiler is fifteen years old and the engineer says it will fail soon.",
                                     answer="Heat pump installer here: ask what flow temperature they design for. " * 3,
                                     reply="This is really helpful, thank you, I will ask them on Monday.")
    text = read_bytes(thread.encode(), "thread.html", ".html").text
    assert "Heat pump installer here" in text and "really helpful" in text  # a thread's comments are its text
    review = thread.replace("Our boiler is fifteen years old and the engineer says it will fail soon.",
                            "We fitted a heat pump last spring, and it has cut our bills by a third. " * 4)
    kept = read_bytes(review.encode(), "review.html", ".html").text  # its comments, under half its words: none
    assert "We fitted a heat pump" in kept and "installer" not in kept and "helpful" not in kept
    # (more than a quarter of its words: they had been its text, a commenter's "far too slow" as the review's)
