"""The LSG connectivity map: counts against the LSG model cards' figures and against the dense reference's key
sets, reach against the closed form, plugin selectors traced like built-ins."""

import math

import pytest
import torch

from lsgtool.core.inspect.connectivity import (compare_budget, connectivity, is_data_dependent, nominal,
                                               random_inputs, record_selector)
from lsgtool.core.lsg.config import LSGConfig
from lsgtool.core.lsg.reference import allowed_keys
from lsgtool.core.lsg.selectors import BUILTIN_SELECTORS, SparseTokens, gather_tokens
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager

SELECTORS = [name for name in BUILTIN_SELECTORS if name != "none"]


def config(selector="pooling", block=16, factor=4, sparse_block=None, G=1, **more):
    return LSGConfig(block_size=block, sparse_block_size=block if sparse_block is None else sparse_block,
                     sparsity_factor=factor, sparsity_type=selector, num_global_tokens=G, **more)


@pytest.mark.parametrize("block, factor, sparse, expected", [(128, 4, True, 640), (32, 4, True, 160),
                                                            (128, 2, False, 384), (256, 2, False, 768)])
def test_connexions_follow_the_model_cards_rule(block, factor, sparse, expected):
    c = config("pooling" if sparse else None, block=block, factor=factor)
    numbers = nominal(c)
    assert numbers["connexions"] == expected  # the cards' 384 (128/0), 160 (32/4) and 768 (256/0); 640 for 128/4
    assert numbers["keys_per_query"] == expected + 1
    assert numbers["reach"] == 3 * block + (2 * block * factor if sparse else 0)


@pytest.mark.parametrize("selector", SELECTORS)
def test_keys_per_query_equal_the_dense_reference_key_sets(selector):
    """Every query's key count from the map equals the row count of the reference's explicit boolean mask, with
    the reduced tokens' own mask and padding (250 real tokens in 256)."""
    c = config(selector, block=16, factor=4, sparse_block=8, G=2)
    real, H = 250, 4
    conn = connectivity(c, real, heads=H, head_dim=8)
    inputs = random_inputs(c, conn.padded, real, H, 8)
    generator = torch.Generator().manual_seed(c.lsh_seed)
    import dataclasses

    sparse: SparseTokens = c.selector(dataclasses.replace(inputs, value=inputs.key, generator=generator))
    n, G, r = conn.padded, c.num_global_tokens, sparse.key.shape[2]
    allowed = allowed_keys(n, r, G, c, is_causal=False)  # (G+n, G+n+r)
    keep = torch.cat([torch.ones(G, dtype=torch.bool), torch.arange(n) < real])
    for h in range(H):
        key_mask = torch.cat([keep, sparse.mask.expand(1, H, r)[0, h].bool()])
        counts = (allowed & key_mask).sum(1)[G:]  # per non-global query
        per_block = counts.view(-1, c.block_size)
        assert (per_block == per_block[:, :1]).all()  # every query of a block sees as many keys
        assert per_block[:, 0].tolist() == conn.keys_per_query()[h].long().tolist()


@pytest.mark.parametrize("selector", ["pooling", "stride", "block_stride", "norm"])
def test_interior_blocks_see_the_nominal_keys(selector):
    c = config(selector, block=32, factor=4)
    summary = connectivity(c, 1024, heads=4, head_dim=16).summary()
    assert summary["keys_per_query"]["interior_max"] == nominal(c)["keys_per_query"] == 161
    assert summary["keys_per_query"]["min"] < 161  # edge blocks see fewer


def test_sparse_support_is_the_reference_strided_tokens():
    """Token-level map of ``stride``: head h reaches exactly tokens j·f + h mod f of the reduced windows."""
    c = config("stride", block=16, factor=4, sparse_block=8, G=0)
    conn = connectivity(c, 256, heads=4, head_dim=8)
    s, sb, f, r = 4, 8, 4, 64
    for h in range(4):
        for i in range(conn.blocks):
            windows = [j for j in range((i - 1) * s - sb, (i - 1) * s)] + [j for j in range((i + 2) * s, (i + 2) * s + sb)]
            expected = {j * f + h % f for j in windows if 0 <= j < r}
            assert set(torch.nonzero(conn.sparse[h, i] > 0).flatten().tolist()) == expected


def test_reach_matches_the_closed_form_for_pooling_and_stride():
    c = config("pooling", block=16, factor=4)
    closed = nominal(c)["reach"]  # 3S + 2 sb f = 48 + 128
    assert connectivity(c, 512, heads=2, head_dim=8).summary()["reach"]["interior_max"] == closed == 176
    strided = connectivity(config("stride", block=16, factor=4), 512, heads=2, head_dim=8)
    assert strided.summary()["reach"]["interior_max"] == closed - 4 + 1  # the last group contributes one token


