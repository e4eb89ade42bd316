"""How much memory summarising L tokens in one pass takes beyond the loaded weights (an estimate, calibrated).

A pass has two phases, and its peak is the larger one plus a share of the smaller (memory the allocator keeps
after the encoder) and a small fixed runtime share. With E model width, b bytes per value, B beams, LEb =
L·E·b:

- encoder, LOCOST (chunked in place): the hidden states and the SSM input (2·LEb), one group of 64 channels'
  FFT convolution (64·L·36 bytes) and one position chunk's feed-forward (8·S·d_ff·b, S the chunk);
  LSG: 9·LEb (projections, gathered key blocks, the feed-forward at full length) and 80 MB of fixed work;
  dense attention: 12·LEb plus heads·L²·b;
- decoding: with the cross-attention key/value cache, (2·decoder layers + 3)·B·LEb (the keys and values of
  every layer for every beam, the encoder output per beam, and one layer's copy when beams are reordered);
  without it (LOCOST), the encoder output once (LEb), read by every beam, plus on a CPU from 32K tokens up to two
  packed copies of it that the decoding step's products may stream instead (``lsgtool.core.ssm.products``).

Calibrated against measured peaks (``benchmarks/memory.py``: LOCOST and LSG-BART, E 256 and 768, 4K to 64K,
cache and no cache, beams 1 and 4; table in benchmarks/RESULTS.md): within ±15% of the measured peak from 16K
tokens on; at 4K, where fixed costs dominate, between -34% and +30%. The guard asks the estimate times
``MARGIN`` to fit the limit, and refuses what cannot fit before any work is done.
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 2**20
MARGIN = 1.15  # the calibration's spread above 16K tokens: a pass must fit the limit with this much to spare
RUNTIME_MB = 10.0  # fixed runtime share of a pass (thread pools, workspaces)
OVERLAP = 0.3  # share of the smaller phase still held when the larger one peaks
LSG_FIXED_MB = 80.0  # fixed work of an LSG encoder pass, measured at E 256 and 768
SSM_BYTES_PER_TOKEN = 64 * 36  # one group of 64 channels through the bidirectional FFT convolution


@dataclass
class Estimate:
    tokens: int
    encoder_mb: float
    encoder_output_mb: float
    cross_cache_mb: float
    runtime_mb: float = RUNTIME_MB

    @property
    def decoding_mb(self) -> float:
        return self.encoder_output_mb + self.cross_cache_mb

    @property
    def total_mb(self) -> float:
        larger, smaller = max(self.encoder_mb, self.decoding_mb), min(self.encoder_mb, self.decoding_mb)
        return self.runtime_mb + larger + OVERLAP * smaller

    def fits(self, limit_mb: float) -> bool:
        """Whether the pass fits ``limit_mb`` with the calibration's margin."""
        return self.total_mb * MARGIN <= limit_mb

    def to_dict(self) -> dict:
        return {"tokens": self.tokens, "encoder_mb": round(self.encoder_mb), "encoder_output_mb": round(self.encoder_output_mb),
                "cross_attention_cache_mb": round(self.cross_cache_mb), "total_mb": round(self.total_mb),
                "margin": MARGIN}


def _width(config) -> int:
    return getattr(config, "d_model", None) or getattr(config, "hidden_size", None) or 768


def can_skip_cache(summarizer) -> bool:
    """Can the model decode without the cross-attention cache (LOCOST)?"""
    return hasattr(getattr(summarizer, "model", None), "set_cross_attention_cache")


def _locost_encoder(config, L: int, E: int, b: int, device: str) -> float:
    from lsgtool.core.ssm.locost import AUTO_CHUNK

    chunk = getattr(config, "chunk_size", None) or AUTO_CHUNK.get(device, AUTO_CHUNK["cuda"])
    d_ff = getattr(config, "d_ff", None) or 4 * E
    return 2 * L * E * b + SSM_BYTES_PER_TOKEN * L + 8 * min(chunk, L) * d_ff * b


def estimate(summarizer, tokens: int, cache: bool | None = None) -> Estimate:
    """The additional memory of one pass over ``tokens`` input tokens (abstractive models; 0 for others);
    ``cache``: with or without the cross-attention key/value cache (None: as the model is set)."""
    model = getattr(summarizer, "model", None)
    if model is None or summarizer.method != "abstractive":
        return Estimate(tokens, 0.0, 0.0, 0.0, 0.0)
    config = model.config
    parameter = next(model.parameters())
    b = parameter.element_size()
    E, L = _width(config), tokens
    beams = summarizer.generation.values.get("num_beams", 1)
    layers = getattr(config, "decoder_layers", None) or getattr(config, "num_decoder_layers", None) or config.num_layers
    heads = getattr(config, "encoder_attention_heads", None) or getattr(config, "num_heads", None) or 12
    if summarizer.kind == "locost":
        encoder = _locost_encoder(config, L, E, b, parameter.device.type)
    elif summarizer.kind == "lsg":
        encoder = 9 * L * E * b + LSG_FIXED_MB * MB
    else:
        encoder = 12 * L * E * b + heads * L * L * b
    if cache is None:
        cache = getattr(model, "cross_attention_cached", True)
    if cache:  # per beam, with one layer's reordered copy
        output = 3 * beams * L * E * b
    else:
        from lsgtool.core.ssm.products import copies

        output = (1 + copies(parameter.device.type, L)) * L * E * b
    cross = layers * 2 * beams * L * E * b if cache else 0
    return Estimate(tokens, encoder / MB, output / MB, cross / MB)


def largest_fitting(summarizer, limit_mb: float, top: int, cache: bool | None = None) -> int:
    """The most input tokens (at most ``top``) whose estimate fits ``limit_mb`` with the margin."""
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if estimate(summarizer, mid, cache).fits(limit_mb) else (lo, mid - 1)
    return lo
