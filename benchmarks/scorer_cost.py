"""What the learned sentence scorer costs on a whole book: the KJV per chapter (66 books, 30K sentences) through
``summarize_document`` with the default (the packaged scorer blended with the rule), timing the scorer's own work
(``Extractive.features`` and ``Scorer.score``) against the whole run, and the same run with ``--scorer rule``.

    python benchmarks/scorer_cost.py          # ~10 min on 2 cores: the book twice
    python benchmarks/scorer_cost.py --once   # the default only, its scorer's share of the run

Needs `bible` (apt-get install bible-kjv) and pandoc, as benchmarks/html_page.py, whose KJV it builds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from html_page import build  # noqa: E402


def run(path: Path, scorer: str | None) -> tuple[float, float, int]:
    """(seconds of the run, seconds in the scorer's features and scores, sentences scored) of one per-chapter run."""
    from lsgtool.documents.read import read
    from lsgtool.summarize.extractive import Extractive, load_extractive
    from lsgtool.summarize.pipeline import Ask, summarize_document
    from lsgtool.summarize.scorer import Scorer

    spent, counted = [0.0], [0]

    def timed(function):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - started
        return wrapper

    features, score = Extractive.features, Scorer.score
    Extractive.features, Scorer.score = timed(features), timed(score)
    try:
        summarizer = load_extractive("minilm", scorer=scorer)
        original = summarizer.sentences

        def sentences(*args, **kwargs):
            found = original(*args, **kwargs)
            counted[0] += len(found[0])
            return found

        summarizer.sentences = sentences
        started = time.perf_counter()
        summarize_document(read(path), summarizer, per_chapter=True, ask=Ask())
        return time.perf_counter() - started, spent[0], counted[0]
    finally:
        Extractive.features, Scorer.score = features, score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--once", action="store_true", help="the default only")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/lsgtool-html-bench"))
    args = parser.parse_args()
    build(args.folder)
    book = args.folder / "kjv.md"
    whole, scoring, sentences = run(book, None)
    print(f"default (learned scorer + rule): {whole:.1f} s, of which the scorer {scoring:.2f} s "
          f"({100 * scoring / whole:.1f}%) over {sentences:,} sentences read")
    if not args.once:
        rule, _, _ = run(book, "rule")
        print(f"--scorer rule: {rule:.1f} s; default / rule: {whole / rule:.3f}")


if __name__ == "__main__":
    main()
