"""LSGConfig: the attention pattern, with the field names and defaults of the official LSG checkpoints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from lsgtool.core.errors import ConfigError, UsageError

NO_SPARSITY = (None, "none")


@dataclass
class LSGConfig:
    """Local + sparse + global attention settings (LSG paper §3).

    ``block_size`` S: local blocks; each query block sees blocks i-1, i, i+1. ``sparsity_factor`` f and
    ``sparsity_type``: how the selector reduces the sequence by f; ``sparse_block_size``: how many reduced
    tokens each query block takes on each side beyond its local window (0: no sparse attention).
    ``num_global_tokens`` G: the first G positions attend everywhere and are attended by all.
    ``mask_first_token``: the first non-global token is hidden as a key. ``pool_with_global`` and
    ``adaptive`` are model-level switches kept for checkpoint compatibility (lsgtool always pads to a
    multiple of S). ``lsh_seed``: seed of the random generator handed to selectors (``lsh`` projections, plugin
    selectors that draw at random); None: unseeded.
    """

    block_size: int = 128
    sparse_block_size: int = 128
    sparsity_factor: int = 2
    sparsity_type: str | None = "norm"
    num_global_tokens: int = 1
    mask_first_token: bool = False
    pool_with_global: bool = True
    lsh_num_pre_rounds: int = 1
    adaptive: bool = True
    lsh_seed: int | None = 0

    def __post_init__(self) -> None:
        if self.sparsity_type == "none":
            self.sparsity_type = None
        self.validate()

    @property
    def has_sparse(self) -> bool:
        return self.sparsity_type not in NO_SPARSITY and self.sparse_block_size > 0

    @property
    def selection_block(self) -> int:
        """Size of the blocks inside which ``norm`` and ``lsh`` choose their tokens."""
        return min(self.block_size, self.sparse_block_size) if self.sparse_block_size else self.block_size

    def validate(self, selectors=None) -> None:
        """Raise ConfigError naming the broken rule; ``selectors`` defaults to the registered ones."""
        for name in ("block_size", "sparsity_factor"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}.")
        for name in ("sparse_block_size", "num_global_tokens", "lsh_num_pre_rounds"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ConfigError(f"{name} must be a non-negative integer, got {value!r}.")
        if self.block_size % self.sparsity_factor:
            raise ConfigError(
                f"block_size ({self.block_size}) must be divisible by sparsity_factor ({self.sparsity_factor}).",
                "pick a sparsity factor that divides the block size, e.g. 2, 4 or 8 for blocks of 128.",
            )
        s = self.selection_block
        if self.sparse_block_size and (self.block_size % s or s % self.sparsity_factor):
            raise ConfigError(
                f"sparse_block_size ({self.sparse_block_size}) smaller than block_size ({self.block_size}) must "
                f"divide it and be divisible by sparsity_factor ({self.sparsity_factor}).",
                "use sparse_block_size equal to block_size (the default layout) or a divisor of it.",
            )
        if self.sparsity_type not in NO_SPARSITY:
            if selectors is None:
                from lsgtool.plugins.manager import get_registry

                selectors = get_registry("sparse_selectors")
            try:
                selectors.require(self.sparsity_type)
            except UsageError as exc:
                raise ConfigError(exc.message, exc.hint) from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any] | Any, **overrides: Any) -> "LSGConfig":
        """Build from a dict or a Hugging Face config object, ignoring keys that are not LSG settings."""
        if not isinstance(values, dict):
            values = values.to_dict()
        names = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in values.items() if k in names}, **overrides})