def test_long_lengths_use_block_columns_and_agree_with_the_token_map():
    c = config("pooling", block=16, factor=4)
    tokens = connectivity(c, 1024, heads=2, head_dim=8, token_level=True)
    blocks = connectivity(c, 1024, heads=2, head_dim=8, token_level=False)
    assert tokens.column_size == 1 and blocks.column_size == 16
    assert torch.allclose(tokens.sparse.view(2, 64, 64, 16).sum(-1), blocks.sparse, atol=1e-4)
    assert torch.equal(tokens.keys_per_query(), blocks.keys_per_query())


def test_short_inputs_are_full_attention_and_no_selector_means_local_only():
    short = connectivity(config("norm", block=16), 30, heads=2, head_dim=8)
    assert short.full_attention and short.keys_per_query()[0].tolist() == [31, 31]  # 30 tokens + 1 global
    local = connectivity(config(None, block=16, G=0), 256, heads=2, head_dim=8)
    assert local.summary()["keys_per_query"]["interior_max"] == 48 and local.sparse.abs().sum() == 0


def test_data_dependence_is_measured_not_declared():
    assert not is_data_dependent(config("stride"))
    assert not is_data_dependent(config("block_stride"))
    assert is_data_dependent(config("norm")) and is_data_dependent(config("lsh", factor=2))
    assert is_data_dependent(config(None)) is None


class _EveryEighth:
    """A third-party selector the inspector knows nothing about: two copies of every eighth token."""

    @hookimpl
    def register_sparse_selectors(self, register):
        def every_eighth(x):
            n = x.key.shape[2]
            idx = torch.arange(0, n, 8).repeat_interleave(2)[: n // x.config.sparsity_factor]
            return gather_tokens(x, idx[None, None].expand(1, x.key.shape[1], -1))

        register("every_eighth", every_eighth)


def test_a_plugin_selector_is_traced_through_its_own_output():
    pm = make_plugin_manager(load_installed=False)
    pm.register(_EveryEighth(), name="lsgtool-every-eighth")
    pm.activate()
    conn = connectivity(config("every_eighth", block=16, factor=4, G=0), 256, heads=2, head_dim=8)
    taken = torch.nonzero(conn.picked[0] > 0).flatten()
    assert taken.tolist() == list(range(0, 256, 8))  # what the plugin picked, no more
    assert conn.picked[0, 0] == 2.0  # each taken twice


def test_a_selector_that_is_not_linear_in_the_values_is_refused():
    from lsgtool.core.inspect.connectivity import NotLinear

    def squares(x):
        picked = gather_tokens(x, torch.arange(0, x.key.shape[2], x.config.sparsity_factor)[None, None])
        return SparseTokens(picked.key, picked.value ** 2 + 0.5, picked.mask)

    with pytest.raises(NotLinear, match="does not combine values linearly"):
        connectivity(config("pooling", block=16, factor=4), 256, heads=2, head_dim=8, selector=squares)


def test_budget_comparison_gives_lsg_the_longest_reach():
    rows = {r["pattern"]: r for r in compare_budget(config("norm", block=128, factor=4), 16384, heads=12)}
    assert rows["lsg"]["keys_per_query"] == 640 and rows["lsg"]["reach"] == 3 * 128 + 2 * 128 * 4
    assert rows["longformer"]["keys_per_query"] == 641 and rows["longformer"]["reach"] == 641
    assert rows["bigbird"]["keys_per_query"] <= 640 and rows["bigbird"]["reach"] == 192
    assert rows["lsg"]["scores_mb"] == pytest.approx(16384 * 640 * 12 * 4 / 2**20, rel=1e-3)


def test_record_selector_sees_the_layer_inputs_and_restores_the_config():
    import transformers as T

    from lsgtool.core.convert.api import convert
    from lsgtool.core.inspect.connectivity import lsg_layers

    model = T.BertModel(T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                                     vocab_size=99, max_position_embeddings=64))
    model, _ = convert(model, max_length=256, block_size=16, sparsity_factor=4, sparsity_type="norm")
    layers = lsg_layers(model)
    assert len(layers) == 2
    before = layers[1].lsg_config
    with record_selector(layers[1]) as seen:
        model(input_ids=torch.randint(5, 99, (1, 200)))
    assert layers[1].lsg_config is before and len(seen) == 1
    assert seen[0].key.shape == (1, 4, 208, 8)  # 200 tokens padded to blocks of 16, globals apart
    assert seen[0].mask[0, :200].all() and not seen[0].mask[0, 200:].any()
    assert math.isclose(seen[0].scale, 1 / math.sqrt(8))
