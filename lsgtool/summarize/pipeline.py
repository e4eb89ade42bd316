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
from lsgtool.core.ssm.decoding import faster_without_cache
from lsgtool.documents import Document
from lsgtool.documents.prose import back_chapter
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
    length: dict[str, Any] | None = None  # with --length / --sentences: the budget used (tokens and words)
    focus: dict[str, Any] | None = None  # with --focus: the relevance found, and the windows read (abstractive)
    notes: list[str] = field(default_factory=list)  # what could not be done as asked while summarising it

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
        kept = {k: v for k, v in kept.items() if k in cls.__dataclass_fields__}
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
    ranking: list[int] | None = None  # with a focus: chapter indices in the order ``chapters`` holds them
    indices: list[int] | None = None  # without one, when chapters were left out: the index of each ``chapters`` holds
    chapter_scores: list[float] | None = None  # with a focus: each chapter's relevance, in document order
    focus: dict[str, Any] | None = None  # the question and how it was used

    def to_dict(self) -> dict[str, Any]:
        doc = self.document
        return {
            "input": doc.name, "kind": doc.kind, "reading": doc.reading, "title": doc.title, "words": doc.words,
            "method": self.method, "model": self.model, "summary": self.summary.text,
            "input_tokens": self.total("input_tokens"), "encoded_tokens": self.total("encoded_tokens"),
            "dropped_tokens": self.total("dropped_tokens"),
            "route": self.summary.route, "windows": self.summary.windows, "levels": self.summary.levels,
            "chapters": [{"title": title, **s.to_dict(), **self._sentences(s), **self._rank(i)}
                         for i, (title, s) in enumerate(self.chapters)],
            "book_summary": self.summary.to_dict(), "settings": self.settings, "memory_estimate": self.memory,
            "notes": doc.notes, "digest": doc.digest, **self._sentences(self.summary),
            **({"focus": self._focus()} if self.focus else {}),
            **({"length": self.summary.length} if self.summary.length else {}),
        }

    def _focus(self) -> dict[str, Any]:
        """The question, and how it was used: the windows read of the text (abstractive) and the relevance found
        in it; a book's summary, written from its chapters' summaries, shows its own under ``book_summary``."""
        return {**((self.summary.focus or {}) if not self.chapters else {}), **self.focus}

    def _rank(self, position: int) -> dict[str, Any]:
        if self.ranking is None:  # the document's own chapter number, where one was left out before it
            return {} if self.indices is None else {"index": self.indices[position]}
        index = self.ranking[position]
        return {"index": index, "rank": position + 1, "focus_score": round(self.chapter_scores[index], 4)}

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
    """What the reader asked for beyond a summary: where each sentence came from (``sources``), a question to
    focus on (``focus``, a ``focus.Relevance``), a length (``length``, a ``length.Length``)."""

    sources: bool = False
    focus: Any = None
    length: Any = None

    def segments(self, text: str, offset: int = 0) -> Segments | None:
        """The sentences of the document's ``text`` (from ``offset`` on) to trace to, when sources are asked."""
        return Segments.original(text, offset) if self.sources else None

    def budget(self, summarizer, text: str, reference: tuple[int, int] | None = None, tokens: int | None = None):
        """The asked length for ``text`` as a ``length.Budget`` (None: the model's or --max-new-tokens);
        ``reference``: (tokens, words) the length is a share of, when that is not ``text`` (a book's chapters)."""
        if self.length is None:
            return None
        from lsgtool.documents.sentences import sentence_spans

        if reference is None or self.length.sentences:  # sentences: the text's own sentence length
            reference = (summarizer.count([text])[0] if tokens is None else tokens, len(text.split()))
        sentences = sum(1 for _ in sentence_spans(text)) if self.length.sentences else 0
        return self.length.budget(*reference, sentences).capped(getattr(summarizer, "longest", None))


