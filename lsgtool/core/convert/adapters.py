"""Where LSG conversion touches a model: found automatically, or declared through the architecture hook.

All paths are relative to the model's base model (``model.base_model``: ``BertModel``, ``BartModel``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from lsgtool.core.errors import UsageError

RELATIVE_MARKERS = ("relative_attention_bias", "rel_embeddings", "rel_pos", "rotary", "alibi")


@dataclass(frozen=True)
class ArchitectureAdapter:
    """How to convert one model type.

    ``encoder``: the module whose self-attention becomes LSG ("" = the whole base model).
    ``layers_parent``: the module holding the layer list; its output loses the global tokens again.
    ``global_insert``: the module whose input gets the global tokens prepended (the embedding LayerNorm,
    as in the authors' models, or the first layer). ``global_owner``: the module that owns the
    ``global_embeddings`` table (so state-dict names match the authors' checkpoints).
    ``positions``: learned or sinusoidal position tables to extend. ``word_embeddings`` and
    ``token_type_embeddings``: used to initialise the global tokens (§3.3).
    """

    encoder: str
    layers_parent: str
    global_insert: str
    global_owner: str
    positions: tuple[str, ...]
    word_embeddings: str
    token_type_embeddings: str | None = None


BERT_LIKE = ArchitectureAdapter(
    encoder="",
    layers_parent="encoder",
    global_insert="embeddings.LayerNorm",
    global_owner="embeddings",
    positions=("embeddings.position_embeddings",),
    word_embeddings="embeddings.word_embeddings",
    token_type_embeddings="embeddings.token_type_embeddings",
)
DISTILBERT = ArchitectureAdapter("", "transformer", "embeddings.LayerNorm", "embeddings",
                                 ("embeddings.position_embeddings",), "embeddings.word_embeddings")
BART_LIKE = ArchitectureAdapter("encoder", "encoder", "encoder.layernorm_embedding", "encoder",
                                ("encoder.embed_positions", "decoder.embed_positions"), "shared")
PEGASUS = ArchitectureAdapter("encoder", "encoder", "encoder.layers.0", "encoder",
                              ("encoder.embed_positions", "decoder.embed_positions"), "shared")

# The model types the authors' converter supports (LSG paper §5), with the layout of their checkpoints.
OFFICIAL = {
    "albert": BERT_LIKE,
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


def _name_of(root: nn.Module, target: nn.Module) -> str:
    return next(name for name, module in root.named_modules() if module is target)


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


def detect_adapter(model) -> ArchitectureAdapter:
    """Find encoder, layer list, embedding norm and position tables of a model that uses the attention interface."""
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
    positions = tuple(
        n for n, m in base.named_modules() if isinstance(m, nn.Embedding) and "position" in n.lower()
    )
    if not positions:
        raise UsageError(
            f"no absolute position table found in model type {config.model_type!r}.",
            "register an architecture adapter naming its position embeddings (docs/plugins.md).",
        )
    token_types = next((n for n, m in base.named_modules() if n.endswith("token_type_embeddings")), None)
    return ArchitectureAdapter(
        encoder=encoder_name,
        layers_parent=layers_parent,
        global_insert=insert,
        global_owner=owner,
        positions=positions,
        word_embeddings=_name_of(base, base.get_input_embeddings()),
        token_type_embeddings=token_types,
    )


def uses_attention_interface(model) -> bool:
    """Does the model's attention go through transformers' ``ALL_ATTENTION_FUNCTIONS``?"""
    import inspect
    import sys

    source = inspect.getsource(sys.modules[type(model).__module__])
    return "ALL_ATTENTION_FUNCTIONS" in source
