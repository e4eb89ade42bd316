"""How much memory summarising L tokens in one pass takes beyond the loaded weights (an estimate).

Terms (E model width, b bytes per value, B beams): the encoder's activations (LOCOST chunked in place:
~4·L·E·b; LSG: ~12·L·E·b with its blocks of keys; dense attention adds heads·L²·b), the encoder output
repeated for every beam (B·L·E·b) and the decoder's cross-attention keys and values, cached per layer
(decoder layers·2·B·L·E·b, unless the model attends without that cache). Measured peaks on this CPU sit
within these numbers (benchmarks/RESULTS.md); the guard refuses what cannot fit before any work is done.
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 2**20


@dataclass
class Estimate:
    tokens: int
    encoder_mb: float
    encoder_output_mb: float
    cross_cache_mb: float

    @property
    def total_mb(self) -> float:
        return self.encoder_mb + self.encoder_output_mb + self.cross_cache_mb

    def to_dict(self) -> dict:
        return {"tokens": self.tokens, "encoder_mb": round(self.encoder_mb), "encoder_output_mb": round(self.encoder_output_mb),
                "cross_attention_cache_mb": round(self.cross_cache_mb), "total_mb": round(self.total_mb)}


def _width(config) -> int:
    return getattr(config, "d_model", None) or getattr(config, "hidden_size", None) or 768


def can_skip_cache(summarizer) -> bool:
    """Can the model decode without the cross-attention cache (LOCOST)?"""
    return hasattr(getattr(summarizer, "model", None), "set_cross_attention_cache")


def estimate(summarizer, tokens: int, cache: bool | None = None) -> Estimate:
    """The additional memory of one pass over ``tokens`` input tokens (abstractive models; 0 for others);
    ``cache``: with or without the cross-attention key/value cache (None: as the model is set)."""
    model = getattr(summarizer, "model", None)
    if model is None or summarizer.method != "abstractive":
        return Estimate(tokens, 0.0, 0.0, 0.0)
    config = model.config
    b = next(model.parameters()).element_size()
    E, L = _width(config), tokens
    beams = summarizer.generation.values.get("num_beams", 1)
    layers = getattr(config, "decoder_layers", None) or getattr(config, "num_decoder_layers", None) or config.num_layers
    heads = getattr(config, "encoder_attention_heads", None) or getattr(config, "num_heads", None) or 12
    if summarizer.kind == "locost":
        encoder = 4 * L * E * b
    elif summarizer.kind == "lsg":
        encoder = 12 * L * E * b
    else:
        encoder = 12 * L * E * b + heads * L * L * b
    if cache is None:
        cache = getattr(model, "cross_attention_cached", True)
    cross = layers * 2 * beams * L * E * b if cache else 0
    copies = beams if cache else 1  # without the cache, all beams of one input read one encoder output
    return Estimate(tokens, encoder / MB, copies * L * E * b / MB, cross / MB)


def largest_fitting(summarizer, limit_mb: float, top: int, cache: bool | None = None) -> int:
    """The most input tokens (at most ``top``) whose estimate stays within ``limit_mb``."""
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if estimate(summarizer, mid, cache).total_mb <= limit_mb else (lo, mid - 1)
    return lo