class PassLimit:
    """Input tokens one pass may take: the model's limit and, when a memory limit is given, what fits in it.

    A model that can decode without the cross-attention cache (LOCOST) does so when the cache alone would not
    fit: a whole book then takes one pass where the cache would need tens of GB; and where it is faster so
    (``decoding.faster_without_cache``: on a CPU from 32K tokens), whatever fits."""

    def __init__(self, summarizer, memory_limit_mb: float | None, progress: Progress | None = None):
        self.summarizer, self.memory_limit_mb, self.progress = summarizer, memory_limit_mb, progress or Progress()

    def tokens(self, wanted: int) -> tuple[int | None, str]:
        s = self.summarizer
        model_budget = getattr(s, "pass_tokens", None)  # extractive: None, any length is read in windows
        if self.memory_limit_mb is None or s.method != "abstractive":
            return model_budget, "the model's input limit"
        top = wanted if model_budget is None else min(wanted, model_budget)
        caching = [True, False] if can_skip_cache(s) else [None]
        faster = bool(caching[0]) and faster_without_cache(s.device.type, top + s.specials)
        if faster:
            caching = [False]
        for cache in caching:
            needed = estimate(s, top + s.specials, cache)
            if needed.fits(self.memory_limit_mb):
                self._cache(cache, top, faster)
                return model_budget, "the model's input limit"
        cache = caching[-1]
        self._cache(cache, top, faster)
        fitting = largest_fitting(s, self.memory_limit_mb, top + s.specials, cache) - s.specials
        return max(fitting, 0), f"the memory limit ({self.memory_limit_mb:,.0f} MB)"

    def _cache(self, cache: bool | None, tokens: int, faster: bool) -> None:
        """The cache set as chosen; ``faster``: skipped because reading the encoder output is faster here."""
        if cache is None:
            return
        if cache is False and self.summarizer.model.cross_attention_cached and faster:
            self.progress.note(f"decoding without the cross-attention cache: faster on this CPU for {tokens:,} tokens")
        elif cache is False and self.summarizer.model.cross_attention_cached:
            cached = estimate(self.summarizer, tokens, True)
            self.progress.note(f"decoding without the cross-attention cache: it would take {cached.cross_cache_mb:,.0f} "
                               f"MB for {tokens:,} tokens (memory limit {self.memory_limit_mb:,.0f} MB)")
        self.summarizer.model.set_cross_attention_cache(cache)


def _bins(summarizer, text: str, segments: Segments, ids: list[int]) -> tuple[torch.Tensor, int]:
    """Each of ``ids``' tokens' sentence in ``segments`` (``ids`` may be a truncation of ``text``'s tokens)."""
    bins = segments.bins(summarizer.offsets(text))
    if len(bins) != len(ids):  # truncated (``truncate_ids``): the text's first tokens, then its closing specials
        mask = summarizer.tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
        tail = next((i for i, special in enumerate(reversed(mask)) if not special), len(mask))
        bins = torch.cat([bins[:len(ids) - tail], bins[len(bins) - tail:]])
    return bins, len(segments.spans)


def _generate(summarizer, text: str, ids: list[int] | None, segments: Segments | None, progress: Progress,
              stream: bool, length=None):
    """(generated, its sentences with their sources or None): one pass over ``ids`` (``text``'s tokens)."""
    ids = summarizer.encode(text) if ids is None else ids
    if segments is None:
        return summarizer.generate(ids, progress, stream, length=length), None
    g = summarizer.generate(ids, progress, stream, _bins(summarizer, text, segments, ids), length)
    return g, generated_sentences(g.text, g.token_ends, g.token_mass, segments)


SHORT_TEXT_SHARE = 3  # with no length asked, a text under this many default budgets is summarised in this share


