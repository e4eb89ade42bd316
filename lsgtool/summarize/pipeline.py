"""Summarise a document: one pass when the model (and memory) allow, else by the chosen overflow route.

Routes (``overflow``): ``auto`` one pass if it fits, else hierarchical — windows at paragraph/sentence
boundaries are summarised, then the joined summaries, until they fit one pass; ``chunk`` the windows'
summaries joined (no reduction, the way chunking tools do it); ``truncate`` the first tokens that fit, the
rest reported as dropped; ``error`` refuses with the numbers. Every result counts ``input_tokens``,
``encoded_tokens`` and ``dropped_tokens``: nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from lsgtool.core.errors import LsgtoolError, UsageError
from lsgtool.documents import Document
from lsgtool.summarize.memory import can_skip_cache, estimate, largest_fitting
from lsgtool.progress import Progress
from lsgtool.summarize.sources import Segments, Sentence, described, generated_sentences, picked_sentences
from lsgtool.summarize.windows import window_spans

OVERFLOWS = ("auto", "error", "truncate", "chunk")


@dataclass
class Summary:
    text: str
    route: str  # one pass, hierarchical, chunked, truncated, extractive
    input_tokens: int
    encoded_tokens: int
    dropped_tokens: int
    windows: list[int] = field(default_factory=list)  # windows summarised at each level below the last
    levels: int = 1
    new_tokens: int = 0
    seconds: float = 0.0
    sentences: list[Sentence] | None = None  # with sources: each summary sentence and where it came from

    def to_dict(self) -> dict[str, Any]:
        """What the record shows (the sentences' sources are shown by ``DocumentSummary``, named)."""
        return {k: v for k, v in asdict(self).items() if k != "sentences"}

    def to_store(self) -> dict[str, Any]:
        """Everything, for a chapter kept across an interruption (``from_store`` reads it back)."""
        return asdict(self)

    @classmethod
    def from_store(cls, kept: dict[str, Any]) -> "Summary":
        sentences = kept.get("sentences")
        if sentences is not None:
            sentences = [Sentence(s["start"], s["end"], [tuple(o) for o in s["origins"]]) for s in sentences]
        return cls(**{**kept, "sentences": sentences})


@dataclass
class DocumentSummary:
    document: Document
    method: str
    model: str
    summary: Summary
    chapters: list[tuple[str | None, Summary]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        doc = self.document
        return {
            "input": doc.name, "kind": doc.kind, "title": doc.title, "words": doc.words, "method": self.method,
            "model": self.model, "summary": self.summary.text,
            "input_tokens": self.total("input_tokens"), "encoded_tokens": self.total("encoded_tokens"),
            "dropped_tokens": self.total("dropped_tokens"),
            "route": self.summary.route, "windows": self.summary.windows, "levels": self.summary.levels,
            "chapters": [{"title": title, **s.to_dict(), **self._sentences(s)} for title, s in self.chapters],
            "book_summary": self.summary.to_dict(), "settings": self.settings, "memory_estimate": self.memory,
            "notes": doc.notes, "digest": doc.digest, **self._sentences(self.summary),
        }

    def _sentences(self, summary: Summary) -> dict[str, Any]:
        if summary.sentences is None:
            return {}
        return {"sentences": described(self.document, summary.text, summary.sentences)}

    def total(self, name: str) -> int:
        """Counts of the input itself: over the chapters when they were summarised one by one."""
        parts = [s for _, s in self.chapters] or [self.summary]
        return sum(getattr(s, name) for s in parts)


@dataclass
class Ask:
    """What the reader asked for beyond a summary: where each sentence came from."""

    sources: bool = False

    def segments(self, text: str, offset: int = 0) -> Segments | None:
        """The sentences of the document's ``text`` (from ``offset`` on) to trace to, when sources are asked."""
        return Segments.original(text, offset) if self.sources else None


class Budget:
    """Input tokens one pass may take: the model's limit and, when a memory limit is given, what fits in it.

    A model that can decode without the cross-attention cache (LOCOST) does so when the cache alone would not
    fit: a whole book then takes one pass where the cache would need tens of GB."""

    def __init__(self, summarizer, memory_limit_mb: float | None, progress: Progress | None = None):
        self.summarizer, self.memory_limit_mb, self.progress = summarizer, memory_limit_mb, progress or Progress()

    def tokens(self, wanted: int) -> tuple[int | None, str]:
        s = self.summarizer
        model_budget = getattr(s, "budget", None)
        if self.memory_limit_mb is None or s.method != "abstractive":
            return model_budget, "the model's input limit"
        top = wanted if model_budget is None else min(wanted, model_budget)
        caching = [True, False] if can_skip_cache(s) else [None]
        for cache in caching:
            needed = estimate(s, top + s.specials, cache)
            if needed.fits(self.memory_limit_mb):
                self._cache(cache, needed, top)
                return model_budget, "the model's input limit"
        cache = caching[-1]
        self._cache(cache, None, top)
        fitting = largest_fitting(s, self.memory_limit_mb, top + s.specials, cache) - s.specials
        return max(fitting, 0), f"the memory limit ({self.memory_limit_mb:,.0f} MB)"

    def _cache(self, cache: bool | None, needed, tokens: int) -> None:
        if cache is None:
            return
        if cache is False and self.summarizer.model.cross_attention_cached:
            cached = estimate(self.summarizer, tokens, True)
            self.progress.note(f"decoding without the cross-attention cache: it would take {cached.cross_cache_mb:,.0f} "
                               f"MB for {tokens:,} tokens (memory limit {self.memory_limit_mb:,.0f} MB)")
        self.summarizer.model.set_cross_attention_cache(cache)


def _bins(summarizer, text: str, segments: Segments, ids: list[int]) -> tuple[torch.Tensor, int]:
    """Each of ``ids``' tokens' sentence in ``segments`` (``ids`` may be a truncation of ``text``'s tokens)."""
    bins = segments.bins(summarizer.offsets(text))
    if len(bins) != len(ids):  # truncated: the first text tokens are kept, with the special tokens around them
        special = summarizer.tokenizer.get_special_tokens_mask
        text_bins = iter(b for b, s in zip(bins.tolist(), special(summarizer.encode(text), already_has_special_tokens=True))
                         if not s)
        bins = torch.tensor([-1 if s else next(text_bins) for s in special(ids, already_has_special_tokens=True)])
    return bins, len(segments.spans)


def _generate(summarizer, text: str, ids: list[int] | None, segments: Segments | None, progress: Progress,
              stream: bool):
    """(generated, its sentences with their sources or None): one pass over ``ids`` (``text``'s tokens)."""
    ids = summarizer.encode(text) if ids is None else ids
    if segments is None:
        return summarizer.generate(ids, progress, stream), None
    g = summarizer.generate(ids, progress, stream, _bins(summarizer, text, segments, ids))
    return g, generated_sentences(g.text, g.token_ends, g.token_mass, segments)


def summarize_text(text: str, summarizer, overflow: str = "auto", progress: Progress | None = None,
                   stream: bool = False, budget: Budget | None = None, ids: list[int] | None = None,
                   segments: Segments | None = None) -> Summary:
    """One text to one summary by ``overflow``'s route (see the module docstring). ``ids``: the text's
    tokens (``summarizer.encode``) when the caller has them already; ``segments``: the text's sentences and
    their sources, to trace each summary sentence to (None: no sources)."""
    progress = progress or Progress()
    if overflow not in OVERFLOWS:
        raise UsageError(f"unknown overflow {overflow!r}.", f"choose one of {', '.join(OVERFLOWS)}.")
    if summarizer.method == "extractive":
        picked = summarizer.summarize(text, progress, overflow)
        return Summary(picked.text, "extractive", picked.input_tokens, picked.encoded_tokens,
                       picked.input_tokens - picked.encoded_tokens, [picked.windows] if picked.windows > 1 else [],
                       seconds=picked.seconds,
                       sentences=None if segments is None else picked_sentences(picked.spans, picked.texts, segments))
    progress.stage("tokenize", None, f"{len(text):,} characters")
    ids = summarizer.encode(text) if ids is None else ids
    n = len(ids) - summarizer.specials
    allowed, why = (budget or Budget(summarizer, None)).tokens(n)
    if allowed is None or (n <= allowed and overflow != "chunk"):
        g, sentences = _generate(summarizer, text, ids, segments, progress, stream)
        return Summary(g.text, "one pass", n, n, 0, new_tokens=g.new_tokens, seconds=g.seconds, sentences=sentences)
    if allowed < 1:
        raise UsageError(f"no input fits one pass within {why}.", "raise --memory-limit, or use fewer --num-beams.")
    if overflow == "error":
        raise UsageError(f"the input is {n:,} tokens and one pass takes {allowed:,} ({why}).",
                         "pass --overflow auto (summaries of windows, then of their summaries), truncate (keep the "
                         f"first {allowed:,} tokens) or chunk (the windows' summaries joined).")
    if overflow == "truncate":
        progress.note(f"truncated to the first {allowed:,} of {n:,} tokens ({why}): {n - allowed:,} dropped")
        g, sentences = _generate(summarizer, text, summarizer.truncate(ids, allowed), segments, progress, stream)
        return Summary(g.text, "truncated", n, allowed, n - allowed, new_tokens=g.new_tokens, seconds=g.seconds,
                       sentences=sentences)
    return _hierarchical(text, n, allowed, why, summarizer, overflow, progress, stream, segments)


def _hierarchical(text, n, allowed, why, summarizer, overflow, progress, stream, segments) -> Summary:
    """Windows summarised, then their joined summaries, level by level; with ``segments``, each level's
    sentences keep the sources of the summary sentences they are."""
    level_text, level_tokens, counts, new_tokens, seconds = text, n, [], 0, 0.0
    while True:
        spans = window_spans(level_text, summarizer.count, allowed)
        counts.append(len(spans))
        progress.note(f"level {len(counts)}: {level_tokens:,} tokens in {len(spans)} windows of at most {allowed:,} "
                      f"({why})")
        summaries = []
        for i, (a, b) in enumerate(spans):
            progress.note(f"window {i + 1}/{len(spans)} of level {len(counts)}")
            part = segments.window(a, b) if segments is not None else None
            g, sentences = _generate(summarizer, level_text[a:b], None, part, progress, False)
            summaries.append((g.text, sentences or []))
            new_tokens, seconds = new_tokens + g.new_tokens, seconds + g.seconds
        joined = "\n".join(s for s, _ in summaries if s)
        level = Segments.joined(summaries, "\n") if segments is not None else None
        if overflow == "chunk":
            return Summary(joined, "chunked", n, n, 0, counts, 1, new_tokens, seconds,
                           sentences=None if level is None else [Sentence(a, b, o) for (a, b), o in
                                                                  zip(level.spans, level.origins)])
        joined_ids = summarizer.encode(joined)
        joined_tokens = len(joined_ids) - summarizer.specials
        if joined_tokens <= allowed:
            g, sentences = _generate(summarizer, joined, joined_ids, level, progress, stream)
            return Summary(g.text, "hierarchical", n, n, 0, counts, len(counts) + 1, new_tokens + g.new_tokens,
                           seconds + g.seconds, sentences=sentences)
        if joined_tokens >= level_tokens:
            raise LsgtoolError(f"the window summaries ({joined_tokens:,} tokens) are no shorter than their input "
                               f"({level_tokens:,}): the hierarchy would not end.",
                               "lower --max-new-tokens, or use a model that takes longer inputs.")
        level_text, level_tokens, segments = joined, joined_tokens, level


def summarize_document(doc: Document, summarizer, overflow: str = "auto", per_chapter: bool = False,
                       progress: Progress | None = None, stream: bool = False,
                       memory_limit_mb: float | None = None, ids: list[int] | None = None,
                       chapters=None, ask: Ask | None = None) -> DocumentSummary:
    """Summarise a document; with ``per_chapter`` each chapter, then the book from the chapters' summaries.
    ``ids``: the document's tokens when the caller has them already (read once, tokenised once).
    ``chapters``: where finished chapter summaries are kept (``get(i)`` / ``put(i, summary)``), so an
    interrupted run goes on from the first unfinished chapter. ``ask``: sources (and more) asked for."""
    progress = progress or Progress()
    ask = ask or Ask()
    budget = Budget(summarizer, memory_limit_mb, progress)
    result = _empty(doc, summarizer, overflow, per_chapter)
    if per_chapter and len(doc.chapters) > 1:
        for i, chapter in enumerate(doc.chapters):
            kept = chapters.get(i) if chapters is not None else None
            if kept is not None:
                result.chapters.append((chapter.title, Summary.from_store(kept)))
                continue
            progress.note(f"chapter {i + 1}/{len(doc.chapters)}: {chapter.title or '(untitled)'}")
            summary = summarize_text(chapter.text, summarizer, overflow, progress, budget=budget,
                                     segments=ask.segments(chapter.text, chapter.start))
            if chapters is not None:
                chapters.put(i, summary.to_store())
            result.chapters.append((chapter.title, summary))
        if chapters is not None and chapters.kept:
            doc.notes.append(f"{chapters.kept} of {len(doc.chapters)} chapter summaries were kept from an "
                             "interrupted run")
        progress.note("the book, from its chapters' summaries")
        parts = [(s.text, s.sentences or []) for _, s in result.chapters]
        joined = "\n\n".join(text for text, _ in parts if text)
        result.summary = summarize_text(joined, summarizer, overflow, progress, stream, budget,
                                        segments=Segments.joined(parts, "\n\n") if ask.sources else None)
    else:
        if per_chapter:
            doc.notes.append("--per-chapter: no chapters were found (no EPUB spine, headings or 'Chapter N' lines), "
                             "so the whole text has one summary")
            progress.note(doc.notes[-1])
        result.summary = summarize_text(doc.text, summarizer, overflow, progress, stream, budget, ids,
                                        ask.segments(doc.text))
    return _with_memory(result, summarizer)


def _empty(doc: Document, summarizer, overflow: str, per_chapter: bool) -> DocumentSummary:
    settings = summarizer.generation.to_dict() if summarizer.generation else dict(summarizer.settings)
    return DocumentSummary(doc, summarizer.method, summarizer.name, Summary("", "", 0, 0, 0),
                           settings={**settings, "overflow": overflow, "per_chapter": per_chapter})


def _with_memory(result: DocumentSummary, summarizer) -> DocumentSummary:
    """The finished result with its memory estimate, and a note when the summary may be as long as the text."""
    if summarizer.generation:
        given = summarizer.generation.sources.get("max_new_tokens", "").startswith("flag")
        wanted = summarizer.generation.values["max_new_tokens"]
    else:
        given, wanted = summarizer.budget_given, summarizer.budget
    read = result.total("input_tokens")
    if given and read and wanted >= read:
        result.document.notes.append(f"--max-new-tokens {wanted:,} is not below the input's {read:,} tokens: the "
                                     "summary may be as long as the text (a shorter budget summarises)")
    if summarizer.method == "abstractive":
        result.memory = estimate(summarizer, min(result.total("encoded_tokens"), summarizer.limit or 10**12)).to_dict()
        result.memory["cross_attention_cache"] = getattr(summarizer.model, "cross_attention_cached", True)
    return result


def batch_tokens(doc: Document, summarizer, overflow: str, per_chapter: bool) -> tuple[list[int] | None, bool]:
    """(the document's tokens, whether one padded pass may take it with others), before any generation: the one
    tokenisation of its text, which ``summarize_documents`` then generates from. No tokens where the text is not
    what is generated (extractive; chapters summarised one by one)."""
    if summarizer.method != "abstractive" or (per_chapter and len(doc.chapters) > 1):
        return None, False
    ids = summarizer.encode(doc.text)
    return ids, _together(summarizer, overflow, len(ids) - summarizer.specials)


def _together(summarizer, overflow: str, tokens: int) -> bool:
    return overflow != "chunk" and (summarizer.budget is None or tokens <= summarizer.budget)


def summarize_documents(docs: list[Document], summarizer, overflow: str = "auto", per_chapter: bool = False,
                        progress: Progress | None = None, memory_limit_mb: float | None = None,
                        chapters: list | None = None, encoded: list | None = None,
                        padding=None, ask: Ask | None = None) -> list[DocumentSummary]:
    """Several documents: those that one pass reads are generated together in one padded batch (when the
    estimate for the batch fits), the others one by one as ``summarize_document`` does (``chapters``: each
    document's store of finished chapters; ``encoded``: their tokens when the caller has them, from
    ``batch_tokens``; ``padding``: where the batch's padding is counted, ``add(generated rows)``)."""
    progress = progress or Progress()
    ask = ask or Ask()
    chapters = chapters or [None] * len(docs)
    encoded = encoded or [None] * len(docs)
    if len(docs) < 2 or summarizer.method != "abstractive" or (per_chapter and any(len(d.chapters) > 1 for d in docs)):
        return [summarize_document(d, summarizer, overflow, per_chapter, progress, False, memory_limit_mb, ids, store,
                                   ask) for d, store, ids in zip(docs, chapters, encoded)]
    encoded = [summarizer.encode(d.text) if ids is None else ids for d, ids in zip(docs, encoded)]  # tokenised once
    counts = [len(ids) - summarizer.specials for ids in encoded]
    together = [i for i, n in enumerate(counts) if _together(summarizer, overflow, n)]
    width = max((len(encoded[i]) for i in together), default=0)
    if memory_limit_mb is not None and not estimate(summarizer, width * len(together)).fits(memory_limit_mb):
        together = []  # the batch does not fit: one by one, each with its own memory budget
    results: dict[int, DocumentSummary] = {}
    if len(together) > 1:
        segments = [ask.segments(docs[i].text) for i in together]
        bins = [_bins(summarizer, docs[i].text, seg, encoded[i]) for i, seg in zip(together, segments)] \
            if ask.sources else None
        generated = summarizer.generate_batch([encoded[i] for i in together], progress, bins=bins)
        if padding is not None:
            padding.add(generated)
        for i, g, seg in zip(together, generated, segments):
            result = _empty(docs[i], summarizer, overflow, per_chapter)
            result.summary = Summary(g.text, "one pass", counts[i], counts[i], 0, new_tokens=g.new_tokens,
                                     seconds=g.seconds, sentences=None if seg is None else
                                     generated_sentences(g.text, g.token_ends, g.token_mass, seg))
            results[i] = _with_memory(result, summarizer)
    for i, doc in enumerate(docs):
        if i not in results:
            results[i] = summarize_document(doc, summarizer, overflow, per_chapter, progress, False, memory_limit_mb,
                                            encoded[i], chapters[i], ask)
    return [results[i] for i in range(len(docs))]
