"""A BigBird-style ``random`` sparse selector for lsgtool.

Each block of S tokens is cut into f sub-blocks of S/f consecutive tokens; every head picks one sub-block
per block at random (BigBird's random block attention, inside LSG's sparse layout). Draws come from the
generator lsgtool hands selectors, so a config with ``lsh_seed`` set gives the same choice every call.
Legend: B batch, H heads, n padded length, D head dim, S block size, f sparsity factor.
"""

from __future__ import annotations

from lsgtool.plugin_api import hookimpl


def random_block_selector(x):
    """Per head and block, one random sub-block of S/f consecutive tokens (``SparseInputs -> SparseTokens``)."""
    import torch  # here, not at import: loading the plugin must not slow `lsgtool --help`

    from lsgtool.plugin_api import gather_tokens

    B, H, n, D = x.key.shape
    S, f = x.config.block_size, x.config.sparsity_factor
    width = S // f
    choice = torch.randint(f, (H, n // S), generator=x.generator).to(x.key.device)  # (H n/S)
    starts = torch.arange(0, n, S, device=x.key.device) + choice * width
    idx = (starts[..., None] + torch.arange(width, device=x.key.device)).reshape(1, H, n // f)
    return gather_tokens(x, idx)


@hookimpl
def register_sparse_selectors(register):
    register("random", random_block_selector)
