"""What an ``inspect-kernels`` run is asked for, one named field per CLI option, and the checks on them that
every view shares (lengths, indices in range)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError
from lsgtool.documents.model import NAMED_KINDS

__all__ = ["InspectOptions", "LSGLayout", "check_input", "in_range", "lengths", "one_length"]

WHATS = ("auto", "lsg", "ssm", "ops")


@dataclass
class LSGLayout:
    """LSG settings to map, as ``LSGConfig`` keys; None keeps the model's value (without a model, lsgtool's
    default layout). Field order is the order errors report them in."""

    block_size: int | None = None
    sparse_block_size: int | None = None
    sparsity_factor: int | None = None
    sparsity_type: str | None = None
    num_global_tokens: int | None = None

    def overrides(self) -> dict[str, Any]:
        return asdict(self)

    def given(self) -> list[str]:
        """The keys set (not None)."""
        return [key for key, value in asdict(self).items() if value is not None]


@dataclass
class InspectOptions:
    """One ``inspect-kernels`` run: the CLI's options, one field each (None: the view's default).

    ``what``: ``lsg`` (connectivity map), ``ssm`` (kernels and reach), ``ops`` (operator breakdown) or ``auto``
    (lsg or ssm, from the model). ``length``: a length spec (``4096``, ``4k``; a list such as ``1k,4k`` for ops).
    """

    models: list[str] = field(default_factory=list)
    what: str = "auto"
    length: str | None = None
    layer: int | None = None  # lsg: whose selector the picks trace; ssm: whose kernels are drawn
    head: int | None = None  # lsg: head of the map and the picks
    input_file: Path | None = None  # lsg: a text whose picks are shown (needs a checkpoint)
    layout: LSGLayout = field(default_factory=LSGLayout)
    vs_init: bool = False  # ssm: beside a random-weight model of the same config
    device: str = "cpu"  # ops
    out: Path = Path("kernels-out")
    plots: bool = True


def lengths(text: str, flag: str = "--length") -> list[int]:
    """The lengths of a spec (``4096``, ``4k``, ``1k,4k``); a bad one is a usage error."""
    from lsgtool.profiling import parse_lengths

    try:
        values = parse_lengths(text)
    except (UsageError, ValueError) as exc:
        raise UsageError(f"{flag} {text!r}: {getattr(exc, 'message', exc)}", "e.g. --length 4096, 4k or 1k,4k.") from None
    if any(v < 1 for v in values):
        raise UsageError(f"{flag} {text!r}: lengths must be positive.", "e.g. --length 4096.")
    return values


def one_length(text: str | None, default: int) -> int:
    if text is None:
        return default
    values = lengths(text)
    if len(values) != 1:
        raise UsageError(f"--length {text!r} gives {len(values)} lengths; this view takes one.", "e.g. --length 4096.")
    return values[0]


def in_range(flag: str, value: int | None, count: int | None, what: str) -> None:
    if value is not None and count is not None and not 0 <= value < count:
        raise UsageError(f"{flag} {value} is out of range: the model has {count} {what}.",
                         f"pass {flag} 0 to {count - 1}.")


# every --input error ends in one of these two hints, so they never disagree on what --input and MODEL take
INPUT_TAKES = f"--input takes one document ({', '.join(NAMED_KINDS)})"


def input_needs_a_checkpoint(text: Path) -> str:
    """The hint when ``--input`` has no checkpoint to run: what MODEL_OR_CONFIG must be, and the way out."""
    return (f"{INPUT_TAKES} and runs an LSG checkpoint on it: pass the folder of a converted model (weights and "
            f"tokenizer) as MODEL_OR_CONFIG, e.g. `lsgtool inspect-kernels ./model-lsg-4096 --input {text}`, or leave "
            "--input out for the map.")


def check_input(text: Path | None, models: list[str]) -> None:
    """``--input``, before anything loads: a checkpoint to run, and one readable text file (``-``: standard input)."""
    if text is None:
        return
    if not models:
        raise UsageError("--input needs an LSG checkpoint to run on the text.", input_needs_a_checkpoint(text))
    if str(text) == "-":
        return
    if not text.exists():
        raise UsageError(f"--input {text}: no such file.", f"{INPUT_TAKES}: check the path.")
    if text.is_dir():
        raise UsageError(f"--input {text} is a folder.", f"{INPUT_TAKES}: name one file in it, e.g. "
                                                         f"--input {text / 'report.txt'}.")
