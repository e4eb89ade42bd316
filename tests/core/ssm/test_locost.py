"""LOCOST model: trains, generates, saves/loads, chunked inference, padding, authors' state-dict names."""

import pytest
import torch

from lsgtool import LocostConfig, LocostForConditionalGeneration, LocostModel

pytestmark = pytest.mark.internals  # run on the declared floor of transformers too (constraints/floor.txt)


def _config(**overrides):
    values = dict(vocab_size=24, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2, num_heads=4,
                  d_state=8, dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    return LocostConfig(**{**values, **overrides})


def test_defaults_are_appendix_b():
    config = LocostConfig()
    assert (config.d_model, config.num_layers, config.num_decoder_layers, config.num_heads, config.d_ff,
            config.d_state, config.vocab_size) == (768, 12, 12, 12, 2048, 256, 32100)


def test_authors_config_json_loads_as_is():
    authors = {"vocab_size": 32100, "d_model": 768, "d_state": 256, "d_kv": 64, "d_ff": 2048, "num_layers": 12,
               "num_decoder_layers": 12, "num_heads": 12, "num_ssm_heads": 1, "local_radius": 127,
               "global_block_size": 16, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
               "dropout_rate": 0.1, "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0,
               "feed_forward_proj": "gated-gelu", "is_encoder_decoder": True, "encoder_attention_type": "local",
               "use_cache": True, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
               "use_fast_fft_conv": True, "bidirectional": True, "gating": True}
    config = LocostConfig(**authors)
    assert all(getattr(config, key) == value for key, value in authors.items())


def _authors_encoder_keys(layers):
    """State-dict names of the authors' LOCOST encoder, spelled out from their models.py / s4d_models.py."""
    keys = {"shared.weight", "encoder.embed_tokens.weight", "encoder.final_layer_norm.weight"}
    for i in range(layers):
        ssm = f"encoder.block.{i}.layer.0.ssm_layer."
        keys |= {ssm + k for k in ("q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias", "D",
                                   "output_linear.weight", "output_linear.bias", "kernel.log_dt", "kernel.B",
                                   "kernel.inv_A_real", "kernel.A_imag", "kernel.C")}
        keys |= {f"encoder.block.{i}.layer.0.layer_prenorm.weight", f"encoder.block.{i}.layer.1.layer_norm.weight"}
        keys |= {f"encoder.block.{i}.layer.1.DenseReluDense.{w}.weight" for w in ("wi_0", "wi_1", "wo")}
    return keys


def test_state_dict_names_are_the_authors():
    model = LocostForConditionalGeneration(_config())
    names = set(model.state_dict())
    assert {n for n in names if n.startswith(("encoder.", "shared."))} == _authors_encoder_keys(2)
    assert "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight" in names
    assert "decoder.block.1.layer.1.EncDecAttention.o.weight" in names and "lm_head.weight" in names
    shapes = model.state_dict()
    assert shapes["encoder.block.0.layer.0.ssm_layer.kernel.C"].shape == (2, 32, 4, 2)  # (channels H N/2 re/im)
    assert shapes["encoder.block.0.layer.0.ssm_layer.kernel.B"].shape == (32, 4, 2)


def test_lightning_checkpoint_of_the_authors_loads_without_missing_keys(tmp_path):
    from lsgtool.core.load.locost import load_authors_checkpoint

    source = LocostForConditionalGeneration(_config()).eval()
    state = {f"model.{k}": v for k, v in source.state_dict().items()
             if not k.startswith(("encoder.embed_tokens", "decoder.embed_tokens"))}
    torch.save({"state_dict": state, "epoch": 3}, tmp_path / "last.ckpt")
    model, report = load_authors_checkpoint(tmp_path / "last.ckpt", _config())
    assert report == {"missing": [], "unexpected": []}
    ids = torch.randint(2, 24, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids, decoder_input_ids=ids[:, :3]).logits,
                                   source(input_ids=ids, decoder_input_ids=ids[:, :3]).logits)
    model.save_pretrained(tmp_path / "hf")
    assert (tmp_path / "hf" / "model.safetensors").is_file()
    bad = {**state, "model.encoder.block.0.layer.0.ssm_layer.extra": torch.zeros(1)}
    torch.save({"state_dict": bad}, tmp_path / "bad.ckpt")
    assert load_authors_checkpoint(tmp_path / "bad.ckpt", _config())[1]["unexpected"] == [
        "encoder.block.0.layer.0.ssm_layer.extra"]


