"""Lexical centrality (issue 30): the matrix-free power iteration equals LexRank's on the explicit cosine graph,
and the sentence sharing the document's words ranks first."""


from collections import Counter

import torch

from lsgtool.summarize.lexical import DAMPING, STEPS, STOP, WORD, centrality

SENTENCES = [
    "The river flooded the valley after the storm.",
    "Farmers in the valley lost their crops to the flood.",
    "The storm, the flood and the lost crops left the valley poor.",
    "A fox watched from the hill.",
    "Rain fell on the valley for three days before the river rose.",
]


def dense_lexrank(sentences):
    """The textbook form: TF-IDF vectors, the full cosine matrix, row-normalised, power iteration."""
    bags = [Counter(w for w in map(str.lower, WORD.findall(s)) if w not in STOP) for s in sentences]
    vocabulary = sorted({w for bag in bags for w in bag})
    df = {w: sum(w in bag for bag in bags) for w in vocabulary}
    n = len(sentences)
    vectors = torch.tensor([[bag[w] * torch.log(torch.tensor(n / df[w])).item() for w in vocabulary] for bag in bags])
    vectors = vectors / vectors.norm(dim=1, keepdim=True)
    graph = vectors @ vectors.T
    walk = graph / graph.sum(1, keepdim=True)
    p = torch.full((n,), 1.0 / n)
    for _ in range(STEPS):
        p = DAMPING / n + (1 - DAMPING) * walk.T @ p
    return p


def test_centrality_ranks_as_lexrank_on_the_explicit_graph():
    p = dense_lexrank(SENTENCES)
    order = sorted(range(len(SENTENCES)), key=lambda i: (-float(p[i]), i))
    ranks = centrality(SENTENCES)
    assert sorted(range(len(SENTENCES)), key=lambda i: -float(ranks[i])) == order
    assert order[0] == 2  # the sentence sharing the most words with the others first
    assert float(ranks.max()) == 1.0 and float(ranks.min()) == 0.0


def test_degenerate_inputs():
    assert centrality([]).shape == (0,)
    assert centrality(["Alone."]).tolist() == [1.0]
    assert centrality(["The and of.", "A the an."]).tolist() == [1.0, 1.0]  # function words only: no graph



def test_the_share_of_a_questions_words_a_sentence_holds():
    from lsgtool.summarize.lexical import shared

    sentences = ["Patenting the remote was discussed at length.", "The budget is twelve euros.",
                 "Remote patents and budget, both.", "Nothing here."]
    assert shared("What about the remote’s patents?", sentences).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert shared("What was the budget for the remote?", sentences).tolist() == [0.5, 0.5, 1.0, 0.0]
    assert shared("Describe the setting.", sentences).tolist() == [0.0, 0.0, 0.0, 0.0]  # names nothing in them
    assert shared("What is it?", sentences).tolist() == [0.0] * 4  # function words only
