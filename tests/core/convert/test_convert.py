"""Generic conversion: every architecture equals its source when LSG reduces to full attention, runs at 8x."""

import json
import subprocess
import sys

import pytest
import torch

from lsgtool import load
from lsgtool.core.convert import convert, save
from lsgtool.core.lsg.adapters import OFFICIAL
from lsgtool.core.errors import UsageError

pytestmark = pytest.mark.internals  # run on the declared floor of transformers too (constraints/floor.txt)


def _inputs(model, length, pad=0, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 99, (2, length), generator=g)
    mask = torch.ones_like(ids)
    if pad:
        mask[1, -pad:] = 0
    kwargs = {"input_ids": ids, "attention_mask": mask}
    if model.config.is_encoder_decoder:
        kwargs["decoder_input_ids"] = ids[:, :5]
    return kwargs


def _output(model, kwargs):
    out = model(**kwargs)
    for name in ("logits", "start_logits", "last_hidden_state"):
        if getattr(out, name, None) is not None:
            return getattr(out, name)


@torch.no_grad()
def test_reduced_to_full_attention_equals_source(tiny_model):
    kwargs = _inputs(tiny_model, 13, pad=4)
    expected = _output(tiny_model, kwargs)
    converted, _ = convert(tiny_model, max_length=512, block_size=32, sparsity_type="none", num_global_tokens=0)
    got = _output(converted, kwargs)
    if got.dim() == 3 and not converted.config.is_encoder_decoder:  # per-token outputs: real tokens only
        got, expected = got[kwargs["attention_mask"].bool()], expected[kwargs["attention_mask"].bool()]
    assert (got - expected).abs().max() <= 1e-4


@torch.no_grad()
def test_runs_at_8x_length_with_padding_and_really_uses_lsg(tiny_model, monkeypatch):
    import lsgtool.core.lsg.hf_attention as hf_attention

    calls = []
    real_lsg = hf_attention.lsg_attention
    monkeypatch.setattr(hf_attention, "lsg_attention", lambda *a, **k: calls.append(a[0].shape) or real_lsg(*a, **k))
    encoder_layers = getattr(tiny_model.config, "num_hidden_layers", None) or tiny_model.config.encoder_layers
    model, _ = convert(tiny_model, max_length=512, block_size=16, sparsity_factor=4, sparsity_type="norm", num_global_tokens=2)
    decoder = model.base_model.get_decoder() if model.config.is_encoder_decoder else None
    assert decoder is None or not any(hasattr(m, "lsg_config") for m in decoder.modules())
    kwargs = _inputs(model, 512, pad=37)
    out = _output(model, kwargs)
    assert len(calls) == encoder_layers and all(shape[2] == 2 + 512 for shape in calls)  # globals prepended
    assert torch.isfinite(out).all()
    if out.dim() == 3:  # per-token outputs keep the input length (global tokens are stripped again)
        assert out.shape[1] == (5 if model.config.is_encoder_decoder else 512)
    if not model.config.is_encoder_decoder and out.dim() == 3:
        # padding at the end leaves the real tokens' outputs as they are without it
        alone = _output(model, {"input_ids": kwargs["input_ids"][1:, :475]})
        assert (alone[0] - out[1, :475]).abs().max() <= 1e-4


@torch.no_grad()
def test_save_load_round_trip_and_config_keys(tmp_path):
    import transformers as T

    torch.manual_seed(0)
    source = T.BertForSequenceClassification(T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                                           intermediate_size=37, vocab_size=99, max_position_embeddings=64))
    model, _ = convert(source.eval(), max_length=256, block_size=16, sparsity_type="lsh", sparsity_factor=4,
                       num_global_tokens=3, seed=7)
    out = save(model, None, tmp_path / "lsg")
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["LSGBertForSequenceClassification"]
    assert config["model_type"] == "lsg" and config["base_model_type"] == "bert"
    assert {k: config[k] for k in ("block_size", "sparse_block_size", "sparsity_factor", "sparsity_type",
                                    "num_global_tokens", "lsh_seed", "max_position_embeddings")} == {
        "block_size": 16, "sparse_block_size": 16, "sparsity_factor": 4, "sparsity_type": "lsh",
        "num_global_tokens": 3, "lsh_seed": 7, "max_position_embeddings": 256}
    reloaded = load(out)
    kwargs = _inputs(model, 200, pad=11)
    torch.testing.assert_close(_output(reloaded, kwargs), _output(model.eval(), kwargs), rtol=0, atol=0)
    assert not (out.parent / ".lsg").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["lsg"]


