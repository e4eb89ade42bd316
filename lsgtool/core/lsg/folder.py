"""The LSG folder format, in one place: model type, config layouts, the task table, reading and writing.

An LSG folder is an ordinary Hugging Face folder of the base model whose ``config.json`` also carries the
LSG keys (``LSGConfig`` fields), names its class ``LSG<Class>`` and stores the global-token table as
``<owner>.global_embeddings.weight``. Two layouts of the config:

- ``lsgtool``: ``model_type`` "lsg" and ``base_model_type`` naming the original type, so transformers' Auto
  classes load the folder after ``import lsgtool``;
- ``authors``: the base ``model_type``, as the LSG authors' checkpoints keep it (their ``auto_map`` to remote
  code is ignored: lsgtool loads them without it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODEL_TYPE = "lsg"
LSG_PREFIX = "LSG"
LAYOUTS = ("lsgtool", "authors")
GLOBAL_TABLE = "global_embeddings.weight"

# task name (lsgtool.load(task=...)) -> transformers Auto class
TASKS = {
    "base": "AutoModel",
    "masked-lm": "AutoModelForMaskedLM",
    "sequence-classification": "AutoModelForSequenceClassification",
    "token-classification": "AutoModelForTokenClassification",
    "question-answering": "AutoModelForQuestionAnswering",
    "seq2seq-lm": "AutoModelForSeq2SeqLM",
    "multiple-choice": "AutoModelForMultipleChoice",
    "pretraining": "AutoModelForPreTraining",
}


def is_lsg(config: dict[str, Any]) -> bool:
    """Does a ``config.json`` (as a dict) describe an LSG model, in either layout?"""
    return config.get("model_type") == MODEL_TYPE or ("block_size" in config and "sparsity_factor" in config)


def is_lsg_model(model: Any) -> bool:
    """Does a loaded model run LSG attention (``apply_lsg`` marks its base model with ``lsg_config``)?"""
    return hasattr(getattr(model, "base_model", None), "lsg_config")


def read_config(folder: str | Path):
    """The base model's configuration (a transformers ``PretrainedConfig``), with the LSG keys, from either layout."""
    from transformers import AutoConfig

    data = json.loads(Path(folder, "config.json").read_text())
    if data.get("model_type") != MODEL_TYPE:
        return AutoConfig.from_pretrained(folder)
    base_type = data.pop("base_model_type", None)
    if not base_type:
        raise ValueError(f"{Path(folder, 'config.json')} has model_type {MODEL_TYPE!r} but no base_model_type")
    for key in ("model_type", "transformers_version"):
        data.pop(key, None)
    return AutoConfig.for_model(base_type, **data)


def class_name(config) -> str | None:
    """The transformers class the folder was saved from (``LSGBertForMaskedLM`` -> ``BertForMaskedLM``)."""
    names = getattr(config, "architectures", None) or [None]
    return names[0].removeprefix(LSG_PREFIX) if names[0] else None


def write_config(config_file: Path, model_class: str, layout: str) -> None:
    """Rewrite a saved ``config.json`` into the LSG layout: ``LSG<Class>``; for lsgtool's layout, type "lsg"."""
    data = json.loads(config_file.read_text())
    data["architectures"] = [LSG_PREFIX + model_class]
    if layout == "lsgtool":
        data["base_model_type"], data["model_type"] = data["model_type"], MODEL_TYPE
    config_file.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_global_table(folder: str | Path, key: str | None = None):
    """The stored global-token table (tensor) and its key, from safetensors (single or sharded) or a .bin."""
    import torch
    from safetensors import safe_open

    folder = Path(folder)
    for file in sorted(folder.glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as handle:
            found = key if key in handle.keys() else next((k for k in handle.keys() if k.endswith(GLOBAL_TABLE)), None)
            if found is not None:
                return handle.get_tensor(found), found
    for file in sorted(folder.glob("pytorch_model*.bin")):
        state = torch.load(file, map_location="cpu", weights_only=True)
        found = key if key in state else next((k for k in state if k.endswith(GLOBAL_TABLE)), None)
        if found is not None:
            return state[found], found
    return None, None
