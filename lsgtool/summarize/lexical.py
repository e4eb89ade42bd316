"""Lexical centrality: how much of the document's vocabulary a sentence shares (LexRank, continuous form).

Sentences are TF-IDF vectors of their words (lower-cased, English function words left out); the sentence
graph's edges are their cosines, and a sentence's centrality is its stationary probability under a random walk
on that graph (power iteration with damping, as PageRank). The graph is never built: each step multiplies by
the sparse word matrix twice, so a book of 30K sentences costs as much as its words. Returned as ranks scaled
to [0, 1] (1: the most central), which the extractive summariser adds to its embedding scores.
"""

from __future__ import annotations

import re
from collections import Counter

import torch

WORD = re.compile(r"\w+(?:['’]\w+)*")
STOP = frozenset("""a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves also may might must shall one""".split())
DAMPING = 0.15
STEPS = 30


def centrality(sentences: list[str]) -> torch.Tensor:
    """(sentences,) rank scores in [0, 1] of each sentence's lexical centrality (ties: the earlier first)."""
    n = len(sentences)
    if n < 2:
        return torch.ones(n)
    vocabulary: dict[str, int] = {}
    rows, cols, counts = [], [], []
    for i, sentence in enumerate(sentences):
        for word, count in Counter(w for w in map(str.lower, WORD.findall(sentence)) if w not in STOP).items():
            rows.append(i)
            cols.append(vocabulary.setdefault(word, len(vocabulary)))
            counts.append(count)
    if not vocabulary:
        return torch.ones(n)
    col = torch.tensor(cols)
    idf = torch.log(n / torch.bincount(col, minlength=len(vocabulary)).float())
    values = torch.tensor(counts, dtype=torch.float) * idf[col]
    row = torch.tensor(rows)
    norms = torch.zeros(n).index_add_(0, row, values**2).sqrt().clamp(min=1e-12)
    words = torch.sparse_coo_tensor(torch.stack([row, col]), values / norms[row], (n, len(vocabulary)),
                                    check_invariants=True).coalesce()
    words_t = words.t().coalesce()

    def similar(x: torch.Tensor) -> torch.Tensor:  # (X X^T) x: the cosine graph times x, without the graph
        return torch.sparse.mm(words, torch.sparse.mm(words_t, x[:, None]))[:, 0]

    degree = similar(torch.ones(n)).clamp(min=1e-12)
    p = torch.full((n,), 1.0 / n)
    for _ in range(STEPS):
        p = DAMPING / n + (1 - DAMPING) * similar(p / degree)
    order = sorted(range(n), key=lambda i: (-float(p[i]), i))
    ranks = torch.empty(n)
    ranks[order] = torch.linspace(1.0, 0.0, n)
    return ranks


PREFIX = 5  # words compared by their first letters (truncation stemming: "patents", "patent" and "patenting" agree)


def _stems(text: str) -> set[str]:
    return {w[:PREFIX] for w in map(str.lower, WORD.findall(text)) if w not in STOP and not w.isdigit()}


def shared(question: str, sentences: list[str]) -> torch.Tensor:
    """(sentences,) the share in [0, 1] of the question's content words (truncated to ``PREFIX`` letters) that each
    sentence holds; all zero for a question that names nothing in them ("Describe the setting")."""
    asked = _stems(question)
    if not asked:
        return torch.zeros(len(sentences))
    return torch.tensor([len(asked & _stems(s)) / len(asked) for s in sentences], dtype=torch.float)
