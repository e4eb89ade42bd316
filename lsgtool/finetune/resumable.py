"""The Trainer class a run trains with: transformers' ``Trainer`` / ``Seq2SeqTrainer`` made to resume at the exact
point of its checkpoint, so that a run stopped by Ctrl-C and resumed trains as one that never stopped:

- each epoch's order comes from (seed, epoch), never from the global random state;
- the random state (python, numpy, torch) is restored once the resumed step's batches are fetched, before the
  step draws from it: MLM masks are drawn there, in the step, as dropout is. Drawn in the collator, they came
  from another state in a resumed run: accelerate's loader makes each batch one ahead, so the first batch after
  a checkpoint was masked before it, and transformers restored the state only after making it;
- the loss summed since the last logged step goes with the checkpoint, so the first log after a resume averages
  the steps an uninterrupted run's does (``train.logging_steps`` > 1).
"""

from __future__ import annotations

import copy
import json
import os
from typing import Callable

from lsgtool.core.writing import write_json

WINDOW = "lsgtool_loss_window_{}.json"  # beside transformers' rng_state_*.pth in each checkpoint


def resumable(cls, seed: int, masking: Callable | None = None, sampling: str = "group_by_length"):
    """``cls`` resuming exactly; ``masking(batch, generator)`` masks MLM batches (training: the global random
    state; evaluation: a generator seeded the same at each evaluation, so evaluations compare the same masks);
    ``sampling``: ``train.sampling``, whose sequential order a transformers without ``train_sampling_strategy``
    (before 5.x) does not have."""
    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    from lsgtool.core import compat

    compat.require("trainer_resume")

    class EpochSeededSampler(LengthGroupedSampler):
        """transformers' draws each epoch's order from the global state when the epoch's iterator starts, which a
        resumed run has not restored yet: a run resumed in epoch >= 2 trained on another order."""

        def __init__(self, batch_size: int, lengths: list[int], epoch):
            super().__init__(batch_size, lengths=lengths)
            self.epoch = epoch

        def __iter__(self):
            self.generator = torch.Generator().manual_seed(seed + self.epoch())
            return super().__iter__()

    class Resumable(cls):
        _restore = None  # the checkpoint whose random state the resumed run has still to take
        _carried = None  # (loss summed, step last logged) before the checkpoint
        _window = None  # the loss summed since the last log (transformers' tensor, zeroed in place at each log)
        _eval_masks = None

        def train(self, resume_from_checkpoint=None, **kwargs):
            self._restore = resume_from_checkpoint
            self._carried = _read_window(resume_from_checkpoint, self.args.process_index)
            return super().train(resume_from_checkpoint=resume_from_checkpoint, **kwargs)

        def _get_train_sampler(self, train_dataset=None):
            if sampling == "sequential" and not hasattr(self.args, "train_sampling_strategy"):
                dataset = self.train_dataset if train_dataset is None else train_dataset
                return torch.utils.data.SequentialSampler(dataset)
            sampler = super()._get_train_sampler(train_dataset)
            if type(sampler) is LengthGroupedSampler:
                return EpochSeededSampler(sampler.batch_size, sampler.lengths, lambda: int(self.state.epoch or 0))
            return sampler

        def _load_rng_state(self, checkpoint):
            # transformers calls it before an epoch resumed at its start (taken), and after the first batches of
            # one resumed inside it (already taken in get_batch_samples: skipped)
            if self._restore is not None:
                self._restore = None
                super()._load_rng_state(checkpoint)

        def get_batch_samples(self, epoch_iterator, num_batches, device):
            batches, count = super().get_batch_samples(epoch_iterator, num_batches, device)
            if self._restore is not None:
                self._load_rng_state(self._restore)
            if masking is None:
                return batches, count
            batches = [masking(batch) for batch in batches]
            return batches, self._get_num_items_in_batch(batches, device)

        def evaluate(self, *args, **kwargs):
            self._eval_masks = torch.Generator().manual_seed(seed)
            return super().evaluate(*args, **kwargs)

        def prediction_step(self, model, inputs, *args, **kwargs):
            if masking is not None:
                inputs = masking(inputs, self._eval_masks)
            # transformers' Seq2SeqTrainer (5.x) fills the model's own generation config with its old defaults
            # (max_length 20, ...) after each generating evaluation step; saved with the model, they made every
            # later summary of it 20 tokens long. Evaluation leaves the model's settings as they were.
            config = getattr(self.model, "generation_config", None)
            kept = copy.deepcopy(config)
            try:
                return super().prediction_step(model, inputs, *args, **kwargs)
            finally:
                if config is not None:  # the same object put back as it was (a wrapper's attribute reads through)
                    config.__dict__.clear()
                    config.__dict__.update(kept.__dict__)

        def _maybe_log_save_evaluate(self, tr_loss, *args, **kwargs):
            if self._carried is not None:  # the first step after a resume: tr_loss holds its loss alone
                summed, self._globalstep_last_logged = self._carried
                tr_loss += summed
                self._total_loss_scalar -= summed  # train_loss averages this call's steps, as transformers' does
                self._carried = None
            self._window = tr_loss
            return super()._maybe_log_save_evaluate(tr_loss, *args, **kwargs)

        def _save_rng_state(self, output_dir):
            super()._save_rng_state(output_dir)
            if self._window is not None:
                write_json(os.path.join(output_dir, WINDOW.format(self.args.process_index)),
                           {"loss": float(self._window), "logged_at": self._globalstep_last_logged})

    Resumable.__name__ = Resumable.__qualname__ = cls.__name__
    return Resumable


def _read_window(checkpoint: str | None, process: int) -> tuple[float, int] | None:
    if checkpoint is None or not os.path.isfile(path := os.path.join(checkpoint, WINDOW.format(process))):
        return None
    with open(path) as handle:
        window = json.load(handle)
    return float(window["loss"]), int(window["logged_at"])
