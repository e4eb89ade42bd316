"""More technical proposals with their authors' own summaries, which lsgtool was never tuned on (issue 30): Python's
PEPs (reStructuredText, their Abstract) and Kubernetes' KEPs (Markdown, their Summary), written as
``../shared/quality/rust-rfcs`` is, for ``benchmarks/quality.py --root OUT --sets peps,keps`` to measure on (or
``--pairs`` to train a scorer on): ``NNNN-name.md`` (the front matter, the template's boilerplate and the summary's
section removed, the title as the first heading, PEPs turned into Markdown by pandoc) and ``NNNN-name.ref`` (the
summary as plain text, 25-250 words), for documents of 1,000 to ``--max-words`` words.

    git clone https://github.com/python/peps && git clone https://github.com/kubernetes/enhancements
    python benchmarks/proposals.py --peps peps --keps enhancements --out proposals
    python benchmarks/quality.py --root proposals --sets peps,keps --json proposals.json

Needs ``pandoc`` (``apt-get install pandoc``). PEPs are in the public domain or CC0-1.0; KEPs are Apache-2.0.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROLE = re.compile(r":(?:[\w-]+:)*([\w-]+):`([^`]*)`")  # :pep:`484`, :py:class:`Foo`
COMMENT = re.compile(r"<!--.*?-->", re.S)
TOC = re.compile(r"<!--\s*toc\s*-->.*?<!--\s*/toc\s*-->", re.S)
BOILERPLATE = ("Release Signoff Checklist", "Implementation History", "Table of Contents")  # the same in every KEP
MARK = ".written-by-proposals"


def pandoc(text: str, source: str, target: str, *flags: str) -> str:
    return subprocess.run(["pandoc", "-f", source, "-t", target, "--wrap=none", *flags], input=text,
                          capture_output=True, text=True, check=True).stdout


def without_section(markdown: str, name: str) -> tuple[str, str] | None:
    """(``markdown`` without the section headed ``name``, that section's body), or None without one."""
    found = re.search(rf"^(#+)\s+{name}\s*$", markdown, re.M | re.I)
    if not found:
        return None
    rest = markdown[found.end():]
    after = re.search(rf"^#{{1,{len(found.group(1))}}}\s", rest, re.M)
    end = after.start() if after else len(rest)
    return markdown[:found.start()] + rest[end:], rest[:end]


def plain(markdown: str) -> str:
    return " ".join(pandoc(markdown, "gfm", "plain").split())


def pep(path: Path) -> tuple[int, str, str, str] | None:
    head, _, body = path.read_text(encoding="utf-8").partition("\n\n")
    fields = dict(re.findall(r"^([\w-]+):\s*(.*)$", head, re.M))
    if "Title" not in fields or not fields.get("PEP", "").isdigit():
        return None
    body = ROLE.sub(lambda m: f"PEP {m.group(2)}" if m.group(1) == "pep" else
                    m.group(2) if m.group(1) in ("rfc", "ref", "doc", "term") else f"``{m.group(2)}``", body)
    markdown = pandoc(body, "rst", "gfm", "--shift-heading-level-by=1")
    markdown = re.sub(r"</?(?:span|div)\b[^>]*>", "", markdown)  # what pandoc keeps of directives and roles
    found = without_section(markdown, "Abstract")
    if not found:
        return None
    return int(fields["PEP"]), fields["Title"], found[0], plain(found[1])


def kep(path: Path) -> tuple[int, str, str, str] | None:
    number = re.match(r"(\d+)-", path.parent.name)
    if not number or "template" in path.parent.name:
        return None
    markdown = COMMENT.sub("", TOC.sub("", path.read_text(encoding="utf-8")))
    title = re.search(r"^#\s+(.*)$", markdown, re.M)
    if not title:
        return None
    markdown = markdown[title.end():]
    for name in BOILERPLATE:
        markdown = (without_section(markdown, name) or (markdown,))[0]
    found = without_section(markdown, "Summary")
    if not found:
        return None
    name = re.sub(r"^KEP[- ]?\d*:?\s*", "", title.group(1)).strip()
    return int(number.group(1)), name, found[0], plain(found[1])


def write(out: Path, found: tuple[int, str, str, str] | None, most: int) -> bool:
    if found is None:
        return False
    number, title, body, summary = found
    body = re.sub(r"\n{3,}", "\n\n", body).strip()
    text = f"# {title}\n\n{body}\n"
    if not 25 <= len(summary.split()) <= 250 or not 1000 <= len(text.split()) <= most:
        return False
    stem = out / f"{number:04d}-{re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')[:40]}"
    stem.with_suffix(".md").write_text(text, encoding="utf-8")
    stem.with_suffix(".ref").write_text(summary + "\n", encoding="utf-8")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peps", type=Path, help="a clone of github.com/python/peps")
    parser.add_argument("--keps", type=Path, help="a clone of github.com/kubernetes/enhancements")
    parser.add_argument("--out", type=Path, required=True, help="written: OUT/peps, OUT/keps")
    parser.add_argument("--max-words", type=int, default=5000, help="the longest document kept")
    args = parser.parse_args()
    kinds = [(name, read, sorted(root.glob(pattern))) for name, read, root, pattern in
             (("peps", pep, args.peps, "peps/pep-*.rst"), ("keps", kep, args.keps, "keps/sig-*/*/README.md")) if root]
    if not kinds:
        parser.error("give --peps, --keps or both")
    for name, read, paths in kinds:
        out = args.out / name
        if out.exists() and any(out.iterdir()) and not (out / MARK).exists():
            parser.error(f"{out} holds files this script did not write; give another --out")
        out.mkdir(parents=True, exist_ok=True)
        (out / MARK).touch()
        with ThreadPoolExecutor(4) as pool:
            kept = sum(pool.map(lambda path: write(out, read(path), args.max_words), paths))
        print(f"{name}: {kept} of {len(paths)} documents -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
