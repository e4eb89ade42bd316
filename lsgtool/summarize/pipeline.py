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

from lsgtool.core.errors import LsgtoolError, UsageError
from lsgtool.documents import Document
from lsgtool.summarize.memory import can_skip_cache, estimate, largest_fitting
from lsgtool.progress import Progress
from lsgtool.summarize.windows import windows

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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
            "chapters": [{"title": title, **s.to_dict()} for title, s in self.chapters],
            "book_summary": self.summary.to_dict(), "settings": self.settings, "memory_estimate": self.memory,
            "notes": doc.notes, "digest": doc.digest,
        }

    def total(self, name: str) -> int:
        """Counts of the input itself: over the chapters when they were summarised one by one."""
        parts = [s for _, s in self.chapters] or [self.summary]
        return sum(getattr(s, name) for s in parts)


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


def _one_pass(summarizer, text: str, progress: Progress, stream: bool):
    return summarizer.generate(summarizer.encode(text), progress, stream)


def summarize_text(text: str, summarizer, overflow: str = "auto", progress: Progress | None = None,
                   stream: bool = False, budget: Budget | None = None, ids: list[int] | None = None) -> Summary:
    """One text to one summary by ``overflow``'s route (see the module docstring). ``ids``: the text's
    tokens (``summarizer.encode``) when the caller has them already."""
    progress = progress or Progress()
    if overflow not in OVERFLOWS:
        raise UsageError(f"unknown overflow {overflow!r}.", f"choose one of {', '.join(OVERFLOWS)}.")
    if summarizer.method == "extractive":
        picked = summarizer.summarize(text, progress, overflow)
        return Summary(picked.text, "extractive", picked.input_tokens, picked.encoded_tokens,
                       picked.input_tokens - picked.encoded_tokens, [picked.windows] if picked.windows > 1 else [],
                       seconds=picked.seconds)
    progress.stage("tokenize", None, f"{len(text):,} characters")
    ids = summarizer.encode(text) if ids is None else ids
    n = len(ids) - summarizer.specials
    allowed, why = (budget or Budget(summarizer, None)).tokens(n)
    if allowed is None or (n <= allowed and overflow != "chunk"):
        g = summarizer.generate(ids, progress, stream)
        return Summary(g.text, "one pass", n, n, 0, new_tokens=g.new_tokens, seconds=g.seconds)
    if allowed < 1:
        raise UsageError(f"no input fits one pass within {why}.", "raise --memory-limit, or use fewer --num-beams.")
    if overflow == "error":
        raise UsageError(f"the input is {n:,} tokens and one pass takes {allowed:,} ({why}).",
                         "pass --overflow auto (summaries of windows, then of their summaries), truncate (keep the "
                         f"first {allowed:,} tokens) or chunk (the windows' summaries joined).")
    if overflow == "truncate":
        progress.note(f"truncated to the first {allowed:,} of {n:,} tokens ({why}): {n - allowed:,} dropped")
        g = summarizer.generate(summarizer.truncate(ids, allowed), progress, stream)
        return Summary(g.text, "truncated", n, allowed, n - allowed, new_tokens=g.new_tokens, seconds=g.seconds)
    return _hierarchical(text, n, allowed, why, summarizer, overflow, progress, stream)


def _hierarchical(text, n, allowed, why, summarizer, overflow, progress, stream) -> Summary:
    level_text, level_tokens, counts, new_tokens, seconds = text, n, [], 0, 0.0
    while True:
        parts = windows(level_text, summarizer.count, allowed)
        counts.append(len(parts))
        progress.note(f"level {len(counts)}: {level_tokens:,} tokens in {len(parts)} windows of at most {allowed:,} "
                      f"({why})")
        summaries = []
        for i, part in enumerate(parts):
            progress.note(f"window {i + 1}/{len(parts)} of level {len(counts)}")
            g = _one_pass(summarizer, part, progress, False)
            summaries.append(g.text)
            new_tokens, seconds = new_tokens + g.new_tokens, seconds + g.seconds
        joined = "\n".join(s for s in summaries if s)
        if overflow == "chunk":
            return Summary(joined, "chunked", n, n, 0, counts, 1, new_tokens, seconds)
        joined_ids = summarizer.encode(joined)
        joined_tokens = len(joined_ids) - summarizer.specials
        if joined_tokens <= allowed:
            g = summarizer.generate(joined_ids, progress, stream)
            return Summary(g.text, "hierarchical", n, n, 0, counts, len(counts) + 1, new_tokens + g.new_tokens,
                           seconds + g.seconds)
        if joined_tokens >= level_tokens:
            raise LsgtoolError(f"the window summaries ({joined_tokens:,} tokens) are no shorter than their input "
                               f"({level_tokens:,}): the hierarchy would not end.",
                               "lower --max-new-tokens, or use a model that takes longer inputs.")
        level_text, level_tokens = joined, joined_tokens