def test_auto_classes_load_a_converted_folder_in_a_fresh_process(tmp_path, tiny_folder):
    model, tokenizer = convert(str(tiny_folder), max_length=256, block_size=16, sparsity_factor=4)
    save(model, tokenizer, tmp_path / "out")
    ids = tokenizer(" ".join(f"w{i % 90}" for i in range(200)), return_tensors="pt")
    with torch.no_grad():
        expected = model.eval()(**ids).logits[0, :3, :3].tolist()
    script = (
        "import json, sys, torch, lsgtool\n"
        "from transformers import AutoModelForMaskedLM, AutoTokenizer\n"
        f"m = AutoModelForMaskedLM.from_pretrained(r'{tmp_path / 'out'}')\n"
        "assert type(m).__name__ == 'BertForMaskedLM'\n"
        f"t = AutoTokenizer.from_pretrained(r'{tmp_path / 'out'}')\n"
        "ids = t(' '.join(f'w{i % 90}' for i in range(200)), return_tensors='pt')\n"
        "print(json.dumps(m(**ids).logits[0, :3, :3].tolist()), t.model_max_length)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    logits, max_length = done.stdout.strip().rsplit(" ", 1)
    torch.testing.assert_close(torch.tensor(json.loads(logits)), torch.tensor(expected))
    assert max_length == "256"


def test_authors_format_loads_without_remote_code(tmp_path, tiny_folder):
    """Their configs name LSG* classes and an auto_map to remote code; we load them without running it."""
    model, tokenizer = convert(str(tiny_folder), max_length=256, block_size=16, sparsity_factor=4, num_global_tokens=2)
    out = save(model, tokenizer, tmp_path / "authors", layout="authors")
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "bert" and config["architectures"] == ["LSGBertForMaskedLM"]
    config["auto_map"] = {"AutoModelForMaskedLM": "modeling_lsg_bert.LSGBertForMaskedLM"}
    (out / "config.json").write_text(json.dumps(config))
    from safetensors.torch import load_file

    assert load_file(out / "model.safetensors")["bert.embeddings.global_embeddings.weight"].shape == (512, 32)
    reloaded = load(out)
    kwargs = _inputs(reloaded, 100)
    with torch.no_grad():
        torch.testing.assert_close(_output(reloaded, kwargs), _output(model.eval(), kwargs))


def test_global_tokens_initialised_from_cls_mask_and_positions(tiny_folder):
    model, tokenizer = convert(str(tiny_folder), max_length=256, block_size=16, num_global_tokens=3)
    emb = model.base_model.embeddings
    word, pos, types = emb.word_embeddings.weight, emb.position_embeddings.weight, emb.token_type_embeddings.weight
    table = emb.global_embeddings.weight
    torch.testing.assert_close(table[0], word[tokenizer.cls_token_id] + pos[0] + types[0])
    torch.testing.assert_close(table[2], word[tokenizer.mask_token_id] + pos[2] + types[0])
    torch.testing.assert_close(pos[64:128], pos[:64])  # §3.4: positions tiled


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_length": 64}, "not larger than the model's 64 positions"),
        ({"block_size": 30, "sparsity_factor": 4}, "must be divisible by sparsity_factor"),
        ({"sparsity_type": "topk"}, "unknown sparse selector 'topk'"),
        ({"architecture": "NoSuchModel"}, "unknown architecture 'NoSuchModel'"),
    ],
)
def test_bad_options_are_usage_errors(tiny_folder, kwargs, message):
    with pytest.raises(UsageError, match=message):
        convert(str(tiny_folder), **{"max_length": 256, **kwargs})


def test_relative_positions_are_refused():
    import transformers as T

    t5 = T.T5ForConditionalGeneration(T.T5Config(d_model=32, d_ff=37, num_layers=1, num_heads=4, vocab_size=99, d_kv=8))
    # where T5 does not yet run through the attention interface (transformers 5.0) it is refused a step earlier
    with pytest.raises(UsageError, match="relative positions|not running its attention through the attention interface"):
        convert(t5, max_length=1024)


def test_missing_model_offline_says_where_it_looked(tmp_path):
    with pytest.raises(UsageError, match="is not on this machine: not a local path, not in the Hugging Face cache") as info:
        convert("someone/not-a-model")
    assert "hf download someone/not-a-model" in info.value.hint
    with pytest.raises(UsageError, match="has no config.json"):
        convert(str(tmp_path))
    with pytest.raises(UsageError, match="already exists"):
        save(None, None, tmp_path)


def test_architecture_switches_the_task_head(tiny_folder):
    model, _ = convert(str(tiny_folder), max_length=256, block_size=16, architecture="BertForSequenceClassification")
    assert type(model).__name__ == "BertForSequenceClassification"
    assert model.config.architectures == ["LSGBertForSequenceClassification"]
    with torch.no_grad():
        assert model(input_ids=torch.randint(5, 99, (1, 200))).logits.shape == (1, 2)


