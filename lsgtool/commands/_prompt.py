"""Asking for what is missing, on a terminal only: never in a pipe, under CI or with --json (there a missing
argument is the usual Error/Hint pair)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

from lsgtool.commands._common import stderr


def interactive(as_json: bool = False) -> bool:
    """A person at a terminal who can answer: stdin and stderr are terminals, not --json, not CI."""
    if as_json or os.environ.get("CI") or os.environ.get("LSGTOOL_NO_PROMPT"):
        return False
    return sys.stdin.isatty() and sys.stderr.isatty()


def choose(title: str, options: list[tuple[str, str]], default: str | None = None, other: bool = True) -> str:
    """A numbered list; the answer is a number or (``other``) any value typed. Ctrl-D aborts."""
    import typer
    from rich.prompt import Prompt

    console = stderr()
    console.print(title, markup=False)
    for i, (value, note) in enumerate(options, 1):
        console.print(f"  {i}) {value}" + (f"  — {note}" if note else ""), markup=False)
    question = "number" + (" or value" if other else "")
    while True:
        try:
            answer = Prompt.ask(question, console=console, default=default, show_default=default is not None).strip()
        except EOFError:
            raise typer.Abort() from None
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1][0]
        if answer and (other or answer in {value for value, _ in options}):
            return answer
        console.print(f"pick 1 to {len(options)}" + (", or type a value" if other else ""), markup=False)


def ask(question: str, default, convert: Callable = str, check: Callable | None = None):
    """One value with a default; ``check(value) -> problem or None`` re-asks until it passes."""
    import typer
    from rich.prompt import Prompt

    console = stderr()
    while True:
        try:
            answer = Prompt.ask(question, console=console, default=str(default)).strip()
        except EOFError:
            raise typer.Abort() from None
        try:
            value = convert(answer)
        except ValueError:
            console.print(f"not a valid value: {answer!r}", markup=False)
            continue
        problem = check(value) if check else None
        if problem is None:
            return value
        console.print(problem, markup=False)


def confirm(question: str, default: bool = True) -> bool:
    import typer
    from rich.prompt import Confirm

    try:
        return Confirm.ask(question, console=stderr(), default=default)
    except EOFError:
        raise typer.Abort() from None


def model_choices(folder: Path = Path(".")) -> list[tuple[str, str]]:
    """Presets (with whether their weights are here) and the model folders in ``folder``."""
    from lsgtool.core.presets import weights_here
    from lsgtool.core.registry import get_registry

    presets = get_registry("presets")
    options = [(name, f"{presets[name].description} ({'here' if weights_here(presets[name]) else 'not here'})")
               for name in presets]
    folders = sorted(p for p in folder.iterdir() if p.is_dir() and (p / "config.json").is_file())
    return options + [(f"./{p.name}", "model folder here") for p in folders[:20]]


def document_choices(folder: Path = Path(".")) -> list[tuple[str, str]]:
    """The documents lsgtool reads in ``folder`` (largest first)."""
    from lsgtool.documents import supported

    found = [p for p in folder.iterdir() if p.is_file() and supported(p)]
    found.sort(key=lambda p: p.stat().st_size, reverse=True)
    return [(str(p), f"{p.stat().st_size / 1024:,.0f} KB") for p in found[:20]]
