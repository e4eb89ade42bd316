"""A fine-tuning run on transformers' ``Trainer`` / ``Seq2SeqTrainer`` (accelerate underneath): the model for the
task (converted to LSG or extended on the way when asked), the data tokenised with truncation counted, metrics,
checkpoints that resume to the same loss curve, the final model saved as an ordinary folder.

The output folder: the final model (config, safetensors, tokenizer) at its root, ``metrics.json``, ``curves.png``,
``finetune.toml`` (the resolved configuration) and ``checkpoints/``; ``.lsgtool.json`` says whether the run
finished, so an interrupted one is resumed (``--resume``) or replaced (``--overwrite``), never mistaken.
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from lsgtool.core.convert.folder import is_lsg_model
from lsgtool.core.errors import UsageError

CLASSIFIERS = ("classification", "multilabel")
GENERATIVE = ("seq2seq", "gsg")
LOAD_TASK = {"classification": "sequence-classification", "multilabel": "sequence-classification",
             "token-classification": "token-classification", "mlm": "masked-lm", "seq2seq": "seq2seq-lm",
             "gsg": "seq2seq-lm"}
EVAL_TIMING = ("eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "eval_epoch")
DROPOUT_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout",
                "activation_dropout", "dropout_rate", "classifier_dropout")


@dataclass
class Prepared:
    model: Any
    tokenizer: Any
    train: Any
    eval: Any
    collator: Any
    labels: list[str] | None
    info: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- model


def _positions(model) -> int | None:
    from lsgtool.core.convert.engine import model_positions

    found = model_positions(model)
    if found is None and getattr(model.config, "model_type", None) != "locost":
        return getattr(model.config, "max_position_embeddings", None)
    return found


def load_model(config: dict, labels: list[str] | None):
    """The model and tokenizer for the task; converted to LSG (``model.convert``) or extended to
    ``model.max_length`` (an LSG model) when asked."""
    from lsgtool.core.load import load, load_tokenizer, resolve

    m, task = config["model"], config["train"]["task"]
    source = resolve(m["name"], weights_needed=True)
    overrides: dict[str, Any] = {}
    if labels is not None:
        overrides.update(num_labels=len(labels), id2label=dict(enumerate(labels)),
                         label2id={name: i for i, name in enumerate(labels)})
        if task == "multilabel":
            overrides["problem_type"] = "multi_label_classification"
    if m["dropout"] is not None:
        overrides.update({key: float(m["dropout"]) for key in DROPOUT_KEYS if key in source.config})
    tokenizer = load_tokenizer(m["name"])
    model = load(m["name"], task=LOAD_TASK[task], config_overrides=overrides or None)
    notes = []
    if m["convert"] or (m["max_length"] and is_lsg_model(model) and m["max_length"] > (_positions(model) or 0)):
        notes.append(_convert_note(m))
        model = _convert(model, m)
    model.train()
    return model, tokenizer, notes


def _convert(model, m: dict):
    from lsgtool.core.convert.api import convert

    if is_lsg_model(model) and not m["convert"]:  # the paper's 4K -> 16K warm start: same layout, more positions
        from lsgtool.core.convert.engine import lsg_config_of

        c = lsg_config_of(model)
        settings = dict(block_size=c.block_size, sparse_block_size=c.sparse_block_size, sparsity_type=c.sparsity_type,
                        sparsity_factor=c.sparsity_factor, num_global_tokens=c.num_global_tokens)
    else:
        settings = dict(block_size=m["block"], sparse_block_size=m["sparse_block"] or None,
                        sparsity_type=None if m["sparse"] == "none" else m["sparse"], sparsity_factor=m["factor"],
                        num_global_tokens=m["global"])
    converted, _ = convert(model, max_length=m["max_length"] or 4096, tokenizer=False, **settings)
    return converted


def _convert_note(m: dict) -> str:
    return f"converted to LSG for {m['max_length'] or 4096} tokens" if m["convert"] else \
        f"positions extended to {m['max_length']} (LSG warm start)"


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


# ---------------------------------------------------------------- data


def prepare(config: dict) -> Prepared:
    """Data, model and collator of a run: every check that can fail on the user's input runs before training."""
    from lsgtool.finetune import data as D

    task, d = config["train"]["task"], config["data"]
    raw = D.load(d["name"])
    columns = {"text": d["text_column"]}
    if task in CLASSIFIERS or task == "token-classification":
        columns["label"] = d["label_column"]
    if task == "seq2seq":
        columns["summary"] = d["summary_column"]
    D.check_columns(raw, columns)
    if d["max_examples"]:
        raw = type(raw)({k: v.select(range(min(len(v), d["max_examples"]))) for k, v in raw.items()})
    labels = None
    if task in CLASSIFIERS:
        labels = D.label_names(raw, d["label_column"], multilabel=task == "multilabel")
    elif task == "token-classification":
        labels = D.label_names(raw, d["label_column"], multilabel=True)
    from transformers import set_seed

    set_seed(config["train"]["seed"])  # new heads (a classifier's) start the same in every run and process
    model, tokenizer, notes = load_model(config, labels)
    info: dict[str, Any] = {"notes": notes, **freeze(model, config["model"]["train"], config["model"]["freeze"])}
    positions = _positions(model)
    if config["model"]["max_length"] and positions and config["model"]["max_length"] > positions:
        raise UsageError(f"--max-length {config['model']['max_length']} exceeds the model's {positions} positions.",
                         "add --convert to make it an LSG model of that length, or pass a shorter --max-length.")
    limit = config["model"]["max_length"] or positions or getattr(model.config, "max_input_length", None) or 4096
    info["max_length"] = limit
    train, evaluation, collator, counts = _tokenised(raw, tokenizer, model, task, config, labels, limit)
    info.update(counts)
    return Prepared(model, tokenizer, train, evaluation, collator, labels, info)


