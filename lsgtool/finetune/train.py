"""The Trainer of a run (``Trainer`` / ``Seq2SeqTrainer``, accelerate underneath, made to resume exactly by
``resumable``): its arguments, metrics and callbacks (a requested stop, early stopping, progress reported
through ``lsgtool.progress.Progress``), the last checkpoint of a run folder, and the final model saved into the
folder's root."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsgtool.core.lsg.folder import is_lsg_model
from lsgtool.finetune.config import GENERATIVE, Settings
from lsgtool.finetune.metrics import log_line, metrics_function
from lsgtool.progress import Progress

if TYPE_CHECKING:
    from lsgtool.finetune.prepare import Prepared


class Stop:
    """Set from a SIGINT handler: the trainer checkpoints at the end of the current step and stops."""

    def __init__(self):
        self.requested = False


def callbacks(stop: Stop, progress: Progress, patience: int):
    """Stop on request, report each log to ``progress`` (stage ``training``, a step each), stop early."""
    from transformers import EarlyStoppingCallback, TrainerCallback

    class Control(TrainerCallback):
        shown = 0

        def on_train_begin(self, args, state, control, **kwargs):
            progress.stage("training", state.max_steps)
            if state.global_step:  # resumed
                progress.advance(state.global_step)
            self.shown = state.global_step

        def on_step_end(self, args, state, control, **kwargs):
            if stop.requested:
                control.should_save = True
                control.should_training_stop = True
            return control

        def on_epoch_end(self, args, state, control, **kwargs):
            if stop.requested and _inside_epoch(state):  # the step's checkpoint is saved: the epoch has not ended,
                control.should_evaluate = control.should_save = False  # so neither its evaluation nor its save
            return control

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs:
                progress.advance(state.global_step - self.shown, detail=log_line(logs, state.global_step, state.max_steps))
                self.shown = state.global_step

    found = [Control()]
    if patience:
        found.append(EarlyStoppingCallback(early_stopping_patience=patience))
    return found


def _inside_epoch(state) -> bool:
    """Whether training stops inside an epoch and before its last step: a Ctrl-C there leaves the Trainer's loop
    through its epoch end, whose evaluation (``eval_strategy="epoch"``) an uninterrupted run does not have there,
    and whose draw from the random state (a data loader's seed) would end up in the checkpoint."""
    return state.global_step < state.max_steps and state.epoch is not None and state.epoch != int(state.epoch)


def trainer_for(settings: Settings, prepared: Prepared, out: Path, stop: Stop, progress: Progress):
    from transformers import Seq2SeqTrainer, Trainer
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from lsgtool.finetune.arguments import arguments
    from lsgtool.finetune.resumable import resumable

    task = settings.train.task
    compute, metric = metrics_function(task, prepared.tokenizer)
    metric = settings.train.metric or metric
    has_eval = prepared.eval is not None
    generate = task in GENERATIVE and has_eval
    args = arguments(settings, out, has_eval, metric if compute or metric == "loss" else "loss", generate)
    cls = resumable(Seq2SeqTrainer if task in GENERATIVE else Trainer, settings.train.seed,
                    getattr(prepared.collator, "masking", None), settings.train.sampling)
    trainer = cls(model=prepared.model, args=args, train_dataset=prepared.train, eval_dataset=prepared.eval,
                  data_collator=prepared.collator, processing_class=prepared.tokenizer,
                  compute_metrics=compute if has_eval else None,
                  callbacks=callbacks(stop, progress, settings.train.patience if has_eval else 0))
    for printer in (PrinterCallback, ProgressCallback):  # progress goes to lsgtool's Progress instead
        trainer.remove_callback(printer)
    return trainer


def last_checkpoint(out: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    folder = out / "checkpoints"
    return Path(found) if folder.is_dir() and (found := get_last_checkpoint(str(folder))) else None


def save_final(model, tokenizer, out: Path) -> None:
    """The final model into the run folder's root, through a staging folder (then moved in, file by file) whose
    files get the permissions a normal file gets, as convert's published folders do."""
    import shutil
    import tempfile

    from lsgtool.core.lsg.folder import write_config
    from lsgtool.core.writing import normal_permissions

    tmp = Path(tempfile.mkdtemp(prefix=".final-", dir=out))
    try:
        model.save_pretrained(tmp)
        if is_lsg_model(model):
            write_config(tmp / "config.json", type(model).__name__, "lsgtool")
        if tokenizer is not None:  # a sentence scorer (--task extractive) has none of its own
            tokenizer.save_pretrained(tmp)
        normal_permissions(tmp)
        for item in tmp.iterdir():
            target = out / item.name
            if target.is_dir():
                shutil.rmtree(target)
            item.replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
