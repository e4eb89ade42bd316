import json
from importlib import metadata

import pytest
import torch
import torch.nn.functional as F
from typer.testing import CliRunner

import lsgtool_bigbird_random
from lsgtool import LSGConfig, SparseInputs, lsg_attention
from lsgtool.cli import create_app
from lsgtool.core.lsg.reference import dense_lsg_attention
from lsgtool.plugins.manager import make_plugin_manager


@pytest.fixture
def pm():
    pm = make_plugin_manager(load_installed=False)
    pm.register(lsgtool_bigbird_random, name="bigbird-random")
    pm.activate()
    return pm


def _inputs(config, n_blocks=6, B=2, H=4, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    n = n_blocks * config.block_size
    q, k, v = (torch.randn(B, H, n, D, generator=g, dtype=torch.float64) for _ in range(3))
    mask = torch.ones(B, n, dtype=torch.bool)
    mask[1, -5:] = False
    return SparseInputs(q, k, v, mask, q[:, :, :1], config, D**-0.5, torch.Generator().manual_seed(config.lsh_seed))


def test_picks_one_whole_sub_block_inside_each_block(pm):
    config = LSGConfig(block_size=8, sparsity_factor=4, sparsity_type="random")
    x = _inputs(config)
    x.key = torch.arange(x.key.shape[2], dtype=torch.float64).view(1, 1, -1, 1).expand_as(x.key).contiguous()
    picked = lsgtool_bigbird_random.random_block_selector(x).key[..., 0].long()  # (B H n/f)
    blocks = picked.view(2, 4, -1, 2)
    assert torch.equal(blocks[..., 1] - blocks[..., 0], torch.ones_like(blocks[..., 0]))
    assert torch.equal(blocks[..., 0] // 8, torch.arange(6).expand(2, 4, 6))
    assert blocks[..., 0].remainder(2).eq(0).all()
    assert len({tuple(h.tolist()) for h in blocks[0, :, :, 0]}) > 1  # heads choose differently


def test_seeded_and_reproducible(pm):
    config = LSGConfig(block_size=8, sparsity_factor=4, sparsity_type="random", lsh_seed=5)
    a, b = (lsgtool_bigbird_random.random_block_selector(_inputs(config)).key for _ in range(2))
    assert torch.equal(a, b)
    other = LSGConfig(block_size=8, sparsity_factor=4, sparsity_type="random", lsh_seed=6)
    assert not torch.equal(a, lsgtool_bigbird_random.random_block_selector(_inputs(other)).key)


@pytest.mark.parametrize("is_causal", [False, True])
def test_attention_with_random_selector_matches_dense_reference(pm, is_causal):
    config = LSGConfig(block_size=4, sparse_block_size=4, sparsity_factor=2, sparsity_type="random", num_global_tokens=1)
    g = torch.Generator().manual_seed(1)
    L = 1 + 11 * 4 + 2
    q, k, v = (torch.randn(2, 3, L, 8, generator=g, dtype=torch.float64) for _ in range(3))
    mask = torch.ones(2, L, dtype=torch.bool)
    mask[1, -6:] = False
    out = lsg_attention(q, k, v, mask, config=config, is_causal=is_causal)
    pad = -(L - 1) % 4
    qp, kp, vp = (F.pad(t[:, :, 1:], (0, 0, 0, pad)) for t in (q, k, v))
    keep = F.pad(mask[:, 1:], (0, pad), value=False)
    sparse = lsgtool_bigbird_random.random_block_selector(
        SparseInputs(qp, kp, vp, keep, q[:, :, :1], config, 8**-0.5, torch.Generator().manual_seed(0)))
    ref = dense_lsg_attention(q, k, v, mask, config=config, is_causal=is_causal, sparse=sparse)
    real = mask[:, None, :, None].expand_as(out)
    assert (out - ref).abs()[real].max() < 1e-9


def test_listed_and_accepted_once_installed(monkeypatch):
    if not any(ep.name == "bigbird-random" for ep in metadata.entry_points(group="lsgtool")):
        pytest.skip("lsgtool-bigbird-random is not pip-installed here (CI installs it)")
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "bigbird-random")
    pm = make_plugin_manager()
    listing = json.loads(CliRunner().invoke(create_app(pm), ["plugins", "--json"]).stdout)
    entry = next(p for p in listing["plugins"] if p["name"] == "bigbird-random")
    assert entry["distribution"] == "lsgtool-bigbird-random"
    assert entry["registers"] == {"sparse_selectors": ["random"]}
    pm.activate()
    assert LSGConfig(sparsity_type="random").sparsity_type == "random"
