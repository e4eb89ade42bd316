"""Token-id helpers that hold for any tokenizer (slow, fast, SentencePiece): counting without special tokens,
and truncation that keeps the special tokens a tokenizer puts around a sequence."""

from __future__ import annotations

__all__ = ["count_tokens", "truncate_ids"]


def count_tokens(tokenizer, texts: list[str]) -> list[int]:
    """Tokens of each text, special tokens not counted (one tokenizer call for all of them)."""
    if not texts:
        return []
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]]


def truncate_ids(tokenizer, ids: list[int], keep: int) -> list[int]:
    """``ids`` (with special tokens) cut to ``keep`` text tokens; the special tokens before and after the text
    (``[CLS]`` / ``</s>`` ...) are kept, as the tokenizer's own ``truncation=True`` keeps them."""
    mask = tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
    head = next((i for i, special in enumerate(mask) if not special), None)
    if head is None:  # no text tokens
        return list(ids)
    tail = next((i for i, special in enumerate(reversed(mask)) if not special), 0)
    body = ids[head:len(ids) - tail]
    return ids[:head] + body[:max(keep, 0)] + ids[len(ids) - tail:]
