"""The table a ``summarize`` run over several inputs prints (its ``--json`` report is the same data)."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def render_batch(console: Console, data: dict[str, Any]) -> None:
    table = Table(title=f"lsgtool summarize — {data['method']} with {data['model']}", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("inputs", f"{data['inputs']} ({data['done']} summarised, {data['skipped']} already done, "
                            f"{len(data['failed'])} failed)")
    table.add_row("written to", f"{data['folder']}: {', '.join(data['outputs'][:5])}"
                                + (" ..." if len(data["outputs"]) > 5 else ""))
    if data["rouge"]:
        table.add_row(f"ROUGE-1/2/Lsum F1 (mean of the {data['scored']} of {data['inputs']} inputs with a reference)"
                      if data["scored"] < data["inputs"] else "ROUGE-1/2/Lsum F1",
                      " / ".join(f"{100 * v:.2f}" for v in data["rouge"].values()))
    if data["bertscore"]:
        score = data["bertscore"].get("bertscore_f1")
        table.add_row("BERTScore F1", f"{100 * score:.2f}" if score is not None else
                      f"not computed: {data['bertscore']['not_computed']}")
    if data["batches"]:
        table.add_row("batches", batches_line(data["batches"]))
    for failure in data["failed"]:
        table.add_row("failed", f"{failure['input']}: {failure['error']}")
    console.print(table)
    if len(data.get("rouge_per_input") or []) > 1:
        console.print(_per_input(data["rouge_per_input"]))


PER_INPUT_ROWS = 40  # inputs shown in the per-input ROUGE table (--json has them all)


def _per_input(scores: list[dict[str, Any]]) -> Table:
    """Each scored input's ROUGE-1/2/Lsum F1, in the order the inputs were read, named inside the folder that
    holds them all."""
    from lsgtool.summarize.scoring import METRICS

    try:
        common = os.path.commonpath([os.path.dirname(score["input"]) for score in scores])
    except ValueError:  # paths on different drives, or absolute and relative
        common = ""
    table = Table(title="ROUGE F1 per input" + (f" (in {escape(common)})" if common else ""))
    table.add_column("input")
    for name in ("ROUGE-1", "ROUGE-2", "ROUGE-Lsum"):
        table.add_column(name, justify="right")
    for score in scores[:PER_INPUT_ROWS]:
        name = os.path.relpath(score["input"], common) if common else score["input"]
        table.add_row(escape(name), *(f"{100 * score[m]:.2f}" for m in METRICS))
    if len(scores) > PER_INPUT_ROWS:
        table.add_row(f"... {len(scores) - PER_INPUT_ROWS} more (--json has every input)", "", "", "")
    return table


def batches_line(batches: dict[str, Any]) -> str:
    line = f"batches of {batches['batch_size']}, " + ("sorted by length" if batches["sorted_by_length"] else
                                                      "in input order")
    if batches["padding"] is None:
        return line + ": none generated together in this run (inputs skipped, alone, or longer than one pass)"
    line += f": {100 * batches['padding']:.1f}% padding"
    if batches["sorted_by_length"] and batches["padding_in_input_order"] is not None:
        line += f" (was {100 * batches['padding_in_input_order']:.1f}% in input order)"
    summaries = batches["summary_padding"]
    return line + (f"; summaries {100 * summaries:.1f}% padding" if summaries is not None else "")
