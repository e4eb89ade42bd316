"""What ``inspect-kernels`` inspects: an LSG layout (from a model's config, or from flags alone) and LOCOST
models (loaded when their weights are here, else built with random weights from their config)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from lsgtool.core.load.source import Source


NO_WEIGHTS = "random weights (no weights on this machine)"


def find(name: str) -> Source:
    from lsgtool.core.load import resolve

    return resolve(name, weights_needed=False)


def _first(config: dict[str, Any], *keys: str, default=None):
    return next((config[k] for k in keys if config.get(k) is not None), default)


@dataclass
class LSGTarget:
    """An LSG layout to map: its config and the shape of the model it comes from (12 heads of 64 without one)."""

    config: Any
    heads: int
    head_dim: int
    layers: int | None
    positions: int | None
    source: Source | None


def lsg_target(source: Source | None, overrides: dict[str, Any]) -> LSGTarget:
    """The LSG layout of ``source`` (an LSG model) with ``overrides`` (flags given), or of the flags alone; a
    layout that breaks a rule raises ConfigError naming the config key."""
    from lsgtool.core.lsg.config import LSGConfig

    base: dict[str, Any] = {"block_size": 128, "sparsity_factor": 2, "sparsity_type": "norm", "num_global_tokens": 1}
    heads, head_dim, layers, positions = 12, 64, None, None
    if source is not None:
        config = source.config
        base = {k: v for k, v in config.items()}
        heads = int(_first(config, "num_attention_heads", "encoder_attention_heads", "num_heads", default=12))
        hidden = int(_first(config, "hidden_size", "d_model", "dim", default=heads * 64))
        head_dim = hidden // heads
        layers = _first(config, "num_hidden_layers", "encoder_layers", "num_layers", "n_layers")
        positions = _first(config, "max_position_embeddings", "max_encoder_position_embeddings")
    values = {**base, **{k: v for k, v in overrides.items() if v is not None}}
    if overrides.get("block_size") is not None and overrides.get("sparse_block_size") is None:
        values["sparse_block_size"] = overrides["block_size"]  # as convert: sparse tokens per side = the block
    values.setdefault("sparse_block_size", values["block_size"])
    return LSGTarget(LSGConfig.from_dict(values), heads, head_dim, layers, positions, source)


def locost_model(source: Source) -> tuple[torch.nn.Module, str]:
    """The LOCOST model ``source`` names: loaded when its weights are here, else random weights from its config
    (said in the returned note)."""
    from lsgtool.core.load import load

    if source.has_weights:
        return load(source), "saved weights"
    torch.manual_seed(0)
    return load(source, random_init=True), NO_WEIGHTS


def random_locost(config) -> torch.nn.Module:
    from lsgtool.core.ssm.locost import LocostEncoderModel

    torch.manual_seed(0)
    return LocostEncoderModel(config)
