"""Model presets: a short name standing for an architecture, its configuration and where weights live."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelPreset:
    """What ``--model NAME`` (and ``lsgtool.load(NAME)``) resolves to.

    ``architecture`` names the model family (``"locost"``, or a transformers class name), ``config`` holds
    configuration overrides, ``tokenizer`` the tokenizer folder or Hub id it expects, ``weights`` a local
    folder or Hub id (None: no weights on this machine), ``hint`` how to get the weights when they are
    missing, ``description`` what the weights are and what the preset is good for. ``summarizer``: a
    summariser ``lsgtool summarize`` may pick by itself when its weights are on this machine (in the order the
    presets were registered).
    """

    architecture: str
    description: str
    config: dict[str, Any] = field(default_factory=dict)
    tokenizer: str | None = None
    weights: str | None = None
    hint: str | None = None
    summarizer: bool = False

    @property
    def kind(self) -> str:
        return "locost" if self.architecture == "locost" else "transformers"


def weights_here(preset: ModelPreset) -> bool:
    """Whether the preset's weights are on this machine (a local path, or the Hugging Face cache); no download."""
    from pathlib import Path

    if preset.weights is None:
        return False
    if Path(preset.weights).exists():
        return True
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(preset.weights, "config.json"), str)
