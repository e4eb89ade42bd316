"""A summary focused on a question (``--focus``): what is relevant to it is chosen first.

Relevance is the cosine between the question's embedding and each sentence's, both from a sentence encoder read
through LSG attention (the extractive summariser's own, else the packaged all-MiniLM-L6-v2).

- Extractive: a sentence's score is its similarity to the question over ``SIMILARITY_SPREAD``, plus
  ``GENERAL_WEIGHT`` times what it scores without the question (the learned scorer's blend, else the rule's),
  standardised, both scaled to ``FOCUS_SCALE``, plus ``QUESTION_WORDS`` times the share of the question's content
  words it holds, plus ``SPEAKER_NAMED`` in a transcript where the question names the sentence's speaker; then
  picked by maximal marginal relevance as without a focus. A question that names nothing in the text still gets
  the document's most salient sentences among those closest to it.
- Abstractive: the text is cut into windows of at most ``WINDOW_TOKENS`` tokens, each scored by the mean of its
  ``TOP`` most similar sentences; the best windows, most relevant first, fill one pass of the model (its limit,
  ``--max-input-tokens``, or ``FOCUS_TOKENS`` for a model without one), and that pass is summarised: a whole book
  asked about one topic is read in one model window. The windows chosen and their scores are reported.
- Per chapter: chapters are ranked by the same score; each is summarised with the focus, and the book's summary
  is written, with the focus too, from the chapter summaries in that order, most relevant first (each chapter
  summary read on its own: the sentences of one are not scored in the context of another).
- The highest similarity of a sentence to the question is reported (``relevance``); below ``WEAK`` the record
  notes that nothing in the text is close to the question.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

import torch

# Extractive (``focused``). Chosen on the question/answer pairs of the tuning part of ../shared/quality (68 story
# and 67 meeting questions; benchmarks/quality.py --questions), of 72 blends (GENERAL_WEIGHT 0.25-1, QUESTION_WORDS
# 0.3-1, FOCUS_SCALE 0.15-0.3, SIMILARITY_SPREAD 0.05-0.2), by the least gain over the overlap pick on of
# either kind. Tuning part, R-1/R-2: stories 33.8/5.5 -> 34.6/5.8, meetings 25.5/3.7 -> 26.3/4.0, against the
# rule's centroid + similarity blend before it (a sentence's similarity to a question spreads by 0.07-0.10 in a
# document with all-MiniLM-L6-v2; standardising it instead was 34.5/5.8 and 25.8/3.9, and amplified the noise of a
# question that names nothing in the text).
GENERAL_WEIGHT = 0.5
QUESTION_WORDS = 1.0  # the share of the question's content words a sentence holds (``lexical.shared``)
FOCUS_SCALE = 0.15
SIMILARITY_SPREAD = 0.2
# in a transcript, added to the score of what a speaker the question names said ("What did Grad G think about X?",
# "the professor's take", "Industrial Designer's presentation": ``named``). 14 of the 67 tuning meeting questions
# name one; on those, R-1/R-2 26.7/4.6 without, 28.5/5.1 at 0.1, 27.2/4.8 at 0.2, 28.0/6.0 at 0.3, 29.0/6.9 at 0.5
# and at 1 (where what the named speaker said comes first): the smaller of the two
SPEAKER_NAMED = 0.5
CODE = re.compile(r"\s+[A-Za-z0-9]$")  # the code after a role in a speaker's label ("Professor C", "PhD A")
WINDOW_TOKENS = 512
FOCUS_TOKENS = 16384
TOP = 3
WEAK = 0.2  # all-MiniLM-L6-v2: Genesis 1-4 and "Cain" 0.57, "the serpent" 0.48; "software patents" 0.09, "xyzzy" 0.10


@dataclass
class Window:
    start: int
    end: int
    score: float

    def to_dict(self, offset: int = 0) -> dict[str, Any]:
        return {"start": offset + self.start, "end": offset + self.end, "score": round(self.score, 4)}


@dataclass
class Choice:
    """The windows an abstractive pass reads: ``chosen`` in the order they are read, of ``windows`` in all."""

    chosen: list[Window]
    windows: int
    tokens: int
    relevance: float = -1.0  # the highest similarity of a sentence of the text to the question

    def to_dict(self, offset: int = 0) -> dict[str, Any]:
        """``offset``: where the text the windows were cut from begins in the document's text."""
        return {"windows": self.windows, "chosen": [w.to_dict(offset) for w in self.chosen], "tokens": self.tokens,
                "relevance": round(self.relevance, 4)}


def weak(question: str, relevance: float | None, what: str = "the text") -> str | None:
    """The note for a question nothing in ``what`` is close to (None: something is)."""
    if relevance is None or relevance >= WEAK:
        return None
    return (f"--focus {question!r}: nothing in {what} is close to it (highest sentence relevance {relevance:.2f}, "
            f"below {WEAK}): the summary is not about it")


