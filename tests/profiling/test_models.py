"""``--model`` targets: what a folder or preset is, and the variants built from it."""

import json

import pytest
import torch

from lsgtool.core.errors import UsageError
from lsgtool.profiling.models import _build, check_model_variants, model_step, resolve_model
from lsgtool.profiling.variants import Setup


@pytest.fixture
def converted(tmp_path, tiny_folder):
    from lsgtool import convert, save

    model, tokenizer = convert(str(tiny_folder), max_length=256, block_size=16, sparsity_factor=2)
    return save(model, tokenizer, tmp_path / "tiny-lsg-256")


@pytest.fixture
def locost_folder(tmp_path):
    from lsgtool import LocostConfig, LocostForConditionalGeneration

    config = LocostConfig(vocab_size=50, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=1, num_heads=4,
                          d_state=8, decoder_start_token_id=0, pad_token_id=0)
    LocostForConditionalGeneration(config).save_pretrained(tmp_path / "tiny-locost")
    return tmp_path / "tiny-locost"


def test_kinds_of_model(converted, tiny_folder, locost_folder):
    assert resolve_model(str(converted)).kind == "lsg"
    assert resolve_model(str(tiny_folder)).kind == "source"
    assert resolve_model(str(locost_folder)).kind == "locost"
    preset = resolve_model("locost-16k")
    assert preset.kind == "locost" and preset.preset_config == {"d_state": 512, "max_input_length": 16384}
    assert resolve_model("minilm").kind == "source"  # the packaged all-MiniLM-L6-v2


def test_unknown_models_and_variants_are_usage_errors(tmp_path, locost_folder):
    with pytest.raises(UsageError, match="no such file or folder"):
        resolve_model(str(tmp_path / "nowhere"))
    with pytest.raises(UsageError, match="no config.json"):
        resolve_model(str(tmp_path))
    with pytest.raises(UsageError, match="does not apply to the locost model"):
        check_model_variants(resolve_model(str(locost_folder)), ["full"], ["norm"])


def _encode(model, length):
    ids = torch.randint(5, 99, (1, length), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        return model.eval()(input_ids=ids)[0]


def test_variants_of_a_converted_model(converted):
    target = resolve_model(str(converted))
    full, lsg = _build(target, "full", 256), _build(target, "model", 256)
    assert full.base_model.lsg_config.block_size >= 128  # 256 tokens <= 2 blocks: dense attention
    assert lsg.base_model.lsg_config.block_size == 16
    stride = _build(target, "lsg-stride", 256)
    assert stride.base_model.lsg_config.sparsity_type == "stride"
    dense, sparse = _encode(full, 256), _encode(lsg, 256)
    assert not torch.allclose(dense, sparse, atol=1e-4)  # the sparse pattern is really used
    # any block of at least half the length gives the same dense result
    from lsgtool.core.lsg.engine import set_lsg_config, with_lsg

    set_lsg_config(lsg, with_lsg(lsg, block_size=512, sparse_block_size=512))
    torch.testing.assert_close(_encode(lsg, 256), dense)


def test_model_step_refuses_lengths_past_the_positions_and_trains(converted, locost_folder):
    target = vars(resolve_model(str(converted)))
    with pytest.raises(UsageError, match="longer than the model's 256 positions"):
        model_step(target, "model", 512, Setup(), "inference", "cpu", torch.float32)
    step, model = model_step(target, "model", 256, Setup(), "train", "cpu", torch.float32)
    before = next(model.parameters()).detach().clone()
    step()
    assert not torch.equal(before, next(model.parameters()))  # backward + optimizer step happened
    step, model = model_step(vars(resolve_model(str(locost_folder))), "model", 3000, Setup(), "train", "cpu", torch.float32)
    step()  # seq2seq: whole model with target tokens


def test_the_point_processes_load_the_source_resolved_once(converted):
    from dataclasses import replace

    target = resolve_model(str(converted))
    assert target.found["path"] == str(converted) and target.found["kind"] == "lsg"
    json.dumps(vars(target))  # what each point process is given
    renamed = replace(target, source="no-such-model")  # the name is not looked up again
    assert _build(renamed, "model", 256).base_model.lsg_config.block_size == 16
