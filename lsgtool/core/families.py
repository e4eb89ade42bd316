"""The families of things core keeps registries of, and how each entry is checked when it is registered.

Kept apart from the registry machinery (``lsgtool.core.registry``), which the modules these checks know
(adapters, presets, SSM kernels) read: the machinery imports none of them, so core has no import cycle. The modules that need torch are imported when an
entry is checked, keeping ``lsgtool --help`` fast.
"""

from __future__ import annotations

from typing import Any

from lsgtool.core.presets import ModelPreset
from lsgtool.core.registry import PRESET_NAME, Family

__all__ = ["FAMILIES"]


def _adapter(obj: Any) -> str | None:
    from lsgtool.core.lsg.adapters import ArchitectureAdapter  # imports torch: not on the CLI's start-up path

    return None if isinstance(obj, ArchitectureAdapter) else f"expected an ArchitectureAdapter, got {type(obj).__name__}"


def _preset(obj: Any) -> str | None:
    return None if isinstance(obj, ModelPreset) else f"expected a ModelPreset, got {type(obj).__name__}"


def _ssm_contract(obj: Any) -> str | None:
    from lsgtool.core.ssm.kernels import check_variant  # needs torch: only when an SSM variant is first used

    return check_variant(obj)


FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        Family("sparse_selectors", "sparse selector"),
        Family("ssm_variants", "SSM variant", contract=_ssm_contract),
        Family("architectures", "architecture", check=_adapter),
        Family("presets", "model preset", PRESET_NAME, _preset),
    )
}


