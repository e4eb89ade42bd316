"""What an LSG layer connects (LSG paper §3): for each query block, the global, local and sparse keys it sees,
the sparse keys traced back to the tokens they stand for by running the selector itself.

A selector's reduced values are linear in the values it is handed (its weights come from the keys, the first
query and the mask), so handing it one-hot values -- one column per token, or per group of blocks at long
lengths -- makes its output the weight of every original token in every reduced token. Nothing of a selector's
logic is copied here: a plugin's selector is traced exactly as a built-in one.
Legend: H heads, n non-global length padded to blocks, S block size, f sparsity factor, s = S / f reduced
tokens per block, sb sparse tokens per side, r = n / f reduced tokens, nb = n / S query blocks.
"""

from __future__ import annotations

import dataclasses
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
from torch import Tensor

from lsgtool.core.lsg.config import LSGConfig
from lsgtool.core.lsg.selectors import SparseInputs

TOKEN_COLUMNS_MAX = 2048  # up to this padded length the map has one column per token
MAX_COLUMNS = 512  # longer: columns of whole blocks, at most this many
BIGBIRD_BLOCK = 64  # BigBird's released block size (ITC: 3 sliding + 2 global blocks + r random blocks)


def nominal(config: LSGConfig, heads: int = 1, length: int | None = None, dtype_bytes: int = 4) -> dict:
    """Keys per query of an interior block and the farthest reach, from the config alone (LSG paper §3.2, App. A).

    ``connexions`` counts local and sparse keys (3S + 2 sb), as the LSG model cards do; ``keys_per_query`` adds
    the G global keys. ``reach`` = 3S + 2 sb f: the span of tokens a query block's keys stand for. With
    ``length``: the score-matrix size per layer (batch 1) against full attention's.
    """
    S, G = config.block_size, config.num_global_tokens
    sb = config.sparse_block_size if config.has_sparse else 0
    out = {"local": 3 * S, "sparse": 2 * sb, "global": G, "connexions": 3 * S + 2 * sb,
           "keys_per_query": G + 3 * S + 2 * sb, "reach": 3 * S + 2 * sb * config.sparsity_factor}
    if length is not None:
        n = length + (-length % S)
        out["scores_mb"] = round(((n * out["keys_per_query"]) + G * (n + G)) * heads * dtype_bytes / 2**20, 3)
        out["full_scores_mb"] = round((length + G) ** 2 * heads * dtype_bytes / 2**20, 3)
    return out


