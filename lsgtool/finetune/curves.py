"""``curves.png`` of a run: training loss and evaluation loss/metrics against the step."""

from __future__ import annotations

from pathlib import Path

from lsgtool.finetune.metrics import eval_metrics

COLOURS = ["tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]  # not the losses'


def curves(history: list[dict], path: Path, title: str) -> Path:
    """Losses on the left axis, evaluation metrics (dashed) on the right; raises UsageError without matplotlib."""
    from lsgtool.plots import pyplot, save

    plt = pyplot()
    fig, left = plt.subplots(figsize=(7.5, 4.5))
    train = [(h["step"], h["loss"]) for h in history if "loss" in h]
    evals = [(h["step"], h["eval_loss"]) for h in history if "eval_loss" in h]
    if train:
        left.plot(*zip(*train), label="training loss", color="tab:blue")
    if evals:
        left.plot(*zip(*evals), marker="o", label="evaluation loss", color="tab:orange")
    left.set_xlabel("step")
    left.set_ylabel("loss")
    left.grid(True, alpha=0.3)
    names = sorted({k for h in history for k in eval_metrics(h) if k != "eval_loss"})
    handles = left.get_legend_handles_labels()
    if names:
        right = left.twinx()
        for name, colour in zip(names, COLOURS * 3):
            points = [(h["step"], h[name]) for h in history if name in h]
            right.plot(*zip(*points), marker="o", markersize=4, linestyle="--", color=colour,
                       label=name.removeprefix("eval_"))
        right.set_ylabel("evaluation metric")
        more = right.get_legend_handles_labels()
        handles = (handles[0] + more[0], handles[1] + more[1])
    left.legend(*handles, fontsize=8)
    left.set_title(title, fontsize=10)
    save(fig, path)
    return path