def test_auto_model_gives_the_base_model_and_reconverting_works(tmp_path, tiny_folder):
    from transformers import AutoModel

    import lsgtool  # noqa: F401  (registers the "lsg" model type)

    model, tokenizer = convert(str(tiny_folder), max_length=256, block_size=16)
    save(model, tokenizer, tmp_path / "out")
    base = AutoModel.from_pretrained(tmp_path / "out")
    assert type(base).__name__ == "BertModel" and base.base_model.lsg_config.block_size == 16
    again, _ = convert(str(tmp_path / "out"), max_length=512, block_size=32)
    assert again.config.max_position_embeddings == 512 and again.base_model.lsg_config.block_size == 32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_converted_model_runs_on_cuda(tiny_folder, dtype):
    model, _ = convert(str(tiny_folder), max_length=512, block_size=16, sparsity_factor=4)
    kwargs = _inputs(model, 500, pad=20)
    with torch.no_grad():
        expected = _output(model.eval(), kwargs)
        got = _output(model.to("cuda", dtype), {k: v.cuda() for k, v in kwargs.items()}).float().cpu()
    real = kwargs["attention_mask"].bool()
    assert (got - expected)[real].abs().max() <= (1e-3 if dtype == torch.float32 else 0.15)


def test_declared_attention_modules_are_the_ones_that_call_the_attention_interface(official_model):
    from lsgtool.core.lsg.adapters import attention_patterns

    model_type, model = official_model
    adapter = OFFICIAL[model_type]
    assert attention_patterns(model, adapter.encoder) == (adapter.self_attention, adapter.cross_attention)


@torch.no_grad()
def test_apply_lsg_twice_adds_no_second_set_of_hooks(tiny_folder):
    from lsgtool.core.lsg.engine import apply_lsg, resolve_adapter, with_lsg

    model, _ = convert(str(tiny_folder), max_length=256, block_size=16, num_global_tokens=2)
    base = model.base_model
    counts = lambda: (len(base.embeddings.LayerNorm._forward_pre_hooks), len(base.encoder._forward_pre_hooks),  # noqa: E731
                      len(base.encoder._forward_hooks))
    before, first = counts(), _output(model, _inputs(model, 200, pad=9))
    apply_lsg(model, with_lsg(model), resolve_adapter(model))
    assert counts() == before == (1, 1, 1)
    torch.testing.assert_close(_output(model, _inputs(model, 200, pad=9)), first, rtol=0, atol=0)


def test_the_summary_says_which_token_ids_initialised_the_global_tokens(tiny_folder):
    class ZeroClsTokenizer:  # RoBERTa-like: <s> is id 0, a real id
        cls_token_id, mask_token_id, bos_token_id, pad_token_id = 0, 4, 0, 1
        model_max_length = 64

    _, _, report = convert(str(tiny_folder), max_length=256, block_size=16, tokenizer=ZeroClsTokenizer(),
                           output_report=True)
    assert report["global_tokens"] == {"first": 0, "first_from": "tokenizer cls_token_id", "other": 4,
                                       "other_from": "tokenizer mask_token_id"}
    model, tokenizer, report = convert(str(tiny_folder), max_length=256, block_size=16, tokenizer=False,
                                       output_report=True)
    assert tokenizer is None and report["global_tokens"]["first"] == 0
    assert report["global_tokens"]["first_from"] == "token id 0: no tokenizer and no bos_token_id in the config"
    assert report["global_tokens"]["other_from"] == "config pad_token_id"


def test_converting_an_lsg_model_again_keeps_its_trained_global_tokens(tmp_path, tiny_folder):
    model, tokenizer = convert(str(tiny_folder), max_length=256, block_size=16, num_global_tokens=2)
    with torch.no_grad():
        model.base_model.embeddings.global_embeddings.weight[:2] += 1.0  # as if fine-tuned
    trained = model.base_model.embeddings.global_embeddings.weight[:2].clone()
    out = save(model, tokenizer, tmp_path / "lsg")
    again, _, report = convert(str(out), max_length=1024, block_size=32, num_global_tokens=2, output_report=True)
    assert report["reconverted"] and report["positions"] == {"from": 256, "to": 1024}
    torch.testing.assert_close(again.base_model.embeddings.global_embeddings.weight[:2], trained)
    assert again.base_model.lsg_config.block_size == 32 and again.config.max_position_embeddings == 1024


@torch.no_grad()
def test_encoder_decoders_pad_with_the_pad_token_to_whole_blocks_as_the_authors_models():
    """BART-like models pad the input ids with the pad token (masked) up to a whole block before the layers."""
    import transformers as T

    torch.manual_seed(0)
    source = T.BartModel(T.BartConfig(d_model=32, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4,
                                      decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, vocab_size=99,
                                      max_position_embeddings=64)).eval()
    model, _ = convert(source, max_length=256, block_size=16, sparsity_factor=4, sparsity_type="bos_pooling",
                       num_global_tokens=2)
    ids = torch.randint(5, 99, (1, 100), generator=torch.Generator().manual_seed(3))  # 100 = 6 blocks + 4
    padded = torch.cat([ids, torch.full((1, 12), model.config.pad_token_id)], dim=1)
    mask = torch.cat([torch.ones(1, 100), torch.zeros(1, 12)], dim=1).long()
    short = model.get_encoder()(input_ids=ids).last_hidden_state
    explicit = model.get_encoder()(input_ids=padded, attention_mask=mask).last_hidden_state
    assert short.shape[1] == 100
    torch.testing.assert_close(short, explicit[:, :100], rtol=1e-5, atol=1e-5)
