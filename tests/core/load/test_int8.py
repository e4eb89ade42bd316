"""``load(..., dtype="int8")``: loaded in float32, then the encoder's linear layers take int8 weights and int8
products (torchao, a test dependency); the decoder, the embeddings and LOCOST's kernels stay float32."""

import pytest
import torch

import lsgtool
from lsgtool.core import precision
from lsgtool.core.errors import UsageError


def _linears(module):
    return {n: m for n, m in module.named_modules() if isinstance(m, torch.nn.Linear)}


def _quantized(linear) -> bool:
    return type(linear.weight) is not torch.nn.Parameter  # torchao's Int8Tensor in its place


@pytest.mark.parametrize("name", ["locost", "bart-lsg"])
def test_int8_quantizes_the_encoder_only_and_stays_close_to_float32(models, name):
    full = lsgtool.load(str(models / name))
    int8, info = lsgtool.load(str(models / name), dtype="int8", output_loading_info=True)
    encoder, decoder = _linears(int8.get_encoder()), _linears(int8.get_decoder())
    assert encoder and all(_quantized(m) for m in encoder.values())
    assert decoder and not any(_quantized(m) for m in decoder.values())
    assert f"int8: {len(encoder)} linear layers of the encoder quantized (torchao)" in info.notes
    assert int8.get_input_embeddings().weight.dtype == torch.float32
    torch.manual_seed(0)
    ids = torch.randint(3, full.config.vocab_size, (1, 200))
    with torch.no_grad():
        expected = full.get_encoder()(input_ids=ids).last_hidden_state
        got = int8.get_encoder()(input_ids=ids).last_hidden_state
        error = float((got - expected).norm() / expected.norm())
        assert 0 < error < 0.1, error  # int8 arithmetic: near float32's, not equal to it
        assert int8.generate(ids, max_new_tokens=4, num_beams=1, do_sample=False).shape[1] >= 2


def test_int8_without_torchao_is_a_clear_error_before_loading(models, monkeypatch):
    monkeypatch.setattr(precision, "int8_missing", lambda: "torchao is not installed (no module named 'torchao')")
    with pytest.raises(UsageError, match="dtype int8: torchao is not installed") as raised:
        lsgtool.load(str(models / "locost"), dtype="int8")
    assert "pip install torchao" in raised.value.hint


def test_int8_keeps_float32_for_a_checkpoint_saved_in_bfloat16(models, tmp_path):
    model = lsgtool.load(str(models / "locost")).to(torch.bfloat16)
    model.save_pretrained(tmp_path)  # config.json: dtype bfloat16 (what transformers' "auto" would load it in)
    int8 = lsgtool.load(str(tmp_path), dtype="int8")
    assert int8.get_input_embeddings().weight.dtype == torch.float32
    assert all(p.dtype == torch.float32 for n, p in int8.get_decoder().named_parameters())


def test_int8_for_a_gpu_is_refused(models):
    with pytest.raises(UsageError, match="dtype int8 quantizes for the CPU, and device_map='cuda'"):
        lsgtool.load(str(models / "locost"), dtype="int8", device_map="cuda")


NOTES = ("Failed to load", "_pytree")  # torchao's notes on its GPU libraries, torch's on its enums


def _stderr(code: str) -> str:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr


def test_a_library_user_importing_transformers_after_lsgtool_sees_no_torchao_notes():
    """lsgtool's registration with transformers imports transformers' modelling, which imports torchao where it is
    installed: its notes (which GPU libraries did not load) are not shown, as they are not in the CLI."""
    pytest.importorskip("torchao")
    if not any(note in _stderr("import torchao") for note in NOTES):
        pytest.skip("torchao says nothing as it loads here")
    assert not any(note in _stderr("import lsgtool\nfrom transformers import AutoModel, PreTrainedModel")
                   for note in NOTES)


def test_torchaos_notes_are_hidden_from_its_child_loggers_where_a_handler_is_set():
    """rouge-score's first score sets a handler on the root logger (``logging.info`` with none set); torchao's
    kernel module then says "Detected no triton" through its own logger, a child of the one lsgtool quiets: its
    level quiets the children too (a filter would not)."""
    pytest.importorskip("torchao")
    pytest.importorskip("rouge_score")
    handler = "import logging\nlogging.info('x')\n"  # what rouge-score's first score does: basicConfig
    if "triton" not in _stderr(handler + "import torchao"):
        pytest.skip("torchao says nothing of triton here")
    assert "triton" not in _stderr(handler + "from lsgtool.core.precision import hide_torchao_notes\n"
                                   "hide_torchao_notes()\nimport torchao")
