"""Where LSG conversion touches a model: declared through the architecture hook, or found by running it.

All paths are relative to the model's base model (``model.base_model``: ``BertModel``, ``BartModel``, ...).
Patterns name modules with ``*`` standing for one path segment (a layer index): ``encoder.layer.*.attention.self``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch import nn

from lsgtool.core.errors import UsageError

RELATIVE_MARKERS = ("relative_attention_bias", "rel_embeddings", "rel_pos", "rotary", "alibi")
PADDINGS = ("hidden", "tokens")


@dataclass(frozen=True)
class ArchitectureAdapter:
    """How to convert one model type.

    ``encoder``: the module whose self-attention becomes LSG ("" = the whole base model).
    ``layers_parent``: the module running the layer stack; its input is padded to whole blocks and its output
    loses the global tokens (and the padding) again. ``global_insert``: the module whose input gets the
    global tokens prepended (the embedding LayerNorm, as in the authors' models, or the first layer).
    ``global_owner``: the module that owns the ``global_embeddings`` table (state-dict names match the
    authors' checkpoints). ``positions``: learned or sinusoidal position tables to extend. ``word_embeddings``
    and ``token_type_embeddings``: used to initialise the global tokens (§3.3). ``self_attention``: patterns
    of the encoder's self-attention modules (the modules that call transformers' attention interface) and
    ``cross_attention`` those of the decoder's cross-attention (encoder-decoders); empty: found by running
    the model once. ``padding``: how inputs are padded to whole blocks, as the authors' models do it:
    ``hidden`` appends zero vectors to the input of ``layers_parent``, ``tokens`` appends padding tokens
    to the encoder's input ids.
    """

    encoder: str
    layers_parent: str
    global_insert: str
    global_owner: str
    positions: tuple[str, ...]
    word_embeddings: str
    token_type_embeddings: str | None = None
    self_attention: tuple[str, ...] = ()
    cross_attention: tuple[str, ...] = ()
    padding: str = "hidden"

    def __post_init__(self) -> None:
        if self.padding not in PADDINGS:
            raise ValueError(f"padding must be one of {PADDINGS}, got {self.padding!r}")


BERT_LIKE = ArchitectureAdapter(
    encoder="",
    layers_parent="encoder",
    global_insert="embeddings.LayerNorm",
    global_owner="embeddings",
    positions=("embeddings.position_embeddings",),
    word_embeddings="embeddings.word_embeddings",
    token_type_embeddings="embeddings.token_type_embeddings",
    self_attention=("encoder.layer.*.attention.self",),
)
ALBERT = ArchitectureAdapter("", "encoder", "embeddings.LayerNorm", "embeddings", ("embeddings.position_embeddings",),
                             "embeddings.word_embeddings", "embeddings.token_type_embeddings",
                             ("encoder.albert_layer_groups.*.albert_layers.*.attention",))
DISTILBERT = ArchitectureAdapter("", "transformer", "embeddings.LayerNorm", "embeddings",
                                 ("embeddings.position_embeddings",), "embeddings.word_embeddings",
                                 self_attention=("transformer.layer.*.attention",))
BART_LIKE = ArchitectureAdapter("encoder", "encoder", "encoder.layernorm_embedding", "encoder",
                                ("encoder.embed_positions", "decoder.embed_positions"), "shared",
                                self_attention=("encoder.layers.*.self_attn",),
                                cross_attention=("decoder.layers.*.encoder_attn",), padding="tokens")
PEGASUS = ArchitectureAdapter("encoder", "encoder", "encoder.layers.0", "encoder",
                              ("encoder.embed_positions", "decoder.embed_positions"), "shared",
                              self_attention=("encoder.layers.*.self_attn",),
                              cross_attention=("decoder.layers.*.encoder_attn",), padding="tokens")

# The model types the authors' converter supports (LSG paper §5), with the layout of their checkpoints.
OFFICIAL = {
    "albert": ALBERT,
    "bert": BERT_LIKE,
    "camembert": BERT_LIKE,
    "electra": BERT_LIKE,
    "roberta": BERT_LIKE,
    "xlm-roberta": BERT_LIKE,
    "distilbert": DISTILBERT,
    "bart": BART_LIKE,
    "mbart": BART_LIKE,
    "pegasus": PEGASUS,
}


def matches(pattern: str, name: str) -> bool:
    """Does module ``name`` match ``pattern`` (``*`` = one path segment)?"""
    regex = r"\.".join("[^.]+" if part == "*" else re.escape(part) for part in pattern.split("."))
    return re.fullmatch(regex, name) is not None


def find(root: nn.Module, patterns: tuple[str, ...]) -> list[tuple[str, nn.Module]]:
    """The submodules of ``root`` whose names match one of the patterns, in model order."""
    return [(n, m) for n, m in root.named_modules() if n and any(matches(p, n) for p in patterns)]


def _pattern(name: str) -> str:
    return ".".join("*" if part.isdigit() else part for part in name.split("."))


def _name_of(root: nn.Module, target: nn.Module) -> str:
    return next(name for name, module in root.named_modules() if module is target)


def uses_attention_interface(model) -> bool:
    """transformers' own capability flags: the model runs its attention through registered functions."""
    return bool(getattr(model, "_supports_attention_backend", False) or getattr(model, "_supports_flex_attn", False))


def attention_calls(model) -> list[tuple[str, int, int]]:
    """(module name relative to the base model, query length, key length) of every attention-interface call in
    one short forward (8 input tokens, 3 decoder tokens), found by running the model with a recording function."""
    import torch
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    base, calls = model.base_model, []

    def record(module, query, key, value, attention_mask, **kwargs):
        calls.append((module, query.shape[2], key.shape[2]))
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)

    AttentionInterface.register("lsgtool_probe", record)
    previous = model.config._attn_implementation
    vocab = model.get_input_embeddings().num_embeddings
    inputs = {"input_ids": torch.randint(min(5, vocab - 1), vocab, (1, 8))}
    if getattr(model.config, "is_encoder_decoder", False):
        inputs["decoder_input_ids"] = inputs["input_ids"][:, :3]
    device = next(model.parameters()).device
    try:
        model.set_attn_implementation("lsgtool_probe")
        with torch.no_grad():
            base(**{k: v.to(device) for k, v in inputs.items()})
    finally:
        model.set_attn_implementation(previous)
    return [(_name_of(base, module), q, k) for module, q, k in calls]


