"""``lsgtool.load`` takes what users have: presets, folders in every layout, Hub ids (offline: the cache),
the LOCOST authors' folder without model_type and their Lightning checkpoints; options reach transformers or
are refused by name; weights that do not fit are reported, never hidden."""

import argparse
import json
import logging
import shutil

import pytest
import torch
import transformers as T

import lsgtool
from lsgtool import LocostConfig, LocostForConditionalGeneration
from lsgtool.core.errors import LsgtoolError, UsageError

pytestmark = pytest.mark.internals  # run on the declared floor of transformers too (constraints/floor.txt)


def _logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits


IDS = torch.randint(5, 99, (1, 40), generator=torch.Generator().manual_seed(0))


def test_plain_folder_loads_as_saved_or_with_the_head_asked_for(tiny_folder, caplog):
    model = lsgtool.load(str(tiny_folder))
    assert type(model).__name__ == "BertForMaskedLM" and not model.training
    assert type(lsgtool.load(tiny_folder, task="base")).__name__ == "BertModel"
    verbosity = T.logging.get_verbosity()
    with caplog.at_level(logging.WARNING, logger="lsgtool.load"):
        model, info = lsgtool.load(tiny_folder, architecture="BertForSequenceClassification", output_loading_info=True)
    assert type(model).__name__ == "BertForSequenceClassification"
    assert {"classifier.weight", "classifier.bias"} <= set(info.missing_keys)
    assert any("initialised at random" in r.message and "classifier.weight" in r.message for r in caplog.records)
    assert any("cls.predictions" in k for k in info.unexpected_keys)  # the MLM head has no place in a classifier
    assert T.logging.get_verbosity() == verbosity  # transformers' logging is left as it was


def test_lsg_folder_loads_its_global_table_without_reporting_it(tmp_path, tiny_folder, caplog):
    model, tokenizer = lsgtool.convert(str(tiny_folder), max_length=256, block_size=16, num_global_tokens=2)
    for layout in ("lsgtool", "authors"):
        out = lsgtool.save(model, tokenizer, tmp_path / layout, layout=layout)
        with caplog.at_level(logging.WARNING, logger="lsgtool.load"):
            reloaded, info = lsgtool.load(out, output_loading_info=True)
        assert info.kind == "lsg" and info.layout == ("lsgtool" if layout == "lsgtool" else "lsg-authors")
        assert info.missing_keys == info.unexpected_keys == [] and not caplog.records
        assert "global tokens: 2 of the 512 rows of bert.embeddings.global_embeddings.weight" in info.notes
        torch.testing.assert_close(_logits(reloaded, IDS), _logits(model.eval(), IDS))


def _cache(tmp_path, folder, repo="someone/tiny-bert"):
    """A Hugging Face cache holding ``folder`` as the main revision of ``repo``, as `hf download` leaves it."""
    root = tmp_path / "hub"
    entry = root / f"models--{repo.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(folder, entry / "snapshots" / commit)
    (entry / "refs").mkdir(parents=True)
    (entry / "refs" / "main").write_text(commit)
    return root


def test_hub_id_loads_from_the_cache_offline_and_says_where_it_looked_when_absent(tmp_path, tiny_folder):
    cache = _cache(tmp_path, tiny_folder)
    model = lsgtool.load("someone/tiny-bert", cache_dir=str(cache))
    torch.testing.assert_close(_logits(model, IDS), _logits(lsgtool.load(tiny_folder), IDS))
    assert lsgtool.load_tokenizer("someone/tiny-bert", cache_dir=str(cache)).cls_token_id == 2
    with pytest.raises(UsageError) as info:
        lsgtool.load("someone/elsewhere", cache_dir=str(cache))
    assert "'someone/elsewhere' is not on this machine" in info.value.message
    assert str(cache) in info.value.message and "HF_HUB_OFFLINE=1" in info.value.message
    assert "hf download someone/elsewhere" in info.value.hint


