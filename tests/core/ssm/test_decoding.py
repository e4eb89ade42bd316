"""Cross-attention without the key/value cache gives what the cached T5 cross-attention gives."""

import pytest
import torch

from lsgtool import LocostConfig, LocostForConditionalGeneration


pytestmark = pytest.mark.internals  # run on the declared floor of transformers too (constraints/floor.txt)


def _model(encoder_layers=2, decoder_layers=2):
    torch.manual_seed(0)
    config = LocostConfig(vocab_size=50, d_model=32, d_kv=8, d_ff=37, num_layers=encoder_layers,
                          num_decoder_layers=decoder_layers, num_heads=4,
                          d_state=8, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return LocostForConditionalGeneration(config).eval()


@torch.no_grad()
def test_logits_equal_with_and_without_the_cache_padding_included():
    model = _model()
    ids = torch.randint(2, 50, (2, 40))
    mask = torch.ones_like(ids)
    mask[1, -7:] = 0
    cached = model(input_ids=ids, attention_mask=mask, decoder_input_ids=ids[:, :5]).logits
    model.set_cross_attention_cache(False)
    assert not model.cross_attention_cached
    direct = model(input_ids=ids, attention_mask=mask, decoder_input_ids=ids[:, :5]).logits
    torch.testing.assert_close(direct, cached, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("depths", [(2, 2), (1, 3), (3, 1)], ids=["equal", "deeper-decoder", "deeper-encoder"])
@pytest.mark.parametrize("beams, batch, padded", [(1, 1, False), (3, 1, False), (2, 2, False), (3, 2, True)])
@torch.no_grad()
def test_generation_is_the_same_and_beams_share_one_encoder_output(beams, batch, padded, depths):
    """With the cache (transformers' own path: a break there is a TypeError from inside generate) and without,
    for encoder and decoder depths that differ (the decoding cache is sized by the decoder's)."""
    model = _model(*depths)
    ids = torch.randint(2, 50, (batch, 300))
    mask = torch.ones_like(ids)
    if padded:  # the second row is 180 tokens long, padded to 300
        ids[1, 180:], mask[1, 180:] = 0, 0
    kwargs = dict(attention_mask=mask, num_beams=beams, max_new_tokens=10, min_new_tokens=10, do_sample=False)
    expected = model.generate(input_ids=ids, **kwargs)
    model.set_cross_attention_cache(False)
    seen = []
    hook = model.decoder.block[0].layer[1].EncDecAttention.register_forward_pre_hook(
        lambda module, args, kw: seen.append(kw["key_value_states"].shape[0]), with_kwargs=True)
    got = model.generate(input_ids=ids, **kwargs)
    hook.remove()
    assert torch.equal(got, expected)
    assert set(seen) == {1 if batch == 1 else batch * beams}  # one input: one encoder output for every beam


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("peaked", [False, True])
@torch.no_grad()
def test_the_folded_read_equals_one_product_per_head(shared, peaked):
    """Peaked: scores spread over hundreds, most weights below 1e-38 (zeroed by the folded read on CPUs)."""
    model = _model()
    attention = model.decoder.block[0].layer[1].EncDecAttention
    beams, L = 3, 57
    hidden = torch.randn(beams, 2, 32) * (100 if peaked else 1)
    states = torch.randn(1 if shared else beams, L, 32)
    mask = torch.zeros(1 if shared else beams, 1, 1, L)
    mask[..., -5:] = torch.finfo(torch.float32).min  # padding at the end
    torch.testing.assert_close(attention.without_cache(hidden, states, mask),
                               attention.without_cache_per_head(hidden, states, mask), rtol=1e-5,
                               atol=2e-5 if peaked else 1e-6)  # peaked: outputs ~10x larger, other summation orders


def test_training_through_the_uncached_read_gives_the_cached_gradients():
    """The read zeroes negligible weights in place only without autograd: a backward runs and matches the cache."""
    torch.manual_seed(1)
    ids, labels = torch.randint(2, 50, (2, 40)), torch.randint(2, 50, (2, 6))
    grads = []
    for cached in (True, False):
        model = _model()
        model.set_cross_attention_cache(cached)
        model(input_ids=ids, labels=labels).loss.backward()
        grads.append(model.decoder.block[0].layer[1].EncDecAttention.k.weight.grad.clone())
    assert grads[0].abs().sum() > 0
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-6)


def test_the_first_seeded_model_of_a_process_has_the_weights_of_the_next():
    """Resolving the SSM variants checks each on a tiny instance: that must not draw from the seeded stream."""
    import subprocess
    import sys

    code = ("import torch, sys; sys.path.insert(0, 'tests/core/ssm'); from test_decoding import _model; "
            "a, b = _model(), _model(); "
            "assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))")
    root = __import__("pathlib").Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=root)


