"""``lsgtool profile --model``: whole checkpoints instead of synthetic layers.

A model is one of three kinds, told apart from its config without loading weights:
- ``lsg``: a folder converted by lsgtool or the authors (variants: ``model`` as saved, ``full`` with its
  attention made full, ``lsg-<selector>`` with another selector);
- ``source``: any other model (a folder, a cached Hub id or a preset such as ``minilm``); for ``lsg-<selector>``
  each point converts it to the point's length (block and sparsity factor of the profile), ``full`` extends
  its positions the same way with dense attention, ``model`` runs it as it is, up to its own positions;
- ``locost``: a LOCOST folder or preset (variant: ``model``); presets are built with random weights, which
  time and memory do not depend on, so no download is needed.
Encoder-decoder models are measured on their encoder in inference (the part that grows with the input); in
train mode the whole model runs with 64 target tokens, backward and an optimizer step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from lsgtool.core.errors import UsageError

TARGET_TOKENS = 64


@dataclass(frozen=True)
class ModelTarget:
    source: str
    kind: str  # lsg | source | locost
    preset_config: dict | None = None
    found: dict | None = None  # the resolved Source's fields, JSON-ready: each point process loads it, no look-up

    def loaded(self):
        """The model, loaded from the Source resolved once (``found``), or from the name as given."""
        from lsgtool.core.load import Source, load

        if self.found is None:
            return load(self.source)
        return load(Source(**{**self.found, "path": Path(self.found["path"])}))

    @property
    def allowed(self) -> tuple[str, ...]:
        return ("model",) if self.kind == "locost" else ("model", "full", "lsg-*")

    @property
    def default_variants(self) -> list[str]:
        return {"lsg": ["model", "full"], "source": ["lsg-norm", "full"], "locost": ["model"]}[self.kind]


def model_target(found) -> ModelTarget:
    """The target for a resolved ``Source``: each point process loads that handle, no second look-up."""
    fields = {**vars(found), "path": str(found.path)}
    if found.kind == "locost":
        return ModelTarget(found.name, "locost", dict(found.overrides) if found.preset else None, fields)
    return ModelTarget(found.name, "lsg" if found.kind == "lsg" else "source", found=fields)


def resolve_model(source: str) -> ModelTarget:
    """What ``--model`` names (a preset, a local folder or file, a Hub id), found once without loading weights;
    not found is a usage error."""
    from lsgtool.core.load import resolve

    return model_target(resolve(source, weights_needed=False))


def check_model_variants(target: ModelTarget, names: list[str], selectors: list[str]) -> list[str]:
    allowed = ["model", *(["full", *(f"lsg-{s}" for s in selectors)] if target.kind != "locost" else [])]
    for name in names:
        if name not in allowed:
            raise UsageError(f"variant {name!r} does not apply to the {target.kind} model {target.source!r}.",
                             f"with --model, variants are: {', '.join(allowed)}.")
    return names


def _build(target: ModelTarget, variant: str, length: int, block: int = 128, factor: int = 4):
    if target.kind == "locost":
        from lsgtool.core.ssm.locost import LocostConfig, LocostForConditionalGeneration

        if target.preset_config is not None:
            torch.manual_seed(0)
            return LocostForConditionalGeneration(LocostConfig(**target.preset_config))
    from lsgtool.core.lsg.engine import set_lsg_config, with_lsg

    if target.kind == "locost":
        return target.loaded()
    if target.kind == "lsg":
        model = target.loaded()
        if variant == "full":
            set_lsg_config(model, with_lsg(model, block_size=length, sparse_block_size=length))
        elif variant.startswith("lsg-"):
            set_lsg_config(model, with_lsg(model, sparsity_type=variant.removeprefix("lsg-")))
        return model
    from lsgtool.core.convert.api import convert

    model = target.loaded()
    if variant == "model":
        return model
    positions = getattr(model.config, "max_position_embeddings", 512)
    max_length = max(length, 2 * positions)
    if variant == "full":  # LSG reduced to full attention: the same model, the same positions, dense attention
        model, _ = convert(model, max_length=max_length, block_size=max_length, sparsity_type=None, num_global_tokens=0)
    else:
        model, _ = convert(model, max_length=max_length, block_size=block, sparsity_factor=factor,
                           sparsity_type=variant.removeprefix("lsg-"))
    return model


def model_step(target: dict, variant: str, length: int, setup, mode: str, device: str,
               dtype: torch.dtype) -> tuple[Callable[[], None], torch.nn.Module]:
    """One measured step of a whole model on ``setup.batch`` random token sequences of ``length``, and the model.
    A source model is converted with ``setup.block`` and ``setup.factor``."""
    from lsgtool.profiling.variants import trainer

    target, batch = ModelTarget(**target), setup.batch
    model = _build(target, variant, length, setup.block, setup.factor)
    from lsgtool.core.lsg.engine import model_positions

    limit = model_positions(model)
    if limit is not None and length > limit:
        raise UsageError(f"longer than the model's {limit} positions", "profile lengths up to the model's positions.")
    model = model.to(device=device, dtype=dtype)
    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(min(1000, vocab - 1), vocab, (batch, length), generator=generator).to(device)
    mask = torch.ones_like(ids)
    encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
    if mode == "inference":
        run = model.get_encoder() if encoder_decoder else model
        return trainer(model, lambda: _first_tensor(run(input_ids=ids, attention_mask=mask)), mode), model
    if encoder_decoder:
        labels = torch.randint(min(1000, vocab - 1), vocab, (batch, TARGET_TOKENS), generator=generator).to(device)
        return trainer(model, lambda: model(input_ids=ids, attention_mask=mask, labels=labels).loss, mode), model
    return trainer(model, lambda: _first_tensor(model(input_ids=ids, attention_mask=mask)), mode), model


def _first_tensor(output) -> torch.Tensor:
    if getattr(output, "loss", None) is not None:
        return output.loss
    return output[0]
