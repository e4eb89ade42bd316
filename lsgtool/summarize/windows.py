"""Cut a text into windows of at most ``budget`` tokens at paragraph, then sentence boundaries.

Paragraphs are packed whole while they fit; a paragraph longer than a window is cut between its sentences,
and a sentence longer than a window between words. Nothing is dropped: the windows hold every word.
"""

from __future__ import annotations

from typing import Callable

from lsgtool.documents.sentences import paragraphs, sentence_spans

Count = Callable[[list[str]], list[int]]


def _pieces(text: str, count: Count, budget: int) -> list[str]:
    """Paragraphs, or the sentences (or word runs) of those too long for one window."""
    paras = [text[a:b].strip() for a, b in paragraphs(text)]
    pieces: list[str] = []
    for para, n in zip(paras, count(paras)):
        if n <= budget:
            pieces.append(para)
            continue
        sents = [para[a:b].strip() for a, b in sentence_spans(para)]
        for sent, m in zip(sents, count(sents)):
            pieces += [sent] if m <= budget else _split_words(sent, count, budget)
    return pieces


def _split_words(sentence: str, count: Count, budget: int) -> list[str]:
    words = sentence.split()
    out, start = [], 0
    while start < len(words):
        lo, hi = start + 1, len(words)  # the longest run of words from ``start`` that fits (at least one)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if count([" ".join(words[start:mid])])[0] <= budget else (lo, mid - 1)
        out.append(" ".join(words[start:lo]))
        start = lo
    return out


def windows(text: str, count: Count, budget: int) -> list[str]:
    """Windows of whole paragraphs (or sentences) that each take at most ``budget`` tokens."""
    if budget < 1:
        raise ValueError(f"a window must hold at least one token, got {budget}")
    pieces = _pieces(text, count, budget)
    groups, current, used = [], [], 0
    for piece, n in zip(pieces, count(pieces)):
        if current and used + n + 1 > budget:  # + 1: the separator may cost a token
            groups.append(current)
            current, used = [], 0
        current.append(piece)
        used += n + 1
    if current:
        groups.append(current)
    joined = ["\n\n".join(group) for group in groups]
    out = []
    for window, group, n in zip(joined, groups, count(joined)):
        out += [window] if n <= budget else group  # tokenised longer joined than in parts: each part fits alone
    return out
