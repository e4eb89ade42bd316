"""The LOCOST authors' checkpoints: PyTorch Lightning ``.ckpt`` state dicts, read by name into our modules.

Loading by name, presets and Hub ids included, goes through ``lsgtool.load``; ``load_locost`` is its
LOCOST-only shortcut.
"""

from __future__ import annotations

from pathlib import Path

import torch

from lsgtool.core.errors import LsgtoolError, UsageError

# Tied to ``shared.weight`` (absent from the authors' checkpoints) / an unused bias T5 checkpoints carry.
TIED = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")
IGNORED = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)


def read_state_dict(path: str | Path, trusted: bool = False) -> dict[str, torch.Tensor]:
    """Tensors of a Lightning ``.ckpt`` (``state_dict`` with its ``model.`` prefix removed) or a ``.bin``."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=not trusted)
    except Exception as exc:  # pickled objects beyond tensors: only with explicit trust
        raise LsgtoolError(f"cannot read '{path}' safely: {type(exc).__name__}: {exc}".splitlines()[0],
                           "if you trust the file, load it with trust_checkpoint=True (--trust-checkpoint): "
                           "it runs pickled code.") from None
    state = checkpoint.get("state_dict", checkpoint) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise UsageError(f"'{path}' holds no state dict of tensors.", "pass a Lightning .ckpt or a PyTorch state dict.")
    if state and all(key.startswith("model.") for key in state):
        state = {key.removeprefix("model."): value for key, value in state.items()}
    return state


def load_authors_checkpoint(path: str | Path, config=None, trusted: bool = False):
    """Build LOCOST from the authors' checkpoint; returns (model, {"missing": [...], "unexpected": [...]})."""
    from lsgtool.core.load import load

    model, info = load(path, config=config, trust_checkpoint=trusted, output_loading_info=True)
    return model, {"missing": info.missing_keys, "unexpected": info.unexpected_keys}


def load_locost(name_or_path: str, random_init: bool = False, **kwargs):
    """A LOCOST model from a preset name, a local folder or file, or a Hub id (``lsgtool.load`` options apply)."""
    from lsgtool.core.load import load, resolve

    hub = {k: kwargs[k] for k in ("revision", "token", "cache_dir", "local_files_only") if k in kwargs}
    source = resolve(name_or_path, weights_needed=not random_init, **hub)
    if source.kind != "locost":
        raise UsageError(f"{name_or_path!r} is not a LOCOST model ({source.layout}).", "use lsgtool.load for other models.")
    return load(name_or_path, random_init=random_init, **kwargs)