def _short_default(summarizer, text: str):
    """The default budget of a text shorter than ``SHORT_TEXT_SHARE`` default budgets, when no length was asked:
    a ``1/SHORT_TEXT_SHARE`` of it, so that a short text's summary is not the text, but never less than its longest
    sentence, which a budget less than it would cut, unasked, into a piece (None: the default as it is)."""
    from lsgtool.summarize.extractive import prose_units
    from lsgtool.summarize.length import Budget

    words = len(text.split())
    if getattr(summarizer, "budget_given", True) or words > SHORT_TEXT_SHARE * summarizer.budget:  # tokens >= words
        return None
    tokens = summarizer.count([text])[0]
    if tokens >= SHORT_TEXT_SHARE * summarizer.budget:
        return None
    units = [" ".join(text[a:b].split()) for a, b in prose_units(text)]
    longest = (max(summarizer.count(units)), max(len(u.split()) for u in units)) if units else (1, 1)
    return Budget(f"the default budget: 1/{SHORT_TEXT_SHARE} of a short text",
                  max(1, tokens // SHORT_TEXT_SHARE, longest[0]), max(1, words // SHORT_TEXT_SHARE, longest[1]))


def _extractive(text: str, summarizer, overflow: str, progress: Progress, segments: Segments | None, ask: Ask,
                reference: tuple[int, int] | None, apart: bool = False, transcript: bool | None = None) -> Summary:
    length = ask.budget(summarizer, text, reference) or _short_default(summarizer, text)
    query, question = (ask.focus.query, ask.focus.question) if ask.focus is not None else (None, None)
    budget = None if length is None or length.sentences else length.tokens
    units = segments.spans if apart and segments is not None else None  # the summaries' own picks
    picked = summarizer.summarize(text, progress, overflow, budget, length.sentences if length else None, query, apart,
                                  units, transcript, question, length.words if budget else None)
    return Summary(picked.text, "extractive", picked.input_tokens, picked.encoded_tokens,
                   picked.input_tokens - picked.encoded_tokens, [picked.windows] if picked.windows > 1 else [],
                   seconds=picked.seconds, length=length and length.to_dict(),
                   sentences=None if segments is None else
                   picked_sentences(picked.spans, picked.texts, picked.starts, segments),
                   focus=None if picked.relevance is None else {"relevance": round(picked.relevance, 4)})


@dataclass
class Passage:
    """A text to summarise and what is known of it: ``ids``, its tokens (``summarizer.encode``) when the caller
    has them already; ``segments``, its sentences and their sources, to trace each summary sentence to (None: no
    sources); ``reference``, (tokens, words) a length share is of, when not of the text; ``offset``, where it
    begins in the document's text (the focus reports the windows it read there); ``apart``, its paragraphs are
    separate summaries (a book's chapters'), each read on its own by the sentence encoder; ``transcript``: read as
    a transcript (True) or prose (False), None: detected (``documents.prose.reading``)."""

    text: str
    ids: list[int] | None = None
    segments: Segments | None = None
    reference: tuple[int, int] | None = None
    offset: int = 0
    apart: bool = False
    transcript: bool | None = None


def summarize_text(passage: Passage | str, summarizer, overflow: str = "auto", progress: Progress | None = None,
                   stream: bool = False, budget: PassLimit | None = None, ask: Ask | None = None) -> Summary:
    """One text (a ``Passage``, or a plain string) to one summary by ``overflow``'s route (see the module
    docstring); ``budget``: the input tokens one pass may take; ``ask``: a focus and a length."""
    passage = Passage(passage) if isinstance(passage, str) else passage
    text, ids, segments, reference = passage.text, passage.ids, passage.segments, passage.reference
    offset, apart = passage.offset, passage.apart
    progress = progress or Progress()
    ask = ask or Ask()
    if overflow not in OVERFLOWS:
        raise UsageError(f"unknown overflow {overflow!r}.", f"choose one of {', '.join(OVERFLOWS)}.")
    if summarizer.method == "extractive":
        return _extractive(text, summarizer, overflow, progress, segments, ask, reference, apart, passage.transcript)
    progress.stage("tokenize", None, f"{len(text):,} characters")
    ids = summarizer.encode(text) if ids is None else ids
    n = len(ids) - summarizer.specials
    length = ask.budget(summarizer, text, reference, n)
    allowed, why = (budget or PassLimit(summarizer, None)).tokens(n)
    if ask.focus is not None:
        return _focused(text, n, allowed, summarizer, segments, ask.focus, length, progress, stream, offset, apart)
    if allowed is None or (n <= allowed and overflow != "chunk"):
        g, sentences = _generate(summarizer, text, ids, segments, progress, stream, length)
        return Summary(g.text, "one pass", n, n, 0, new_tokens=g.new_tokens, seconds=g.seconds, sentences=sentences,
                       length=length and length.to_dict())
    if allowed < 1:
        raise UsageError(f"no input fits one pass within {why}.", "raise --memory-limit, or use fewer --num-beams.")
    if overflow == "error":
        raise UsageError(f"the input is {n:,} tokens and one pass takes {allowed:,} ({why}).",
                         "pass --overflow auto (summaries of windows, then of their summaries), truncate (keep the "
                         f"first {allowed:,} tokens) or chunk (the windows' summaries joined).")
    if overflow == "truncate":
        progress.note(f"truncated to the first {allowed:,} of {n:,} tokens ({why}): {n - allowed:,} dropped")
        g, sentences = _generate(summarizer, text, summarizer.truncate(ids, allowed), segments, progress, stream,
                                 length)
        return Summary(g.text, "truncated", n, allowed, n - allowed, new_tokens=g.new_tokens, seconds=g.seconds,
                       sentences=sentences, length=length and length.to_dict())
    summary = _hierarchical(text, n, allowed, why, summarizer, overflow, progress, stream, segments, length)
    summary.length = length and length.to_dict()
    return summary


def _focused(text, n, allowed, summarizer, segments, relevance, length, progress, stream, offset=0,
             apart=False) -> Summary:
    """The windows most relevant to the question, most relevant first, in one pass (``focus``)."""
    from lsgtool.summarize.focus import FOCUS_TOKENS, choose

    room = FOCUS_TOKENS if allowed is None else allowed
    if room < 1:
        raise UsageError("no input fits one pass within the memory limit.", "raise --memory-limit.")
    choice = choose(text, relevance, summarizer.count, room, progress, offset, apart)
    progress.note(f"focus: {len(choice.chosen)} of {choice.windows} windows read ({choice.tokens:,} of {n:,} tokens)")
    pieces = [text[w.start:w.end] for w in choice.chosen]
    focused = "\n\n".join(pieces)
    if segments is not None:
        segments = Segments.joined([(piece, part.sentences())
                                    for piece, part in zip(pieces, (segments.window(w.start, w.end)
                                                                    for w in choice.chosen))], "\n\n")
    g, sentences = _generate(summarizer, focused, None, segments, progress, stream, length)
    return Summary(g.text, "focused", n, choice.tokens, max(n - choice.tokens, 0), new_tokens=g.new_tokens,
                   seconds=g.seconds, sentences=sentences, length=length and length.to_dict(),
                   focus=choice.to_dict(offset))


def _hierarchical(text, n, allowed, why, summarizer, overflow, progress, stream, segments, length=None) -> Summary:
    """Windows summarised, then their joined summaries, level by level; with ``segments``, each level's
    sentences keep the sources of the summary sentences they are. Each window's summary is at most half the window
    (``length.Budget.window``), so every level is shorter than the one before and the hierarchy ends; should the
    summaries read back longer than they were written (bytes that decode to U+FFFD), each is cut to its budget and
    a note says so."""
    level_text, level_tokens, counts, new_tokens, seconds, cuts = text, n, [], 0, 0.0, 0
    while True:
        spans = window_spans(level_text, summarizer.count, allowed)
        counts.append(len(spans))
        progress.note(f"level {len(counts)}: {level_tokens:,} tokens in {len(spans)} windows of at most {allowed:,} "
                      f"({why})")
        summaries, budgets, generated, spent = _level(summarizer, level_text, spans, segments, progress, len(counts),
                                                      overflow != "chunk")
        new_tokens, seconds = new_tokens + generated, seconds + spent
        joined, level = _joined(summaries, segments)
        if overflow == "chunk":  # the asked length is not split over the windows: each has the model's budget
            return Summary(joined, "chunked", n, n, 0, counts, 1, new_tokens, seconds,
                           sentences=None if level is None else level.sentences())
        joined_ids = summarizer.encode(joined)
        joined_tokens = len(joined_ids) - summarizer.specials
        if joined_tokens > allowed and joined_tokens >= level_tokens:
            summaries, cut = _cut(summarizer, summaries, budgets)
            cuts += cut
            joined, level = _joined(summaries, segments)
            joined_ids = summarizer.encode(joined)
            joined_tokens = len(joined_ids) - summarizer.specials
        if joined_tokens <= allowed:
            g, sentences = _generate(summarizer, joined, joined_ids, level, progress, stream, length)
            notes = [f"{cuts:,} of {sum(counts):,} window summaries re-tokenised to more tokens than were generated "
                     "(bytes that do not decode) and were cut to their budget, so the hierarchy ends"] if cuts else []
            for note in notes:
                progress.note(note)
            return Summary(g.text, "hierarchical", n, n, 0, counts, len(counts) + 1, new_tokens + g.new_tokens,
                           seconds + g.seconds, sentences=sentences, notes=notes)
        if joined_tokens >= level_tokens:
            raise LsgtoolError(f"the window summaries ({joined_tokens:,} tokens) are no shorter than their input "
                               f"({level_tokens:,}): the hierarchy would not end.",
                               "use a model that takes longer inputs, or pass --overflow truncate (the first "
                               f"{allowed:,} tokens, the rest reported as dropped).")
        level_text, level_tokens, segments = joined, joined_tokens, level


def _level(summarizer, text: str, spans, segments, progress: Progress, depth: int, halve: bool = True):
    """(each window's summary and sentences, each one's budget, new tokens, seconds): the windows of one level of a
    hierarchy summarised, each in at most half its tokens (``halve``; else the model's budget)."""
    from lsgtool.summarize.length import Budget

    most = summarizer.generation.values["max_new_tokens"]
    summaries, budgets, new_tokens, seconds = [], [], 0, 0.0
    for i, (a, b) in enumerate(spans):
        progress.note(f"window {i + 1}/{len(spans)} of level {depth}")
        part = segments.window(a, b) if segments is not None else None
        ids = summarizer.encode(text[a:b])
        budget = Budget.window(len(ids) - summarizer.specials, most) if halve else None
        g, sentences = _generate(summarizer, text[a:b], ids, part, progress, False, budget)
        summaries.append((g.text, sentences or []))
        budgets.append(budget.tokens if budget else most)
        new_tokens, seconds = new_tokens + g.new_tokens, seconds + g.seconds
    return summaries, budgets, new_tokens, seconds


def _joined(summaries, segments: Segments | None) -> tuple[str, Segments | None]:
    """The window summaries as the next level reads them (and their sentences, with sources)."""
    return "\n".join(s for s, _ in summaries if s), Segments.joined(summaries, "\n") if segments is not None else None


def _cut(summarizer, summaries, budgets: list[int]):
    """(the summaries each cut to its budget's tokens at a word boundary, how many were cut)."""
    from lsgtool.summarize.windows import token_runs

    out, cut = [], 0
    for (text, sentences), most in zip(summaries, budgets):
        if not text or summarizer.count([text])[0] <= most:
            out.append((text, sentences))
            continue
        end = token_runs(text, 0, len(text), summarizer.count, most)[0][1]
        out.append((text[:end], [Sentence(s.start, min(s.end, end), s.origins) for s in sentences if s.start < end]))
        cut += 1
    return out, cut


def summarize_document(doc: Document, summarizer, overflow: str = "auto", per_chapter: bool = False,
                       progress: Progress | None = None, stream: bool = False,
                       memory_limit_mb: float | None = None, ids: list[int] | None = None,
                       chapters=None, ask: Ask | None = None) -> DocumentSummary:
    """Summarise a document; with ``per_chapter`` each chapter (not those of back matter: references, exercises,
    further reading), then the book from the chapters' summaries.
    ``ids``: the document's tokens when the caller has them already (read once, tokenised once).
    ``chapters``: where finished chapter summaries are kept (``get(i)`` / ``put(i, summary)``), so an
    interrupted run goes on from the first unfinished chapter. ``ask``: sources (and more) asked for."""
    progress = progress or Progress()
    ask = ask or Ask()
    budget = PassLimit(summarizer, memory_limit_mb, progress)
    result = _empty(doc, summarizer, overflow, per_chapter)
    transcript = doc.reading != "prose"  # read once for the document: its chapters are read the same way
    if ask.focus is not None:
        from lsgtool.summarize.focus import GENERAL_WEIGHT, QUESTION_WORDS

        blend = {"document": GENERAL_WEIGHT, "question_words": QUESTION_WORDS}
        result.focus = {"question": ask.focus.question, "encoder": ask.focus.encoder.name,
                        **({"weights": blend} if summarizer.method == "extractive" else {})}
    if per_chapter and len(doc.chapters) > 1:
        if ask.focus is not None:  # first: the chapters' windows are then scored from the document's sentences
            result.ranking, result.chapter_scores, best = _rank(doc, ask.focus, progress)
            result.focus["relevance"] = round(best, 4)
        back = {i for i, chapter in enumerate(doc.chapters)
                if back_chapter(chapter.title, closing=2 * (i + 1) > len(doc.chapters))}  # (in its second half)
        back = back if len(back) < len(doc.chapters) else set()  # all of them: summarised as they are
        for i, chapter in enumerate(doc.chapters):
            if i in back:
                continue
            kept = chapters.get(i) if chapters is not None else None
            if kept is not None:
                result.chapters.append((chapter.title, Summary.from_store(kept)))
                continue
            progress.note(f"chapter {i + 1}/{len(doc.chapters)}: {chapter.title or '(untitled)'}")
            passage = Passage(chapter.text, segments=ask.segments(chapter.text, chapter.start), offset=chapter.start,
                              transcript=transcript)
            summary = summarize_text(passage, summarizer, overflow, progress, budget=budget, ask=ask)
            if chapters is not None:
                chapters.put(i, summary.to_store())
            result.chapters.append((chapter.title, summary))
        if chapters is not None and chapters.kept:
            doc.notes.append(f"{chapters.kept} of {len(doc.chapters)} chapter summaries were kept from an "
                             "interrupted run")
        if back:
            doc.notes.append(f"--per-chapter: {len(back)} chapter(s) of back matter not summarised: "
                             + ", ".join(repr(doc.chapters[i].title) for i in sorted(back)))
            progress.note(doc.notes[-1])
        progress.note("the book, from its chapters' summaries")
        summarised = [i for i in range(len(doc.chapters)) if i not in back]
        result.indices = summarised if back else None
        if result.ranking is not None:
            position = {i: k for k, i in enumerate(summarised)}
            result.ranking = [i for i in result.ranking if i not in back]
            result.chapters = [result.chapters[position[i]] for i in result.ranking]
        parts = [(s.text, s.sentences or []) for _, s in result.chapters]
        joined = "\n\n".join(text for text, _ in parts if text)
        passage = Passage(joined, segments=Segments.joined(parts, "\n\n") if ask.sources else None,
                          reference=(result.total("input_tokens"), doc.words), apart=True,
                          transcript=False)  # the chapters' summaries: readable text, not turns
        result.summary = summarize_text(passage, summarizer, overflow, progress, stream, budget, ask)
    else:
        if per_chapter:
            doc.notes.append("--per-chapter: no chapters were found (no EPUB spine, headings or 'Chapter N' lines), "
                             "so the whole text has one summary")
            progress.note(doc.notes[-1])
        text, ids = _without_back(doc, ids, progress)
        passage = Passage(text, ids, ask.segments(text), transcript=transcript)
        result.summary = summarize_text(passage, summarizer, overflow, progress, stream, budget, ask)
    return _with_memory(_noted(result, summarizer, progress), summarizer)


def _without_back(doc: Document, ids: list[int] | None, progress: Progress) -> tuple[str, list[int] | None]:
    """The document's text without the chapters of back matter it ends with (a Word document's or a web page's
    "References", whose heading is its chapter's title, not in its text, where ``documents.prose.back_matter`` finds
    a text file's), noted; and its tokens where nothing was left out (else: read again from the text)."""
    back = [i for i, chapter in enumerate(doc.chapters) if back_chapter(chapter.title, closing=True)]
    first = len(doc.chapters)
    while first - 1 in back and first > 1:
        first -= 1
    if first == len(doc.chapters):
        return doc.text, ids
    doc.notes.append(f"{len(doc.chapters) - first} chapter{'s' * (len(doc.chapters) - first != 1)} of back matter "
                     "at its end not summarised: " + ", ".join(repr(c.title) for c in doc.chapters[first:]))
    progress.note(doc.notes[-1])
    return doc.text[:doc.chapters[first].start].rstrip(), None


def _rank(doc: Document, relevance, progress: Progress) -> tuple[list[int], list[float], float]:
    """(chapter indices, most relevant to the question first; each chapter's score; the highest similarity of a
    sentence of the book) (``focus``)."""
    sentences = relevance.sentences(doc.text, progress)
    scores = [sentences.score(c.start, c.start + len(c.text)) for c in doc.chapters]
    return sorted(range(len(scores)), key=lambda i: -scores[i]), scores, sentences.best


def _empty(doc: Document, summarizer, overflow: str, per_chapter: bool) -> DocumentSummary:
    settings = summarizer.generation.to_dict() if summarizer.generation else dict(summarizer.settings)
    dtype = getattr(summarizer, "dtype", None)  # the precision it runs in, where the run layer stated it
    return DocumentSummary(doc, summarizer.method, summarizer.name, Summary("", "", 0, 0, 0),
                           settings={**settings, "overflow": overflow, "per_chapter": per_chapter,
                                     **({"dtype": dtype} if dtype else {})})


def _noted(result: DocumentSummary, summarizer, progress: Progress) -> DocumentSummary:
    """The record's notes with what could not be done as asked: the run's (``summarizer.notes``, shown once when
    the model was loaded), and the document's (a length the text is shorter than or the decoder cannot write, a
    question nothing in the text is close to), which are also shown now."""
    from lsgtool.summarize.focus import weak

    doc, found = result.document, _length_notes(result)
    if result.focus is not None:
        relevance = result.focus.get("relevance", (result.summary.focus or {}).get("relevance"))
        found.append(weak(result.focus["question"], relevance, "the book" if result.chapters else "the text"))
    for note in [n for n in found if n]:
        doc.notes.append(note)
        progress.note(note)
    for title, summary in result.chapters:  # shown while they were summarised
        doc.notes.extend(f"{title or 'untitled'}: {note}" for note in summary.notes)
    doc.notes.extend(result.summary.notes)
    doc.notes.extend(n for n in summarizer.notes if n not in doc.notes)
    return result


def _length_notes(result: DocumentSummary) -> list[str]:
    """A length the text is shorter than, or that the decoder cannot write (``length.notes``), of the summary and
    of the chapters (counted, not one note each)."""
    from lsgtool.summarize.length import flag, notes

    length, chapters = result.summary.length, [(title, s.length) for title, s in result.chapters if s.length]
    found = []
    if length:
        of = ("the book's chapter summaries" if length["sentences"] else "the book") if result.chapters else "the text"
        found += notes(length, of)
    whole = [title or "untitled" for title, c in chapters if c.get("whole_text")]
    if whole:
        found.append(f"{flag(chapters[0][1])} asks for as much as the whole chapter or more in {len(whole)} of "
                     f"{len(result.chapters)} chapters ({', '.join(whole[:5])}{', ...' if len(whole) > 5 else ''}): "
                     "their summaries are at most their text")
    capped = [c for _, c in chapters if c.get("capped_from") is not None]
    if capped:
        found.append(f"{flag(capped[0])}: the decoder writes at most {capped[0]['tokens']:,} new tokens (its learned "
                     f"positions): the budget of {len(capped)} of {len(result.chapters)} chapters was capped to it")
    return found


def _with_memory(result: DocumentSummary, summarizer) -> DocumentSummary:
    """The finished result with its memory estimate, and a note when the summary may be as long as the text."""
    if summarizer.generation:
        given = summarizer.generation.sources.get("max_new_tokens", "").startswith("flag")
        wanted = summarizer.generation.values["max_new_tokens"]
    else:
        given, wanted = summarizer.budget_given, summarizer.budget
    read = result.total("input_tokens")
    if result.summary.length is None and read:  # the budget used, in tokens and the text's words
        from lsgtool.summarize.length import Budget

        result.summary.length = Budget("--max-new-tokens" if given else "the default budget", wanted,
                                       round(wanted * result.document.words / read)).to_dict()
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
    return overflow != "chunk" and (summarizer.pass_tokens is None or tokens <= summarizer.pass_tokens)


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
    alone = ask.focus is not None or ask.length is not None  # each document its own windows or budget
    if len(docs) < 2 or summarizer.method != "abstractive" or alone or (per_chapter and any(len(d.chapters) > 1
                                                                                          for d in docs)):
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
            results[i] = _with_memory(_noted(result, summarizer, progress), summarizer)
    for i, doc in enumerate(docs):
        if i not in results:
            results[i] = summarize_document(doc, summarizer, overflow, per_chapter, progress, False, memory_limit_mb,
                                            encoded[i], chapters[i], ask)
    return [results[i] for i in range(len(docs))]