def focused(general: torch.Tensor, similarity: torch.Tensor, words: torch.Tensor | None = None,
            named: torch.Tensor | None = None) -> torch.Tensor:
    """Each sentence's score for a question: its similarity to the question over ``SIMILARITY_SPREAD`` plus the
    document's own score (``general``: what it would have without the question) standardised and weighted
    ``GENERAL_WEIGHT``, scaled to ``FOCUS_SCALE``, plus ``QUESTION_WORDS`` times the share of the question's content
    words it holds, plus ``SPEAKER_NAMED`` where ``named`` (said by a speaker the question names). The similarity is
    not standardised: a question that tells the sentences apart by little leaves the choice to the document's own
    score instead of to that little."""
    from lsgtool.summarize.scorer import standardised

    own = standardised(general.float())
    score = FOCUS_SCALE * (similarity.float() / SIMILARITY_SPREAD + GENERAL_WEIGHT * own)
    if words is not None:
        score = score + QUESTION_WORDS * words
    return score if named is None else score + SPEAKER_NAMED * named.float()


def named(question: str, speakers: list[str | None]) -> torch.Tensor:
    """(sentences,) whether each sentence's speaker (``speakers``, None in prose) is named by ``question``: by the
    whole label ("Industrial Designer's presentation"), or by its role without the code where no other speaker has
    that role ("the professor" of "Professor C", not "the grad" among "Grad B" and "Grad G")."""
    labels = {s for s in speakers if s}
    roles = [CODE.sub("", label).lower() for label in labels]
    asked = question.lower()
    found = {label for label, role in zip(labels, roles)
             if _says(asked, label.lower()) or (role != label.lower() and roles.count(role) == 1 and _says(asked, role))}
    return torch.tensor([s in found for s in speakers], dtype=torch.bool)


def _says(text: str, words: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text) is not None


class Relevance:
    """Similarity of sentences to one question, with a sentence encoder (an ``Extractive``)."""

    def __init__(self, encoder, question: str):
        self.encoder, self.question = encoder, question
        self.query = encoder.embed_query(question)
        self.document: tuple[str, Scored] | None = None  # the last whole text scored (a book's chapters reuse it)

    def sentences(self, text: str, progress=None, offset: int | None = None, apart: bool = False) -> "Scored":
        """The sentences of ``text`` with their cosine to the question; ``offset``: where ``text`` begins in the
        document's text, whose scores are then reused when the document was scored already (its chapters);
        ``apart``: each paragraph read on its own (a book's chapter summaries)."""
        from lsgtool.progress import Progress
        from lsgtool.summarize.extractive import paragraph_firsts

        if offset is not None and self.document is not None:
            whole, scored = self.document
            if whole[offset:offset + len(text)] == text:
                return scored.within(offset, offset + len(text))
        spans, lengths, _ = self.encoder.spans(text)
        firsts = paragraph_firsts(text, spans) if apart else frozenset()
        scored = Scored(spans, self.encoder.embed(text, spans, lengths, progress or Progress(), firsts) @ self.query
                        if spans else torch.zeros(0))
        if offset is None:
            self.document = (text, scored)
        return scored


class Scored:
    """Sentence spans (in order, not overlapping) and their similarity to a question."""

    def __init__(self, spans: list[tuple[int, int]], similarity: torch.Tensor):
        self.similarity = similarity
        self.starts, self.ends = [a for a, _ in spans], [b for _, b in spans]

    @property
    def best(self) -> float:
        """The highest similarity of a sentence (-1: no sentences)."""
        return float(self.similarity.max()) if len(self.similarity) else -1.0

    def within(self, start: int, end: int) -> "Scored":
        """The sentences inside ``[start, end)``, offsets relative to ``start``."""
        first, last = bisect.bisect_left(self.starts, start), bisect.bisect_right(self.ends, end)
        spans = [(a - start, b - start) for a, b in zip(self.starts[first:last], self.ends[first:last])]
        return Scored(spans, self.similarity[first:last])

    def score(self, start: int, end: int) -> float:
        """Mean of the ``TOP`` highest similarities of the sentences inside ``[start, end)`` (-1: none)."""
        first, last = bisect.bisect_left(self.starts, start), bisect.bisect_right(self.ends, end)
        if last <= first:
            return -1.0
        return float(self.similarity[first:last].topk(min(TOP, last - first)).values.mean())


def choose(text: str, relevance: Relevance, count, budget: int, progress=None, offset: int | None = None,
           apart: bool = False) -> Choice:
    """The most relevant windows of ``text`` that together fit ``budget`` tokens, most relevant first
    (``offset``: where ``text`` begins in the document, when it is a part of one already scored; ``apart``: its
    paragraphs are separate summaries, each scored on its own)."""
    from lsgtool.summarize.windows import GAP, window_spans

    sentences = relevance.sentences(text, progress, offset, apart)
    found = window_spans(text, count, max(1, min(WINDOW_TOKENS, budget)))
    sizes = count([text[a:b] for a, b in found])
    scored = sorted(((sentences.score(a, b), i) for i, (a, b) in enumerate(found)), reverse=True)
    chosen, used = [], 0
    for score, i in scored:
        if used + sizes[i] + (GAP if chosen else 0) > budget:
            continue
        chosen.append(Window(found[i][0], found[i][1], score))
        used += sizes[i] + (GAP if len(chosen) > 1 else 0)
    return Choice(chosen, len(found), used, sentences.best)