# the fused feed-forward of the chunked path (gelu_new, gelu_pytorch_tanh), and a module it runs as it is
@pytest.mark.parametrize("feed_forward", ["gated-gelu", "gated-gelu_pytorch_tanh", "relu"])
@torch.no_grad()
def test_chunked_encoder_equals_unchunked(feed_forward):
    torch.manual_seed(0)
    model = LocostModel(_config(feed_forward_proj=feed_forward)).eval()
    ids = torch.randint(2, 24, (2, 200))
    mask = torch.ones_like(ids)
    mask[1, -13:] = 0
    whole = model.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    for block in model.encoder.block:
        block.chunk_size = 37
    import lsgtool.core.ssm.locost as locost

    locost.CHANNEL_CHUNK, old = 7, locost.CHANNEL_CHUNK
    try:
        chunked = model.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    finally:
        locost.CHANNEL_CHUNK = old
    torch.testing.assert_close(chunked, whole, rtol=1e-5, atol=1e-5)


@torch.no_grad()
def test_the_fused_feed_forward_keeps_dropout_in_train_mode():
    from transformers.models.t5.modeling_t5 import T5LayerFF

    from lsgtool.core.ssm.locost import feed_forward_into

    ff = T5LayerFF(_config(dropout_rate=1.0)).train()  # everything dropped: h + FF(h) is h
    h = torch.randn(2, 9, 32)
    out = h.clone()
    feed_forward_into(ff, out[:, 2:7])
    assert torch.equal(out, h)
    feed_forward_into(ff.eval(), out[:, 2:7])  # eval: the fused path, into the slice only
    torch.testing.assert_close(out[:, 2:7], ff(h[:, 2:7]), rtol=1e-5, atol=1e-5)
    assert torch.equal(out[:, :2], h[:, :2]) and torch.equal(out[:, 7:], h[:, 7:])


@torch.no_grad()
def test_chunked_path_leaves_inputs_embeds_alone_and_returns_each_layers_states():
    torch.manual_seed(0)
    model = LocostModel(_config()).eval()
    embeds = torch.randn(2, 120, 32)
    before = embeds.clone()
    whole = model.encoder(inputs_embeds=embeds, output_hidden_states=True)
    for block in model.encoder.block:
        block.chunk_size = 37
    chunked = model.encoder(inputs_embeds=embeds, output_hidden_states=True)
    assert torch.equal(embeds, before)  # the caller's tensor is not overwritten
    assert len({id(h) for h in chunked.hidden_states}) == len(chunked.hidden_states) == 3
    for got, want in zip(chunked.hidden_states, whole.hidden_states):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(chunked.hidden_states[0], before)


@torch.no_grad()
def test_padding_contributes_nothing_to_real_positions():
    torch.manual_seed(0)
    model = LocostModel(_config()).eval()
    ids = torch.randint(2, 24, (1, 30))
    padded = torch.cat([ids, torch.randint(2, 24, (1, 9))], dim=1)
    mask = torch.cat([torch.ones(1, 30), torch.zeros(1, 9)], dim=1).long()
    alone = model.encoder(input_ids=ids).last_hidden_state
    with_pad = model.encoder(input_ids=padded, attention_mask=mask).last_hidden_state[:, :30]
    # the anti-causal kernel reads to the right: only masking keeps the padding out
    torch.testing.assert_close(with_pad, alone, rtol=1e-5, atol=1e-5)


