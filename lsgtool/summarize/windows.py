"""Cut a text into windows of at most ``budget`` tokens at paragraph, then sentence boundaries.

Pieces are paragraphs, or the sentences (or runs of words, or of characters where a text has no spaces) of
those too long for one window; a window is the original text from its first piece to its last, so nothing
between them is lost or added, and its tokens are counted as a whole. Nothing is dropped: the windows hold
every word.
"""

from __future__ import annotations

from typing import Callable

from lsgtool.documents.sentences import paragraphs, sentence_spans

Count = Callable[[list[str]], list[int]]
GAP = 2  # tokens a gap between two pieces may cost (whitespace, newlines)


def _longest(first: int, last: int, fits: Callable[[int], bool]) -> int:
    """The largest ``j`` in ``first..last`` with ``fits(j)`` (``first`` when none does): steps doubling from
    ``first`` until one does not fit, then a binary search below it, so the cost follows the answer's distance
    from ``first``, not ``last``'s (cutting a long text costs what its pieces do, not pieces × text)."""
    lo, step = first, 1
    while lo < last and fits(min(first + step, last)):
        lo, step = min(first + step, last), step * 2
    hi = min(first + step, last) - 1 if lo < last else lo
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def _character_runs(text: str, start: int, end: int, count: Count, budget: int) -> list[tuple[int, int]]:
    """``text[start:end]`` cut where the tokens reach the budget (text without spaces: Chinese, Japanese, a URL)."""
    out = []
    while start < end:
        cut = _longest(start + 1, end, lambda j: count([text[start:j]])[0] <= budget)
        out.append((start, cut))
        start = cut
    return out


def token_runs(text: str, start: int, end: int, count: Count, budget: int) -> list[tuple[int, int]]:
    """Spans of consecutive words of ``text[start:end]`` that each fit the budget; a word longer than the budget
    is cut inside (every span fits, whatever the text)."""
    import re

    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
    out, i = [], 0
    while i < len(words):
        j = _longest(i, len(words) - 1, lambda j: count([text[words[i][0]:words[j][1]]])[0] <= budget)
        if j == i and count([text[words[i][0]:words[i][1]]])[0] > budget:
            out += _character_runs(text, words[i][0], words[i][1], count, budget)
        else:
            out.append((words[i][0], words[j][1]))
        i = j + 1
    return out


def pieces(text: str, count: Count, budget: int) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of each piece, in order."""
    spans = paragraphs(text)
    out = []
    for (a, b), n in zip(spans, count([text[a:b] for a, b in spans])):
        if n <= budget:
            out.append((a, b, n))
            continue
        sentences = list(sentence_spans(text, a, b))
        for (c, d), m in zip(sentences, count([text[c:d] for c, d in sentences])):
            if m <= budget:
                out.append((c, d, m))
            else:
                runs = token_runs(text, c, d, count, budget)
                out += [(e, f, k) for (e, f), k in zip(runs, count([text[e:f] for e, f in runs]))]
    return out


def windows(text: str, count: Count, budget: int) -> list[str]:
    """Windows of whole paragraphs (or sentences) that each take at most ``budget`` tokens."""
    return [text[a:b] for a, b in window_spans(text, count, budget)]


def window_spans(text: str, count: Count, budget: int) -> list[tuple[int, int]]:
    """(start, end) of each of the ``windows``."""
    if budget < 1:
        raise ValueError(f"a window must hold at least one token, got {budget}")
    found = pieces(text, count, budget)
    out, i = [], 0
    while i < len(found):
        j, used = i, found[i][2]
        while j + 1 < len(found) and used + GAP + found[j + 1][2] <= budget:
            j += 1
            used += GAP + found[j][2]
        excess = count([text[found[i][0]:found[j][1]]])[0] - budget
        while excess > 0 and j > i:  # counted as a whole it is longer: give pieces back to the next window
            given = 0
            while j > i and given < excess:
                given += found[j][2] + GAP
                j -= 1
            excess = count([text[found[i][0]:found[j][1]]])[0] - budget
        out.append((found[i][0], found[j][1]))
        i = j + 1
    return out
