"""The LOCOST authors' checkpoints: PyTorch Lightning ``.ckpt`` state dicts, read by name into our modules.

Loading by name, presets and Hub ids included, goes through ``lsgtool.load`` (``lsgtool.core.load.locost``
has the LOCOST-only shortcuts).
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
