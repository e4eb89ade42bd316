"""Gap-sentence generation (PEGASUS §3.1; LOCOST §5.2 pre-trains with it): pseudo-summaries from raw documents.

Each document is split into sentences (syntok, as ``lsgtool.documents``), each sentence scored by ROUGE-1 F1
against the rest of the document (rouge-score's tokenizer and F-measure), and a ratio α of the sentences is
selected: ``ind`` the top-scored ones independently, ``seq`` greedily the set whose concatenation scores best
against what remains, ``lead`` the first ones, ``random`` any. The input keeps the other sentences and one
sentinel where each selected sentence was; the target is the selected sentences in document order. With a
tokenizer that has numbered sentinels (T5's ``<extra_id_0>``, ``<extra_id_1>``, ...) each masked sentence gets
the next one and the target names them as T5's span targets do (``<extra_id_0> first <extra_id_1> second``), so
the model learns which gap a sentence fills; PEGASUS's ``<mask_1>`` and a mask token mark every gap alike.
"""

from __future__ import annotations

import random as _random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from lsgtool.core.errors import UsageError

STRATEGIES = ("ind", "seq", "lead", "random")
SENTINELS = (("<mask_1>", "PEGASUS's sentence mask"), ("<extra_id_0>", "T5's sentinels, one per masked sentence"))
NUMBERED = "<extra_id_{}>"  # T5's sentinel sequence; past the tokenizer's last one (T5: 99), the last repeats


def _rouge():
    try:
        from rouge_score import scoring, tokenizers
    except ImportError:
        raise UsageError("gap-sentence generation scores sentences with rouge-score, which is not installed.",
                         "pip install 'lsgtool[eval]' (or rouge-score).") from None
    return scoring, tokenizers.DefaultTokenizer(use_stemmer=False)


@dataclass(frozen=True)
class GSGOptions:
    """``ratio``: share of sentences selected, or a (low, high) range sampled per document; ``noise``: standard
    deviation of Gaussian noise added to the scores before ``ind`` ranks them (0: none); ``seed``: every random
    draw of a document comes from (seed, document index)."""

    strategy: str = "ind"
    ratio: float | tuple[float, float] = 0.3
    noise: float = 0.0
    seed: int = 0

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise UsageError(f"unknown gap-sentence strategy {self.strategy!r}.", f"strategies: {', '.join(STRATEGIES)}.")
        low, high = self.ratio if isinstance(self.ratio, tuple) else (self.ratio, self.ratio)
        if not 0 < low <= high < 1:
            raise UsageError(f"gap-sentence ratio {self.ratio!r} must lie in (0, 1), low before high.",
                             "e.g. 0.3 (LOCOST's value) or 0.15..0.45.")
        if self.noise < 0:
            raise UsageError(f"gap-sentence score noise {self.noise!r} is negative.", "pass 0 or more, e.g. 0.1.")


def parse_ratio(text: str) -> float | tuple[float, float]:
    """``0.3`` or ``0.15..0.45``."""
    try:
        if ".." in text:
            low, high = text.split("..", 1)
            return float(low), float(high)
        return float(text)
    except ValueError:
        raise UsageError(f"--gsg-ratio {text!r} is not a number or a range.", "e.g. 0.3 or 0.15..0.45.") from None


def sentinel_for(tokenizer) -> tuple[str, str]:
    """The sentence mask the tokenizer really has, and which one it is: PEGASUS ``<mask_1>``, T5 ``<extra_id_0>``,
    else its mask token; none of them is a usage error."""
    vocab = tokenizer.get_vocab()
    unknown = getattr(tokenizer, "unk_token_id", None)
    for token, what in SENTINELS:
        if token in vocab and vocab[token] != unknown:
            return token, what
    if getattr(tokenizer, "mask_token", None):
        return tokenizer.mask_token, "the tokenizer's mask token"
    raise UsageError("the tokenizer has no sentence mask (<mask_1>, <extra_id_0>) and no mask token.",
                     "use a PEGASUS, T5 or BART/BERT-family tokenizer, or add a mask token to it.")


def sentinel_sequence(tokenizer, sentinel: str) -> tuple[str, ...]:
    """The sentinels masked sentences get, in order: T5's ``<extra_id_0>``, ``<extra_id_1>``, ... as far as the
    tokenizer has them; for any other sentinel that one alone (every gap alike)."""
    if sentinel != NUMBERED.format(0):
        return (sentinel,)
    vocab, found = tokenizer.get_vocab(), []
    while NUMBERED.format(len(found)) in vocab:
        found.append(NUMBERED.format(len(found)))
    return tuple(found)


def shown(sentinels: str | Sequence[str]) -> str:
    """Sentinels for a message: ``[MASK]``, or ``<extra_id_0>, <extra_id_1>, …``."""
    if isinstance(sentinels, str) or len(sentinels) == 1:
        return sentinels if isinstance(sentinels, str) else sentinels[0]
    return ", ".join(sentinels[:2]) + ", …"


def split(text: str) -> list[str]:
    from lsgtool.documents.sentences import sentences

    return [s for s in sentences(text) if s]