def _split(raw, fraction: float, seed: int):
    if "validation" in raw:
        return raw["train"], raw["validation"]
    if "test" in raw and len(raw) == 2:
        return raw["train"], raw["test"]
    if fraction <= 0 or len(raw["train"]) < 4:
        return raw["train"], None
    parts = raw["train"].train_test_split(test_size=fraction, seed=seed)
    return parts["train"], parts["test"]


def gsg_dataset(raw, config: dict, tokenizer):
    """The GSG pairs of every split (cached by datasets' fingerprints), documents without a pair dropped and
    counted."""
    from lsgtool.finetune.gsg import GSGOptions, map_function, parse_ratio, sentinel_for

    g = config["gsg"]
    sentinel, what = sentinel_for(tokenizer)
    options = GSGOptions(g["strategy"], parse_ratio(str(g["ratio"])), float(g["noise"]), config["train"]["seed"])
    built = raw.map(map_function(config["data"]["text_column"], options, sentinel), batched=True, with_indices=True,
                    desc="gap sentences")
    before = sum(len(s) for s in built.values())
    built = built.filter(lambda row: bool(row["gsg_target"]))
    return built, {"gsg_sentinel": f"{sentinel} ({what})", "gsg_skipped_documents": before - sum(len(s) for s in built.values())}


def _tokenised(raw, tokenizer, model, task, config, labels, limit):
    from datasets import DatasetDict

    from lsgtool.finetune import data as D

    d = config["data"]
    counts: dict[str, Any] = {}
    text, target = d["text_column"], d["summary_column"] if task == "seq2seq" else None
    if task == "gsg":
        raw, counts = gsg_dataset(raw, config, tokenizer)
        text, target = "gsg_input", "gsg_target"
    if task == "token-classification":
        tokenised, truncated = _token_labels(raw, tokenizer, d, labels, limit)
        counts.update(truncated_examples=truncated)
    else:
        done = D.tokenize(raw, tokenizer, text, limit, target=target, target_length=d["target_length"])
        tokenised = done.data
        counts.update(truncated_examples=done.truncated, examples=done.examples, longest_input=done.longest)
        if task in CLASSIFIERS:
            tokenised = tokenised.map(_label_encoder(labels, d["label_column"], task == "multilabel"), batched=True)
    keep = {"input_ids", "attention_mask", "labels", "length"}
    tokenised = DatasetDict({k: v.remove_columns([c for c in v.column_names if c not in keep]) for k, v in tokenised.items()})
    train, evaluation = _split(tokenised, d["validation_split"], config["train"]["seed"])
    if len(train) == 0:
        raise UsageError(f"--data {d['name']} leaves no training examples.", "pass more data.")
    counts.update(train_examples=len(train), eval_examples=0 if evaluation is None else len(evaluation))
    return train, evaluation, _WithoutLengths(_collator(task, tokenizer, model)), counts


class _WithoutLengths:
    """The ``length`` column serves the length-grouped sampler only; models (and generate) must not see it."""

    def __init__(self, collator):
        self.collator = collator

    def __call__(self, features):
        return self.collator([{k: v for k, v in f.items() if k != "length"} for f in features])


