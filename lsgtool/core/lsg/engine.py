"""Generic LSG conversion: extend positions, add global tokens, route encoder self-attention to LSG.

Works on the model object through an ``ArchitectureAdapter`` (see ``adapters``), never through a copied
modeling file: transformers' own classes run, with the "lsg" attention backend (``hf_attention``). Around
the layer stack, three hooks do what the authors' modeling files do: prepend the global tokens, pad the
input to whole blocks, and take the global tokens and the padding off the output again.
"""

from __future__ import annotations

import dataclasses
import inspect
import math

import torch
import torch.nn.functional as F
from torch import nn

from lsgtool.core.lsg.adapters import (ArchitectureAdapter, attention_patterns, detect_adapter, find,
                                           uses_attention_interface)
from lsgtool.core.lsg.hf_attention import NAME, install
from lsgtool.core.errors import UsageError
from lsgtool.core.lsg.config import LSGConfig

GLOBAL_TABLE_ROWS = 512  # the authors' checkpoints store 512 global embeddings and use the first G


def resolve_adapter(model) -> ArchitectureAdapter:
    """The registered adapter for the model type (its attention modules found by running the model when it
    declares none), else one found automatically."""
    from lsgtool.core.registry import get_registry

    applied = getattr(getattr(model, "base_model", None), "lsg_adapter", None)
    if applied is not None:  # an LSG model: the adapter it was built with, decided once
        return applied
    registry = get_registry("architectures")
    model_type = model.config.model_type.replace("-", "_")
    hint = (f"supported: {', '.join(registry)}, and encoders with absolute positions whose attention uses the "
            "attention interface; add an adapter with the register_architectures hook (docs/plugins.md).")
    if model_type in registry:
        adapter = registry[model_type]
        if not adapter.self_attention:
            adapter = dataclasses.replace(adapter, **dict(zip(("self_attention", "cross_attention"),
                                                             attention_patterns(model, adapter.encoder))))
        return adapter
    if not getattr(model.config, "is_encoder_decoder", False) and any(
        getattr(m, "is_causal", False) for m in model.modules()
    ):
        raise UsageError(f"model type {model_type!r} is decoder-only; LSG conversion handles encoders and "
                         "encoder-decoders.", hint)
    if not uses_attention_interface(model):
        raise UsageError(f"model type {model_type!r} is not supported: transformers marks it as not running its "
                         "attention through the attention interface, and no plugin registers an adapter for it.", hint)
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


def model_positions(model) -> int | None:
    """Tokens a model's position table takes (None: LOCOST, or no table its adapter knows)."""
    if getattr(model.config, "model_type", None) == "locost":
        return None
    try:
        return usable_positions(model, resolve_adapter(model))
    except (UsageError, AttributeError, KeyError):
        return None


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


def set_lsg_config(model, config: LSGConfig) -> None:
    """Change the LSG settings of an LSG model in place (all layers, hooks, config.json)."""
    base = model.base_model
    base.lsg_config = config
    for module in base.modules():
        if hasattr(module, "lsg_config"):
            module.lsg_config = config
        if hasattr(module, "lsg_key_prefix"):
            module.lsg_key_prefix = config.num_global_tokens if config.pass_global_tokens_to_decoder else 0
    model.config.update(config.to_dict())


