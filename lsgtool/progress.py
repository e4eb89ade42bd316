"""The one progress protocol every run reports through; the commands show it as rich bars.

A run calls ``stage`` when a stage starts (read, tokenize, encode, generate, train, map, ...), ``advance`` as
it goes (``detail`` says where it is: a step's loss, the point being measured), ``text`` with pieces of text
that can be streamed (greedy decoding), ``note`` for what the user should know, and ``inputs`` /
``next_input`` around a run over several inputs. This base class ignores everything, so library users pass
nothing (or ``Progress()``); it is also a context manager, entered once around the run.
"""

from __future__ import annotations

__all__ = ["Progress"]


class Progress:
    stream = False  # whether ``text`` is shown (one input, greedy decoding)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def inputs(self, total: int) -> None:
        """A run over ``total`` inputs starts."""

    def next_input(self, name: str, index: int) -> None:
        """Input number ``index`` (from 0), called ``name``, starts."""

    def stage(self, name: str, total: int | None = None, detail: str = "") -> None:
        """A stage starts; ``total`` units (tokens, layers, windows, steps) if known."""

    def advance(self, n: int = 1, detail: str | None = None) -> None:
        """``n`` more units of the current stage are done; ``detail`` replaces the stage's description."""

    def text(self, piece: str) -> None:
        """More generated text (streamed)."""

    def note(self, message: str) -> None:
        """Something the user should know (a route taken, a limit met)."""
