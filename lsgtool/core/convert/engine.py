"""Generic LSG conversion: extend positions, add global tokens, route encoder self-attention to LSG.

Works on the model object through an ``ArchitectureAdapter`` (see ``adapters``), never through a copied
modeling file: transformers' own classes run, with the "lsg" attention backend (``hf_attention``).
"""

from __future__ import annotations

import dataclasses
import math

import torch
from torch import nn

from lsgtool.core.convert.adapters import ArchitectureAdapter, detect_adapter, uses_attention_interface
from lsgtool.core.convert.hf_attention import NAME, install
from lsgtool.core.errors import UsageError
from lsgtool.core.lsg.config import LSGConfig

GLOBAL_TABLE_ROWS = 512  # the authors' checkpoints store 512 global embeddings and use the first G


def resolve_adapter(model, pm=None) -> ArchitectureAdapter:
    """The registered adapter for the model type, else one found automatically."""
    from lsgtool.plugins.manager import get_registry

    registry = get_registry("architectures", pm)
    model_type = model.config.model_type.replace("-", "_")
    if model_type in registry:
        return registry[model_type]
    hint = (
        f"supported: {', '.join(registry)}, and encoders with absolute positions whose attention uses the "
        "attention interface; add an adapter with the register_architectures hook (docs/plugins.md)."
    )
    if not getattr(model.config, "is_encoder_decoder", False) and any(
        getattr(m, "is_causal", False) for m in model.modules()
    ):
        raise UsageError(f"model type {model_type!r} is decoder-only; LSG conversion handles encoders and "
                         "encoder-decoders.", hint)
    if not uses_attention_interface(model):
        raise UsageError(f"model type {model_type!r} is not supported: its attention does not run through "
                         "transformers' attention interface and no plugin registers an adapter for it.", hint)
    try:
        return detect_adapter(model)
    except UsageError as exc:
        raise UsageError(exc.message, exc.hint or hint) from None


def position_offset(table: nn.Embedding) -> int:
    """Rows before position 0 (BART's learned offset of 2, RoBERTa's padding_idx + 1)."""
    if getattr(table, "offset", None) is not None:
        return int(table.offset)
    return table.padding_idx + 1 if table.padding_idx is not None else 0


def usable_positions(model, adapter: ArchitectureAdapter) -> int:
    table = model.base_model.get_submodule(adapter.positions[0])
    return table.num_embeddings - position_offset(table)


def extend_positions(model, adapter: ArchitectureAdapter, max_length: int) -> None:
    """Tile every position table to ``max_length`` positions (§3.4); sinusoidal tables are regenerated."""
    base = model.base_model
    old = usable_positions(model, adapter)
    delta = max_length - old
    old_config_length = model.config.max_position_embeddings
    for path in adapter.positions:
        table = base.get_submodule(path)
        offset = position_offset(table)
        rows = max_length + offset
        if hasattr(table, "_init_weight"):  # sinusoidal: compute the longer table
            new = type(table)(rows, table.embedding_dim, table.padding_idx)
            new._init_weight()
            weight = new.weight.data.to(table.weight)
        else:
            body = table.weight.data[offset:]
            reps = math.ceil(max_length / body.shape[0])
            weight = torch.cat([table.weight.data[:offset], body.repeat(reps, 1)[:max_length]])
        table.weight = nn.Parameter(weight, requires_grad=table.weight.requires_grad)
        table.num_embeddings = rows
    for module in base.modules():
        for name, buffer in list(module.named_buffers(recurse=False)):
            if name in ("position_ids", "token_type_ids") and buffer.shape[-1] == old_config_length:
                fresh = torch.arange(old_config_length + delta, device=buffer.device).expand(1, -1)
                module.register_buffer(name, fresh if name == "position_ids" else torch.zeros_like(fresh), persistent=False)
    model.config.max_position_embeddings = old_config_length + delta


def _flagged(model):
    return [m for m in model.modules() if hasattr(m, "lsg_config")]


def set_lsg_config(model, config: LSGConfig) -> None:
    """Change the LSG settings of an LSG model in place (all layers, global-token hooks, config.json)."""
    model.base_model.lsg_config = config
    for module in _flagged(model):
        module.lsg_config = config
    model.config.update({k: v for k, v in config.to_dict().items()})


