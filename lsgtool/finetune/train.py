"""The Trainer of a run (``Trainer`` / ``Seq2SeqTrainer``, accelerate underneath): its arguments, metrics and
callbacks (a requested stop, early stopping, progress reported through ``lsgtool.progress.Progress``), the last
checkpoint of a run folder, and the final model saved into the folder's root."""

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

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs:
                progress.advance(state.global_step - self.shown, detail=log_line(logs, state.global_step, state.max_steps))
                self.shown = state.global_step

    found = [Control()]
    if patience:
        found.append(EarlyStoppingCallback(early_stopping_patience=patience))
    return found


def trainer_for(settings: Settings, prepared: Prepared, out: Path, stop: Stop, progress: Progress):
    from transformers import Seq2SeqTrainer, Trainer
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from lsgtool.finetune.arguments import arguments

    task = settings.train.task
    compute, metric = metrics_function(task, prepared.tokenizer)
    metric = settings.train.metric or metric
    has_eval = prepared.eval is not None
    generate = task in GENERATIVE and has_eval
    args = arguments(settings, out, has_eval, metric if compute or metric == "loss" else "loss", generate)
    cls = _epoch_seeded(Seq2SeqTrainer if task in GENERATIVE else Trainer, settings.train.seed)
    trainer = cls(model=prepared.model, args=args, train_dataset=prepared.train, eval_dataset=prepared.eval,
                  data_collator=prepared.collator, processing_class=prepared.tokenizer,
                  compute_metrics=compute if has_eval else None,
                  callbacks=callbacks(stop, progress, settings.train.patience if has_eval else 0))
    for printer in (PrinterCallback, ProgressCallback):  # progress goes to lsgtool's Progress instead
        trainer.remove_callback(printer)
    return trainer


def _epoch_seeded(cls, seed: int):
    """``cls`` whose length-grouped sampler draws each epoch's order from (seed, epoch): transformers' draws from
    the global RNG when the epoch's iterator starts, which a resumed run has not restored yet (it restores the RNG
    after the skipped batches), so a run resumed in epoch >= 2 trained on another order. The epoch is the trainer
    state's, which a resumed run loads from its checkpoint."""
    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    class EpochSeededSampler(LengthGroupedSampler):
        def __init__(self, batch_size: int, lengths: list[int], epoch):
            super().__init__(batch_size, lengths=lengths)
            self.epoch = epoch

        def __iter__(self):
            self.generator = torch.Generator().manual_seed(seed + self.epoch())
            return super().__iter__()

    class Seeded(cls):
        def _get_train_sampler(self, train_dataset=None):
            sampler = super()._get_train_sampler(train_dataset)
            if type(sampler) is LengthGroupedSampler:
                return EpochSeededSampler(sampler.batch_size, sampler.lengths, lambda: int(self.state.epoch or 0))
            return sampler

    Seeded.__name__ = Seeded.__qualname__ = cls.__name__
    return Seeded


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
        tokenizer.save_pretrained(tmp)
        normal_permissions(tmp)
        for item in tmp.iterdir():
            target = out / item.name
            if target.is_dir():
                shutil.rmtree(target)
            item.replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
