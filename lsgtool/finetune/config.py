"""The resolved configuration of a fine-tuning run: defaults < recipe < ``--config run.toml`` < options typed
on the command line < ``--set section.key=value``. Every key is listed here; an unknown one is a usage error.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TASKS = ("classification", "multilabel", "token-classification", "mlm", "seq2seq", "gsg")

DEFAULTS: dict[str, dict[str, Any]] = {
    "model": {"name": "", "max_length": 0, "train": "full", "freeze": [], "dropout": None,
              "convert": False, "block": 128, "factor": 2, "sparse": "norm", "sparse_block": 0, "global": 1},
    "data": {"name": "", "text_column": "text", "label_column": "label", "summary_column": "summary",
             "validation_split": 0.1, "target_length": 256, "max_examples": 0},
    "train": {"task": "classification", "lr": 5e-5, "epochs": 3.0, "max_steps": 0, "batch_size": 8, "grad_accum": 1,
              "schedule": "linear", "warmup": 0.0, "weight_decay": 0.0, "seed": 42, "precision": "auto",
              "gradient_checkpointing": False, "eval_steps": 0, "save_steps": 0, "logging_steps": 10,
              "metric": "", "patience": 0, "save_total_limit": 2, "sampling": "group_by_length",
              "generate_length": 128},
    "gsg": {"strategy": "ind", "ratio": "0.3", "noise": 0.0},
}

RECIPES: dict[str, dict[str, dict[str, Any]]] = {
    # LSG paper App. A, Table 9: batch 32, linear decay, dropout 0.1; classification 2e-5..1e-4 without warm-up
    "lsg-classification": {"model": {"dropout": 0.1},
                           "train": {"lr": 2e-5, "epochs": 3.0, "batch_size": 8, "grad_accum": 4, "schedule": "linear",
                                     "warmup": 0.0}},
    # summarisation: 8e-5, 10% warm-up
    "lsg-summarization": {"model": {"dropout": 0.1},
                          "train": {"lr": 8e-5, "epochs": 6.0, "batch_size": 8, "grad_accum": 4, "schedule": "linear",
                                    "warmup": 0.1}},
    # LOCOST §5.3: constant 5e-4, dropout 0.1, bf16 (where the device has it)
    "locost-finetune": {"model": {"dropout": 0.1},
                        "train": {"lr": 5e-4, "schedule": "constant", "warmup": 0.0, "precision": "auto"}},
    # LOCOST §5.2: inverse square root with 10k warm-up steps, no dropout; GSG ratio 0.3
    "locost-pretrain": {"model": {"dropout": 0.0},
                        "train": {"task": "gsg", "lr": 1e-3, "schedule": "inverse_sqrt", "warmup": 10000},
                        "gsg": {"ratio": "0.3"}},
}


def _merge(base: dict, layer: dict, where: str) -> None:
    for section, values in layer.items():
        if section not in DEFAULTS or not isinstance(values, dict):
            raise UsageError(f"{where}: unknown section [{section}].", f"sections: {', '.join(DEFAULTS)}.")
        for key, value in values.items():
            key = key.replace("-", "_")
            if key not in DEFAULTS[section]:
                raise UsageError(f"{where}: unknown key {section}.{key}.",
                                 f"keys of [{section}]: {', '.join(DEFAULTS[section])}.")
            base[section][key] = _typed(section, key, value, where)


def _typed(section: str, key: str, value: Any, where: str) -> Any:
    default = DEFAULTS[section][key]
    if default is None or isinstance(default, str) and key == "ratio":
        return value if not (key == "ratio" and isinstance(value, (int, float))) else str(value)
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if not (key == "warmup" and isinstance(value, int) and value >= 1) else value
    elif isinstance(default, int) and isinstance(value, int) and not isinstance(value, bool):
        return value
    elif isinstance(default, str) and isinstance(value, str):
        return value
    elif isinstance(default, list) and isinstance(value, list):
        return [str(v) for v in value]
    raise UsageError(f"{where}: {section}.{key} = {value!r} should be {type(default).__name__}.",
                     f"e.g. {section}.{key} = {default!r}" if default != "" else f"give {section}.{key} a text.")


def parse_set(assignment: str) -> dict[str, dict[str, Any]]:
    """``train.lr=5e-4`` -> {"train": {"lr": 5e-4}}; the value is read as TOML (a bare word is a string)."""
    name, sep, raw = assignment.partition("=")
    section, dot, key = name.strip().partition(".")
    if not sep or not dot or not key:
        raise UsageError(f"--set {assignment!r} is not section.key=value.", "e.g. --set train.lr=5e-4.")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return {section: {key: value}}


def read_toml(path: Path) -> dict:
    if not path.is_file():
        raise UsageError(f"--config {path}: no such file.", "pass a TOML file like the finetune.toml of a run.")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--config {path} is not valid TOML: {exc}.", "fix the line named above.") from None


def resolve(recipe: str | None, file: Path | None, typed: dict[str, dict[str, Any]], sets: list[str]) -> dict:
    """The configuration from every layer, checked key by key."""
    config = copy.deepcopy(DEFAULTS)
    if recipe is not None:
        if recipe not in RECIPES:
            raise UsageError(f"unknown --recipe {recipe!r}.", f"recipes: {', '.join(RECIPES)}.")
        _merge(config, RECIPES[recipe], f"recipe {recipe}")
    if file is not None:
        _merge(config, read_toml(file), f"--config {file}")
    _merge(config, {s: {k: v for k, v in values.items() if v is not None} for s, values in typed.items()},
           "the command line")
    for assignment in sets:
        _merge(config, parse_set(assignment), f"--set {assignment}")
    check(config)
    return config


def check(config: dict) -> None:
    train, model = config["train"], config["model"]
    if train["task"] not in TASKS:
        raise UsageError(f"unknown --task {train['task']!r}.", f"tasks: {', '.join(TASKS)}.")
    if model["train"] not in ("full", "global-only"):
        raise UsageError(f"--train {model['train']!r} is neither full nor global-only.", "pass --train full or global-only.")
    if not model["name"]:
        raise UsageError("no --model given.", "pass --model NAME|PATH (a preset, a folder, a Hub id).")
    if not config["data"]["name"]:
        raise UsageError("no --data given.", "pass --data NAME_OR_PATH (json/jsonl/csv/parquet/txt, a save_to_disk "
                                             "folder, or a Hub dataset).")
    for section, key in (("train", "lr"), ("train", "batch_size"), ("train", "grad_accum")):
        if not config[section][key] > 0:
            raise UsageError(f"{section}.{key} must be positive, got {config[section][key]!r}.", "e.g. --set train.lr=5e-5.")
    if train["precision"] not in ("auto", "fp32", "bf16", "fp16"):
        raise UsageError(f"train.precision {train['precision']!r} is not auto, fp32, bf16 or fp16.", "e.g. auto.")
    if train["sampling"] not in ("group_by_length", "random", "sequential"):
        raise UsageError(f"train.sampling {train['sampling']!r} is not group_by_length, random or sequential.",
                         "e.g. group_by_length (pads least).")
    if not 0 <= config["data"]["validation_split"] < 1:
        raise UsageError("data.validation_split must lie in [0, 1).", "e.g. 0.1, or 0 for no evaluation.")


def to_toml(config: dict) -> str:
    """The resolved configuration as TOML (what ``--config`` reads back)."""
    lines = []
    for section, values in config.items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            if value is None:
                continue
            lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))