def _is_cross_attention(name: str, module: nn.Module) -> bool:
    return "cross" in name or "encoder_attn" in name or bool(getattr(module, "is_cross_attention", False))


def apply_lsg(model, config: LSGConfig, adapter: ArchitectureAdapter) -> None:
    """Make ``model`` an LSG model: flag encoder self-attention, hook the global tokens, switch backend."""
    install()
    base = model.base_model
    encoder = base.get_submodule(adapter.encoder) if adapter.encoder else base
    for name, module in encoder.named_modules():
        if "Attention" in type(module).__name__ and not _is_cross_attention(name, module):
            module.lsg_config = config
    base.lsg_config = config
    owner = base.get_submodule(adapter.global_owner)
    word = base.get_submodule(adapter.word_embeddings)
    if not hasattr(owner, "global_embeddings"):
        rows = max(GLOBAL_TABLE_ROWS, config.num_global_tokens)
        owner.global_embeddings = nn.Embedding(rows, word.embedding_dim).to(word.weight)
    base.get_submodule(adapter.global_insert).register_forward_pre_hook(_prepend_globals(base, owner), with_kwargs=True)
    base.get_submodule(adapter.layers_parent).register_forward_hook(_strip_globals(base))
    try:
        model.set_attn_implementation(NAME)
    except (ValueError, TypeError, AttributeError):
        model.config._attn_implementation = NAME
    model.config.update(config.to_dict())


def _prepend_globals(base, owner):
    def hook(module, args, kwargs):
        G = base.lsg_config.num_global_tokens
        hidden = args[0] if args else kwargs.pop("hidden_states")
        if G == 0:
            return None
        glob = owner.global_embeddings.weight[:G].to(hidden.dtype).expand(hidden.shape[0], -1, -1)
        hidden = torch.cat([glob, hidden], dim=1)  # (B G+L E)
        return ((hidden, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": hidden})

    return hook


def _strip_globals(base):
    def strip(hidden):
        config = base.lsg_config
        G = config.num_global_tokens
        if G == 0 or hidden is None:
            return hidden
        if config.pool_with_global:  # the first real token takes the first global token's output
            return torch.cat([hidden[:, :1], hidden[:, G + 1 :]], dim=1)
        return hidden[:, G:]

    def hook(module, args, output):
        if isinstance(output, tuple) and not hasattr(output, "last_hidden_state"):
            return (strip(output[0]), *output[1:])
        output.last_hidden_state = strip(output.last_hidden_state)
        if getattr(output, "hidden_states", None) is not None:
            output.hidden_states = tuple(strip(h) for h in output.hidden_states)
        return output

    return hook


def init_global_tokens(model, adapter: ArchitectureAdapter, first_id: int, other_id: int) -> None:
    """§3.3: global 0 = first token ([CLS]/<s>) + position 0, the others = [MASK] + the next positions."""
    base = model.base_model
    table = base.get_submodule(adapter.global_owner).global_embeddings.weight
    word = base.get_submodule(adapter.word_embeddings).weight.detach()
    positions = base.get_submodule(adapter.positions[0])
    pos = positions.weight.detach()[position_offset(positions) :]
    rows = table.shape[0]
    pos = pos.repeat(math.ceil(rows / pos.shape[0]), 1)[:rows]
    scale = math.sqrt(model.config.d_model) if getattr(model.config, "scale_embedding", False) else 1.0
    values = pos + word[other_id] * scale
    values[0] = pos[0] + word[first_id] * scale
    if adapter.token_type_embeddings:
        values = values + base.get_submodule(adapter.token_type_embeddings).weight.detach()[0]
    with torch.no_grad():
        table.copy_(values)


def lsg_config_of(model) -> LSGConfig:
    return model.base_model.lsg_config


def with_lsg(model, **changes) -> LSGConfig:
    """A copy of the model's LSG config with some fields changed (for checks that reduce LSG to full attention)."""
    return dataclasses.replace(lsg_config_of(model), **changes)
