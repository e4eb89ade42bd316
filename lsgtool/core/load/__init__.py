"""One loader: ``load(name_or_path)`` for presets, local folders, Hub ids, the LSG authors' folders, LOCOST
folders (the authors' included) and the LOCOST authors' Lightning checkpoints; ``load_tokenizer`` beside it.

Options transformers users pass (``dtype``/``torch_dtype``, ``device_map``, ``revision``, ``token``,
``cache_dir``, ``local_files_only``, ``trust_remote_code``, ``ignore_mismatched_sizes``,
``attn_implementation``) reach transformers or are refused by name; none is dropped. ``dtype="int8"``:
loaded in float32, then the encoder's linear layers quantized to int8 (``precision.quantize_int8``, torchao).
Weights that do not fit are reported (``lsgtool.load`` logger, and ``LoadInfo`` with ``output_loading_info=True``).
"""

from __future__ import annotations

import os
from typing import Any

from lsgtool.core import precision
from lsgtool.core.errors import LsgtoolError, UsageError
from lsgtool.core.load.source import TOKENIZER_FILES, Source, resolve, snapshot
from lsgtool.core.load.weights import LoadInfo, from_pretrained, load_state, report

HUB_OPTIONS = ("revision", "token", "cache_dir", "local_files_only")
MODEL_OPTIONS = ("dtype", "device_map", "trust_remote_code", "ignore_mismatched_sizes", "attn_implementation")
ALIASES = {"torch_dtype": "dtype"}

__all__ = ["LoadInfo", "Source", "load", "load_tokenizer", "resolve"]


