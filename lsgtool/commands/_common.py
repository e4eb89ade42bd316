"""What every command shares: application state, option aliases, the output sink and error printing."""

from __future__ import annotations

import json
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Callable

import typer
from rich.console import Console

from lsgtool.core.errors import LsgtoolError

# LSGConfig keys -> the flags convert and inspect-kernels spell them with (errors name what the user typed)
LSG_FLAGS = {"sparse_block_size": "--sparse-block", "block_size": "--block", "sparsity_factor": "--factor",
             "sparsity_type": "--sparse", "num_global_tokens": "--global"}

JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


class DType(str, Enum):
    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"


# ``summarize --dtype``: ``DType``'s, and int8 (the encoder's products; ``precision.quantize_int8``)
SummaryDType = Enum("SummaryDType", {**{d.name: d.value for d in DType}, "int8": "int8"}, type=str)


def positive(value: float | None) -> float | None:
    """Option callback: a number that must be above zero when given."""
    if value is not None and value <= 0:
        raise typer.BadParameter(f"{value:g} is not positive.")
    return value


def require_device(device: Device) -> None:
    """--device cuda on a machine whose torch sees no CUDA device is a usage error, checked before work."""
    if device is Device.cuda:
        import torch

        from lsgtool.core.errors import UsageError

        if not torch.cuda.is_available():
            raise UsageError("--device cuda, but torch sees no CUDA device here.", "use --device cpu.")


@dataclass
class AppState:
    """Set by the root callback: the plugin manager in use, the debug flag and the loaded settings."""

    pm: Any
    debug: bool = False
    settings: Any = None
    warnings: list[str] = field(default_factory=list)


def state(ctx: typer.Context) -> AppState:
    """The AppState of the running ``lsgtool`` invocation."""
    return ctx.find_root().obj


@contextmanager
def flag_names(flags: dict[str, str]):
    """Errors raised inside name the flags the user typed (``--block``), not the config keys (``block_size``).
    ``flags`` maps key to flag, longer keys first where one contains another."""
    try:
        yield
    except LsgtoolError as exc:
        exc.message, exc.hint = _renamed(exc.message, flags), _renamed(exc.hint, flags)
        exc.args = (exc.message,)
        raise


def _renamed(text: str | None, flags: dict[str, str]) -> str | None:
    if text is None:
        return None
    for key in sorted(flags, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){key}(?!\w)", flags[key], text)
    return text


def stdout() -> Console:
    return Console(highlight=False, soft_wrap=False)


def stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_error(exc: LsgtoolError) -> None:
    err = stderr()
    err.print(f"Error: {exc.message}", markup=False)
    if exc.hint:
        err.print(f"Hint: {exc.hint}", markup=False)


def emit(data: Any, as_json: bool, render: Callable[[Console, Any], None]) -> None:
    """One output sink: JSON for machines, ``render`` (rich) for people; both on stdout."""
    if as_json:
        typer.echo(json.dumps(data, indent=2, default=str))
    else:
        render(stdout(), data)


class _WarningLines(logging.Handler):
    """lsgtool's library warnings (``lsgtool.*`` loggers) as ``Warning: ...`` lines on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        stderr().print(f"Warning: {record.getMessage()}", markup=False)


def route_warnings() -> None:
    """Show the library's warnings (weights that did not load, ...) on stderr, once per record."""
    logger = logging.getLogger("lsgtool")
    if not any(isinstance(h, _WarningLines) for h in logger.handlers):
        logger.addHandler(_WarningLines(level=logging.WARNING))
