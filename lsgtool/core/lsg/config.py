"""LSGConfig: the attention pattern, with the field names and defaults of the official LSG checkpoints."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

from lsgtool.core.errors import ConfigError, UsageError

NO_SPARSITY = (None, "none")


@dataclass
class LSGConfig:
    """Local + sparse + global attention settings (LSG paper §3).

    ``block_size`` S: local blocks; each query block sees blocks i-1, i, i+1. ``sparsity_factor`` f and
    ``sparsity_type``: how the selector reduces the sequence by f; ``sparse_block_size``: how many reduced
    tokens each query block takes on each side beyond its local window (0: no sparse attention).
    ``num_global_tokens`` G: the first G positions attend everywhere and are attended by all.
    ``mask_first_token``: the first non-global token is hidden as a key. Model-level switches of the
    authors' checkpoints: ``pool_with_global`` (the first token's output is the first global token's),
    ``adaptive`` (inputs are padded to whole blocks before the first layer; without it ``lsg_attention``
    pads inside), ``pass_global_tokens_to_decoder`` (encoder-decoders: the decoder also attends to the
    global tokens; the authors' converter sets it, lsgtool's ``convert`` leaves it off unless asked). ``lsh_seed``: seed of the random generator handed to selectors (``lsh`` projections, plugin
    selectors that draw at random); None: unseeded.

    The selector is looked up in the active registry once, when the config is built (``selector``).
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
    pass_global_tokens_to_decoder: bool = False

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

    @property
    def selector(self) -> Callable | None:
        """The sparse selector function (None: no sparse attention), resolved when the config was built."""
        if not self.has_sparse:
            return None
        name, function = getattr(self, "_resolved", (None, None))
        if name != self.sparsity_type:  # the field was reassigned after building
            self.validate()
            name, function = self._resolved
        return function

    def validate(self, selectors=None) -> None:
        """Raise ConfigError naming the broken rule and resolve the selector; ``selectors`` defaults to the
        active registry."""
        for name in ("block_size", "sparsity_factor"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}.",
                                  "blocks of 32 to 256 tokens and factors of 2 to 8 are the paper's range.")
        for name in ("sparse_block_size", "num_global_tokens", "lsh_num_pre_rounds"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ConfigError(f"{name} must be a non-negative integer, got {value!r}.", "pass 0 or more.")
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
        function = None
        if self.sparsity_type not in NO_SPARSITY:
            if selectors is None:
                from lsgtool.core.registry import get_registry

                selectors = get_registry("sparse_selectors")
            try:
                function = selectors.require(self.sparsity_type)
            except UsageError as exc:
                raise ConfigError(exc.message, exc.hint) from None
        self._resolved = (self.sparsity_type, function)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, values: dict[str, Any] | Any, **overrides: Any) -> "LSGConfig":
        """Build from a dict or a Hugging Face config object, ignoring keys that are not LSG settings."""
        if not isinstance(values, dict):
            values = values.to_dict()
        names = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in values.items() if k in names}, **overrides})
