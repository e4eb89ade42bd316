"""Batches for the Trainer: the collator of each task, with the ``length`` column (for length grouping) dropped;
for MLM the collator pads and ``Masking`` masks at the training step (``resumable``: so a resumed run draws the
masks from the random state an uninterrupted one does)."""

from __future__ import annotations

from lsgtool.core.errors import UsageError
from lsgtool.finetune.config import GENERATIVE


class WithoutLengths:
    """The ``length`` column serves the length-grouped sampler only; models (and generate) must not see it."""

    def __init__(self, collator, masking: Masking | None = None):
        self.collator, self.masking = collator, masking

    def __call__(self, features):
        return self.collator([{k: v for k, v in f.items() if k != "length"} for f in features])


class Masking:
    """BERT's masking of a padded batch: 15% of the tokens that are not special become the labels; of those, 80%
    turn into the mask token, 10% into a random token, 10% stay (as transformers' DataCollatorForLanguageModeling).
    Drawn on the CPU from ``generator``, or from the global random state without one."""

    def __init__(self, tokenizer, probability: float = 0.15):
        import torch

        self.special = torch.tensor(sorted(set(tokenizer.all_special_ids)))
        self.mask, self.vocabulary, self.probability = tokenizer.mask_token_id, len(tokenizer), probability

    def __call__(self, batch, generator=None):
        import torch

        ids = batch["input_ids"].cpu()

        def draw(p):
            return torch.bernoulli(torch.full(ids.shape, p), generator=generator).bool()

        chosen = draw(self.probability) & ~torch.isin(ids, self.special)
        masked = draw(0.8) & chosen
        randomised = draw(0.5) & chosen & ~masked
        words = torch.randint(self.vocabulary, ids.shape, generator=generator)
        inputs = torch.where(masked, self.mask, torch.where(randomised, words, ids))
        labels = torch.where(chosen, ids, -100)
        device = batch["input_ids"].device
        return {**batch, "input_ids": inputs.to(device), "labels": labels.to(device)}


def collator(task: str, tokenizer, model) -> WithoutLengths:
    """Padding (and, for MLM, ``Masking`` of 15% of the tokens, applied by the trainer) as the task needs."""
    from transformers import DataCollatorForSeq2Seq, DataCollatorForTokenClassification, DataCollatorWithPadding

    if task == "mlm":
        if tokenizer.mask_token is None:
            raise UsageError("--task mlm needs a tokenizer with a mask token.", "use a BERT/RoBERTa-family model.")
        return WithoutLengths(DataCollatorWithPadding(tokenizer), Masking(tokenizer))
    if task in GENERATIVE:
        return WithoutLengths(DataCollatorForSeq2Seq(tokenizer, model=model))
    if task == "token-classification":
        return WithoutLengths(DataCollatorForTokenClassification(tokenizer))
    return WithoutLengths(DataCollatorWithPadding(tokenizer))
