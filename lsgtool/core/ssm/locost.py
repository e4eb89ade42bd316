"""LOCOST (LOCOST §4, Fig. 2): an encoder of gated bidirectional SSM layers with a T5-style decoder.

Encoder layer: h += Dropout(W_o(Q ⊙ BiSSM(V))) with Q, V projections of LayerNorm(h), then the T5
gated-GeLU feed-forward. The decoder is transformers' own T5 decoder (dense self- and cross-attention),
so generation, caching and beam search are transformers' code. Module and parameter names follow the
LOCOST authors' code (flbbb/locost-summarization), so their state dicts load by name.
Legend: B batch, L length, E model width, H SSM channels.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from transformers import T5Config
from transformers.activations import GELUTanh, NewGELUActivation
from transformers.modeling_outputs import BaseModelOutput
from transformers.models.t5.modeling_t5 import (
    T5DenseGatedActDense,
    T5ForConditionalGeneration,
    T5LayerFF,
    T5LayerNorm,
    T5Model,
    T5PreTrainedModel,
    T5Stack,
)

from lsgtool.core import compat
from lsgtool.core.ssm import products
from lsgtool.core.ssm.decoding import install as install_cross_attention
from lsgtool.core.ssm.mixer import S4D

CHANNEL_CHUNK = 64
# Sequence chunk of inference on long inputs when the config leaves it open (chunk_size None). On the 2-core CPU,
# LOCOST-base at 16K tokens: 2048 -> 19-21 s / 1.2 GB, 4096 -> 25 s / 1.2 GB, unchunked -> 36 s / 1.7 GB
# (benchmarks/RESULTS.md); on GPUs larger chunks were faster (16384 kept, as measured on an H100).
AUTO_CHUNK = {"cpu": 2048, "cuda": 16384}
# Loaded in bfloat16 or float16 (``from_pretrained(dtype=...)``), the SSM kernels' parameters stay float32
# (``kernels.float32_kept`` says why; ``S4D._apply`` keeps them so through ``.to(dtype)``).
FLOAT32_KEPT = ["ssm_layer.kernel."]


class LocostConfig(T5Config):
    """LOCOST configuration: the authors' keys (T5 keys plus ``d_state``, ``num_ssm_heads``, ``bidirectional``,
    ``gating``, ...) with Appendix B defaults, plus ``ssm_variant`` (a registered SSM variant) and
    ``chunk_size`` (sequence chunk for position-wise work on long inputs at inference; None: chosen per device,
    ``AUTO_CHUNK``)."""

    model_type = "locost"

    def __init__(self, vocab_size=32100, d_model=768, d_kv=64, d_ff=2048, num_layers=12, num_decoder_layers=12,
                 num_heads=12, d_state=256, num_ssm_heads=1, bidirectional=True, gating=True,
                 feed_forward_proj="gated-gelu", ssm_variant="s4d_lin", dt_min=1e-3, dt_max=1e-1,
                 chunk_size=None, local_radius=127, global_block_size=16, encoder_attention_type="ssm",
                 use_fast_fft_conv=False, **kwargs):
        self.d_state, self.num_ssm_heads = d_state, num_ssm_heads
        self.bidirectional, self.gating = bidirectional, gating
        self.ssm_variant, self.dt_min, self.dt_max, self.chunk_size = ssm_variant, dt_min, dt_max, chunk_size
        self.local_radius, self.global_block_size = local_radius, global_block_size
        self.encoder_attention_type, self.use_fast_fft_conv = encoder_attention_type, use_fast_fft_conv
        # the authors' token ids (T5's vocabulary): generate() needs the decoder start, which T5Config lacks
        kwargs.setdefault("pad_token_id", 0)
        kwargs.setdefault("eos_token_id", 1)
        kwargs.setdefault("decoder_start_token_id", 0)
        super().__init__(vocab_size=vocab_size, d_model=d_model, d_kv=d_kv, d_ff=d_ff, num_layers=num_layers,
                         num_decoder_layers=num_decoder_layers, num_heads=num_heads,
                         feed_forward_proj=feed_forward_proj, **kwargs)
        if d_model % num_ssm_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_ssm_heads ({num_ssm_heads}).")

    def get_text_config(self, decoder=None, encoder=None):
        """The decoder's view has the decoder's depth: generate() sizes its self-attention cache from this view's
        ``num_hidden_layers``, which T5 maps to the encoder's ``num_layers`` (contract in lsgtool.core.compat)."""
        config = super().get_text_config(decoder=decoder, encoder=encoder)
        if decoder and not encoder and config.num_layers != self.num_decoder_layers:
            config = copy.deepcopy(config)
            config.num_layers = self.num_decoder_layers
        return config


class LocostLayerSSM(nn.Module):
    """Pre-norm SSM sub-layer with residual (the authors' ``LOCOSTLayerSelfAttention``)."""

    def __init__(self, config: LocostConfig):
        super().__init__()
        self.ssm_layer = S4D(config)
        self.layer_prenorm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, hidden_states: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        return hidden_states + self.dropout(self.ssm_layer(self.layer_prenorm(hidden_states), attention_mask))


