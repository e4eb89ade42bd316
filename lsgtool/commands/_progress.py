"""The pipeline's progress as rich bars (and streamed text) on a terminal, as plain lines in a log or pipe."""

from __future__ import annotations

from rich.console import Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from lsgtool.commands._common import stderr
from lsgtool.progress import Progress as Listener

STREAM_CHARS = 600  # the tail of the streamed text kept on screen


class RichProgress(Listener):
    """Bars per stage (tokens, layers, windows) with ETA; the generated text as it comes (greedy decoding)."""

    def __init__(self, stream: bool = False):
        self.console = stderr()
        self.live_ok = self.console.is_terminal
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
        elif not self.live_ok:
            self.console.print(f"summarising {name}", markup=False, highlight=False)

    def stage(self, name: str, total: int | None = None, detail: str = "") -> None:
        description = f"{name} {detail}".strip()
        if self.task is not None:
            self.bars.remove_task(self.task)
        self.task = self.bars.add_task(description, total=total)
        if name == "generate":
            self.streamed = Text()
        if not self.live_ok:
            self.console.print(description, markup=False, highlight=False)

    def advance(self, n: int = 1, detail: str | None = None) -> None:
        if self.task is not None:
            self.bars.update(self.task, advance=n, **({"description": detail} if detail else {}))
        if detail and not self.live_ok:
            self.console.print(detail, markup=False, highlight=False)

    def text(self, piece: str) -> None:
        self.streamed.append(piece)

    def note(self, message: str) -> None:
        self.console.print(message, markup=False, highlight=False, style="dim" if self.live_ok else None)


class Steps:
    """A rich progress bar on stderr while work runs; off a terminal a line per step instead (nothing with
    --json). Yields tick(done, total, text=None)."""

    def __init__(self, description: str, as_json: bool, total: int | None = None):
        self.description, self.total = description, total
        self.console = stderr()
        self.live = not as_json and self.console.is_terminal
        self.echo = not as_json and not self.live

    def __enter__(self):
        if not self.live:
            if not self.echo:
                return lambda *a, **k: None
            self.console.print(f"{self.description} ...", markup=False, highlight=False)

            def line(done: int, total: int, text: str | None = None) -> None:
                if text:
                    self.console.print(f"{text} ...", markup=False, highlight=False)

            return line
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=self.console, transient=True)
        self.bar.start()
        task = self.bar.add_task(self.description, total=self.total)

        def tick(done: int, total: int, text: str | None = None) -> None:
            self.bar.update(task, completed=done, total=total, **({"description": text} if text else {}))

        return tick

    def __exit__(self, *exc):
        if self.live:
            self.bar.stop()
        return False


class TrainingProgress:
    """Training steps and loss: a rich bar on a terminal, a line per log in a pipe, nothing with --json or in
    the processes beside the first of a distributed run (``main`` False)."""

    def __init__(self, as_json: bool, main: bool = True):
        self.console = stderr()
        self.live = not as_json and self.console.is_terminal and main
        self.echo = not as_json and not self.live and main
        self.bar = self.task = None

    def __enter__(self):
        if self.live:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TimeRemainingColumn(), console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("training", total=None)
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
        return False

    def log(self, logs: dict, state) -> None:
        from lsgtool.finetune.train import eval_metrics

        shown = {**{k: logs[k] for k in ("loss", "learning_rate") if k in logs}, **eval_metrics(logs)}
        numbers = ", ".join(f"{k.removeprefix('eval_')} {v:.4g}" for k, v in shown.items() if isinstance(v, float))
        text = f"step {state.global_step}/{state.max_steps}: {numbers}"
        if self.bar is not None:
            self.bar.update(self.task, completed=state.global_step, total=state.max_steps, description=text)
        elif self.echo:
            self.console.print(text, markup=False, highlight=False)
