"""What a fine-tuning run measures: ``compute_metrics`` of each task (accuracy and micro/macro F1, or ROUGE of
generated text), the evaluation results of a log entry, and the summary numbers of a run's log."""

from __future__ import annotations

import math
from typing import Any, Callable

from lsgtool.finetune.config import CLASSIFIERS, GENERATIVE

EVAL_TIMING = ("eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "eval_epoch")


def metrics_function(task: str, tokenizer) -> tuple[Callable | None, str]:
    """compute_metrics for the task and the metric the best checkpoint is chosen by."""
    if task in CLASSIFIERS or task == "token-classification":
        return _classification(task), "f1_micro" if task == "multilabel" else "accuracy"
    if task in GENERATIVE:
        return _rouge(tokenizer), "rougeLsum"
    return None, "loss"


def _classification(task: str) -> Callable:
    from sklearn.metrics import accuracy_score, f1_score

    def scores(prediction):
        logits, labels = prediction.predictions, prediction.label_ids
        if task == "multilabel":
            predicted = (logits > 0).astype(int)
            gold = labels.astype(int)
            return {"accuracy": float((predicted == gold).all(1).mean()),
                    "f1_micro": float(f1_score(gold, predicted, average="micro", zero_division=0)),
                    "f1_macro": float(f1_score(gold, predicted, average="macro", zero_division=0))}
        predicted = logits.argmax(-1)
        if task == "token-classification":
            keep = labels != -100
            predicted, labels = predicted[keep], labels[keep]
        return {"accuracy": float(accuracy_score(labels, predicted)),
                "f1_micro": float(f1_score(labels, predicted, average="micro", zero_division=0)),
                "f1_macro": float(f1_score(labels, predicted, average="macro", zero_division=0))}

    return scores


def _rouge(tokenizer) -> Callable:
    import numpy as np
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)

    def rouge(prediction):
        generated = np.where(prediction.predictions < 0, tokenizer.pad_token_id, prediction.predictions)
        gold = np.where(prediction.label_ids < 0, tokenizer.pad_token_id, prediction.label_ids)
        texts = tokenizer.batch_decode(generated, skip_special_tokens=True)
        refs = tokenizer.batch_decode(gold, skip_special_tokens=True)
        totals = {"rouge1": 0.0, "rouge2": 0.0, "rougeLsum": 0.0}
        for text, ref in zip(texts, refs):
            for key, score in scorer.score("\n".join(ref.split(". ")), "\n".join(text.split(". "))).items():
                totals[key] += score.fmeasure
        return {k: 100 * v / max(1, len(texts)) for k, v in totals.items()}

    return rouge


def eval_metrics(logs: dict) -> dict:
    """The evaluation results of a log entry (loss and metrics), without its timings."""
    return {k: v for k, v in logs.items() if k.startswith("eval_") and k not in EVAL_TIMING}


def log_line(logs: dict, step: int, max_steps: int) -> str:
    """A log entry in one line: ``step 3/10: loss 0.5, learning_rate 5e-05, accuracy 0.9``."""
    shown = {**{k: logs[k] for k in ("loss", "learning_rate") if k in logs}, **eval_metrics(logs)}
    numbers = ", ".join(f"{k.removeprefix('eval_')} {v:.4g}" for k, v in shown.items() if isinstance(v, float))
    return f"step {step}/{max_steps}: {numbers}"


def summary_numbers(history: list[dict]) -> dict[str, Any]:
    """First and last training loss, the share it dropped by, and the last evaluation's results."""
    losses = [h["loss"] for h in history if "loss" in h]
    out = {"first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None}
    if losses and losses[0]:
        out["loss_drop"] = round(1 - losses[-1] / losses[0], 4)
    evals = [h for h in history if "eval_loss" in h]
    if evals:
        out["final_eval"] = eval_metrics(evals[-1])
    return {k: (round(v, 6) if isinstance(v, float) and math.isfinite(v) else v) for k, v in out.items()}