def _clamp_half(hidden: Tensor) -> Tensor:
    """fp16 overflow guard, as T5-style models need."""
    if hidden.dtype == torch.float16 and torch.isinf(hidden).any():
        limit = torch.finfo(hidden.dtype).max - 1000
        hidden = hidden.clamp(-limit, limit)
    return hidden


def feed_forward_into(ff: T5LayerFF, h: Tensor) -> None:
    """h += FF(RMSNorm(h)), in place, at inference. The stock gated tanh-GELU feed-forward in float32 runs as
    PyTorch's fused RMS norm and GELU (equal to transformers' modules to float rounding; one LOCOST-base chunk of
    2,048 tokens 62 -> 53 ms, against 46 ms for its three matmuls); any other, or one in train mode (dropout), runs
    as its module."""
    dense, norm = ff.DenseReluDense, ff.layer_norm
    stock = (not ff.training and isinstance(dense, T5DenseGatedActDense)
             and isinstance(dense.act, (NewGELUActivation, GELUTanh))
             and h.dtype == norm.weight.dtype == dense.wo.weight.dtype == torch.float32
             and not torch.is_autocast_enabled(h.device.type))
    if not stock:
        h.copy_(ff(h))
        return
    x = F.rms_norm(h, (h.shape[-1],), norm.weight, norm.variance_epsilon)
    h += dense.wo(F.gelu(dense.wi_0(x), approximate="tanh").mul_(dense.wi_1(x)))


class LocostBlock(nn.Module):
    def __init__(self, config: LocostConfig):
        super().__init__()
        self.layer = nn.ModuleList([LocostLayerSSM(config), T5LayerFF(config)])
        self.chunk_size = config.chunk_size

    def chunk(self, hidden_states: Tensor) -> int:
        return self.chunk_size or AUTO_CHUNK.get(hidden_states.device.type, AUTO_CHUNK["cuda"])

    def works_in_place(self, hidden_states: Tensor) -> bool:
        """Long inputs at inference run chunked, writing into ``hidden_states`` (see ``forward_chunked``)."""
        return not torch.is_grad_enabled() and hidden_states.shape[1] > self.chunk(hidden_states)

    def forward(self, hidden_states: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        if self.works_in_place(hidden_states):
            return self.forward_chunked(hidden_states, attention_mask)
        hidden_states = _clamp_half(self.layer[0](hidden_states, attention_mask))
        return _clamp_half(self.layer[1](hidden_states))

    @torch.no_grad()
    def forward_chunked(self, h: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        """Inference on long inputs, in place: position-wise work in chunks of L, the SSM in chunks of channels.

        ``h`` is overwritten with the block's output (one (B, L, E) tensor less at 512K tokens); the encoder
        hands it a tensor of its own."""
        sub, ff = self.layer
        ssm = sub.ssm_layer
        B, L, E = h.shape
        size = self.chunk(h)
        steps = [slice(s, min(s + size, L)) for s in range(0, L, size)]
        v = torch.empty_like(h)
        for s in steps:
            v[:, s] = ssm.k_proj(sub.layer_prenorm(h[:, s]))
            if attention_mask is not None:
                v[:, s] *= attention_mask[:, s, None].to(v.dtype)
        for c in range(0, E, CHANNEL_CHUNK):  # the SSM's output replaces its input, channel chunk by chunk
            channels = slice(c, min(c + CHANNEL_CHUNK, E))
            v[:, :, channels] = ssm.mix(v[:, :, channels], channels)
        for s in steps:
            z = v[:, s] * ssm.q_proj(sub.layer_prenorm(h[:, s])) if ssm.gating else v[:, s]
            h[:, s] += ssm.output_linear(z)
            feed_forward_into(ff, h[:, s])
        return _clamp_half(h)


class LocostEncoder(T5PreTrainedModel):
    """Stack of LOCOST layers (the authors' encoder ``LOCOSTStack``)."""

    config_class = LocostConfig
    _keep_in_fp32_modules_strict = FLOAT32_KEPT

    def __init__(self, config: LocostConfig, embed_tokens: nn.Embedding | None = None):
        super().__init__(config)
        self.embed_tokens = embed_tokens or nn.Embedding(config.vocab_size, config.d_model)
        self.block = nn.ModuleList([LocostBlock(config) for _ in range(config.num_layers)])
        self.final_layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)
        self.gradient_checkpointing = False
        self.post_init()

    def get_input_embeddings(self):
        return self.embed_tokens

    def set_input_embeddings(self, embeddings):
        self.embed_tokens = embeddings

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, output_hidden_states=None,
                return_dict=None, **kwargs) -> BaseModelOutput:
        hidden = self.dropout(self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds)
        in_place = bool(self.block) and self.block[0].works_in_place(hidden)
        if in_place and hidden is inputs_embeds:  # dropout is the identity at inference: never write into the caller's
            hidden = hidden.clone()
        states = []
        for block in self.block:
            if output_hidden_states:
                states.append(hidden.clone() if in_place else hidden)  # the next block overwrites it
            if self.gradient_checkpointing and self.training:
                hidden = torch.utils.checkpoint.checkpoint(block, hidden, attention_mask, use_reentrant=False)
            else:
                hidden = block(hidden, attention_mask)
        hidden = self.dropout(self.final_layer_norm(hidden))
        if output_hidden_states:
            states.append(hidden)
        return BaseModelOutput(last_hidden_state=hidden, hidden_states=tuple(states) if output_hidden_states else None)