def summarize_document(doc: Document, summarizer, overflow: str = "auto", per_chapter: bool = False,
                       progress: Progress | None = None, stream: bool = False,
                       memory_limit_mb: float | None = None, ids: list[int] | None = None,
                       chapters=None) -> DocumentSummary:
    """Summarise a document; with ``per_chapter`` each chapter, then the book from the chapters' summaries.
    ``ids``: the document's tokens when the caller has them already (read once, tokenised once).
    ``chapters``: where finished chapter summaries are kept (``get(i)`` / ``put(i, summary)``), so an
    interrupted run goes on from the first unfinished chapter."""
    progress = progress or Progress()
    budget = Budget(summarizer, memory_limit_mb, progress)
    result = _empty(doc, summarizer, overflow, per_chapter)
    if per_chapter and len(doc.chapters) > 1:
        for i, chapter in enumerate(doc.chapters):
            kept = chapters.get(i) if chapters is not None else None
            if kept is not None:
                result.chapters.append((chapter.title, Summary(**kept)))
                continue
            progress.note(f"chapter {i + 1}/{len(doc.chapters)}: {chapter.title or '(untitled)'}")
            summary = summarize_text(chapter.text, summarizer, overflow, progress, budget=budget)
            if chapters is not None:
                chapters.put(i, summary.to_dict())
            result.chapters.append((chapter.title, summary))
        if chapters is not None and chapters.kept:
            doc.notes.append(f"{chapters.kept} of {len(doc.chapters)} chapter summaries were kept from an "
                             "interrupted run")
        progress.note("the book, from its chapters' summaries")
        joined = "\n\n".join(s.text for _, s in result.chapters if s.text)
        result.summary = summarize_text(joined, summarizer, overflow, progress, stream, budget)
    else:
        if per_chapter:
            doc.notes.append("--per-chapter: no chapters were found (no EPUB spine, headings or 'Chapter N' lines), "
                             "so the whole text has one summary")
            progress.note(doc.notes[-1])
        result.summary = summarize_text(doc.text, summarizer, overflow, progress, stream, budget, ids)
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
                        padding=None) -> list[DocumentSummary]:
    """Several documents: those that one pass reads are generated together in one padded batch (when the
    estimate for the batch fits), the others one by one as ``summarize_document`` does (``chapters``: each
    document's store of finished chapters; ``encoded``: their tokens when the caller has them, from
    ``batch_tokens``; ``padding``: where the batch's padding is counted, ``add(generated rows)``)."""
    progress = progress or Progress()
    chapters = chapters or [None] * len(docs)
    encoded = encoded or [None] * len(docs)
    if len(docs) < 2 or summarizer.method != "abstractive" or (per_chapter and any(len(d.chapters) > 1 for d in docs)):
        return [summarize_document(d, summarizer, overflow, per_chapter, progress, False, memory_limit_mb, ids, store)
                for d, store, ids in zip(docs, chapters, encoded)]
    encoded = [summarizer.encode(d.text) if ids is None else ids for d, ids in zip(docs, encoded)]  # tokenised once
    counts = [len(ids) - summarizer.specials for ids in encoded]
    together = [i for i, n in enumerate(counts) if _together(summarizer, overflow, n)]
    width = max((len(encoded[i]) for i in together), default=0)
    if memory_limit_mb is not None and not estimate(summarizer, width * len(together)).fits(memory_limit_mb):
        together = []  # the batch does not fit: one by one, each with its own memory budget
    results: dict[int, DocumentSummary] = {}
    if len(together) > 1:
        generated = summarizer.generate_batch([encoded[i] for i in together], progress)
        if padding is not None:
            padding.add(generated)
        for i, g in zip(together, generated):
            result = _empty(docs[i], summarizer, overflow, per_chapter)
            result.summary = Summary(g.text, "one pass", counts[i], counts[i], 0, new_tokens=g.new_tokens,
                                     seconds=g.seconds)
            results[i] = _with_memory(result, summarizer)
    for i, doc in enumerate(docs):
        if i not in results:
            results[i] = summarize_document(doc, summarizer, overflow, per_chapter, progress, False, memory_limit_mb,
                                            encoded[i], chapters[i])
    return [results[i] for i in range(len(docs))]
