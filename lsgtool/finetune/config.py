"""The settings of a fine-tuning run, typed: defaults < recipe < ``--config run.toml`` < options typed on the
command line < ``--set section.key=value``, every layer a TOML-shaped ``{section: {key: value}}``. Every key is
a field here; an unknown one is a usage error. The run folder's ``finetune.toml`` is ``to_toml`` of the result,
which ``--config`` reads back.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TASKS = ("classification", "multilabel", "token-classification", "mlm", "seq2seq", "gsg", "extractive")
CLASSIFIERS = ("classification", "multilabel")
GENERATIVE = ("seq2seq", "gsg")  # trained on (input, target) pairs; evaluated on generated text


@dataclass
class ModelSettings:
    """``[model]``: what trains, converted to LSG (``convert``) or extended (``max_length``), frozen in part."""

    name: str = ""
    max_length: int = 0
    train: str = "full"
    freeze: list[str] = field(default_factory=list)
    dropout: float | None = None
    convert: bool = False
    block: int = 128
    factor: int = 2
    sparse: str = "norm"
    sparse_block: int = 0
    global_tokens: int = field(default=1, metadata={"key": "global"})


@dataclass
class DataSettings:
    """``[data]``: where the examples are and which columns hold what."""

    name: str = ""
    text_column: str = "text"
    label_column: str = "label"
    summary_column: str = "summary"
    validation_split: float = 0.1
    target_length: int = 256
    max_examples: int = 0


@dataclass
class TrainSettings:
    """``[train]``: the task and the Trainer's settings. ``warmup``: a share of the steps, or steps (an int >= 1)."""

    task: str = "classification"
    lr: float = 5e-5
    epochs: float = 3.0
    max_steps: int = 0
    batch_size: int = 8
    grad_accum: int = 1
    schedule: str = "linear"
    warmup: float = 0.0
    weight_decay: float = 0.0
    seed: int = 42
    precision: str = "auto"
    gradient_checkpointing: bool = False
    eval_steps: int = 0
    save_steps: int = 0
    logging_steps: int = 10
    metric: str = ""
    patience: int = 0
    save_total_limit: int = 2
    sampling: str = "group_by_length"
    generate_length: int = 128


@dataclass
class GSGSettings:
    """``[gsg]``: gap-sentence generation (``ratio``: a share, or a range ``low..high``)."""

    strategy: str = "ind"
    ratio: str = "0.3"
    noise: float = 0.0


@dataclass
class Settings:
    """A whole run's settings, section by section as in the TOML file."""

    model: ModelSettings = field(default_factory=ModelSettings)
    data: DataSettings = field(default_factory=DataSettings)
    train: TrainSettings = field(default_factory=TrainSettings)
    gsg: GSGSettings = field(default_factory=GSGSettings)

    def to_toml(self) -> str:
        """These settings as TOML (what ``--config`` reads back); unset values (None) are left out."""
        lines = []
        for section in SECTIONS:
            lines.append(f"[{section}]")
            part = getattr(self, section)
            for key, name in _keys(part).items():
                if getattr(part, name) is not None:
                    lines.append(f"{key} = {_toml_value(getattr(part, name))}")
            lines.append("")
        return "\n".join(lines)


SECTIONS = tuple(f.name for f in fields(Settings))
DEFAULT = Settings()

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


# a task's own defaults, under every layer: a sentence scorer (``extractive``) is a linear head trained from scratch,
# whose rate and length are not a pretrained model's (tuned on the tuning part of ../shared/quality)
TASK_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "extractive": {"train": {"lr": 1e-2, "epochs": 40.0, "batch_size": 8, "schedule": "constant",
                             "weight_decay": 1e-3, "sampling": "random", "logging_steps": 5}},
}


def _keys(part) -> dict[str, str]:
    """TOML key -> attribute of a section (``global`` is ``global_tokens``: a Python keyword)."""
    return {f.metadata.get("key", f.name): f.name for f in fields(part)}


def _merge(settings: Settings, layer: dict, where: str) -> None:
    for section, values in layer.items():
        if section not in SECTIONS or not isinstance(values, dict):
            raise UsageError(f"{where}: unknown section [{section}].", f"sections: {', '.join(SECTIONS)}.")
        part, keys = getattr(settings, section), _keys(getattr(settings, section))
        for key, value in values.items():
            key = key.replace("-", "_")
            if key not in keys:
                raise UsageError(f"{where}: unknown key {section}.{key}.", f"keys of [{section}]: {', '.join(keys)}.")
            setattr(part, keys[key], _typed(section, key, value, getattr(getattr(DEFAULT, section), keys[key]), where))


def _typed(section: str, key: str, value: Any, default: Any, where: str) -> Any:
    if (section, key) == ("model", "dropout"):  # a number or nothing (the model's own)
        if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
            return None if value is None else float(value)
        raise UsageError(f"{where}: model.dropout must be a number, got {value!r}.", "e.g. --set model.dropout=0.1.")
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
    if path.is_dir():
        inside = path / "finetune.toml"
        raise UsageError(f"--config {path} is a folder, not a TOML file.",
                         f"pass --config {inside}." if inside.is_file() else "pass a TOML file like the finetune.toml "
                                                                            "of a run.")
    if not path.is_file():
        raise UsageError(f"--config {path}: no such file.", "pass a TOML file like the finetune.toml of a run.")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--config {path} is not valid TOML: {exc}.", "fix the line named above.") from None