onednn = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="this torch has no oneDNN")


@onednn
@pytest.mark.parametrize("path", ["matmul", "onednn", "packed"])
@pytest.mark.parametrize("shared", [True, False])
@torch.no_grad()
def test_every_product_path_gives_the_folded_read(path, shared):
    from lsgtool.core.ssm import products

    attention = _model().decoder.block[0].layer[1].EncDecAttention
    hidden, states = torch.randn(3, 2, 32), torch.randn(1 if shared else 3, 57, 32)
    with products.forced(path):
        got = attention.without_cache(hidden, states, None)
    torch.testing.assert_close(got, attention.without_cache_per_head(hidden, states, None), rtol=1e-5, atol=1e-6)


@onednn
@pytest.mark.parametrize("path", ["onednn", "packed"])
@torch.no_grad()
def test_generation_on_the_onednn_paths_is_the_cached_generation(path):
    from lsgtool.core.ssm import products

    model = _model()
    ids = torch.randint(2, 50, (1, 300))
    kwargs = dict(num_beams=2, max_new_tokens=10, min_new_tokens=10, do_sample=False)
    expected = model.generate(input_ids=ids, **kwargs)
    model.set_cross_attention_cache(False)
    with products.forced(path):
        assert torch.equal(model.generate(input_ids=ids, **kwargs), expected)


@onednn
@torch.no_grad()
def test_x_is_packed_once_per_generation_and_the_copies_go_with_it(monkeypatch):
    """Every layer and step of a generation reads the one encoder output: each product packs it once (not per
    layer or step), and the packed copies are freed with it; X changed in place is packed again."""
    import gc

    from lsgtool.core.ssm import products

    packed = []
    reorder = torch.ops.mkldnn._reorder_linear_weight
    monkeypatch.setattr(products.torch.ops.mkldnn, "_reorder_linear_weight",
                        lambda x, rows: packed.append(tuple(x.shape)) or reorder(x, rows), raising=False)
    model = _model(decoder_layers=3)
    model.set_cross_attention_cache(False)
    ids = torch.randint(2, 50, (1, 300))
    encoded = model.get_encoder()(input_ids=ids)  # kept by the caller, as a library user may
    with products.forced("packed"):
        model.generate(encoder_outputs=encoded, attention_mask=torch.ones_like(ids), num_beams=2, max_new_tokens=6,
                       min_new_tokens=6, do_sample=False)
    assert sorted(packed) == [(32, 300), (300, 32)]  # the read's Xᵀ and the scores' X, once each
    assert products._packs == {}  # freed when generate returns, though X lives on
    states, rows = torch.randn(1, 70, 32), torch.randn(1, 12, 32)
    with products.forced("packed"):
        first = products.scores(states, rows)
        states.mul_(2)
        torch.testing.assert_close(products.scores(states, rows), 2 * first)
        assert len(packed) == 4 and len(products._packs) == 1
        del states
        gc.collect()
        assert products._packs == {}  # an X used outside generate: its copy goes with it
        with torch.inference_mode():  # an inference tensor has no version counter: packed once all the same
            states = torch.randn(1, 70, 32)
            torch.testing.assert_close(products.scores(states, rows), rows @ states.transpose(1, 2))
            products.scores(states, rows)
        assert len(packed) == 5


@onednn
@torch.no_grad()
def test_the_packed_path_in_bfloat16_for_other_row_counts_and_without_memory_for_the_copy(monkeypatch):
    """A copy packed for 12 rows serves 5 and 48 (beams); where the copy cannot be made the call reads X as it is."""
    from lsgtool.core.ssm import products

    states = torch.randn(1, 90, 32).bfloat16()
    with products.forced("packed"):
        for count in (12, 5, 48):
            rows, weights = torch.randn(1, count, 32).bfloat16(), torch.rand(1, count, 90).bfloat16()
            torch.testing.assert_close(products.scores(states, rows).float(),
                                       (rows.float() @ states.float().transpose(1, 2)), rtol=2e-2, atol=5e-2)
            torch.testing.assert_close(products.read(weights, states).float(), weights.float() @ states.float(),
                                       rtol=2e-2, atol=5e-2)

        def no_memory(*args):
            raise RuntimeError("DefaultCPUAllocator: not enough memory")

        products.release()
        monkeypatch.setattr(products.torch.ops.mkldnn, "_reorder_linear_weight", no_memory, raising=False)
        weights = torch.rand(1, 12, 90).bfloat16()
        torch.testing.assert_close(products.read(weights, states).float(), weights.float() @ states.float(),
                                   rtol=2e-2, atol=5e-2)
        assert products._packs == {}


