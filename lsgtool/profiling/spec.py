"""Length specifications: ``1k..512k`` (doubling), ``1k..64k:x4``, ``1k,4k,16k``, ``4096``; k = 1024."""

from __future__ import annotations

import re

from lsgtool.core.errors import UsageError

_SIZE = re.compile(r"^(\d+)([kKmM]?)$")
HINT = "use e.g. 1k..512k (doubling), 1k..64k:x4, 1k,4k,16k or 4096 (k = 1024, m = 1024k)."


def parse_size(text: str) -> int:
    match = _SIZE.match(text.strip())
    if not match:
        raise UsageError(f"length {text.strip()!r} is not a number like 4096, 4k or 1m.", HINT)
    value = int(match.group(1)) * {"": 1, "k": 1024, "m": 1024**2}[match.group(2).lower()]
    if value < 1:
        raise UsageError(f"length {text.strip()!r} must be at least 1.", HINT)
    return value


def parse_lengths(spec: str) -> list[int]:
    """Sorted, distinct lengths from a spec; bad specs raise UsageError saying why."""
    spec = spec.strip()
    if not spec:
        raise UsageError("the length spec is empty.", HINT)
    if ".." in spec:
        body, _, step = spec.partition(":")
        start, _, stop = body.partition("..")
        factor = 2
        if step:
            if not re.fullmatch(r"[xX]\d+", step):
                raise UsageError(f"step {step!r} must look like x2 or x4.", HINT)
            factor = int(step[1:])
            if factor < 2:
                raise UsageError(f"step {step!r} must multiply by at least 2.", HINT)
        low, high = parse_size(start), parse_size(stop)
        if low > high:
            raise UsageError(f"range {spec!r} runs backwards ({low} > {high}).", HINT)
        lengths = [low]
        while lengths[-1] * factor <= high:
            lengths.append(lengths[-1] * factor)
        return lengths
    parts = [part for part in spec.split(",") if part.strip()]
    if not parts:
        raise UsageError(f"the length spec {spec!r} is empty.", HINT)
    return sorted({parse_size(part) for part in parts})
