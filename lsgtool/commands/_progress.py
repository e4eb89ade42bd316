"""Every run's progress (``lsgtool.progress.Progress``) as rich bars and streamed text on a terminal, as plain
lines in a log or pipe."""

from __future__ import annotations

from rich.console import Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from lsgtool.commands._common import stderr
from lsgtool.progress import Progress as Listener

STREAM_CHARS = 600  # the tail of the streamed text kept on screen


class RichProgress(Listener):
    """Bars per stage (tokens, layers, windows, steps) with ETA; the generated text as it comes (greedy decoding).
    Off a terminal a line per stage and per detail, unless ``lines`` is off (then notes only); ``bars`` off: no
    bars even on a terminal."""

    def __init__(self, stream: bool = False, bars: bool = True, lines: bool = True):
        self.console = stderr()
        self.live_ok = self.console.is_terminal and bars
        self.lines = lines
        self.bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                             TimeRemainingColumn(), console=self.console)
        self.overall = None
        self.task = None
        self.streamed = Text()
        self.stream = stream
        self.live = Live(self, console=self.console, transient=True, refresh_per_second=8) if self.live_ok else None

    def __rich__(self):
        parts = [self.bars]
        if self.stream and self.streamed.plain:
            parts.insert(0, Text(self.streamed.plain[-STREAM_CHARS:], style="dim"))
        return Group(*parts)

    def __enter__(self):
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc):
        if self.live is not None:
            self.live.__exit__(*exc)

    def inputs(self, total: int) -> None:
        if total > 1:
            self.overall = self.bars.add_task("inputs", total=total)

    def next_input(self, name: str, index: int) -> None:
        if self.overall is not None:
            self.bars.update(self.overall, completed=index, description=f"inputs ({name})")
        elif not self.live_ok and self.lines:
            self.console.print(f"summarising {name}", markup=False, highlight=False)

    def stage(self, name: str, total: int | None = None, detail: str = "") -> None:
        description = f"{name} {detail}".strip()
        if self.task is not None:
            self.bars.remove_task(self.task)
        self.task = self.bars.add_task(description, total=total)
        if name == "generate":
            self.streamed = Text()
        if self.live is not None:
            self.live.refresh()  # drawn now: a short stage whose steps hold the interpreter may end before a refresh
        elif self.lines:
            self.console.print(description, markup=False, highlight=False)

    def advance(self, n: int = 1, detail: str | None = None) -> None:
        if self.task is not None:
            self.bars.update(self.task, advance=n, **({"description": detail} if detail else {}))
        if detail and not self.live_ok and self.lines:
            self.console.print(detail, markup=False, highlight=False)

    def text(self, piece: str) -> None:
        self.streamed.append(piece)

    def note(self, message: str) -> None:
        self.console.print(message, markup=False, highlight=False, style="dim" if self.live_ok else None)