def _options(kwargs: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, value in kwargs.items():
        name = ALIASES.get(key, key)
        if name not in HUB_OPTIONS + MODEL_OPTIONS:
            raise UsageError(f"lsgtool.load() does not take {key!r}.",
                             f"options passed on to transformers: {', '.join(HUB_OPTIONS + MODEL_OPTIONS)} (torch_dtype = dtype).")
        if name in options:
            raise UsageError(f"both {key!r} and its other name were given.", "pass dtype only.")
        options[name] = value
    return options


def _refuse(options: dict[str, Any], names: tuple[str, ...], why: str) -> None:
    for name in names:
        if options.get(name) not in (None, False):
            raise UsageError(f"{name}={options[name]!r} does not apply here: {why}.", f"leave {name} out.")


def _transformers_class(name: str):
    import transformers

    cls = getattr(transformers, name, None)
    if cls is None or not hasattr(cls, "from_pretrained"):
        raise UsageError(f"unknown architecture {name!r}.", "pass a transformers class name such as BertForMaskedLM.")
    return cls


def model_class(config, task: str | None = None, architecture: str | None = None):
    """The transformers class to build: ``architecture`` (a class name), else ``task``, else the saved class."""
    import transformers

    from lsgtool.core.lsg.folder import LSG_PREFIX, TASKS, class_name

    if architecture:
        return _transformers_class(architecture.removeprefix(LSG_PREFIX))
    if task is not None:
        if task not in TASKS:
            raise UsageError(f"unknown task {task!r}.", f"tasks: {', '.join(TASKS)}.")
        return getattr(transformers, TASKS[task])
    name = class_name(config)
    return getattr(transformers, name) if name and hasattr(transformers, name) else transformers.AutoModel


def _hub(options: dict[str, Any]) -> dict[str, Any]:
    return {k: options.get(k) for k in HUB_OPTIONS}


def load(name_or_path, task: str | None = None, *, architecture: str | None = None, config: Any = None,
         trust_checkpoint: bool = False, random_init: bool = False, output_loading_info: bool = False,
         config_overrides: dict[str, Any] | None = None, **kwargs):
    """Load any model lsgtool knows, ready for inference (eval mode).

    ``name_or_path``: a preset, folder, checkpoint file or Hub id, or the ``Source`` that ``resolve`` returned
    for one (resolve once, then load and ``load_tokenizer`` from the same handle: no second look-up).

    ``task`` (``masked-lm``, ``seq2seq-lm``, ``sequence-classification``, ...) or ``architecture`` (a
    transformers class name) pick the head; by default the class the checkpoint was saved from.
    ``config``: the configuration of a Lightning checkpoint (a ``LocostConfig``, a dict or a config.json /
    folder path) when no config.json lies beside it. ``trust_checkpoint``: allow a checkpoint holding pickled
    objects beyond tensors (it runs their code). ``random_init``: build the model without its weights (a
    preset whose weights are not on this machine included). ``config_overrides``: configuration values to
    change before building. Returns the model, or ``(model, LoadInfo)``.
    """
    from dataclasses import replace

    options = _options(kwargs)
    int8 = options.get("dtype") == precision.INT8  # loaded in float32, then the encoder's linear layers quantized
    if int8:
        device_map = options.get("device_map")
        if device_map not in (None, "cpu") and str(device_map) != "cpu":
            raise UsageError(f"dtype int8 quantizes for the CPU, and device_map={device_map!r} was given.",
                             "load on the CPU (no device_map), or use bfloat16 or float16 on a GPU.")
        precision.require_int8()  # said before anything is read
        options = {**options, "dtype": "float32"}  # not the checkpoint's own dtype ("auto"): the rest stays float32
    source = name_or_path if isinstance(name_or_path, Source) else \
        resolve(name_or_path, config=config, weights_needed=not random_init, **_hub(options))
    if config_overrides:
        source = replace(source, overrides={**source.overrides, **config_overrides})
    if source.kind == "lsg":
        model, info = _load_lsg(source, task, architecture, options, random_init)
    elif source.kind == "locost":
        model, info = _load_locost(source, task, options, trust_checkpoint, random_init)
    else:
        model, info = _load_transformers(source, task, architecture, options, random_init)
    if int8:
        info.notes.append(f"int8: {precision.quantize_int8(model)} linear layers of the encoder quantized (torchao)")
    report(info)
    model.eval()
    return (model, info) if output_loading_info else model


def _model_options(options: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: options[k] for k in names if options.get(k) is not None}


def _load_transformers(source: Source, task, architecture, options, random_init):
    from transformers import AutoConfig

    if source.layout == "preset":
        raise UsageError(f"preset {source.name!r} has no weights and no configuration on this machine.",
                         "install what its description names (`lsgtool plugins` lists presets).")
    remote = bool(options.get("trust_remote_code"))
    config = AutoConfig.from_pretrained(source.folder, trust_remote_code=remote, **source.overrides)
    cls = model_class(config, task, architecture)
    info = LoadInfo(source.name, str(source.path), source.kind, source.layout)
    if random_init:
        model = cls.from_config(config, trust_remote_code=remote) if hasattr(cls, "from_config") else cls(config)
        info.weights = "random"
        return model, info
    kwargs = _model_options(options, *MODEL_OPTIONS)
    model, raw = from_pretrained(cls, source.folder, config=config, **kwargs)
    return model, info.take(raw)


def _load_lsg(source: Source, task, architecture, options, random_init):
    """An LSG folder (either layout): the base class from transformers, then LSG applied, then the global table."""
    import torch

    from lsgtool.core.lsg.engine import apply_lsg, resolve_adapter
    from lsgtool.core.lsg.folder import GLOBAL_TABLE, read_config, read_global_table
    from lsgtool.core.lsg.config import LSGConfig

    why = "lsgtool runs LSG models with its own attention, no remote code"
    _refuse(options, ("trust_remote_code", "attn_implementation"), why)
    config = read_config(source.folder)
    config.update(source.overrides)
    cls = model_class(config, task, architecture)
    info = LoadInfo(source.name, str(source.path), source.kind, source.layout)
    if random_init:
        model, info.weights = cls.from_config(config) if hasattr(cls, "from_config") else cls(config), "random"
    else:
        model, raw = from_pretrained(cls, source.folder, config=config, **_model_options(options, *MODEL_OPTIONS))
        info.take(raw)
    lsg = LSGConfig.from_dict(config.to_dict())
    adapter = resolve_adapter(model)
    apply_lsg(model, lsg, adapter)
    if random_init:
        return model, info
    stored = [k for k in info.unexpected_keys if k.endswith(GLOBAL_TABLE)]
    table, key = read_global_table(source.folder, stored[0] if stored else None)
    if table is None:
        if lsg.num_global_tokens:
            raise LsgtoolError(f"'{source.path}' declares {lsg.num_global_tokens} global tokens but stores no "
                               f"{GLOBAL_TABLE}.", "convert the model again with `lsgtool convert`.")
        return model, info
    owner = model.base_model.get_submodule(adapter.global_owner)
    reference = owner.global_embeddings.weight
    owner.global_embeddings = torch.nn.Embedding.from_pretrained(table.to(reference), freeze=False)
    info.unexpected_keys = [k for k in info.unexpected_keys if k != key]
    info.notes.append(f"global tokens: {lsg.num_global_tokens} of the {table.shape[0]} rows of {key}")
    return model, info


def _load_locost(source: Source, task, options, trust_checkpoint, random_init):
    """A LOCOST folder (ours, or the authors' without model_type) or the authors' Lightning checkpoint."""
    import torch

    from lsgtool.core.ssm.checkpoints import IGNORED, TIED, read_state_dict
    from lsgtool.core.ssm.locost import LocostConfig, LocostForConditionalGeneration, LocostModel

    _refuse(options, ("trust_remote_code", "attn_implementation"), "lsgtool runs LOCOST with its own code")
    classes = {None: LocostForConditionalGeneration, "seq2seq-lm": LocostForConditionalGeneration, "base": LocostModel}
    if task not in classes:
        raise UsageError(f"task {task!r} does not apply to LOCOST models.", "use task='seq2seq-lm' or 'base'.")
    skip = ("model_type", "architectures", "transformers_version", "auto_map", "_name_or_path")
    config = LocostConfig(**{**{k: v for k, v in source.config.items() if k not in skip}, **source.overrides})
    cls = classes[task]
    info = LoadInfo(source.name, str(source.path), source.kind, source.layout)
    if random_init or source.layout == "lightning":
        model = cls(config)
        if random_init:
            info.weights = "random"
        else:
            info.take(load_state(model, read_state_dict(source.path, trust_checkpoint), IGNORED, TIED))
        device_map, dtype = options.get("device_map"), options.get("dtype")
        if device_map is not None and not isinstance(device_map, (str, torch.device)):
            raise UsageError(f"device_map={device_map!r} needs a checkpoint folder; a checkpoint file goes to one device.",
                             "pass device_map='cpu' or 'cuda', or save the model with save_pretrained first.")
        dtype = getattr(torch, dtype) if isinstance(dtype, str) and dtype != "auto" else dtype
        model = model.to(device=device_map if device_map not in (None, "auto") else None,
                         dtype=dtype if isinstance(dtype, torch.dtype) else None)
        return model, info
    model, raw = from_pretrained(cls, source.folder, config=config, **_model_options(options, "dtype", "device_map",
                                                                                      "ignore_mismatched_sizes"))
    raw = {**raw, "unexpected_keys": {k for k in raw.get("unexpected_keys", ()) if k not in IGNORED}}
    return model, info.take(raw)


def load_tokenizer(name_or_path, *, tokenizer: str | None = None, **kwargs):
    """The tokenizer of a model (its folder, or the one its preset names), or ``tokenizer`` when given.
    ``name_or_path`` may be the ``Source`` of a model already resolved."""
    from transformers import AutoTokenizer

    options = _options(kwargs)
    hub = _hub(options)
    where = tokenizer
    if where is None:
        source = name_or_path if isinstance(name_or_path, Source) else resolve(name_or_path, weights_needed=False, **hub)
        where = source.tokenizer
        if where is None:
            raise UsageError(f"no tokenizer is known for '{name_or_path}'.", "pass one with --tokenizer NAME_OR_PATH.")
    folder = where if os.path.isdir(where) else None
    if folder is None:
        from lsgtool.core.load.source import HUB_ID

        if os.path.exists(where) or not HUB_ID.match(str(where)):
            raise UsageError(f"tokenizer '{where}' is not a folder or a Hub id.", "pass a tokenizer folder or Hub id.")
        folder = str(snapshot(str(where), **hub))
    if not any(os.path.isfile(os.path.join(folder, f)) for f in TOKENIZER_FILES):
        raise UsageError(f"'{folder}' has no tokenizer files ({', '.join(TOKENIZER_FILES[:4])}, ...).",
                         "pass a tokenizer with --tokenizer NAME_OR_PATH (or convert with --no-tokenizer).")
    try:
        return AutoTokenizer.from_pretrained(folder, trust_remote_code=bool(options.get("trust_remote_code")))
    except Exception as exc:  # transformers raises OSError, ValueError, TypeError, ... for broken tokenizers
        raise UsageError(f"cannot load the tokenizer in '{folder}': {type(exc).__name__}: {exc}".splitlines()[0],
                         "pass another one with --tokenizer NAME_OR_PATH (or convert with --no-tokenizer).") from None
