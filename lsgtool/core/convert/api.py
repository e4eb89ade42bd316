"""Python API: ``convert`` a checkpoint to LSG and ``save`` it atomically (loading is ``lsgtool.load``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

from lsgtool.core.lsg.engine import (apply_lsg, extend_positions, init_global_tokens, resolve_adapter,
                                         usable_positions)
from lsgtool.core.lsg.folder import LAYOUTS, LSG_PREFIX, is_lsg_model, write_config
from lsgtool.core.errors import UsageError
from lsgtool.core.writing import check_target, publish, stage, write_marker
from lsgtool.core.lsg.config import LSGConfig

__all__ = ["convert", "global_token_ids", "save"]


def _first(*candidates: tuple[str, Any]) -> tuple[int | None, str | None]:
    for where, value in candidates:
        if value is not None:  # a real id may be 0
            return int(value), where
    return None, None


def global_token_ids(model, tokenizer) -> dict[str, Any]:
    """The token ids that initialise the global tokens (§3.3: [CLS]/<s> for the first, [MASK] for the others),
    with where each came from."""
    config = model.config
    first, first_from = _first(("tokenizer cls_token_id", getattr(tokenizer, "cls_token_id", None)),
                               ("tokenizer bos_token_id", getattr(tokenizer, "bos_token_id", None)),
                               ("config bos_token_id", getattr(config, "bos_token_id", None)))
    if first is None:
        first, first_from = 0, "token id 0: no tokenizer and no bos_token_id in the config"
    other, other_from = _first(("tokenizer mask_token_id", getattr(tokenizer, "mask_token_id", None)),
                               ("config mask_token_id", getattr(config, "mask_token_id", None)),
                               ("tokenizer pad_token_id", getattr(tokenizer, "pad_token_id", None)),
                               ("config pad_token_id", getattr(config, "pad_token_id", None)))
    if other is None:
        other, other_from = first, "the first token's (no mask or pad token is known)"
    return {"first": first, "first_from": first_from, "other": other, "other_from": other_from}


def _tokenizer(source: Any, tokenizer: Any, options: dict[str, Any]):
    import torch

    from lsgtool.core.load import load_tokenizer

    if tokenizer is False or (tokenizer is None and isinstance(source, torch.nn.Module)):
        return None
    if tokenizer is None or isinstance(tokenizer, (str, Path)):
        hub = {k: options[k] for k in ("revision", "token", "cache_dir", "local_files_only", "trust_remote_code")
               if k in options}
        return load_tokenizer(source, tokenizer=None if tokenizer is None else str(tokenizer), **hub)
    return tokenizer


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
    pass_global_tokens_to_decoder: bool = False,
    architecture: str | None = None,
    seed: int | None = 0,
    tokenizer: Any = None,
    output_report: bool = False,
    **load_options: Any,
):
    """Convert a Hugging Face model (object, folder, Hub id, preset) to LSG; returns (model, tokenizer or None),
    and a report dict third with ``output_report=True``.

    An LSG model converts again (new positions and settings), keeping its trained global tokens.
    ``tokenizer``: None loads the source's own (an error says why when it cannot; a model object has none),
    False converts without one, or a tokenizer object, folder or Hub id. ``load_options`` go to ``lsgtool.load``.
    """
    import torch

    from lsgtool.core.load import load

    lsg = LSGConfig(
        block_size=block_size,
        sparse_block_size=block_size if sparse_block_size is None else sparse_block_size,
        sparsity_factor=sparsity_factor,
        sparsity_type=sparsity_type,
        num_global_tokens=num_global_tokens,
        mask_first_token=mask_first_token,
        pass_global_tokens_to_decoder=pass_global_tokens_to_decoder,
        lsh_seed=seed,
    )
    if isinstance(source, torch.nn.Module):
        model, info = source, None
    else:
        model, info = load(source, architecture=architecture, output_loading_info=True, **load_options)
    reconvert = is_lsg_model(model)
    adapter = resolve_adapter(model)  # an architecture that cannot be converted says so before the tokenizer
    tok = _tokenizer(source, tokenizer, load_options)
    current = usable_positions(model, adapter)
    if max_length < current or (max_length == current and not reconvert):
        raise UsageError(f"--max-length {max_length} is not larger than the model's {current} positions.",
                         f"pass a longer length, e.g. --max-length {current * 8}.")
    if max_length > current:
        extend_positions(model, adapter, max_length)
    apply_lsg(model, lsg, adapter)
    if reconvert:
        ids: dict[str, Any] = {"kept_from": "the source model's trained global tokens"}
    else:
        ids = global_token_ids(model, tok)
        init_global_tokens(model, adapter, ids["first"], ids["other"])
    model.config.architectures = [LSG_PREFIX + type(model).__name__]
    if tok is not None:
        tok.model_max_length = max_length
    if not output_report:
        return model, tok
    declared = model.config.model_type.replace("-", "_")
    from lsgtool.core.registry import get_registry

    report = {"loading": info.to_dict() if info else None, "positions": {"from": current, "to": max_length},
              "adapter": "registered" if declared in get_registry("architectures") else "detected",
              "self_attention": list(adapter.self_attention), "global_tokens": ids, "reconverted": reconvert}
    return model, tok, report


def save(model, tokenizer, out: str | Path, overwrite: bool = False, layout: str = "lsgtool",
         verify: Callable[[Path], bool] | None = None) -> Path:
    """Write an ordinary Hugging Face folder atomically: into a marked staging folder, then renamed.

    ``layout="lsgtool"`` writes ``model_type: "lsg"`` (AutoModel* load it after ``import lsgtool``);
    ``layout="authors"`` keeps the base ``model_type`` as the LSG authors' checkpoints do (``lsgtool.load``).
    ``overwrite`` replaces only a model folder or a folder lsgtool wrote (``lsgtool.core.writing``).
    ``verify(staged_folder) -> passed`` runs before the folder appears; its result is recorded in the folder's
    ``.lsgtool.json``. An exception or Ctrl-C leaves no output folder and no staging folder behind.
    """
    if layout not in LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}.", f"layouts: {', '.join(LAYOUTS)}.")
    out = check_target(out, overwrite)
    tmp = stage(out)
    try:
        model.save_pretrained(tmp)
        write_config(tmp / "config.json", type(model).__name__, layout)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        passed = None if verify is None else bool(verify(tmp))
        write_marker(tmp, command="convert", layout=layout, verified=passed)
        return publish(tmp, out, overwrite)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
