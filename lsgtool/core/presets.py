"""Model presets: a short name standing for an architecture, its configuration and where weights live."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelPreset:
    """What ``lsgtool ... --model NAME`` resolves to.

    ``architecture`` names the model family (``"locost"``, or a transformers class name), ``config``
    holds configuration overrides, ``tokenizer`` the tokenizer folder or Hub id it expects, and
    ``weights`` a local folder or Hub id (None: no published weights; the model must be trained).
    """

    architecture: str
    description: str
    config: dict[str, Any] = field(default_factory=dict)
    tokenizer: str | None = None
    weights: str | None = None