def _overlap(a: Counter, b: Counter) -> int:
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(min(count, large[word]) for word, count in small.items())


def _f1(selected: Counter, rest: Counter, fmeasure) -> float:
    """ROUGE-1 F1 of ``selected`` (prediction) against ``rest`` (target)."""
    overlap = _overlap(selected, rest)
    precision = overlap / max(sum(selected.values()), 1)
    recall = overlap / max(sum(rest.values()), 1)
    return fmeasure(precision, recall)


def scores(sentences: list[str]) -> list[float]:
    """ROUGE-1 F1 of every sentence against the document without it."""
    scoring, tokenizer = _rouge()
    counts = [Counter(tokenizer.tokenize(s)) for s in sentences]
    document = sum(counts, Counter())
    return [_f1(c, document - c, scoring.fmeasure) for c in counts]


def select(sentences: list[str], k: int, strategy: str, rng: _random.Random, noise: float = 0.0) -> list[int]:
    """Indices (sorted) of the ``k`` sentences a strategy selects."""
    n = len(sentences)
    if strategy == "lead":
        return list(range(k))
    if strategy == "random":
        return sorted(rng.sample(range(n), k))
    if strategy == "ind":
        ranked = scores(sentences)
        if noise:
            ranked = [s + rng.gauss(0.0, noise) for s in ranked]
        order = sorted(range(n), key=lambda i: (-ranked[i], i))  # ties: the earlier sentence
        return sorted(order[:k])
    scoring, tokenizer = _rouge()
    counts = [Counter(tokenizer.tokenize(s)) for s in sentences]
    document = sum(counts, Counter())
    chosen: list[int] = []
    picked = Counter()
    for _ in range(k):
        best, best_score = None, -1.0
        for i in range(n):
            if i in chosen:
                continue
            candidate = picked + counts[i]
            score = _f1(candidate, document - candidate, scoring.fmeasure)
            if score > best_score:
                best, best_score = i, score
        chosen.append(best)
        picked += counts[best]
    return sorted(chosen)


@dataclass
class Pair:
    input: str
    target: str
    selected: list[int]
    sentences: int


def make_pair(text: str, options: GSGOptions, sentinel: str | Sequence[str], index: int = 0,
              part: str = "train") -> Pair | None:
    """The gap-sentence pair of one document; None for a document with fewer than two sentences (masking its
    only sentence would leave no input). ``sentinel``: one for every gap, or a sequence (``sentinel_sequence``):
    the k-th gap gets the k-th, and the target names each before its sentence. The random draws come from
    (seed, ``part``, ``index``): each split of a dataset draws its own."""
    sentences = split(text)
    n = len(sentences)
    if n < 2:
        return None
    rng = _random.Random(f"{options.seed}:{part}:{index}")
    ratio = rng.uniform(*options.ratio) if isinstance(options.ratio, tuple) else options.ratio
    k = min(n - 1, max(1, round(ratio * n)))
    chosen = select(sentences, k, options.strategy, rng, options.noise)
    if isinstance(sentinel, str) or len(sentinel) == 1:
        mark = sentinel if isinstance(sentinel, str) else sentinel[0]
        gaps = {i: mark for i in chosen}
        target = " ".join(sentences[i] for i in chosen)
    else:
        gaps = {i: sentinel[min(k, len(sentinel) - 1)] for k, i in enumerate(chosen)}
        target = " ".join(f"{gaps[i]} {sentences[i]}" for i in chosen)
    source = " ".join(gaps.get(i, s) for i, s in enumerate(sentences))
    return Pair(source, target, chosen, n)


def pairs(texts: Iterable[str], options: GSGOptions, sentinel: str | Sequence[str],
          indices: list[int] | None = None, part: str = "train") -> tuple[list[Pair | None], dict[str, Any]]:
    """Pairs of many documents (None where a document is skipped) and counts of what was skipped and why.
    ``indices``: each document's index in its collection (its random draws depend on it; default 0, 1, ...);
    ``part``: the split the documents belong to."""
    made, counts = [], {"documents": 0, "empty": 0, "one_sentence": 0}
    for offset, text in enumerate(texts):
        counts["documents"] += 1
        if not text or not text.strip():
            counts["empty"] += 1
            made.append(None)
            continue
        pair = make_pair(text, options, sentinel, offset if indices is None else indices[offset], part)
        if pair is None:
            counts["one_sentence"] += 1
        made.append(pair)
    return made, counts


def map_function(text_column: str, options: GSGOptions, sentinel: str | Sequence[str], part: str = "train"):
    """A ``datasets.Dataset.map(batched=True, with_indices=True)`` function for the split ``part``: adds
    ``gsg_input``, ``gsg_target`` (empty strings for skipped documents, to filter out) from ``text_column``.
    Deterministic in (options, split, row index), so datasets' fingerprint cache is valid."""

    def build(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        made, _ = pairs(batch[text_column], options, sentinel, indices, part)
        return {"gsg_input": [p.input if p else "" for p in made], "gsg_target": [p.target if p else "" for p in made]}

    return build