def _label_encoder(labels: list[str], column: str, multilabel: bool):
    index = {name: i for i, name in enumerate(labels)}

    def encode(batch):
        if multilabel:
            rows = []
            for values in batch[column]:
                row = [0.0] * len(labels)
                for v in values:
                    row[index[str(v)]] = 1.0
                rows.append(row)
            return {"labels": rows}
        return {"labels": [index[str(v)] for v in batch[column]]}

    return encode


def _token_labels(raw, tokenizer, d: dict, labels: list[str], limit: int):
    """Words and their tags -> tokens with the tag on each word's first token (-100 elsewhere)."""
    index = {name: i for i, name in enumerate(labels)}
    truncated = [0]

    def encode(batch):
        enc = tokenizer(batch[d["text_column"]], is_split_into_words=True, truncation=True, max_length=limit,
                        return_overflowing_tokens=False)
        out = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": [], "length": []}
        for i, tags in enumerate(batch[d["label_column"]]):
            words = enc.word_ids(i)
            previous, row = None, []
            for w in words:
                row.append(-100 if w is None or w == previous else index[str(tags[w])])
                previous = w
            if max(w for w in words if w is not None) + 1 < len(tags):
                truncated[0] += 1
            out["labels"].append(row)
            out["length"].append(len(row))
        return out

    mapped = raw.map(encode, batched=True)
    return mapped, truncated[0]


def _collator(task, tokenizer, model):
    from transformers import (DataCollatorForLanguageModeling, DataCollatorForSeq2Seq,
                              DataCollatorForTokenClassification, DataCollatorWithPadding)

    if task == "mlm":
        if tokenizer.mask_token is None:
            raise UsageError("--task mlm needs a tokenizer with a mask token.", "use a BERT/RoBERTa-family model.")
        return DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    if task in GENERATIVE:
        return DataCollatorForSeq2Seq(tokenizer, model=model)
    if task == "token-classification":
        return DataCollatorForTokenClassification(tokenizer)
    return DataCollatorWithPadding(tokenizer)


# ---------------------------------------------------------------- metrics


def metrics_function(task: str, tokenizer) -> tuple[Callable | None, str]:
    """compute_metrics for the task and the metric the best checkpoint is chosen by."""
    import numpy as np

    if task in CLASSIFIERS or task == "token-classification":
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

        return scores, "f1_micro" if task == "multilabel" else "accuracy"
    if task in GENERATIVE:
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

        return rouge, "rougeLsum"
    return None, "loss"


# ---------------------------------------------------------------- training


def precision_flags(choice: str) -> dict[str, bool]:
    cuda = torch.cuda.is_available()
    if choice == "auto":
        return {"bf16": bool(cuda and torch.cuda.is_bf16_supported())}
    if choice == "fp16" and not cuda:
        raise UsageError("train.precision fp16 needs a CUDA device.", "use auto, fp32 or bf16 on the CPU.")
    return {"bf16": choice == "bf16", "fp16": choice == "fp16"}


def arguments(config: dict, out: Path, has_eval: bool, metric: str, generate: bool):
    from transformers import Seq2SeqTrainingArguments

    t = config["train"]
    schedule = {"inverse_sqrt": "inverse_sqrt", "constant": "constant_with_warmup" if t["warmup"] else "constant"}
    strategy = ("steps" if t["eval_steps"] else "epoch") if has_eval else "no"
    save = "steps" if (t["save_steps"] or (has_eval and t["eval_steps"])) else "epoch"
    return Seq2SeqTrainingArguments(
        output_dir=str(out / "checkpoints"), learning_rate=t["lr"], num_train_epochs=t["epochs"],
        max_steps=t["max_steps"] or -1, per_device_train_batch_size=t["batch_size"],
        per_device_eval_batch_size=t["batch_size"], gradient_accumulation_steps=t["grad_accum"],
        lr_scheduler_type=schedule.get(t["schedule"], t["schedule"]), warmup_steps=t["warmup"],
        weight_decay=t["weight_decay"], seed=t["seed"], data_seed=t["seed"], eval_strategy=strategy,
        eval_steps=t["eval_steps"] or None, save_strategy=save, save_steps=t["save_steps"] or t["eval_steps"] or 500,
        save_total_limit=t["save_total_limit"] or None, logging_steps=t["logging_steps"], logging_strategy="steps",
        load_best_model_at_end=has_eval, metric_for_best_model=("eval_loss" if metric == "loss" else metric) if has_eval else None,
        greater_is_better=None if metric == "loss" else True, report_to="none", disable_tqdm=True,
        train_sampling_strategy=t["sampling"], predict_with_generate=generate,
        generation_max_length=t["generate_length"], use_cpu=not torch.cuda.is_available(),
        remove_unused_columns=False, **_checkpointing(t["gradient_checkpointing"]), **precision_flags(t["precision"]),
        # transformers scales every loss by the process count for models that would average tokens across
        # devices; classification heads do not, so their gradients doubled on 2 processes: each process's mean
        # loss, averaged by DDP, is the global batch's mean (token losses: per-process token means)
        average_tokens_across_devices=False)