def resolve(recipe: str | None, file: Path | None, typed: dict[str, dict[str, Any]], sets: list[str]) -> Settings:
    """The settings from every layer, checked key by key; ``typed``: the options given, None for those not."""
    layers = []
    if recipe is not None:
        if recipe not in RECIPES:
            raise UsageError(f"unknown --recipe {recipe!r}.", f"recipes: {', '.join(RECIPES)}.")
        layers.append((RECIPES[recipe], f"recipe {recipe}"))
    if file is not None:
        layers.append((read_toml(file), f"--config {file}"))
    layers.append(({s: {k: v for k, v in values.items() if v is not None} for s, values in typed.items()},
                   "the command line"))
    layers += [(parse_set(assignment), f"--set {assignment}") for assignment in sets]
    settings = Settings()
    for layer, where in layers:
        _merge(settings, layer, where)
    task = settings.train.task
    if task in TASK_DEFAULTS:  # the task known, its defaults go under every layer
        settings = Settings()
        for layer, where in [(TASK_DEFAULTS[task], f"--task {task}"), *layers]:
            _merge(settings, layer, where)
    check(settings)
    return settings


def read_saved(path: Path) -> Settings:
    """The settings a run folder's ``finetune.toml`` holds (unchecked: they were checked when the run started)."""
    settings = Settings()
    _merge(settings, read_toml(path), str(path))
    return settings


def changed(settings: Settings, saved: Settings) -> list[tuple[str, Any, Any]]:
    """``(section.key, value now, value saved)`` for every key where ``settings`` differ from ``saved``."""
    found = []
    for section in SECTIONS:
        now, before = getattr(settings, section), getattr(saved, section)
        for key, name in _keys(now).items():
            if getattr(now, name) != getattr(before, name):
                found.append((f"{section}.{key}", getattr(now, name), getattr(before, name)))
    return found


def check(settings: Settings) -> None:
    """The rules across keys (a settings object built in Python included)."""
    train, model = settings.train, settings.model
    if train.task not in TASKS:
        raise UsageError(f"unknown --task {train.task!r}.", f"tasks: {', '.join(TASKS)}.")
    if model.train not in ("full", "global-only"):
        raise UsageError(f"--train {model.train!r} is neither full nor global-only.", "pass --train full or global-only.")
    if not model.name:
        raise UsageError("no --model given.", "pass --model NAME|PATH (a preset, a folder, a Hub id).")
    if not settings.data.name:
        raise UsageError("no --data given.", "pass --data NAME_OR_PATH (json/jsonl/csv/parquet/txt, a save_to_disk "
                                             "folder, or a Hub dataset).")
    _check_numbers(settings)
    if train.precision not in ("auto", "fp32", "bf16", "fp16"):
        raise UsageError(f"train.precision {train.precision!r} is not auto, fp32, bf16 or fp16.", "e.g. auto.")
    if train.sampling not in ("group_by_length", "random", "sequential"):
        raise UsageError(f"train.sampling {train.sampling!r} is not group_by_length, random or sequential.",
                         "e.g. group_by_length (pads least).")
    if not 0 <= settings.data.validation_split < 1:
        raise UsageError("data.validation_split must lie in [0, 1).", "e.g. 0.1, or 0 for no evaluation.")


# every number a run takes: (section, key, lowest, whether the lowest is allowed, the flag that sets it, an example)
NUMBERS = (("train", "lr", 0, False, "--lr", "5e-5"), ("train", "epochs", 0, False, "--epochs", "3"),
           ("train", "batch_size", 1, True, "--batch-size", "8"), ("train", "grad_accum", 1, True, None, "1"),
           ("train", "max_steps", 0, True, "--max-steps", "0"),
           ("train", "warmup", 0, True, None, "0.1"), ("train", "weight_decay", 0, True, None, "0.01"),
           ("train", "eval_steps", 0, True, None, "0"), ("train", "save_steps", 0, True, None, "500"),
           ("train", "logging_steps", 1, True, None, "10"), ("train", "patience", 0, True, None, "0"),
           ("train", "save_total_limit", 0, True, None, "2"), ("train", "generate_length", 1, True, None, "128"),
           ("model", "max_length", 0, True, "--max-length", "4096"), ("model", "block", 1, True, "--block", "128"),
           ("model", "factor", 1, True, "--factor", "2"), ("model", "sparse_block", 0, True, None, "0"),
           ("model", "global_tokens", 0, True, "--global", "1"), ("model", "dropout", 0, True, None, "0.1"),
           ("data", "target_length", 1, True, None, "256"), ("data", "max_examples", 0, True, None, "0"),
           ("gsg", "noise", 0, True, None, "0.1"))


def _check_numbers(settings: Settings) -> None:
    """Counts, sizes and rates in range, whichever layer set them; the error names the flag where there is one."""
    for section, name, lowest, allowed, flag, example in NUMBERS:
        value = getattr(getattr(settings, section), name)
        if value is None or (value >= lowest if allowed else value > lowest):
            continue
        key = f"{section}.{'global' if name == 'global_tokens' else name}"
        what = f"{flag} ({key})" if flag else key
        bound = f"at least {lowest}" if allowed else f"more than {lowest}"
        raise UsageError(f"{what} must be {bound}, got {value!r}.",
                         f"e.g. {flag} {example}." if flag else f"e.g. --set {key}={example}.")
    if settings.model.dropout is not None and settings.model.dropout >= 1:
        raise UsageError(f"model.dropout must be below 1, got {settings.model.dropout!r}.", "e.g. --set model.dropout=0.1.")


def _toml_value(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))