def test_gradient_checkpointing_gives_the_same_gradients():
    torch.manual_seed(0)
    model = LocostForConditionalGeneration(_config()).train()
    ids = torch.randint(2, 24, (2, 16))
    model(input_ids=ids, labels=ids).loss.backward()
    expected = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    # transformers 5.x renamed it (the old name warns); >=4.40 is supported, so take what exists
    enable = getattr(model, "activation_checkpointing_enable", model.gradient_checkpointing_enable)
    enable()
    assert model.encoder.gradient_checkpointing
    model(input_ids=ids, labels=ids).loss.backward()
    for name, grad in expected.items():
        torch.testing.assert_close(dict(model.named_parameters())[name].grad, grad, rtol=1e-4, atol=1e-6)


def test_learns_to_reverse_then_generates_and_round_trips(tmp_path):
    """A tiny LOCOST reaches >= 95% token accuracy on reversing random sequences within seconds on CPU."""
    torch.manual_seed(0)
    config = _config(d_model=64, d_kv=16, d_ff=128, d_state=16, tie_word_embeddings=False)
    model = LocostForConditionalGeneration(config)
    steps = 900
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1 - s / steps)
    data = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x = torch.randint(2, 24, (32, 10), generator=data)
        loss = model(input_ids=x, labels=x.flip(-1)).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    model.eval()
    test = torch.randint(2, 24, (128, 10), generator=torch.Generator().manual_seed(99))
    with torch.no_grad():
        greedy = model.generate(test, max_new_tokens=10, do_sample=False)[:, 1:]
        beam = model.generate(test[:8], max_new_tokens=10, num_beams=3, do_sample=False)[:, 1:]
    accuracy = (greedy == test.flip(-1)).float().mean().item()
    assert accuracy >= 0.95, accuracy
    assert (beam == test[:8].flip(-1)).float().mean().item() >= 0.9
    model.save_pretrained(tmp_path / "locost")
    import lsgtool  # noqa: F401  (AutoModel registration)
    from transformers import AutoModelForSeq2SeqLM

    reloaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "locost").eval()
    assert type(reloaded) is LocostForConditionalGeneration
    with torch.no_grad():
        assert torch.equal(reloaded.generate(test, max_new_tokens=10, do_sample=False)[:, 1:], greedy)
    for name, tensor in model.state_dict().items():
        assert torch.equal(reloaded.state_dict()[name], tensor), name


def test_unknown_ssm_variant_lists_the_registered_ones():
    from lsgtool.core.errors import UsageError

    with pytest.raises(UsageError, match="unknown SSM variant 'hippo'") as info:
        LocostModel(_config(ssm_variant="hippo"))
    assert "s4d_inv, s4d_lin, s4d_real" in info.value.hint


@pytest.mark.parametrize("variant", ["s4d_inv", "s4d_real"])
def test_every_builtin_variant_builds_and_runs(variant):
    model = LocostModel(_config(ssm_variant=variant)).eval()
    ids = torch.randint(2, 24, (1, 40))
    with torch.no_grad():
        out = model(input_ids=ids, decoder_input_ids=ids[:, :2]).last_hidden_state
    assert torch.isfinite(out).all()


def test_presets_resolve_and_missing_weights_are_a_clear_error(monkeypatch):
    from lsgtool import load_locost
    from lsgtool.core.errors import UsageError
    from lsgtool.plugins.manager import make_plugin_manager

    presets = make_plugin_manager(load_installed=False).registry("presets")
    assert {"locost-base", "locost-4k", "locost-16k", "locost-32k"} <= set(presets)
    assert presets["locost-base"].weights == "flbbb/locost-gsg-pretrained"
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent-cache")
    with pytest.raises(UsageError, match="preset 'locost-base': model 'flbbb/locost-gsg-pretrained' is not on this "
                                         "machine") as info:
        load_locost("locost-base")
    assert "random_init=True" in info.value.hint and "hf download flbbb/locost-gsg-pretrained" in info.value.hint
    model = load_locost("locost-4k", random_init=True)
    assert isinstance(model, LocostForConditionalGeneration) and model.config.d_model == 768
    assert model.config.max_input_length == 4096 and model.config.d_state == 512  # the released checkpoint's state


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cuda_matches_cpu_and_generates(dtype):
    torch.manual_seed(0)
    model = LocostForConditionalGeneration(_config()).eval()
    ids = torch.randint(2, 24, (2, 300))
    with torch.no_grad():
        expected = model(input_ids=ids, decoder_input_ids=ids[:, :4]).logits
        gpu = model.to("cuda", dtype)
        got = gpu(input_ids=ids.cuda(), decoder_input_ids=ids[:, :4].cuda()).logits.float().cpu()
        generated = gpu.generate(ids.cuda(), max_new_tokens=5, num_beams=2)
    tol = 1e-3 if dtype == torch.float32 else 0.3
    assert (got - expected).abs().max() <= tol and generated.shape == (2, 6)