def _checkpointing(enabled: bool) -> dict[str, bool]:
    """Gradient (activation) checkpointing under the name the installed transformers uses."""
    import inspect

    from transformers import TrainingArguments

    if not enabled:
        return {}
    names = inspect.signature(TrainingArguments.__init__).parameters
    return {"activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing": True}


class Stop:
    """Set from a SIGINT handler: the trainer checkpoints at the end of the current step and stops."""

    def __init__(self):
        self.requested = False


def callbacks(stop: Stop, on_log: Callable[[dict, Any], None] | None, patience: int):
    from transformers import EarlyStoppingCallback, TrainerCallback

    class Control(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if stop.requested:
                control.should_save = True
                control.should_training_stop = True
            return control

        def on_log(self, args, state, control, logs=None, **kwargs):
            if on_log is not None and logs:
                on_log(logs, state)

    found = [Control()]
    if patience:
        found.append(EarlyStoppingCallback(early_stopping_patience=patience))
    return found


def trainer_for(config: dict, prepared: Prepared, out: Path, stop: Stop, on_log=None):
    from transformers import Seq2SeqTrainer, Trainer

    task = config["train"]["task"]
    compute, metric = metrics_function(task, prepared.tokenizer)
    metric = config["train"]["metric"] or metric
    has_eval = prepared.eval is not None
    generate = task in GENERATIVE and has_eval
    args = arguments(config, out, has_eval, metric if compute or metric == "loss" else "loss", generate)
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    cls = Seq2SeqTrainer if task in GENERATIVE else Trainer
    trainer = cls(model=prepared.model, args=args, train_dataset=prepared.train, eval_dataset=prepared.eval,
                  data_collator=prepared.collator, processing_class=prepared.tokenizer,
                  compute_metrics=compute if has_eval else None,
                  callbacks=callbacks(stop, on_log, config["train"]["patience"] if has_eval else 0))
    for printer in (PrinterCallback, ProgressCallback):  # lsgtool shows progress and logs itself
        trainer.remove_callback(printer)
    return trainer


def last_checkpoint(out: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    folder = out / "checkpoints"
    return Path(found) if folder.is_dir() and (found := get_last_checkpoint(str(folder))) else None


def curves(history: list[dict], path: Path, title: str) -> Path:
    """Training loss and evaluation loss/metrics against the step."""
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
        colours = ["tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]
        for name, colour in zip(names, colours * 3):  # not the losses' blue and orange
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


def save_final(model, tokenizer, out: Path) -> None:
    """The final model into the run folder's root, through a staging folder (then moved in, file by file)."""
    import shutil
    import tempfile

    from lsgtool.core.convert.folder import write_config

    tmp = Path(tempfile.mkdtemp(prefix=".final-", dir=out))
    try:
        model.save_pretrained(tmp)
        if is_lsg_model(model):
            write_config(tmp / "config.json", type(model).__name__, "lsgtool")
        tokenizer.save_pretrained(tmp)
        for item in tmp.iterdir():
            target = out / item.name
            if target.is_dir():
                shutil.rmtree(target)
            item.replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def eval_metrics(logs: dict) -> dict:
    """The evaluation results of a log entry (loss and metrics), without its timings."""
    return {k: v for k, v in logs.items() if k.startswith("eval_") and k not in EVAL_TIMING}


def summary_numbers(history: list[dict]) -> dict[str, Any]:
    losses = [h["loss"] for h in history if "loss" in h]
    out = {"first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None}
    if losses and losses[0]:
        out["loss_drop"] = round(1 - losses[-1] / losses[0], 4)
    evals = [h for h in history if "eval_loss" in h]
    if evals:
        out["final_eval"] = eval_metrics(evals[-1])
    return {k: (round(v, 6) if isinstance(v, float) and math.isfinite(v) else v) for k, v in out.items()}


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")
    tmp.replace(path)
