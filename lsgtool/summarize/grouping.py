"""Which inputs of a batch run are generated together: grouped by their token count, so that each padded batch
holds inputs of similar lengths, and the padding the batches leave (what ``--batch-size`` reports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsgtool.summarize.inputs import Job

POOL_GROUPS = 32  # groups of --batch-size inputs read ahead and sorted by length together
POOL_CHARACTERS = 4_000_000  # ... and no more text than this (with its ids, about 40 MB), whatever the group size


@dataclass
class Item:
    """An input read and keyed, waiting to be summarised."""

    job: Job
    document: Any
    key: str
    ids: list[int] | None = None  # its tokens, from ``measure`` (tokenised once, generated from)
    together: bool = False  # one padded pass may take it with others


@dataclass
class Padding:
    """Padding in the batches generated together: each row's encoder input padded to its batch's longest input,
    each row's summary to its batch's longest summary (a row that has ended keeps its place until then).
    ``input_order_*``: the encoder padding the same inputs would have had grouped in input order (from their
    token counts)."""

    batches: int = 0
    inputs: int = 0  # inputs generated in a batch of two or more
    tokens: int = 0  # their input tokens, special tokens included
    positions: int = 0  # the encoder positions they took: tokens + padding
    new_tokens: int = 0
    steps: int = 0  # the decoder positions they took: new tokens + padding
    input_order_tokens: int = 0
    input_order_positions: int = 0

    def add(self, rows) -> None:
        """One padded batch, from its rows (``Generated``: input_tokens, padded_to, new_tokens, steps)."""
        self.batches += 1
        for row in rows:
            self.inputs += 1
            self.tokens, self.positions = self.tokens + row.input_tokens, self.positions + row.padded_to
            self.new_tokens, self.steps = self.new_tokens + row.new_tokens, self.steps + row.steps

    def add_input_order(self, groups: list[list[int]]) -> None:
        """The padding groups of these token counts (each padded to its longest) would have."""
        for lengths in groups:
            if len(lengths) > 1:
                self.input_order_tokens += sum(lengths)
                self.input_order_positions += max(lengths) * len(lengths)

    def merged(self, others: list["Padding"]) -> "Padding":
        return Padding(*(sum(getattr(p, name) for p in [self, *others]) for name in self.__dataclass_fields__))

    def report(self, batch_size: int, by_length: bool) -> dict[str, Any]:
        def share(padded: int, real: int) -> float | None:
            return round((padded - real) / padded, 4) if padded else None

        return {"batch_size": batch_size, "sorted_by_length": by_length, "batches": self.batches,
                "inputs_together": self.inputs, "input_tokens": self.tokens,
                "input_padding": self.positions - self.tokens, "padding": share(self.positions, self.tokens),
                "padding_in_input_order": share(self.input_order_positions, self.input_order_tokens),
                "new_tokens": self.new_tokens, "summary_padding": share(self.steps, self.new_tokens)}


def groups(pool: list[Item], batch_size: int, by_length: bool) -> list[list[Item]]:
    """Groups of ``batch_size`` in input order, or (``by_length``) those one pass takes sorted by their token
    count (ties in input order) and the others one at a time."""
    if not by_length:
        return [pool[i:i + batch_size] for i in range(0, len(pool), batch_size)]
    together = sorted((item for item in pool if item.together), key=lambda item: len(item.ids))
    return [together[i:i + batch_size] for i in range(0, len(together), batch_size)] + \
        [[item] for item in pool if not item.together]


def input_order(pool: list[Item], batch_size: int) -> list[list[int]]:
    """Token counts of the inputs input-order groups would generate together."""
    return [[len(item.ids) for item in group if item.together] for group in groups(pool, batch_size, False)]
