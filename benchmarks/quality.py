"""Summary quality on real documents with human-written summaries: lsgtool's default against the usual
reference points, each given the reference's word count and cut to it (ROUGE-1/2/L F1, Porter stemming).

    python benchmarks/quality.py                           # every set in ../shared/quality, both parts
    python benchmarks/quality.py --sets rfcs --limit 20    # a quick look
    python benchmarks/quality.py --json quality.json       # per-document scores and seconds

Systems: ``default`` (what ``lsgtool summarize DOC --length Nw`` writes), ``centroid`` (the default without its
document scores, title and lexical centrality: the rule before issue 30), ``lead`` (the first sentences),
``random`` (a seeded pick), ``lexrank``, ``textrank``, ``lsa`` (the ``sumy`` package, fed the same sentences as the
others), ``oracle`` (greedy ROUGE-1+2 pick against the reference: the best an extractive pick can do).

Each set is split once by document number into a part lsgtool is tuned on and a held-apart part that is only
reported (``part(number)``): numbers whose remainder by 3 is 0 are held apart. Needs ``sumy`` and ``rouge-score``
(``pip install sumy rouge-score``); sumy reads the sentences given here, so no NLTK data is downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUALITY = Path(__file__).resolve().parents[1].parent / "shared" / "quality"
SETS = {"rfcs": ("rust-rfcs/docs", "*.md"), "stories": ("squality-train", "*.txt"),
        "meetings": ("qmsum-train", "*.txt")}
SYSTEMS = ("oracle", "default", "centroid", "lexrank", "textrank", "lsa", "lead", "random")
WORD = re.compile(r"\w+(?:['’]\w+)*")


@dataclass
class Doc:
    name: str
    number: int
    path: Path
    reference: str
    words: int  # the reference's: every system's budget
    scores: dict = field(default_factory=dict)  # system -> {"rouge1": F1, ...}
    seconds: dict = field(default_factory=dict)


def part(number: int) -> str:
    """The split: a third of each set (by number) is held apart and only reported."""
    return "held-apart" if number % 3 == 0 else "tuned"


def documents(name: str, root: Path, limit: int | None) -> list[Doc]:
    folder, pattern = SETS[name]
    found = []
    for path in sorted((root / folder).glob(pattern)):
        ref = path.with_suffix(".ref")
        match = re.match(r"\d+", path.name)
        if not ref.exists() or not match:
            continue
        reference = ref.read_text(encoding="utf-8").strip()
        found.append(Doc(path.stem, int(match.group()), path, reference, len(reference.split())))
    return found[:limit] if limit else found


def cut(text: str, words: int) -> str:
    return " ".join(text.split()[:words])


def fill(sentences: list[str], order: list[int], words: int) -> str:
    """Sentences taken in ``order`` until ``words`` are reached, written in document order."""
    taken, count = [], 0
    for i in order:
        if count >= words:
            break
        taken.append(i)
        count += len(sentences[i].split())
    return " ".join(sentences[i] for i in sorted(taken))


class _Words:
    """sumy's tokenizer interface over a regular expression (sumy's own needs NLTK's downloaded punkt data)."""

    def to_words(self, sentence: str) -> list[str]:
        return WORD.findall(sentence)


def sumy_order(system: str, sentences: list[str]) -> list[int]:
    """Sentence indices best first by a sumy summariser's own rating of the same sentences."""
    from sumy.models.dom import ObjectDocumentModel, Paragraph, Sentence
    from sumy.nlp.stemmers import Stemmer
    from sumy.summarizers.lex_rank import LexRankSummarizer
    from sumy.summarizers.lsa import LsaSummarizer
    from sumy.summarizers.text_rank import TextRankSummarizer
    from sumy.utils import get_stop_words

    kind = {"lexrank": LexRankSummarizer, "textrank": TextRankSummarizer, "lsa": LsaSummarizer}[system]
    words = _Words()
    objects = [Sentence(s, words) for s in sentences]
    summarizer = kind(Stemmer("english"))
    summarizer.stop_words = get_stop_words("english")
    seen = {}

    def capture(found, count, rating, *args, **kwargs):  # every sumy summariser ends here with its ratings
        seen["rating"] = rating
        return ()

    summarizer._get_best_sentences = capture
    summarizer(ObjectDocumentModel([Paragraph(objects)]), len(objects))
    rating = seen["rating"]
    score = [rating(s) if callable(rating) else rating[s] for s in objects]
    return sorted(range(len(sentences)), key=lambda i: (-score[i], i))


def oracle(sentences: list[str], reference: str, words: int, scorer) -> list[int]:
    """Greedy: add the sentence that raises ROUGE-1 + ROUGE-2 F1 most, until nothing raises it or the budget is
    full; the indices picked, in document order."""
    picked: list[int] = []
    best = 0.0
    while sum(len(sentences[i].split()) for i in picked) < words:
        gains = []
        for i in range(len(sentences)):
            if i in picked:
                continue
            text = cut(" ".join(sentences[j] for j in sorted(picked + [i])), words)
            s = scorer.score(reference, text)
            gains.append((s["rouge1"].fmeasure + s["rouge2"].fmeasure, i))
        if not gains:
            break
        value, i = max(gains)
        if value <= best:
            break
        best, picked = value, picked + [i]
    return sorted(picked)


