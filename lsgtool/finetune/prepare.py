"""Everything a run needs before training, from its settings and its resolved model ``Source``: every check
that can fail on the user's input runs here, so a run fails before it trains (and ``--dry-run`` stops here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lsgtool.core.errors import UsageError
from lsgtool.finetune import data as D
from lsgtool.finetune.config import Settings

DEFAULT_LENGTH = 4096  # a model that says nothing of its length (LOCOST)


@dataclass
class Prepared:
    """What a run trains: the model, its tokenizer, the tokenised examples and their collator; ``info``: the
    numbers and notes the run reports (examples, truncations, parameters, length)."""

    model: Any
    tokenizer: Any
    train: Any
    eval: Any
    collator: Any
    labels: list[str] | None
    info: dict[str, Any] = field(default_factory=dict)


def prepare(settings: Settings, source, progress=None) -> Prepared:
    """Data, model and collator of a run; ``source``: ``lsgtool.core.load.resolve`` of ``settings.model.name``;
    ``progress`` hears the reading of documents where that is long work (``--task extractive``)."""
    from transformers import set_seed

    from lsgtool.core.load import load_tokenizer
    from lsgtool.finetune.collators import collator
    from lsgtool.finetune.model import freeze, load_model

    task, m = settings.train.task, settings.model
    if task == "extractive":
        from lsgtool.finetune.extractive import prepare_extractive

        return prepare_extractive(settings, source, progress)
    raw, labels = D.read(settings.data, task, settings.data.max_examples)
    set_seed(settings.train.seed)  # new heads (a classifier's) start the same in every run and process
    tokenizer = load_tokenizer(source)
    model, positions, notes = load_model(settings, source, labels)
    info: dict[str, Any] = {"notes": notes, **freeze(model, m.train, m.freeze)}
    if m.max_length and positions and m.max_length > positions:
        raise UsageError(f"--max-length {m.max_length} exceeds the model's {positions} positions.",
                         "add --convert to make it an LSG model of that length, or pass a shorter --max-length.")
    info["max_length"] = limit = m.max_length or positions or getattr(model.config, "max_input_length", None) or DEFAULT_LENGTH
    train, evaluation, counts = D.encode(raw, tokenizer, settings, labels, limit)
    return Prepared(model, tokenizer, train, evaluation, collator(task, tokenizer, model), labels, {**info, **counts})


def gsg_preview(settings: Settings, source, show: int) -> dict:
    """The first ``show`` gap-sentence pairs, built from a few documents with the model's tokenizer only."""
    from lsgtool.core.load import load_tokenizer

    raw, _ = D.read(settings.data, "gsg", max(show, 1) * 4)
    built, counts = D.gsg_pairs(raw, settings, load_tokenizer(source))
    rows = built["train"].select(range(min(show, len(built["train"]))))
    return {"task": "gsg", **counts, "pairs": [{"input": r["gsg_input"], "target": r["gsg_target"]} for r in rows]}