def _tiny_locost():
    torch.manual_seed(0)
    config = LocostConfig(vocab_size=50, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=1, num_heads=4,
                          d_state=8, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    return LocostForConditionalGeneration(config).eval()


def _authors_config(model) -> dict:
    """The LOCOST authors' config.json: their keys, no model_type (their config class declares none)."""
    keep = ("vocab_size", "d_model", "d_state", "d_kv", "d_ff", "num_layers", "num_decoder_layers", "num_heads",
            "num_ssm_heads", "local_radius", "global_block_size", "relative_attention_num_buckets",
            "relative_attention_max_distance", "dropout_rate", "layer_norm_epsilon", "initializer_factor",
            "feed_forward_proj", "is_encoder_decoder", "encoder_attention_type", "use_cache", "pad_token_id",
            "eos_token_id", "decoder_start_token_id", "use_fast_fft_conv", "bidirectional", "gating")
    data = {k: getattr(model.config, k) for k in keep}
    return {**data, "architectures": ["LOCOSTForConditionalGeneration"]}


@pytest.mark.parametrize("model_type", [None, ""])
def test_locost_authors_folder_without_model_type_and_with_a_bin(tmp_path, model_type):
    source = _tiny_locost()
    folder = tmp_path / "authors"
    folder.mkdir()
    config = _authors_config(source)
    if model_type is not None:
        config["model_type"] = model_type
    (folder / "config.json").write_text(json.dumps(config))
    state = {k: v for k, v in source.state_dict().items() if not k.startswith(("encoder.embed_tokens", "decoder.embed"))}
    torch.save(state, folder / "pytorch_model.bin")
    model, info = lsgtool.load(folder, output_loading_info=True)
    assert isinstance(model, LocostForConditionalGeneration) and info.layout == "locost-authors"
    assert info.missing_keys == info.unexpected_keys == []
    ids = torch.randint(2, 50, (1, 30))
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids, decoder_input_ids=ids[:, :3]).logits,
                                   source(input_ids=ids, decoder_input_ids=ids[:, :3]).logits)


def test_lightning_checkpoint_takes_its_config_from_beside_it_or_from_the_caller(tmp_path):
    source = _tiny_locost()
    state = {f"model.{k}": v for k, v in source.state_dict().items()}
    alone = tmp_path / "alone"
    alone.mkdir()
    torch.save({"state_dict": state, "epoch": 3}, alone / "last.ckpt")
    with pytest.raises(UsageError, match="carries no model configuration") as info:
        lsgtool.load(alone / "last.ckpt")
    assert "--config-from" in info.value.hint
    model = lsgtool.load(alone / "last.ckpt", config=source.config)
    ids = torch.randint(2, 50, (1, 30))
    with torch.no_grad():
        expected = source(input_ids=ids, decoder_input_ids=ids[:, :3]).logits
        torch.testing.assert_close(model(input_ids=ids, decoder_input_ids=ids[:, :3]).logits, expected)
    (alone / "config.json").write_text(json.dumps(_authors_config(source)))
    model, info = lsgtool.load(alone / "last.ckpt", output_loading_info=True)
    assert info.layout == "lightning" and info.missing_keys == [] and info.unexpected_keys == []


def test_pickled_objects_in_a_checkpoint_need_explicit_trust(tmp_path):
    source = _tiny_locost()
    torch.save({"state_dict": source.state_dict(), "hyper_parameters": argparse.Namespace(lr=1e-3)}, tmp_path / "h.ckpt")
    (tmp_path / "config.json").write_text(json.dumps(_authors_config(source)))
    with pytest.raises(LsgtoolError, match="cannot read .* safely") as info:
        lsgtool.load(tmp_path / "h.ckpt")
    assert "trust_checkpoint=True" in info.value.hint
    assert isinstance(lsgtool.load(tmp_path / "h.ckpt", trust_checkpoint=True), LocostForConditionalGeneration)


def test_mismatched_shapes_are_reported_by_key(tmp_path):
    source = _tiny_locost()
    state = dict(source.state_dict())
    state["lm_head.weight"] = torch.zeros(7, 32)
    torch.save({"state_dict": state}, tmp_path / "odd.ckpt")
    (tmp_path / "config.json").write_text(json.dumps(_authors_config(source)))
    _, info = lsgtool.load(tmp_path / "odd.ckpt", output_loading_info=True)
    assert info.mismatched_keys == [{"key": "lm_head.weight", "checkpoint": [7, 32], "model": [50, 32]}]


def test_options_reach_transformers_or_are_refused_by_name(tmp_path, tiny_folder):
    assert next(lsgtool.load(tiny_folder, torch_dtype=torch.float16).parameters()).dtype == torch.float16
    assert next(lsgtool.load(tiny_folder, dtype="bfloat16").parameters()).dtype == torch.bfloat16
    with pytest.raises(UsageError, match="does not take 'foo'") as info:
        lsgtool.load(tiny_folder, foo=1)
    assert "device_map" in info.value.hint
    with pytest.raises(UsageError, match="both 'dtype' and its other name"):
        lsgtool.load(tiny_folder, torch_dtype=torch.float16, dtype=torch.float16)
    model, tokenizer = lsgtool.convert(str(tiny_folder), max_length=256, block_size=16)
    out = lsgtool.save(model, tokenizer, tmp_path / "lsg")
    with pytest.raises(UsageError, match="trust_remote_code=True does not apply here"):
        lsgtool.load(out, trust_remote_code=True)
    from transformers import AutoModelForMaskedLM

    auto = AutoModelForMaskedLM.from_pretrained(out, dtype=torch.float16)  # used to be dropped silently
    assert next(auto.parameters()).dtype == torch.float16 and auto.base_model.lsg_config.block_size == 16
    with pytest.raises(UsageError, match="does not take 'foo'"):
        AutoModelForMaskedLM.from_pretrained(out, foo=1)