def run_default(doc: Doc, summarizer, boost: bool = True) -> str:
    from lsgtool.documents.read import read
    from lsgtool.summarize.length import Length
    from lsgtool.summarize.pipeline import Ask, summarize_document

    if not boost:  # the centroid alone
        summarizer.document_boost = lambda *args, **kwargs: None
    try:
        result = summarize_document(read(doc.path), summarizer, ask=Ask(length=Length.parse(f"{doc.words}w", None)))
    finally:
        summarizer.__dict__.pop("document_boost", None)
    return result.summary.text


def sentences_of(path: Path) -> list[str]:
    """The sentences lsgtool's default picks from, as it shows them (the baselines are fed these): those of the
    document's prose (no headings, code or tables), markup removed."""
    from lsgtool.documents.prose import readable
    from lsgtool.documents.read import read
    from lsgtool.summarize.extractive import prose_units

    text = read(path).text
    return [readable(text[a:b]) for a, b in prose_units(text) if text[a:b].strip()]


def evaluate(docs: list[Doc], systems: tuple[str, ...], summarizer, seed: int) -> None:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    picker = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)  # the oracle's: no LCS tables
    for k, doc in enumerate(docs):
        sentences = sentences_of(doc.path)
        for system in systems:
            start = time.perf_counter()
            if system in ("default", "centroid"):
                text = run_default(doc, summarizer, boost=system == "default")
            elif system == "lead":
                text = fill(sentences, list(range(len(sentences))), doc.words)
            elif system == "random":
                order = list(range(len(sentences)))
                random.Random(seed + doc.number).shuffle(order)
                text = fill(sentences, order, doc.words)
            elif system == "oracle":
                text = " ".join(sentences[i] for i in oracle(sentences, doc.reference, doc.words, picker))
            else:
                text = fill(sentences, sumy_order(system, sentences), doc.words)
            doc.seconds[system] = time.perf_counter() - start
            s = scorer.score(doc.reference, cut(text, doc.words))
            doc.scores[system] = {k2: round(100 * v.fmeasure, 2) for k2, v in s.items()}
        print(f"[{k + 1}/{len(docs)}] {doc.name}: " + ", ".join(
            f"{sy} {doc.scores[sy]['rouge1']:.1f}/{doc.scores[sy]['rouge2']:.1f}" for sy in systems),
            file=sys.stderr, flush=True)


def table(title: str, docs: list[Doc], systems: tuple[str, ...]) -> list[str]:
    lines = [f"\n{title}: {len(docs)} documents",
             f"| system | ROUGE-1 | ROUGE-2 | ROUGE-L | s/doc |", "|---|---:|---:|---:|---:|"]
    if not docs:
        return lines
    rows = []
    for system in systems:
        mean = {m: statistics.fmean(d.scores[system][m] for d in docs) for m in ("rouge1", "rouge2", "rougeL")}
        seconds = statistics.fmean(d.seconds[system] for d in docs)
        rows.append((system, mean, seconds))
    for system, mean, seconds in sorted(rows, key=lambda r: -r[1]["rouge1"]):
        lines.append(f"| {system} | {mean['rouge1']:.1f} | {mean['rouge2']:.1f} | {mean['rougeL']:.1f} | "
                     f"{seconds:.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated: {', '.join(SETS)}")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--parts", default="tuned,held-apart")
    parser.add_argument("--limit", type=int, help="documents per set (the first, by number)")
    parser.add_argument("--root", type=Path, default=QUALITY)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="per-document scores and seconds")
    args = parser.parse_args()
    systems = tuple(s for s in args.systems.split(",") if s)
    unknown = set(systems) - set(SYSTEMS) | set(args.sets.split(",")) - set(SETS)
    if unknown:
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    summarizer = None
    if {"default", "centroid"} & set(systems):
        from lsgtool.summarize.extractive import load_extractive

        summarizer = load_extractive("minilm")
    lines, dump = [], {}
    for name in args.sets.split(","):
        docs = [d for d in documents(name, args.root, None) if part(d.number) in args.parts.split(",")]
        docs = docs[:args.limit] if args.limit else docs
        evaluate(docs, systems, summarizer, args.seed)
        for which in args.parts.split(","):
            found = table(f"{name}, {which} part", [d for d in docs if part(d.number) == which], systems)
            print("\n".join(found), file=sys.stderr, flush=True)  # each set's table as soon as it is measured
            lines += found
        dump[name] = [{"name": d.name, "part": part(d.number), "reference_words": d.words, "scores": d.scores,
                       "seconds": d.seconds} for d in docs]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1))


if __name__ == "__main__":
    main()