@onednn
def test_the_packed_copy_is_dropped_where_another_path_is_chosen(tmp_path, monkeypatch):
    from lsgtool.core.ssm import products

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(products, "TUNE_LENGTH", 64)
    monkeypatch.setattr(products, "_chosen", {})
    monkeypatch.setattr(products, "_measure", lambda product, states, rows: (
        products._packed(product, states, rows), {"matmul": 1.0, "onednn": 2.0, "packed": 3.0})[1])
    states, weights = torch.randn(1, 100, 32), torch.rand(1, 12, 100)
    with torch.no_grad():
        products.read(weights, states)
    assert list(products.chosen().values()) == ["matmul"] and products._packs == {}


@onednn
def test_the_faster_path_is_measured_once_per_machine_and_kept(tmp_path, monkeypatch):
    """A long enough X on the CPU: each product's paths are timed on it, the fastest is used and written to
    lsgtool's cache; a new process (the memo cleared) takes it from there without measuring again."""
    from lsgtool.core.ssm import products

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(products, "TUNE_LENGTH", 64)
    monkeypatch.setattr(products, "_chosen", {})
    states, rows, weights = torch.randn(1, 100, 32), torch.randn(1, 12, 32), torch.rand(1, 12, 100)
    with torch.enable_grad():  # under autograd: today's matmul, nothing measured
        products.scores(states, rows)
    assert products.chosen() == {} and not (tmp_path / "lsgtool" / "decoding-paths.json").exists()
    with torch.no_grad():
        got_scores, got_read = products.scores(states, rows), products.read(weights, states)
    torch.testing.assert_close(got_scores, rows @ states.transpose(1, 2), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got_read, weights @ states, rtol=1e-5, atol=1e-5)
    kept = __import__("json").loads((tmp_path / "lsgtool" / "decoding-paths.json").read_text())
    assert len(kept) == 2 and {k.split(" | ")[4] for k in kept} == {"scores", "read"}
    for entry in kept.values():
        assert set(entry["ms"]) == set(products.PATHS)
        assert entry["path"] == min(entry["ms"], key=entry["ms"].get)
    monkeypatch.setattr(products, "_chosen", {})
    monkeypatch.setattr(products, "_measure", lambda *a: pytest.fail("measured again"))
    with torch.no_grad():
        products.read(weights, states)
    assert list(products.chosen().values()) == [kept[k]["path"] for k in kept if " | read | " in k]


@onednn
def test_a_path_that_fails_leaves_the_other_and_is_not_ruled_out_for_good(tmp_path, monkeypatch):
    from lsgtool.core.ssm import products

    def broken(*args):
        raise RuntimeError("no such kernel here")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(products, "TUNE_LENGTH", 64)
    monkeypatch.setattr(products, "_chosen", {})
    monkeypatch.setattr(products, "_onednn_linear", broken)
    states, weights = torch.randn(1, 100, 32), torch.rand(1, 12, 100)
    with torch.no_grad():
        torch.testing.assert_close(products.read(weights, states), weights @ states)
    assert list(products.chosen().values()) == ["matmul"]
    assert not (tmp_path / "lsgtool" / "decoding-paths.json").exists()  # measured again next run


@onednn
def test_a_choice_kept_before_a_path_was_added_is_measured_again(tmp_path, monkeypatch):
    from lsgtool.core.ssm import products

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(products, "TUNE_LENGTH", 64)
    monkeypatch.setattr(products, "_chosen", {})
    states, weights = torch.randn(1, 100, 32), torch.rand(1, 12, 100)
    key = products._key("read", states, 12)
    (tmp_path / "lsgtool").mkdir()
    (tmp_path / "lsgtool" / "decoding-paths.json").write_text(
        __import__("json").dumps({key: {"path": "matmul", "ms": {"matmul": 1.0}}}))
    measured = []
    monkeypatch.setattr(products, "_measure", lambda *a: measured.append(a[0]) or {p: 1.0 + (p != "onednn")
                                                                                    for p in products.PATHS})
    with torch.no_grad():
        products.read(weights, states)
    assert measured == ["read"] and products.chosen() == {key: "onednn"}
