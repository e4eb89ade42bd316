"""The ``Seq2SeqTrainingArguments`` of a run's settings: schedule, evaluation and saving, precision, sampling."""

from __future__ import annotations

from pathlib import Path

from lsgtool.core.errors import UsageError
from lsgtool.finetune.config import Settings


def precision_flags(choice: str) -> dict[str, bool]:
    import torch

    cuda = torch.cuda.is_available()
    if choice == "auto":
        return {"bf16": bool(cuda and torch.cuda.is_bf16_supported())}
    if choice == "fp16" and not cuda:
        raise UsageError("train.precision fp16 needs a CUDA device.", "use auto, fp32 or bf16 on the CPU.")
    return {"bf16": choice == "bf16", "fp16": choice == "fp16"}


def check_saving(settings: Settings, has_eval: bool) -> None:
    """The best checkpoint is chosen at evaluations, so with an evaluation split checkpoints are saved where
    evaluations happen: ``save_steps`` needs ``eval_steps`` and must be a multiple of it (checked before the run
    folder is written; transformers would refuse it only when the trainer is built)."""
    t = settings.train
    if not has_eval or not t.save_steps:
        return
    if not t.eval_steps:
        raise UsageError(f"train.save_steps {t.save_steps} with an evaluation split needs train.eval_steps: the best "
                         "checkpoint is chosen where evaluations happen.",
                         f"add --set train.eval_steps={t.save_steps}, or --set data.validation_split=0 for no evaluation.")
    if t.save_steps % t.eval_steps:
        raise UsageError(f"train.save_steps {t.save_steps} is not a multiple of train.eval_steps {t.eval_steps}.",
                         f"e.g. --set train.save_steps={t.eval_steps * max(1, t.save_steps // t.eval_steps)}.")


def arguments(settings: Settings, out: Path, has_eval: bool, metric: str, generate: bool):
    """Checkpoints go to ``out/checkpoints``; ``metric`` picks the best one when there is evaluation."""
    import torch
    from transformers import Seq2SeqTrainingArguments

    t = settings.train
    schedule = {"inverse_sqrt": "inverse_sqrt", "constant": "constant_with_warmup" if t.warmup else "constant"}
    strategy = ("steps" if t.eval_steps else "epoch") if has_eval else "no"
    save = "steps" if (t.save_steps or (has_eval and t.eval_steps)) else "epoch"
    return Seq2SeqTrainingArguments(
        output_dir=str(out / "checkpoints"), learning_rate=t.lr, num_train_epochs=t.epochs,
        max_steps=t.max_steps or -1, per_device_train_batch_size=t.batch_size,
        per_device_eval_batch_size=t.batch_size, gradient_accumulation_steps=t.grad_accum,
        lr_scheduler_type=schedule.get(t.schedule, t.schedule), warmup_steps=t.warmup,
        weight_decay=t.weight_decay, seed=t.seed, data_seed=t.seed, eval_strategy=strategy,
        eval_steps=t.eval_steps or None, save_strategy=save, save_steps=t.save_steps or t.eval_steps or 500,
        save_total_limit=t.save_total_limit or None, logging_steps=t.logging_steps, logging_strategy="steps",
        load_best_model_at_end=has_eval, metric_for_best_model=("eval_loss" if metric == "loss" else metric) if has_eval else None,
        greater_is_better=None if metric == "loss" else True, report_to="none", disable_tqdm=True,
        **_sampling(t.sampling), predict_with_generate=generate,
        generation_max_length=t.generate_length, use_cpu=not torch.cuda.is_available(),
        remove_unused_columns=False, **_checkpointing(t.gradient_checkpointing), **precision_flags(t.precision),
        # transformers scales every loss by the process count for models that would average tokens across
        # devices; classification heads do not, so their gradients doubled on 2 processes: each process's mean
        # loss, averaged by DDP, is the global batch's mean (token losses: per-process token means)
        average_tokens_across_devices=False)


def _sampling(sampling: str) -> dict[str, str | bool]:
    """The training order under the name the installed transformers uses: ``train_sampling_strategy``, or before
    it ``group_by_length`` (true, else random order; ``resumable`` gives the sequential order there)."""
    import inspect

    from transformers import TrainingArguments

    if "train_sampling_strategy" in inspect.signature(TrainingArguments.__init__).parameters:
        return {"train_sampling_strategy": sampling}
    return {"group_by_length": sampling == "group_by_length"}


def _checkpointing(enabled: bool) -> dict[str, bool]:
    """Gradient (activation) checkpointing under the name the installed transformers uses."""
    import inspect

    from transformers import TrainingArguments

    if not enabled:
        return {}
    names = inspect.signature(TrainingArguments.__init__).parameters
    return {"activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing": True}
