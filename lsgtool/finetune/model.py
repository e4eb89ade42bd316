"""The model of a fine-tuning run: loaded with the task's head from a resolved ``Source``, converted to LSG
(``model.convert``) or extended to ``model.max_length`` (the LSG paper's 4K -> 16K warm start), partly frozen."""

from __future__ import annotations

import fnmatch
from typing import Any

from lsgtool.core.lsg.folder import is_lsg_model
from lsgtool.core.errors import UsageError
from lsgtool.finetune.config import ModelSettings, Settings

LOAD_TASK = {"classification": "sequence-classification", "multilabel": "sequence-classification",
             "token-classification": "token-classification", "mlm": "masked-lm", "seq2seq": "seq2seq-lm",
             "gsg": "seq2seq-lm"}
DROPOUT_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout",
                "activation_dropout", "dropout_rate", "classifier_dropout")
CONVERT_LENGTH = 4096  # --convert without --max-length


def positions(model) -> int | None:
    """Tokens the model's position table takes; None for LOCOST (no table: any length)."""
    from lsgtool.core.lsg.engine import model_positions

    found = model_positions(model)
    if found is None and getattr(model.config, "model_type", None) != "locost":
        return getattr(model.config, "max_position_embeddings", None)
    return found


def load_model(settings: Settings, source, labels: list[str] | None) -> tuple[Any, int | None, list[str]]:
    """The model for the task from ``source`` (``lsgtool.core.load.resolve``), converted or extended when asked,
    in training mode. Returns the model, the positions it takes, and notes for the user."""
    from lsgtool.core.load import load

    m, task = settings.model, settings.train.task
    overrides: dict[str, Any] = {}
    if labels is not None:
        overrides.update(num_labels=len(labels), id2label=dict(enumerate(labels)),
                         label2id={name: i for i, name in enumerate(labels)})
        if task == "multilabel":
            overrides["problem_type"] = "multi_label_classification"
    if m.dropout is not None:
        overrides.update({key: float(m.dropout) for key in DROPOUT_KEYS if key in source.config})
    model = load(source, task=LOAD_TASK[task], config_overrides=overrides or None)
    length = positions(model)
    notes = []
    if m.convert or (m.max_length and is_lsg_model(model) and m.max_length > (length or 0)):
        notes.append(_convert_note(m))
        model, length = _convert(model, m), m.max_length or CONVERT_LENGTH  # convert makes exactly that many
    model.train()
    return model, length, notes


def _convert(model, m: ModelSettings):
    from lsgtool.core.convert.api import convert

    if is_lsg_model(model) and not m.convert:  # the paper's 4K -> 16K warm start: same layout, more positions
        from lsgtool.core.lsg.engine import lsg_config_of

        c = lsg_config_of(model)
        settings = dict(block_size=c.block_size, sparse_block_size=c.sparse_block_size, sparsity_type=c.sparsity_type,
                        sparsity_factor=c.sparsity_factor, num_global_tokens=c.num_global_tokens)
    else:
        settings = dict(block_size=m.block, sparse_block_size=m.sparse_block or None,
                        sparsity_type=None if m.sparse == "none" else m.sparse, sparsity_factor=m.factor,
                        num_global_tokens=m.global_tokens)
    converted, _ = convert(model, max_length=m.max_length or CONVERT_LENGTH, tokenizer=False, **settings)
    return converted


def _convert_note(m: ModelSettings) -> str:
    return f"converted to LSG for {m.max_length or CONVERT_LENGTH} tokens" if m.convert else \
        f"positions extended to {m.max_length} (LSG warm start)"


def freeze(model, mode: str, patterns: list[str]) -> dict[str, int]:
    """``global-only``: only the global-token embeddings train (LSG paper §4.2 "+ global tuning"); ``patterns``
    (fnmatch on parameter names) are frozen on top. Returns trainable / total parameter counts."""
    names = dict(model.named_parameters())
    if mode == "global-only":
        globals_ = [n for n in names if "global_embeddings" in n]
        if not globals_:
            raise UsageError("--train global-only, but the model has no global-token embeddings (not an LSG model).",
                             "convert it (--convert) or pick an LSG checkpoint, or use --train full.")
        for name, parameter in names.items():
            parameter.requires_grad = name in globals_
    for pattern in patterns:
        matched = [n for n in names if fnmatch.fnmatch(n, pattern)]
        if not matched:
            raise UsageError(f"--freeze {pattern!r} matches no parameter.",
                             f"parameter names look like {', '.join(list(names)[:3])}, ...")
        for name in matched:
            names[name].requires_grad = False
    trainable = sum(p.numel() for p in names.values() if p.requires_grad)
    if trainable == 0:
        raise UsageError("every parameter is frozen: nothing would train.", "freeze fewer patterns.")
    return {"trainable_parameters": trainable, "parameters": sum(p.numel() for p in names.values())}
