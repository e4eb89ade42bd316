"""Windows hold every word, fit the budget counted as a whole, end at paragraph or sentence boundaries and are
packed full."""

import re

import pytest

from lsgtool.summarize.windows import windows


def _count(texts):
    return [len(t.split()) + t.count("\n") for t in texts]  # newlines cost tokens, as in byte-level BPE


def _squeeze(text):
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("text", [
    "\n\n".join(f"Paragraph {p}. " + " ".join(f"Sentence {p}.{s} has words." for s in range(5)) for p in range(40)),
    "\n".join(f"Ge{v}:1 Verse {v} runs on, and on, and on." for v in range(400)),  # no paragraphs: sentences
    "word " * 500,  # one sentence longer than a window: runs of words
])
def test_every_word_kept_each_window_fits_and_is_packed(text):
    budget = 60
    found = windows(text, _count, budget)
    assert _squeeze("".join(found)) == _squeeze(text)
    sizes = _count(found)
    assert max(sizes) <= budget
    assert all(size >= budget * 0.7 for size in sizes[:-1]), sizes  # full, not a window per sentence


def test_windows_end_at_sentence_boundaries_when_they_can():
    text = " ".join(f"Sentence number {i} ends here." for i in range(50))
    assert all(w.rstrip().endswith(".") for w in windows(text, _count, 23))


@pytest.mark.parametrize("unit", ["abcdefghij", "word "])  # issue 29, item 9: Chinese, a URL; one endless sentence
def test_cutting_a_text_costs_what_its_windows_do_not_windows_times_text(unit):
    """The characters tokenised to cut 8× the text grow 8× (cutting was quadratic: 64×, 12 minutes for 400K
    characters without spaces)."""
    counted = []

    def count(texts):
        counted.extend(len(t) for t in texts)
        return [-(-len(t) // 4) for t in texts]  # a token per four characters, spaces or not

    def cost(characters):
        counted.clear()
        text = unit * (characters // len(unit))
        found = windows(text, count, 64)
        spent = sum(counted)
        assert "".join(found).replace(" ", "") == text.replace(" ", "") and max(count(found)) <= 64
        return spent

    small, large = cost(20_000), cost(160_000)
    assert large < 12 * small, (small, large)
