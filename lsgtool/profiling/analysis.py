"""What a profile table reports beyond raw numbers: scaling exponents and crossover lengths."""

from __future__ import annotations

import math


def scaling_exponent(lengths: list[int], values: list[float]) -> float | None:
    """Least-squares slope of log(value) against log(length): ~1 for O(n), ~2 for O(n²); None below 2 points."""
    points = [(math.log(n), math.log(v)) for n, v in zip(lengths, values) if v and v > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else None


def crossover(lengths: list[int], variant: list[float | None], baseline: list[float | None]) -> int | None:
    """The first length from which the variant stays faster than the baseline (None: never, or no data).

    A missing baseline point (out of memory, over budget) counts as the variant being faster there.
    """
    answer = None
    for length, mine, theirs in zip(lengths, variant, baseline):
        if mine is None:
            answer = None
            continue
        faster = theirs is None or mine < theirs
        if faster and answer is None:
            answer = length
        elif not faster:
            answer = None
    return answer