def compare_budget(config: LSGConfig, length: int, heads: int = 1, dtype_bytes: int = 4) -> list[dict]:
    """LSG against Longformer and BigBird given the same keys per query (local + sparse): how far each reaches."""
    lsg = nominal(config, heads, length, dtype_bytes)
    budget = lsg["connexions"]
    mb = lambda keys: round(length * keys * heads * dtype_bytes / 2**20, 3)  # noqa: E731
    bb = BIGBIRD_BLOCK  # the released block, or smaller so that 3 sliding + 2 global + 3 random blocks fit the budget
    while bb > 8 and 8 * bb > budget:
        bb //= 2
    random_blocks = max(0, budget // bb - 5)
    bigbird_keys = (5 + random_blocks) * bb
    return [
        {"pattern": "lsg", "keys_per_query": budget, "reach": lsg["reach"], "scores_mb": mb(budget),
         "setting": f"block {config.block_size}, {lsg['sparse']} sparse keys, factor {config.sparsity_factor}"},
        {"pattern": "longformer", "keys_per_query": budget + 1, "reach": budget + 1, "scores_mb": mb(budget + 1),
         "setting": f"sliding window {budget} (+ itself)"},
        {"pattern": "bigbird", "keys_per_query": bigbird_keys, "reach": 3 * bb, "scores_mb": mb(bigbird_keys),
         "setting": f"block {bb}: 3 sliding + 2 global + {random_blocks} random blocks (those land anywhere, at "
                    "random)"},
    ]


@dataclass
class Connectivity:
    """Who sees whom in one LSG layer, per query block (all queries of a block see the same keys).

    Columns stand for ``column_size`` consecutive tokens of the padded non-global sequence (1: token level).
    ``local`` (nb, cols): local keys drawn from each column; ``sparse`` (H, nb, cols): sparse keys drawn from
    each column (the selector's weights summed over the visible reduced tokens: 1 per picked token, a fraction
    for pooled ones); ``local_keys`` (nb,), ``sparse_keys`` (H, nb): keys per query block; ``picked`` (H, cols):
    total weight of each column over every usable reduced token (what the selector took from it).
    """

    config: LSGConfig
    length: int
    padded: int
    heads: int
    column_size: int
    local: Tensor
    sparse: Tensor
    local_keys: Tensor
    sparse_keys: Tensor
    picked: Tensor
    data_dependent: bool | None = None

    @property
    def full_attention(self) -> bool:
        """At n <= 2S, LSG runs full attention (the local window covers everything)."""
        return self.padded <= 2 * self.config.block_size

    @property
    def blocks(self) -> int:
        return self.padded // self.config.block_size

    def keys_per_query(self) -> Tensor:
        """(H, nb) keys each query of a block sees: globals + local + visible sparse keys."""
        return self.config.num_global_tokens + self.local_keys[None] + self.sparse_keys

    def reach(self) -> Tensor:
        """(H, nb) tokens spanned from the nearest to the farthest key a query block reaches (local or sparse),
        measured on the columns (exact at token level, to whole columns otherwise)."""
        seen = (self.local[None] > 0) | (self.sparse > 1e-6)  # (H nb cols)
        cols = torch.arange(seen.shape[-1])
        first = torch.where(seen, cols, seen.shape[-1]).min(-1).values
        last = torch.where(seen, cols, -1).max(-1).values
        return ((last - first + 1) * self.column_size).clamp(min=0)

    def distinct_heads(self) -> list[int]:
        """Heads whose sparse pattern differs from every earlier head's (the first head always)."""
        kept: list[int] = []
        for h in range(self.heads):
            if not any(torch.allclose(self.sparse[h], self.sparse[k]) for k in kept):
                kept.append(h)
        return kept

    def summary(self) -> dict:
        """Numbers of the measured map: keys per query and reach over the interior blocks (edges see less)."""
        keys, reach = self.keys_per_query().float(), self.reach().float()
        inner = slice(1, -1) if self.blocks > 2 else slice(None)
        if self.config.has_sparse and self.blocks > 2:  # blocks whose sparse windows lie inside the sequence
            s, sb = self.config.block_size // self.config.sparsity_factor, self.config.sparse_block_size
            lo = math.ceil((sb + s) / s)
            hi = self.blocks - math.ceil((sb + 2 * s) / s)
            if hi > lo:
                inner = slice(lo, hi)
        pick = lambda t: t[:, inner] if t[:, inner].numel() else t  # noqa: E731
        return {
            "keys_per_query": {"interior_max": int(pick(keys).max()), "mean": round(float(keys.mean()), 2),
                               "min": int(keys.min()), "max": int(keys.max())},
            "reach": {"interior_max": int(pick(reach).max()), "max": int(reach.max())},
            "full_attention": self.full_attention,
        }


class NotLinear(ValueError):
    """A selector whose reduced values are not weighted sums of its input values cannot be traced."""


def _windows(config: LSGConfig, nb: int, r: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Reduced-token windows of every query block, as LSG attention lays them out: [(i-1)s - sb, (i-1)s) on the
    left and [(i+2)s, (i+2)s + sb) on the right, cut to [0, r)."""
    s, sb = config.block_size // config.sparsity_factor, config.sparse_block_size
    i = torch.arange(nb)
    clip = lambda t: t.clamp(0, r)  # noqa: E731
    return clip((i - 1) * s - sb), clip((i - 1) * s), clip((i + 2) * s), clip((i + 2) * s + sb)


def trace(selector: Callable, inputs: SparseInputs, columns: Tensor, count: int, lsh_seed: int | None = None,
          progress: Callable[[int, int], None] | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Run ``selector`` on one-hot values: returns ``sparse`` (H, nb, cols) keys per query block and column,
    ``sparse_keys`` (H, nb) visible reduced tokens per query block and ``picked`` (H, cols).

    ``inputs`` holds the layer's query/key/mask of one sequence (batch 1); its values are ignored. ``columns``
    (n,) gives each position's column, ``count`` the number of columns.
    """
    config = inputs.config
    _, H, n, D = inputs.key.shape
    nb = n // config.block_size
    width = D  # selectors may take the values to have the keys' width: columns go D at a time
    sparse = torch.zeros(H, nb, count)
    picked = torch.zeros(H, count)
    sparse_keys = rows = None
    done = 0

    def run(value: Tensor):
        generator = None if lsh_seed is None else torch.Generator().manual_seed(lsh_seed)
        with torch.no_grad():
            return selector(dataclasses.replace(inputs, value=value, generator=generator))

    for c0 in range(0, count, width):
        c1 = min(count, c0 + width)
        onehot = (columns[:, None] == torch.arange(c0, c0 + D)[None]).to(inputs.key.dtype)  # (n D)
        out = run(onehot.to(inputs.key.device)[None, None].expand(1, H, n, D).contiguous())
        if out is None:
            return sparse, torch.zeros(H, nb), picked
        r = out.value.shape[2]
        usable = out.mask.expand(1, H, r)[0].float().cpu()  # (H r)
        weights = out.value[0, :, :, : c1 - c0].float().cpu() * usable[..., None]  # (H r c)
        picked[:, c0:c1] = weights.sum(1)
        rows = weights.sum(-1) if rows is None else rows + weights.sum(-1)
        prefix = torch.cat([weights.new_zeros(H, 1, c1 - c0), weights.cumsum(1)], dim=1)
        l0, l1, r0, r1 = _windows(config, nb, r)
        sparse[:, :, c0:c1] = prefix[:, l1] - prefix[:, l0] + prefix[:, r1] - prefix[:, r0]
        if sparse_keys is None:
            counts = torch.cat([usable.new_zeros(H, 1), usable.cumsum(1)], dim=1)
            sparse_keys = counts[:, l1] - counts[:, l0] + counts[:, r1] - counts[:, r0]
        done += c1 - c0
        if progress is not None:
            progress(done, count)
    # the tracing holds only if the reduced values are linear in the values: every token's one-hot columns
    # summed must give what the selector makes of values that are all ones
    ones = run(torch.ones(1, H, n, D, dtype=inputs.key.dtype, device=inputs.key.device))
    expected = ones.value[0, :, :, 0].float().cpu() * ones.mask.expand(1, H, ones.value.shape[2])[0].float().cpu()
    if not torch.allclose(rows, expected, rtol=1e-3, atol=1e-4):
        raise NotLinear(f"the selector {config.sparsity_type!r} does not combine values linearly (its reduced values "
                        "are not weighted sums of the values it is given), so which tokens it stands for cannot be "
                        "traced from its output.")
    return sparse, sparse_keys, picked


def _local(config: LSGConfig, n: int, real: int, columns: Tensor, count: int) -> tuple[Tensor, Tensor]:
    """Local keys of every query block per column, and their count (blocks i-1, i, i+1 of real tokens)."""
    S, nb = config.block_size, n // config.block_size
    pos = torch.arange(n)
    usable = pos < real
    if config.mask_first_token:
        usable &= pos > 0
    block = pos // S
    i = torch.arange(nb)[:, None]
    inside = ((block[None] >= i - 1) & (block[None] <= i + 1) & usable[None]).float()  # (nb n)
    local = torch.zeros(nb, count).index_add_(1, columns, inside)
    return local, inside.sum(1)


def column_map(n: int, block: int, token_level: bool | None = None) -> tuple[Tensor, int, int]:
    """(columns (n,), count, column size): one column per token up to TOKEN_COLUMNS_MAX, else whole blocks."""
    if token_level is None:
        token_level = n <= TOKEN_COLUMNS_MAX
    size = 1 if token_level else block * math.ceil(n / block / MAX_COLUMNS)
    return torch.arange(n) // size, math.ceil(n / size), size


def connectivity(config: LSGConfig, length: int, heads: int = 12, head_dim: int = 64, *, inputs: SparseInputs | None = None,
                 selector: Callable | None = None, token_level: bool | None = None, seed: int = 0,
                 progress: Callable[[int, int], None] | None = None) -> Connectivity:
    """The map of one layer for ``length`` non-global tokens.

    Without ``inputs`` the selector sees random queries and keys (seeded): exact for selectors that do not
    look at the data (stride, block_stride), and for the others a sample of what they may pick (check
    ``data_dependent``). ``inputs``: a layer's recorded ``SparseInputs`` (see ``record_selector``) for the picks
    on real text; ``selector`` then is the function to run (default: the config's).
    """
    S = config.block_size
    n = length + (-length % S)
    columns, count, size = column_map(n, S, token_level)
    local, local_keys = _local(config, n, length, columns, count)
    selector = selector or config.selector
    if inputs is None:
        inputs = random_inputs(config, n, length, heads, head_dim, seed)
    H = inputs.key.shape[1]
    if selector is None or n <= 2 * S:
        if n <= 2 * S:  # full attention: every real token is a local key
            local = torch.zeros(n // S, count).index_add_(1, columns, (torch.arange(n) < length).float().expand(n // S, n))
            local_keys = local.sum(1)
        empty = torch.zeros(H, n // S, count)
        return Connectivity(config, length, n, H, size, local, empty, local_keys, torch.zeros(H, n // S),
                            torch.zeros(H, count), None if selector is None else False)
    sparse, sparse_keys, picked = trace(selector, inputs, columns, count, config.lsh_seed, progress)
    return Connectivity(config, length, n, H, size, local, sparse, local_keys, sparse_keys, picked)


def random_inputs(config: LSGConfig, n: int, real: int, heads: int, head_dim: int, seed: int = 0) -> SparseInputs:
    """What a selector receives in a layer, with random (seeded) queries and keys, padding after ``real`` tokens."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, heads, n, head_dim, generator=g)
    k = torch.randn(1, heads, n, head_dim, generator=g)
    mask = (torch.arange(n) < real)[None]
    return SparseInputs(q, k, torch.zeros_like(k[..., :1]), mask, q[:, :, :1], config, 1.0 / math.sqrt(head_dim))


def is_data_dependent(config: LSGConfig, heads: int = 4, head_dim: int = 16) -> bool | None:
    """Whether the selector's picks change with the keys (tried on two random draws); None: no selector."""
    if config.selector is None:
        return None
    n = 4 * config.block_size
    columns, count, _ = column_map(n, config.block_size, token_level=True)
    picks = [trace(config.selector, random_inputs(config, n, n, heads, head_dim, seed), columns, count,
                   config.lsh_seed)[2] for seed in (1, 2)]
    return not torch.allclose(picks[0], picks[1], atol=1e-6)


def lsg_layers(model) -> list:
    """The model's LSG self-attention modules in forward order."""
    base = model.base_model
    return [m for m in base.modules() if m is not base and isinstance(getattr(m, "lsg_config", None), LSGConfig)]


@contextmanager
def record_selector(module) -> Iterator[list]:
    """Inside the block, every call of ``module``'s selector appends its ``SparseInputs`` to the yielded list
    (and runs the selector as usual); the module's config is restored afterwards."""
    config = module.lsg_config
    recording = dataclasses.replace(config)
    name, function = recording._resolved
    seen: list = []

    def recorded(x):
        seen.append(x)
        return function(x)

    recorded.original = function
    recording._resolved = (name, recorded)
    module.lsg_config = recording
    try:
        yield seen
    finally:
        module.lsg_config = config
