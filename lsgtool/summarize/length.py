"""Summary length as a reader asks for it: a share of the text (``5%``), words (``300w``) or sentences (``12``).

A share or a word count becomes a token budget through the text's own tokens per word (what a generator is given;
an extractive summary counts the words it shows instead); the record states the budget in tokens and in words. ``--sentences N`` stops generation after the N-th sentence (with a token
budget of twice the text's mean sentence length per sentence) and picks N sentences in extractive summaries.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from lsgtool.core.errors import UsageError

PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%|w|words?)\s*$", re.IGNORECASE)


@dataclass
class Length:
    asked: str  # as given: "5%", "300w", "12 sentences"
    share: float | None = None  # of the text's tokens
    words: int | None = None
    sentences: int | None = None

    @classmethod
    def parse(cls, value: str | None, sentences: int | None) -> "Length | None":
        """``--length`` and ``--sentences`` read and checked (usage errors name the flag)."""
        if value is not None and sentences is not None:
            raise UsageError("--length and --sentences both set the summary's length.", "pass one of them.")
        if sentences is not None:
            if sentences < 1:
                raise UsageError(f"--sentences {sentences} asks for no summary.", "pass --sentences 1 or more.")
            return cls(f"{sentences} sentences", sentences=sentences)
        if value is None:
            return None
        match = PATTERN.match(value)
        if not match:
            raise UsageError(f"--length {value!r} is not a share or a word count.",
                             "pass a share of the text such as --length 5% or a word count such as --length 300w.")
        amount, unit = float(match.group(1)), match.group(2).lower()
        if unit == "%":
            if not 0 < amount <= 100:
                raise UsageError(f"--length {value} is not a share of the text between 0% and 100%.",
                                 "pass a share above 0 and at most 100, such as --length 5%.")
            return cls(value.strip(), share=amount / 100)
        if amount < 1 or amount != int(amount):
            raise UsageError(f"--length {value} is not a whole number of words.", "pass e.g. --length 300w.")
        return cls(value.strip(), words=int(amount))

    def budget(self, tokens: int, words: int, sentences: int = 0) -> "Budget":
        """The budget for a text of ``tokens`` tokens, ``words`` words and ``sentences`` sentences; an ask that
        covers the whole text (``--length 5w`` of a 1-word text) is the whole text, marked ``whole_text``."""
        per_word = tokens / words if words else 1.0
        if self.covers(words, sentences):
            whole = {"tokens": tokens, "words": words, **({"sentences": sentences} if self.sentences else {})}
            return Budget(self.asked, max(1, tokens), words, (sentences or None) if self.sentences else None,
                          whole_text=whole)
        if self.share is not None:
            wanted = max(1, math.ceil(self.share * tokens))
            return Budget(self.asked, wanted, max(1, round(self.share * words)))
        if self.words is not None:
            return Budget(self.asked, max(1, math.ceil(self.words * per_word)), self.words)
        per_sentence = tokens / sentences if sentences else 32
        wanted = max(8, math.ceil(2 * per_sentence * self.sentences))
        return Budget(self.asked, wanted, round(wanted / per_word), self.sentences)

    def covers(self, words: int, sentences: int) -> bool:
        """Whether the ask is the whole of a text of ``words`` words and ``sentences`` sentences, or more."""
        if self.share is not None:
            return self.share >= 1
        if self.words is not None:
            return self.words >= words
        return self.sentences >= sentences


@dataclass
class Budget:
    asked: str
    tokens: int  # the most new tokens (abstractive) or the token budget of the picks (extractive)
    words: int  # the same in words, by the text's tokens per word
    sentences: int | None = None  # stop after this many sentences
    capped_from: int | None = None  # the tokens asked for, when more than the decoder writes
    whole_text: dict[str, int] | None = None  # the ask is the whole text or more: its tokens, words and sentences

    @classmethod
    def window(cls, tokens: int, most: int) -> "Budget":
        """New tokens for the summary of one window of ``tokens`` tokens in a hierarchy: at most ``most`` (the
        model's budget) and at most half the window, so that each level is shorter than the one it summarises and
        the hierarchy ends, whatever the model writes."""
        return cls("a window of the hierarchy", max(1, min(most, tokens // 2)), 0)

    def capped(self, longest: int | None) -> "Budget":
        """At most ``longest`` tokens (what the decoder's positions allow), the words scaled alike."""
        if longest is None or self.tokens <= longest:
            return self
        words = max(1, round(self.words * longest / self.tokens))
        return Budget(self.asked, longest, words, self.sentences, self.tokens, self.whole_text)

    def to_dict(self) -> dict[str, Any]:
        out = {"asked": self.asked, "tokens": self.tokens, "words": self.words, "sentences": self.sentences}
        if self.capped_from is not None:
            out["capped_from"] = self.capped_from
        return {**out, "whole_text": self.whole_text} if self.whole_text else out


def flag(length: dict[str, Any]) -> str:
    """The flag and value a budget (``Budget.to_dict``) was asked with: ``--length 5w``, ``--sentences 3``."""
    asked = length["asked"]
    return f"--sentences {asked.split()[0]}" if asked.endswith(" sentences") else f"--length {asked}"


def notes(length: dict[str, Any], what: str = "the text") -> list[str]:
    """What a budget (``Budget.to_dict``) could not give as asked, for the record's notes (``what``: the text it
    was of: "the text", "the book")."""
    out = []
    whole = length.get("whole_text")
    if whole:
        size = _many(whole["sentences"], "sentence") if length["sentences"] else _many(whole["words"], "word")
        out.append(f"{flag(length)} asks for as much as the whole of {what} or more, which has {size} "
                   f"({_many(whole['tokens'], 'token')}): the summary is at most that")
    if length.get("capped_from") is not None:
        out.append(f"{flag(length)} asks for {length['capped_from']:,} new tokens for {what} and the decoder writes "
                   f"at most {length['tokens']:,} (its learned positions): capped to {length['tokens']:,}")
    return out


def _many(n: int, unit: str) -> str:
    return f"{n:,} {unit}" + ("" if n == 1 else "s")


class SentenceStop:
    """A stopping criterion: a sequence is done once its decoded text holds ``n`` whole sentences."""

    def __init__(self, tokenizer, n: int, prefix: int = 1):
        self.tokenizer, self.n, self.prefix = tokenizer, n, prefix

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        from lsgtool.documents.sentences import sentence_spans

        done = []
        for row in input_ids:
            text = self.tokenizer.decode(row[self.prefix:], skip_special_tokens=True).strip()
            spans = list(sentence_spans(text)) if text else []
            ended = text.rstrip().endswith((".", "!", "?", "。", "！", "？", '"', "”", "’"))
            done.append(len(spans) > self.n or (len(spans) == self.n and ended))
        return torch.tensor(done, device=input_ids.device)