def apply_lsg(model, config: LSGConfig, adapter: ArchitectureAdapter) -> None:
    """Make ``model`` an LSG model: flag the adapter's attention modules, hook the global tokens and the
    padding, switch the attention backend. Calling it again replaces the settings (no second set of hooks)."""
    install()
    base = model.base_model
    for handle in getattr(base, "_lsg_hooks", ()):
        handle.remove()
    attention = find(base, adapter.self_attention)
    if not attention:
        raise UsageError(f"the adapter of model type {model.config.model_type!r} names self-attention modules "
                         f"{', '.join(adapter.self_attention) or '(none)'}, and the model has none of them.",
                         "fix the adapter's self_attention patterns (docs/plugins.md).")
    for _, module in attention:
        module.lsg_config = config
    base.lsg_adapter = adapter
    for _, module in find(base, adapter.cross_attention):
        module.lsg_key_prefix = 0
    owner = base.get_submodule(adapter.global_owner)
    word = base.get_submodule(adapter.word_embeddings)
    if not hasattr(owner, "global_embeddings"):
        rows = max(GLOBAL_TABLE_ROWS, config.num_global_tokens)
        owner.global_embeddings = nn.Embedding(rows, word.embedding_dim).to(word.weight)
    parent = base.get_submodule(adapter.layers_parent)
    globals_first = not adapter.global_insert.startswith(f"{adapter.layers_parent}.") and adapter.layers_parent != ""
    base._lsg_hooks = [
        base.get_submodule(adapter.global_insert).register_forward_pre_hook(_prepend_globals(base, owner), with_kwargs=True),
        parent.register_forward_pre_hook(_pad_to_blocks(model, adapter, globals_first), with_kwargs=True),
        parent.register_forward_hook(_strip(base)),
    ]
    try:
        model.set_attn_implementation(NAME)
    except (ValueError, TypeError, AttributeError):
        model.config._attn_implementation = NAME
    set_lsg_config(model, config)


def _prepend_globals(base, owner):
    def hook(module, args, kwargs):
        G = base.lsg_config.num_global_tokens
        if G == 0:
            return None
        hidden = args[0] if args else kwargs.pop("hidden_states")
        glob = owner.global_embeddings.weight[:G].to(hidden.dtype).expand(hidden.shape[0], -1, -1)
        hidden = torch.cat([glob, hidden], dim=1)  # (B G+L E)
        return ((hidden, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": hidden})

    return hook


def _pad_to_blocks(model, adapter: ArchitectureAdapter, globals_first: bool):
    """Pad the layer stack's input to whole blocks as the authors' models do (``adaptive``): padded positions
    run through the layers, masked as keys. ``hidden``: zero vectors appended to the hidden states; ``tokens``:
    the pad token appended to the input ids (zero vectors to ``inputs_embeds``), while positions last.
    Records the real length for ``_strip``."""
    base, padding = model.base_model, adapter.padding
    signature = inspect.signature(base.get_submodule(adapter.layers_parent).forward)
    mask_name = next((n for n in ("attention_mask", "attn_mask", "mask") if n in signature.parameters), None)

    def hook(module, args, kwargs):
        config = base.lsg_config
        bound = signature.bind_partial(*args, **kwargs)
        values = bound.arguments
        if padding == "tokens":
            name = "input_ids" if values.get("input_ids") is not None else "inputs_embeds"
        else:
            name = next(iter(signature.parameters))
        x = values[name]
        G = config.num_global_tokens if globals_first and padding == "hidden" else 0
        t = x.shape[1] - G
        base._lsg_length = t
        pad = -t % config.block_size
        if not config.adaptive or t <= 2 * config.block_size or not pad:
            return None
        if padding == "tokens" and t + pad > usable_positions(model, adapter):
            return None  # no position left for the padding: lsg_attention pads inside instead
        fill = base.config.pad_token_id if name == "input_ids" else 0
        values[name] = F.pad(x, (0, pad) if x.dim() == 2 else (0, 0, 0, pad), value=fill if fill is not None else 0)
        mask = values.get(mask_name)
        if mask is None:
            mask = torch.ones(x.shape[0], t, dtype=torch.long, device=x.device)
        if mask_name is not None and mask.dim() == 2:
            values[mask_name] = F.pad(mask, (0, pad), value=0)
        return bound.args, bound.kwargs

    return hook


def _strip(base):
    def strip(hidden):
        config = base.lsg_config
        G, t = config.num_global_tokens, getattr(base, "_lsg_length", None)
        if hidden is None or t is None:
            return hidden
        if config.pass_global_tokens_to_decoder:  # the decoder sees the global tokens too (authors' BART default)
            return hidden[:, : G + t]
        if G and config.pool_with_global:  # the first real token takes the first global token's output
            return torch.cat([hidden[:, :1], hidden[:, G + 1 : G + t]], dim=1)
        return hidden[:, G : G + t]

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