def test_generation_projects_the_encoder_output_once_per_layer():
    torch.manual_seed(0)
    model = LocostForConditionalGeneration(_config()).eval()
    calls = []
    for block in model.decoder.block:
        block.layer[1].EncDecAttention.k.register_forward_hook(lambda m, a, o: calls.append(a[0].shape[1]))
    encoded = []
    model.encoder.register_forward_hook(lambda m, a, o: encoded.append(1))
    with torch.no_grad():
        model.generate(torch.randint(2, 24, (1, 50)), max_new_tokens=6, min_new_tokens=6, do_sample=False)
    assert encoded == [1]  # the encoder runs once
    assert calls == [50] * len(model.decoder.block)  # cross-attention keys: computed once, then cached


def _kernel_parameters(model):
    return {n: p for n, p in model.named_parameters() if ".ssm_layer.kernel." in n}


@pytest.mark.parametrize("how", ["to", "from_pretrained", "lsgtool.load", "half"])
def test_a_bfloat16_or_float16_model_keeps_its_kernels_in_float32_and_float32s_encoder_output(tmp_path, how):
    # The kernels' parameters are exponentiated over every position: rounded to bfloat16 they moved a trained
    # model's encoder output 50% off float32's. Kept float32 whichever way the model is made half precision.
    from lsgtool import load

    torch.manual_seed(0)
    config = _config(d_state=64)  # modes up to π·31: bfloat16 rounds their frequencies by up to 0.25
    model = LocostForConditionalGeneration(config).eval()
    model.save_pretrained(tmp_path)
    dtype = torch.float16 if how == "half" else torch.bfloat16
    half = {"to": lambda: LocostForConditionalGeneration.from_pretrained(tmp_path).to(dtype),
            "from_pretrained": lambda: LocostForConditionalGeneration.from_pretrained(tmp_path, dtype=dtype),
            "lsgtool.load": lambda: load(str(tmp_path), dtype="bfloat16"),
            "half": lambda: LocostForConditionalGeneration.from_pretrained(tmp_path).half()}[how]().eval()
    kernels = _kernel_parameters(half)
    assert kernels and all(p.dtype == torch.float32 for p in kernels.values())
    assert all(torch.equal(p, _kernel_parameters(model)[n]) for n, p in kernels.items())
    assert half.shared.weight.dtype == dtype and half.encoder.block[0].layer[0].ssm_layer.D.dtype == dtype
    ids = torch.randint(2, 24, (1, 2048))
    if how == "half":  # float16 on the CPU: only the parameters are checked
        return
    with torch.no_grad():
        expected = model.encoder(input_ids=ids).last_hidden_state
        error = lambda m: float((m.encoder(input_ids=ids).last_hidden_state.float() - expected).norm()  # noqa: E731
                                / expected.norm())
        kept = error(half)
        for p in kernels.values():  # what the model was before: its kernels rounded to bfloat16 too
            p.data = p.data.bfloat16().float()
        rounded = error(half)
    assert kept < 0.05 and rounded > 0.1 and rounded > 5 * kept, (kept, rounded)


def test_a_bfloat16_model_saved_and_loaded_again_keeps_its_kernels_exact(tmp_path):
    torch.manual_seed(0)
    model = LocostForConditionalGeneration(_config(d_state=64)).eval()
    model.to(torch.bfloat16).save_pretrained(tmp_path)
    again = LocostForConditionalGeneration.from_pretrained(tmp_path, dtype=torch.bfloat16)
    for name, p in _kernel_parameters(again).items():
        assert p.dtype == torch.float32 and torch.equal(p, _kernel_parameters(model)[name])
