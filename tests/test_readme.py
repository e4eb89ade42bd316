"""The README's Python snippets run verbatim (offline, on this CPU)."""

import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(heading: str) -> str:
    text = README.read_text()
    section = text[text.index(f"\n## {heading}\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_locost_snippet_runs_verbatim():
    scope: dict = {}
    exec(compile(_block("LOCOST"), "README.md (LOCOST)", "exec"), scope)
    summary = scope["summary"]
    assert summary.shape[0] == 1 and 2 <= summary.shape[1] <= 9 and summary[0, 0].item() == 0  # decoder start
    assert scope["input_ids"].shape[1] == 8192 and torch.all(summary[0, 1:] < scope["config"].vocab_size)
