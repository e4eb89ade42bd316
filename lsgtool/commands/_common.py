"""What every command shares: application state, option aliases, the output sink and error printing."""

from __future__ import annotations

import json
import logging
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
