"""Checks run on every conversion before it is reported done, and the numbers of the summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from lsgtool.core.lsg.engine import set_lsg_config, with_lsg
from lsgtool.core.lsg.folder import is_lsg_model
from lsgtool.core.lsg.config import LSGConfig


def _first_output(model, ids: torch.Tensor) -> torch.Tensor:
    kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if getattr(model.config, "is_encoder_decoder", False):
        kwargs["decoder_input_ids"] = ids[:, :4]
    out = model(**kwargs)
    return out.logits if getattr(out, "logits", None) is not None else out.last_hidden_state


def _sample_ids(model, length: int, seed: int = 0) -> torch.Tensor:
    vocab = model.get_input_embeddings().num_embeddings
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(min(5, vocab - 1), vocab, (1, length), generator=generator)


def _as_full_attention(model) -> LSGConfig | None:
    """Reduce an LSG model to full attention without global tokens (short inputs); returns its config to restore."""
    if not is_lsg_model(model):
        return None
    config = with_lsg(model)
    set_lsg_config(model, with_lsg(model, num_global_tokens=0, mask_first_token=False))
    return config


@torch.no_grad()
def verify(saved: Path, converted, source, max_length: int) -> dict[str, Any]:
    """Reload ``saved`` from disk and check it three ways; returns the results (never raises on a mismatch).

    ``source`` is the model before conversion (an LSG source is reduced to full attention too)."""
    from lsgtool.core.load import load

    reloaded = load(saved)
    short = _sample_ids(reloaded, min(32, 2 * with_lsg(reloaded).block_size))
    results: dict[str, Any] = {}
    results["reload_max_abs_diff"] = (_first_output(reloaded, short) - _first_output(converted.eval(), short)).abs().max().item()
    restore = [(m, _as_full_attention(m)) for m in (reloaded, source)]
    try:
        diff = (_first_output(reloaded, short) - _first_output(source.eval(), short)).abs().max().item()
    finally:
        for model, config in restore:
            if config is not None:
                set_lsg_config(model, config)
    results["source_max_abs_diff"] = diff
    start = time.perf_counter()
    long_out = _first_output(reloaded, _sample_ids(reloaded, max_length, seed=1))
    results["max_length_seconds"] = round(time.perf_counter() - start, 3)
    results["max_length_finite"] = bool(torch.isfinite(long_out).all())
    results["passed"] = (
        results["reload_max_abs_diff"] <= 1e-4 and results["source_max_abs_diff"] <= 1e-4 and results["max_length_finite"]
    )
    return results


def pattern(config) -> dict[str, int]:
    """Keys each query sees and the farthest key a query can reach (LSG paper §3.2)."""
    S, sb, f, G = config.block_size, config.sparse_block_size, config.sparsity_factor, config.num_global_tokens
    sparse = sb if config.has_sparse else 0
    return {"keys_per_query": G + 2 * sparse + 3 * S, "reach": 3 * S + 2 * sparse * f}