def test_bad_paths_and_configs_say_what_is_wrong(tmp_path):
    with pytest.raises(UsageError, match="no such file or folder"):
        lsgtool.load(tmp_path / "nowhere")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(UsageError, match="is not a valid JSON configuration"):
        lsgtool.load(broken)
    (broken / "config.json").write_text(json.dumps({"hidden_size": 8}))
    with pytest.raises(UsageError, match="names no model_type and is not a LOCOST configuration"):
        lsgtool.load(broken)
    (broken / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 1,
                                                    "num_attention_heads": 4, "intermediate_size": 37}))
    with pytest.raises(UsageError, match="has a config.json but no weights"):
        lsgtool.load(broken)
    assert lsgtool.load(broken, random_init=True).config.hidden_size == 32  # random weights need the config only
    (broken / "config.json").unlink()
    (broken / "notes.txt").write_text("x")
    with pytest.raises(UsageError, match="has no config.json .it holds notes.txt"):
        lsgtool.load(broken)


def test_an_unreachable_hub_is_one_quick_probe_not_minutes_of_retries(tmp_path, monkeypatch):
    import time

    from lsgtool.core.load import source

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", "https://hub.invalid")  # no such host resolves
    monkeypatch.setattr(source, "_probes", {})
    assert source.hub_unreachable().startswith("hub.invalid: ")
    start = time.perf_counter()
    with pytest.raises(UsageError) as info:
        lsgtool.load("someone/anything", cache_dir=str(tmp_path / "cache"))
    assert time.perf_counter() - start < 10
    assert "the Hub cannot be reached (hub.invalid: " in info.value.message and "looks offline" in info.value.message
    assert str(tmp_path / "cache") in info.value.message


def test_the_hub_is_probed_once_per_run_not_once_per_file(monkeypatch):
    import socket

    from lsgtool.core.load import source

    calls = []

    def refuse(address, timeout=None):
        calls.append(address)
        raise OSError("refused")

    monkeypatch.setattr(source, "_probes", {})
    monkeypatch.setattr(socket, "create_connection", refuse)
    first, second = source.hub_unreachable(), source.hub_unreachable()  # the model, then its tokenizer
    assert first == second and first.endswith("refused") and len(calls) == 1
    monkeypatch.setattr(source, "PROBE_SECONDS", 0.0)  # an answer that is too old is asked again
    source.hub_unreachable()
    assert len(calls) == 2


def test_tokenizer_that_is_missing_or_broken_is_an_error_naming_why(tmp_path, tiny_folder):
    bare = tmp_path / "bare"
    lsgtool.load(tiny_folder).save_pretrained(bare)
    with pytest.raises(UsageError, match="has no tokenizer files"):
        lsgtool.load_tokenizer(bare)
    shutil.copy(tiny_folder / "tokenizer_config.json", bare / "tokenizer_config.json")
    (bare / "tokenizer.json").write_text("{broken")
    with pytest.raises(UsageError, match="cannot load the tokenizer in"):
        lsgtool.load_tokenizer(bare)
    assert lsgtool.load_tokenizer(bare, tokenizer=str(tiny_folder)).mask_token_id == 4


def test_a_locost_folder_loads_when_its_ssm_variant_is_first_checked_inside_from_pretrained(tmp_path):
    """transformers builds models on the meta device (and in the requested dtype): the contract check must not."""
    from lsgtool.core import registry

    _tiny_locost().save_pretrained(tmp_path / "locost")
    registry.use(None)  # nothing checked yet: the first S4D is built inside from_pretrained
    model = lsgtool.load(tmp_path / "locost", dtype=torch.bfloat16)
    assert next(model.parameters()).dtype == torch.bfloat16


def test_a_damaged_weights_file_is_named_and_told_from_an_untrusted_one(tmp_path, tiny_folder):
    import shutil

    import torch

    cut = tmp_path / "cut"
    shutil.copytree(tiny_folder, cut)
    weights = cut / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # an interrupted copy
    with pytest.raises(UsageError) as info:
        lsgtool.load(cut)
    assert f"'{weights}' is damaged" in info.value.message and "cut short" in info.value.message
    weights.write_bytes(b"\x10\x00")  # not even a header
    with pytest.raises(UsageError, match="model.safetensors' is damaged: its header cannot be read"):
        lsgtool.load(cut)
    state = tmp_path / "state.ckpt"
    torch.save({"state_dict": {"model.x": torch.zeros(64)}}, state)
    state.write_bytes(state.read_bytes()[:-200])
    with pytest.raises(UsageError) as info:
        lsgtool.load(state, config={"d_model": 32, "num_layers": 1, "num_heads": 4, "d_kv": 8, "d_ff": 37,
                                    "vocab_size": 99, "d_state": 8})
    assert "is damaged" in info.value.message and "trust" not in info.value.message
    assert "--trust-checkpoint would not help" in info.value.hint