def _decoder(config: LocostConfig) -> T5Stack:
    decoder_config = T5Config(**{k: v for k, v in config.to_dict().items() if k != "model_type"})
    decoder_config.is_decoder, decoder_config.num_layers = True, config.num_decoder_layers
    return T5Stack(decoder_config)


def _encoder_config(config: LocostConfig) -> LocostConfig:
    encoder_config = copy.deepcopy(config)
    encoder_config.is_decoder, encoder_config.use_cache = False, False
    return encoder_config


class LocostForConditionalGeneration(T5ForConditionalGeneration):
    """LOCOST encoder + T5 decoder + LM head; ``generate()`` (greedy, beam, ...) comes from transformers."""

    config_class = LocostConfig
    _no_split_modules = ["LocostBlock", "T5Block"]
    _keep_in_fp32_modules_strict = FLOAT32_KEPT

    def __init__(self, config: LocostConfig):
        compat.require("t5_cross_attention")
        compat.require("decoder_text_config")
        T5PreTrainedModel.__init__(self, config)
        self.model_dim = config.d_model
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        self.encoder = LocostEncoder(_encoder_config(config), self.shared)
        self.decoder = _decoder(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.cross_attention = install_cross_attention(self.decoder)
        self.post_init()

    @property
    def cross_attention_cached(self) -> bool:
        return self.cross_attention[0].cache_keys_values if self.cross_attention else True

    def set_cross_attention_cache(self, enabled: bool) -> None:
        """Cache the decoder's cross-attention keys and values (default), or read the encoder output directly
        at each step: no cache (2·layers·L·E values) and one encoder output for all beams (``decoding``)."""
        for module in self.cross_attention:
            module.cache_keys_values = enabled

    def generate(self, *args, **kwargs):
        """transformers' ``generate``; the packed copies of the encoder output its steps may have made
        (``products``) are freed when it returns, not kept for as long as a caller keeps the encoder output."""
        try:
            return super().generate(*args, **kwargs)
        finally:
            products.release()

    def _expand_inputs_for_generation(self, expand_size=1, is_encoder_decoder=False, input_ids=None, **model_kwargs):
        encoder_outputs = model_kwargs.get("encoder_outputs")
        if (self.cross_attention_cached or expand_size == 1 or encoder_outputs is None
                or encoder_outputs.last_hidden_state.shape[0] != 1):
            return super()._expand_inputs_for_generation(expand_size, is_encoder_decoder, input_ids, **model_kwargs)
        # one input and no key/value cache: every beam reads the same encoder output (broadcast), no copy per beam
        model_kwargs.pop("encoder_outputs")
        input_ids, model_kwargs = super()._expand_inputs_for_generation(expand_size, False, input_ids, **model_kwargs)
        return input_ids, {**model_kwargs, "encoder_outputs": encoder_outputs}


class LocostModel(T5Model):
    """LOCOST encoder + T5 decoder, returning hidden states."""

    config_class = LocostConfig
    _keep_in_fp32_modules_strict = FLOAT32_KEPT

    def __init__(self, config: LocostConfig):
        T5PreTrainedModel.__init__(self, config)
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        self.encoder = LocostEncoder(_encoder_config(config), self.shared)
        self.decoder = _decoder(config)
        self.post_init()


class LocostEncoderModel(T5PreTrainedModel):
    """The LOCOST encoder alone (for long-input embeddings and benchmarks)."""

    config_class = LocostConfig
    _keep_in_fp32_modules_strict = FLOAT32_KEPT

    def __init__(self, config: LocostConfig):
        super().__init__(config)
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        self.encoder = LocostEncoder(_encoder_config(config), self.shared)
        self.post_init()

    def get_encoder(self):
        return self.encoder

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, **kwargs) -> BaseModelOutput:
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds, **kwargs)


def register_auto_classes() -> None:
    """So ``AutoModelForSeq2SeqLM.from_pretrained`` loads LOCOST folders once lsgtool is imported."""
    from transformers import AutoConfig, AutoModel, AutoModelForSeq2SeqLM

    AutoConfig.register("locost", LocostConfig, exist_ok=True)
    AutoModel.register(LocostConfig, LocostModel, exist_ok=True)
    AutoModelForSeq2SeqLM.register(LocostConfig, LocostForConditionalGeneration, exist_ok=True)


register_auto_classes()
