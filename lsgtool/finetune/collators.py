"""Batches for the Trainer: the collator of each task, with the ``length`` column (for length grouping) dropped."""

from __future__ import annotations

from lsgtool.core.errors import UsageError
from lsgtool.finetune.config import GENERATIVE


class WithoutLengths:
    """The ``length`` column serves the length-grouped sampler only; models (and generate) must not see it."""

    def __init__(self, collator):
        self.collator = collator

    def __call__(self, features):
        return self.collator([{k: v for k, v in f.items() if k != "length"} for f in features])


def collator(task: str, tokenizer, model) -> WithoutLengths:
    """Padding (and, for MLM, masking 15% of the tokens) as the task needs."""
    from transformers import (DataCollatorForLanguageModeling, DataCollatorForSeq2Seq,
                              DataCollatorForTokenClassification, DataCollatorWithPadding)

    if task == "mlm":
        if tokenizer.mask_token is None:
            raise UsageError("--task mlm needs a tokenizer with a mask token.", "use a BERT/RoBERTa-family model.")
        return WithoutLengths(DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15))
    if task in GENERATIVE:
        return WithoutLengths(DataCollatorForSeq2Seq(tokenizer, model=model))
    if task == "token-classification":
        return WithoutLengths(DataCollatorForTokenClassification(tokenizer))
    return WithoutLengths(DataCollatorWithPadding(tokenizer))
