"""Where each summary sentence came from: spans of the document's text, with their share.

A text that is summarised is held as ``Segments``: its sentences, each mapped to the spans of the document it
stands for. The document's own text (or a chapter, a window) maps each sentence to itself; a text made of
summaries (the next level of a hierarchy, the book from its chapters' summaries) maps each summary sentence to
the sources found for it. A summary sentence's sources are then composed through the levels down to the
document: an extractive pick is the exact span it was taken from (share 1), an abstractive sentence the input
sentences that received the most cross-attention while it was generated (``attribution``), each with its share
of that sentence's mass.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import torch

from lsgtool.documents.sentences import sentence_spans

KEPT = 8  # sources kept per sentence between levels
SHOWN = 3  # sources reported per sentence (top-k)

Origin = tuple[int, int, float]  # (start, end) in the document's text, share


@dataclass
class Sentence:
    start: int  # in the summary's text
    end: int
    origins: list[Origin] = field(default_factory=list)  # best first, shares summing to at most 1


class Segments:
    """A text cut into sentences, each with the document spans it stands for (``identity``: the text is the
    document's own, from ``offset`` on, so a span of it is its own source)."""

    def __init__(self, text: str, spans: list[tuple[int, int]], origins: list[list[Origin]] | None = None,
                 offset: int | None = None):
        self.text, self.spans, self.offset = text, spans, offset
        self.origins = origins if origins is not None else [[(offset + a, offset + b, 1.0)] for a, b in spans]
        self._starts = [a for a, _ in spans]

    @classmethod
    def original(cls, text: str, offset: int = 0) -> "Segments":
        """The document's own text (``offset``: where ``text`` begins in the document's text)."""
        return cls(text, [(a, b) for a, b in sentence_spans(text) if text[a:b].strip()], offset=offset)

    @classmethod
    def joined(cls, parts: list[tuple[str, list[Sentence]]], separator: str) -> "Segments":
        """Summaries joined by ``separator`` as the next level reads them (empty ones left out, as the join
        leaves them out)."""
        spans, origins, texts, offset = [], [], [], 0
        for text, sentences in parts:
            if not text:
                continue
            texts.append(text)
            for s in sentences:
                spans.append((offset + s.start, offset + s.end))
                origins.append(s.origins)
            offset += len(text) + len(separator)
        return cls(separator.join(texts), spans, origins)

    def sentences(self) -> list[Sentence]:
        """Each segment as a summary sentence of this text (a text made of summaries is one again, joined)."""
        return [Sentence(a, b, origins) for (a, b), origins in zip(self.spans, self.origins)]

    def window(self, start: int, end: int) -> "Segments":
        """The segments of ``text[start:end]`` (a window of a hierarchy), offsets relative to it."""
        if self.offset is not None:
            return Segments.original(self.text[start:end], self.offset + start)
        keep = [i for i in self._overlapping(start, end) if self.spans[i][1] > start]
        return Segments(self.text[start:end], [(max(self.spans[i][0], start) - start, min(self.spans[i][1], end) - start)
                                               for i in keep], [self.origins[i] for i in keep])

    def bins(self, offsets: list[tuple[int, int]]) -> torch.Tensor:
        """For each token (its character span in ``text``; (0, 0) for a special token) the sentence it is in,
        -1 for none."""
        out = []
        for a, b in offsets:
            i = bisect.bisect_right(self._starts, a) - 1
            inside = b > a and i >= 0 and a < self.spans[i][1]
            if not inside and b > a:  # a token that starts in a gap, a space before a sentence: the next one
                i = bisect.bisect_left(self._starts, a)
                inside = i < len(self.spans) and self.spans[i][0] < b
            out.append(i if inside else -1)
        return torch.tensor(out, dtype=torch.long)

    def over(self, start: int, end: int) -> list[Origin]:
        """The sources of ``text[start:end]``: itself in the document's own text, else those of the sentences it
        overlaps, shared by how much of it each covers."""
        if self.offset is not None:
            return [(self.offset + start, self.offset + end, 1.0)]
        weights = torch.zeros(len(self.spans))
        for i in self._overlapping(start, end):
            a, b = self.spans[i]
            weights[i] = max(0, min(b, end) - max(a, start))
        return self.compose(weights)

    def _overlapping(self, start: int, end: int) -> range:
        """The segments that may overlap ``[start, end)`` (spans are in order and do not overlap): the one
        ``start`` falls in or after, up to the last beginning before ``end``."""
        return range(max(bisect.bisect_right(self._starts, start) - 1, 0), bisect.bisect_left(self._starts, end))

    def compose(self, weights: torch.Tensor) -> list[Origin]:
        """Sources for a mass spread over the sentences (``weights``, one each), normalised, best ``KEPT``."""
        total = float(weights.sum())
        if total <= 0:
            return []
        found: dict[tuple[int, int], float] = {}
        for i in torch.nonzero(weights > 0).flatten().tolist():
            share = float(weights[i]) / total
            for a, b, w in self.origins[i]:
                found[(a, b)] = found.get((a, b), 0.0) + share * w
        best = sorted(found.items(), key=lambda item: -item[1])[:KEPT]
        return [(a, b, w) for (a, b), w in best]


def generated_sentences(text: str, token_ends: list[int], token_mass: torch.Tensor, segments: Segments) -> list[Sentence]:
    """The sentences of a generated ``text``, each with the sources its tokens' cross-attention mass points to.
    ``token_ends``: where each generated token ends in ``text``; ``token_mass``: (tokens, segments)."""
    found = [(a, b) for a, b in sentence_spans(text) if text[a:b].strip()]
    ends = [b for _, b in found]
    mass = torch.zeros(len(found), token_mass.shape[1] if token_mass.ndim == 2 else 0)
    length = len(text.rstrip())
    for t, end in enumerate(token_ends[:len(token_mass)]):
        if end > length:  # a token the summary left out (a sentence begun after those asked for)
            continue
        i = min(bisect.bisect_left(ends, end), len(found) - 1) if found else -1
        if i >= 0:
            mass[i] += token_mass[t]
    return [Sentence(a, b, segments.compose(mass[i])) for i, (a, b) in enumerate(found)]


def picked_sentences(spans: list[tuple[int, int]], texts: list[str], starts: list[int],
                     segments: Segments) -> list[Sentence]:
    """Extractive picks, beginning at ``starts`` in the summary, each sourced by its span."""
    return [Sentence(at, at + len(text), segments.over(a, b)) for (a, b), text, at in zip(spans, texts, starts)]


def described(document, summary_text: str, sentences: list[Sentence], shown: int = SHOWN) -> list[dict[str, Any]]:
    """Each sentence as the outputs write it: its text and its best sources named by chapter and page."""
    out = []
    for s in sentences:
        sources = []
        for a, b, share in s.origins[:shown]:
            place = document.place(a)
            sources.append({"chapter": place.title, "chapter_index": place.chapter, "page": place.page,
                            "line": place.line, "paragraph": place.paragraph, "start": a, "end": b,
                            "score": round(share, 4)})
            if place.speaker or place.time:  # a transcript's or caption file's turn
                sources[-1].update(speaker=place.speaker, time=place.time)
        out.append({"text": summary_text[s.start:s.end], "start": s.start, "end": s.end, "sources": sources})
    return out
