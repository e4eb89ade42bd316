"""What the summarisation pipeline reports while it works; the CLI shows it as rich progress bars.

The pipeline calls ``stage`` when a stage starts (read, tokenize, encode, generate, ...), ``advance`` as it
goes, and ``text`` with pieces of generated text when they can be streamed (greedy decoding). The base class
ignores everything, so library users pass nothing.
"""

from __future__ import annotations


class Progress:
    def stage(self, name: str, total: int | None = None, detail: str = "") -> None:
        """A stage starts; ``total`` units (tokens, layers, windows) if known."""

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the current stage are done."""

    def text(self, piece: str) -> None:
        """More generated text (streamed)."""

    def note(self, message: str) -> None:
        """Something the user should know (a route taken, a limit met)."""
