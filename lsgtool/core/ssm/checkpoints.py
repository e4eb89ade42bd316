"""Loading LOCOST weights: the authors' PyTorch Lightning checkpoints, Hugging Face folders, and presets."""

from __future__ import annotations

from pathlib import Path

import torch

from lsgtool.core.errors import LsgtoolError, UsageError
from lsgtool.core.ssm.locost import LocostConfig, LocostForConditionalGeneration

# Tied to ``shared.weight`` (absent from the authors' checkpoints) / an unused bias T5 checkpoints carry.
TIED = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")
IGNORED = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)


def read_state_dict(path: str | Path, trusted: bool = False) -> dict[str, torch.Tensor]:
    """Tensors of a Lightning ``.ckpt`` (``state_dict`` with its ``model.`` prefix removed) or a ``.bin``."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=not trusted)
    except Exception as exc:  # pickled objects beyond tensors: only with explicit trust
        raise LsgtoolError(f"cannot read '{path}' safely: {type(exc).__name__}: {exc}".splitlines()[0],
                           "if you trust the file, load it with trusted=True (it runs pickled code).") from None
    state = checkpoint.get("state_dict", checkpoint)
    if state and all(key.startswith("model.") for key in state):
        state = {key.removeprefix("model."): value for key, value in state.items()}
    return state


def load_authors_checkpoint(path: str | Path, config: LocostConfig | None = None, trusted: bool = False):
    """Build LOCOST from the authors' checkpoint; returns (model, {"missing": [...], "unexpected": [...]})."""
    model = LocostForConditionalGeneration(config or LocostConfig())
    missing, unexpected = model.load_state_dict(read_state_dict(path, trusted), strict=False)
    report = {"missing": sorted(k for k in missing if k not in TIED),
              "unexpected": sorted(k for k in unexpected if k not in IGNORED)}
    return model.eval(), report


def load_locost(name_or_path: str, random_init: bool = False, pm=None):
    """A LOCOST model from a preset name, a local folder or a Hub id; ``random_init`` builds it untrained."""
    from lsgtool.plugins.manager import get_registry

    presets = get_registry("presets", pm)
    preset = presets.get(name_or_path)
    if preset is not None and preset.architecture != "locost":
        raise UsageError(f"preset {name_or_path!r} is not a LOCOST model ({preset.architecture}).")
    if random_init:
        return LocostForConditionalGeneration(LocostConfig(**(preset.config if preset else {}))).eval()
    source = preset.weights if preset else name_or_path
    try:
        return LocostForConditionalGeneration.from_pretrained(source).eval()
    except OSError:
        raise UsageError(
            f"weights for {name_or_path!r} not found ({source}): not a local folder, not in the Hugging Face cache"
            + (" and offline." if _offline() else "."),
            "download them while online (`hf download " + str(source) + "`), or build an untrained model with "
            "random_init=True (--random-init).",
        ) from None


def _offline() -> bool:
    import os

    return os.environ.get("HF_HUB_OFFLINE") == "1"
