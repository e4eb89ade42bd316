"""What every command shares: application state, option aliases, the output sink and error printing."""

from __future__ import annotations

import json
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable

import typer
from rich.console import Console

from lsgtool.core.errors import LsgtoolError

JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


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