def refuse_relative_positions(model) -> None:
    config = model.config
    kind = getattr(config, "position_embedding_type", "absolute")
    marker = next((n for n, _ in model.named_modules() if any(m in n for m in RELATIVE_MARKERS)), None)
    if kind not in (None, "absolute") or marker or getattr(config, "relative_attention_num_buckets", None):
        raise UsageError(
            f"model type {config.model_type!r} uses relative positions ({marker or kind}); LSG conversion extends "
            "absolute position tables and cannot convert it.",
            "convert a model with absolute position embeddings (BERT, RoBERTa, BART, ...); for T5-style models "
            "see LOCOST or LongT5.",
        )


def attention_patterns(model, encoder: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(self-attention, cross-attention) patterns found by running the model once."""
    calls = attention_calls(model)
    prefix = f"{encoder}." if encoder else ""
    selfs = tuple(dict.fromkeys(_pattern(n) for n, q, k in calls if n.startswith(prefix) and q == k == 8))
    cross = tuple(dict.fromkeys(_pattern(n) for n, q, k in calls if not n.startswith(prefix) and k == 8 and q == 3))
    return selfs, cross


def detect_adapter(model) -> ArchitectureAdapter:
    """Find encoder, layer list, embedding norm, position tables and attention modules of a model type
    whose attention runs through transformers' attention interface."""
    refuse_relative_positions(model)
    base, config = model.base_model, model.config
    encoder = base.get_encoder() if getattr(config, "is_encoder_decoder", False) else base
    encoder_name = _name_of(base, encoder)
    prefix = f"{encoder_name}." if encoder_name else ""
    layers = next((n for n, m in encoder.named_modules() if isinstance(m, nn.ModuleList) and len(m)), None)
    if layers is None:
        raise UsageError(f"no layer list found in {type(encoder).__name__}.", "register an adapter for it (docs/plugins.md).")
    layers_parent = prefix + layers.rpartition(".")[0] if "." in layers else encoder_name
    norms = [n for n, m in encoder.named_modules() if isinstance(m, nn.LayerNorm) and not n.startswith(layers)]
    before_layers = [n for n in norms if "embed" in n.lower()]
    insert = prefix + before_layers[0] if before_layers else f"{prefix}{layers}.0"
    owner = insert.rpartition(".")[0] if before_layers else encoder_name
    positions = tuple(n for n, m in base.named_modules() if isinstance(m, nn.Embedding) and "position" in n.lower())
    if not positions:
        raise UsageError(f"no absolute position table found in model type {config.model_type!r}.",
                         "register an architecture adapter naming its position embeddings (docs/plugins.md).")
    selfs, cross = attention_patterns(model, encoder_name)
    if not selfs:
        raise UsageError(f"model type {config.model_type!r}: no encoder module called transformers' attention interface.",
                         "register an architecture adapter naming its self-attention modules (docs/plugins.md).")
    token_types = next((n for n, m in base.named_modules() if n.endswith("token_type_embeddings")), None)
    return ArchitectureAdapter(
        encoder=encoder_name,
        layers_parent=layers_parent,
        global_insert=insert,
        global_owner=owner,
        positions=positions,
        word_embeddings=_name_of(base, base.get_input_embeddings()),
        token_type_embeddings=token_types,
        self_attention=selfs,
        cross_attention=cross,
        padding="tokens" if getattr(config, "is_encoder_decoder", False) else "hidden",
    )
