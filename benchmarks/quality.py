"""Summary quality on real documents with human-written summaries: lsgtool's default against the usual
reference points, each given the reference's word count and cut to it (ROUGE-1/2/L F1, Porter stemming).

    python benchmarks/quality.py                           # every set in ../shared/quality, both parts
    python benchmarks/quality.py --sets rfcs --limit 20    # a quick look
    python benchmarks/quality.py --json quality.json       # per-document scores and seconds
    python benchmarks/quality.py --pairs tuned.jsonl       # the tuning part as (text, summary) rows, to train on
    python benchmarks/quality.py --root proposals --sets peps,keps   # PEPs and KEPs (benchmarks/proposals.py)

Systems: ``default`` (what ``lsgtool summarize DOC --length Nw`` writes: the packaged learned sentence scorer),
``rule`` (``--scorer rule``: centroid, lexical centrality and title, the default before the learned scorer),
``centroid`` (the rule without its document scores: the default before issue 30), ``lead`` (the first sentences),
``random`` (a seeded pick), ``lexrank``, ``textrank``, ``lsa`` (the ``sumy`` package, fed the same sentences as the
others), ``oracle`` (greedy ROUGE-1+2 pick against the reference: the best an extractive pick can do).

With ``--questions``, the stories' and meetings' question/answer pairs (``NNNN.focus-K.query``/``.ref``) are
scored too, each answer's word count the budget: ``focused`` (``lsgtool summarize DOC --focus QUESTION``),
``unfocused`` (the default without the question), ``overlap`` (sentences ranked by the stemmed content words they
share with the question, ties in document order), ``lead`` and ``random``.

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
        "meetings": ("qmsum-train", "*.txt"),
        "peps": ("peps", "*.md"), "keps": ("keps", "*.md")}  # under --root from benchmarks/proposals.py
SHARED = ("rfcs", "stories", "meetings")  # in ../shared/quality: the default
SYSTEMS = ("oracle", "default", "rule", "centroid", "lexrank", "textrank", "lsa", "lead", "random")
QUESTION_SYSTEMS = ("focused", "unfocused", "overlap", "lead", "random")
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
    question: str | None = None  # a question/answer pair: the question (``reference`` is its answer)


def part(number: int) -> str:
    """The split: a third of each set (by number) is held apart and only reported."""
    return "held-apart" if number % 3 == 0 else "tuned"


def documents(name: str, root: Path, limit: int | None) -> list[Doc]:
    folder, pattern = SETS[name]
    if not (root / folder).is_dir():
        print(f"Error: no {root / folder} for --sets {name}.\nHint: " + (
            "write it with benchmarks/proposals.py and give its --out as --root." if name not in SHARED
            else "give --root the folder that holds ../shared/quality's sets."), file=sys.stderr)
        sys.exit(2)
    found = []
    for path in sorted((root / folder).glob(pattern)):
        ref = path.with_suffix(".ref")
        match = re.match(r"\d+", path.name)
        if not ref.exists() or not match:
            continue
        reference = ref.read_text(encoding="utf-8").strip()
        found.append(Doc(path.stem, int(match.group()), path, reference, len(reference.split())))
    return found[:limit] if limit else found


def questions(docs: list[Doc]) -> list[Doc]:
    """The question/answer pairs of ``docs`` (``NNNN.focus-K.query`` and ``.ref`` beside each document)."""
    found = []
    for doc in docs:
        for query in sorted(doc.path.parent.glob(f"{doc.path.stem}.focus-*.query")):
            answer = query.with_suffix(".ref")
            if answer.exists():
                reference = answer.read_text(encoding="utf-8").strip()
                found.append(Doc(query.stem, doc.number, doc.path, reference, len(reference.split()),
                                 question=query.read_text(encoding="utf-8").strip()))
    return found


def overlap_order(sentences: list[str], question: str) -> list[int]:
    """Sentence indices best first by the distinct stemmed content words they share with the question."""
    from nltk.stem.porter import PorterStemmer
    from sumy.utils import get_stop_words

    stem, stop = PorterStemmer().stem, get_stop_words("english")

    def content(text: str) -> set[str]:
        return {stem(w) for w in WORD.findall(text.lower()) if w not in stop}

    asked = content(question)
    shared = [len(asked & content(s)) for s in sentences]
    return sorted(range(len(sentences)), key=lambda i: (-shared[i], i))


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


def run_default(doc: Doc, summarizer, boost: bool = True, question: str | None = None, learned: bool = True) -> str:
    from lsgtool.documents.read import read
    from lsgtool.summarize.focus import Relevance
    from lsgtool.summarize.length import Length
    from lsgtool.summarize.pipeline import Ask, summarize_document

    if not boost:  # the centroid alone
        summarizer.document_boost = lambda *args, **kwargs: None
    scorer = summarizer.scorer
    summarizer.scorer = scorer if learned and boost else None
    focus = Relevance(summarizer, question) if question else None
    try:
        result = summarize_document(read(doc.path), summarizer,
                                    ask=Ask(focus=focus, length=Length.parse(f"{doc.words}w", None)))
    finally:
        summarizer.__dict__.pop("document_boost", None)
        summarizer.scorer = scorer
    return result.summary.text


def reuse_embeddings(summarizer) -> None:
    """A document's sentences are embedded once for all the systems and questions that read it (the same text,
    the same sentences: the same embeddings)."""
    original, kept = summarizer.embed, {}

    def embed(text, spans, lengths, progress, firsts=frozenset()):
        key = (text, tuple(spans), firsts)
        if key not in kept:
            if len(kept) >= 4:
                kept.clear()
            kept[key] = original(text, spans, lengths, progress, firsts)
        return kept[key]

    summarizer.embed = embed


def sentences_of(path: Path) -> list[str]:
    """The sentences lsgtool's default picks from, as it shows them (the baselines are fed these): those of the
    document's prose (no headings, code or tables; in a transcript, its turns' words), markup removed."""
    from lsgtool.documents.read import read
    from lsgtool.summarize.extractive import Extractive, prose_units

    text = read(path).text  # a transcript's sentences without speakers' names, fillers and repeats
    return [shown for shown in Extractive.sentences(text, prose_units(text))[0] if shown]


def evaluate(docs: list[Doc], systems: tuple[str, ...], summarizer, seed: int) -> None:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    picker = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)  # the oracle's: no LCS tables
    for k, doc in enumerate(docs):
        sentences = sentences_of(doc.path)
        for system in systems:
            start = time.perf_counter()
            if system in ("default", "rule", "centroid", "unfocused"):
                text = run_default(doc, summarizer, boost=system != "centroid", learned=system != "rule")
            elif system == "focused":
                text = run_default(doc, summarizer, question=doc.question)
            elif system == "overlap":
                text = fill(sentences, overlap_order(sentences, doc.question), doc.words)
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
    parser.add_argument("--sets", default=",".join(SHARED), help=f"comma-separated: {', '.join(SETS)} (peps and "
                                                                   "keps: --root of benchmarks/proposals.py)")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--parts", default="tuned,held-apart")
    parser.add_argument("--limit", type=int, help="documents per set (the first, by number)")
    parser.add_argument("--root", type=Path, default=QUALITY)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="per-document scores and seconds")
    parser.add_argument("--questions", action="store_true", help="also the stories' and meetings' question/answer "
                                                                 "pairs: focused, unfocused, overlap, lead, random")
    parser.add_argument("--only-questions", action="store_true", help="the question/answer pairs alone")
    parser.add_argument("--pairs", type=Path, help="write the documents of --sets and --parts as jsonl rows "
                                                   "{text, summary} (what lsgtool finetune --task extractive reads), "
                                                   "and stop")
    args = parser.parse_args()
    if args.pairs:
        write_pairs(args.pairs, args.sets.split(","), args.parts.split(","), args.root)
        return
    systems = tuple(s for s in args.systems.split(",") if s)
    unknown = set(systems) - set(SYSTEMS) | set(args.sets.split(",")) - set(SETS)
    if unknown:
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    summarizer = None
    asking = args.questions or args.only_questions
    if {"default", "rule", "centroid"} & set(systems) or asking:
        from lsgtool.summarize.extractive import load_extractive

        summarizer = load_extractive("minilm")
        reuse_embeddings(summarizer)
    lines, dump = [], {}
    for name in args.sets.split(","):
        docs = [d for d in documents(name, args.root, None) if part(d.number) in args.parts.split(",")]
        docs = docs[:args.limit] if args.limit else docs
        runs = [] if args.only_questions else [(name, docs, systems)]
        if asking and name != "rfcs":  # the RFCs have no questions
            runs.append((f"{name} questions", questions(docs), QUESTION_SYSTEMS))
        for title, found_docs, found_systems in runs:
            evaluate(found_docs, found_systems, summarizer, args.seed)
            parts = [(f"{w} part", [w]) for w in args.parts.split(",")] if name in SHARED else \
                [("never tuned on", args.parts.split(","))]  # benchmarks/proposals.py's sets: one table
            for which, kept in parts:
                found = table(f"{title}, {which}", [d for d in found_docs if part(d.number) in kept], found_systems)
                print("\n".join(found), file=sys.stderr, flush=True)  # each table as soon as it is measured
                lines += found
            dump[title] = [{"name": d.name, "part": part(d.number), "reference_words": d.words, "question": d.question,
                            "scores": d.scores, "seconds": d.seconds} for d in found_docs]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1))


def write_pairs(out: Path, sets: list[str], parts: list[str], root: Path) -> None:
    """The documents as lsgtool reads them with their references, one jsonl row each."""
    from lsgtool.documents.read import read

    rows = [{"text": read(doc.path).text, "summary": doc.reference, "set": name, "name": doc.name}
            for name in sets for doc in documents(name, root, None) if part(doc.number) in parts]
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} documents -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
