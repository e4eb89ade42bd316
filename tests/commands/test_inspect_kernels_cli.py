"""`lsgtool inspect-kernels` end to end: LSG maps from flags and from a converted checkpoint (with picks on a
text), SSM kernels of a LOCOST folder beside its random init, the operator breakdown, bad input, the output
folder's safety and Ctrl-C."""

import json

import pytest
import torch

from lsgtool.cli import create_app
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager

PNG = b"\x89PNG"


@pytest.fixture
def app():
    return create_app(make_plugin_manager(load_installed=False))


@pytest.fixture
def lsg_folder(tiny_folder, tmp_path, app, runner):
    """The tiny BERT converted to LSG (512 tokens, blocks of 16, factor 4, norm), tokenizer included."""
    out = tmp_path / "tiny-lsg"
    result = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(out), "--max-length", "512", "--block", "16",
                                 "--factor", "4", "--sparse", "norm", "--json"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def locost_folder(tmp_path):
    from lsgtool.core.ssm.locost import LocostConfig, LocostForConditionalGeneration

    torch.manual_seed(1)
    config = LocostConfig(vocab_size=60, d_model=16, d_kv=4, d_ff=32, num_layers=3, num_decoder_layers=1, num_heads=4,
                          d_state=8)
    model = LocostForConditionalGeneration(config)
    with torch.no_grad():  # "trained": slower decay than the random init in every layer
        for layer in model.encoder.block:
            layer.layer[0].ssm_layer.kernel.log_dt.sub_(3.0)
    model.save_pretrained(tmp_path / "tiny-locost")
    return tmp_path / "tiny-locost"


def invoke(app, runner, *args):
    result = runner.invoke(app, ["inspect-kernels", *map(str, args)])
    return result


def test_lsg_map_from_flags_has_the_cards_numbers_a_png_and_a_terminal_map(app, runner, tmp_path):
    out = tmp_path / "k"
    result = invoke(app, runner, "--block", 32, "--factor", 4, "--sparse", "pooling", "--length", 1024, "--out", out,
                    "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["nominal"]["connexions"] == 160 and data["nominal"]["keys_per_query"] == 161
    assert data["measured"]["keys_per_query"]["interior_max"] == 161 and data["measured"]["reach"]["interior_max"] == 352
    assert data["data_dependent"] is False and data["distinct_heads"] == [0]
    assert [r["pattern"] for r in data["compare"]] == ["lsg", "longformer", "bigbird"]
    assert sorted(p.name for p in out.iterdir()) == [".lsgtool.json", "lsg-map.png", "lsg.json"]
    assert (out / "lsg-map.png").read_bytes()[:4] == PNG and (out / "lsg-map.png").stat().st_size > 10_000
    text = invoke(app, runner, "--block", 32, "--factor", 4, "--sparse", "stride", "--length", 1024, "--out", out)
    assert text.exit_code == 0, text.output
    assert "G####++++++++" in text.stdout and "connexions" in text.stdout and "longformer" in text.stdout
    assert json.loads((out / "lsg.json").read_text())["distinct_heads"] == [0, 1, 2, 3]  # replaced: stride per head


def test_lsg_map_of_a_checkpoint_and_the_picks_on_a_text(app, runner, lsg_folder, tmp_path):
    text = tmp_path / "doc.txt"
    words = " ".join(f"w{(i * 7) % 90}" for i in range(700))
    text.write_text(words)
    out = tmp_path / "k"
    result = invoke(app, runner, lsg_folder, "--input", text, "--layer", 1, "--head", 2, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["heads"] == 4 and data["length"] == 512 and data["config"]["sparsity_type"] == "norm"
    picks = data["picks"]
    assert picks["tokens"] == 512 and picks["truncated_tokens"] == 702 - 512  # [CLS] + 700 words + [SEP]
    # norm keeps block_size / factor of each block of 16: a quarter of the tokens
    assert picks["tokens_taken"] == 512 // 4
    assert all(words[s["start"] : s["end"]] == s["text"] for s in picks["spans"])
    assert sum(s["text"].count("w") for s in picks["spans"]) <= 128
    page = (out / "picks.html").read_text()
    assert page.count("<span") >= 100 and "more characters not read" in page
    assert data["map_heads"] == [2] and (out / "lsg-map.png").exists()


def test_ssm_kernels_beside_the_random_init(app, runner, locost_folder, tmp_path):
    out = tmp_path / "k"
    result = invoke(app, runner, locost_folder, "--vs-init", "--length", 2048, "--layer", 1, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    trained, init = data["models"]
    assert init["model"].endswith("(random init)") and trained["weights"] == "saved weights"
    assert len(trained["layers"]) == 3 and data["layer"] == 1
    for row_t, row_i in zip(trained["layers"], init["layers"]):
        assert row_t["causal_reach_median"] > row_i["causal_reach_median"]  # slower decay saved in the folder
        assert row_t["radius_median"] > row_i["radius_median"]
    for name in ("ssm-kernels.png", "ssm-heatmap.png", "ssm-reach.png"):
        assert (out / name).read_bytes()[:4] == PNG and (out / name).stat().st_size > 10_000
    table = invoke(app, runner, locost_folder, "--length", 512, "--out", out)
    assert table.exit_code == 0 and "→ median" in table.stdout and "radius" in table.stdout


def test_a_preset_without_weights_is_inspected_with_random_weights(app, runner, tmp_path):
    result = invoke(app, runner, "locost-4k", "--length", 256, "--layer", 11, "--out", tmp_path / "k", "--json",
                    "--no-plots")
    assert result.exit_code == 0, result.output
    model = json.loads(result.stdout)["models"][0]
    assert model["weights"].startswith("random weights") and model["d_state"] == 512 and len(model["layers"]) == 12


def test_operator_breakdown_of_a_checkpoint(app, runner, lsg_folder, tmp_path):
    out = tmp_path / "k"
    result = invoke(app, runner, lsg_folder, "--what", "ops", "--length", "128,256", "--out", out, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["variants"] == ["model", "full"] and data["lengths"] == [128, 256]
    assert all(p["error"] is None and p["total_ms"] > 0 for p in data["points"])
    names = sorted(p.name for p in out.iterdir())
    assert "ops.png" in names and "trace-model-256.json" in names and "trace-full-128.json" in names
    for p in data["points"]:  # the operators named are ones the point's trace recorded (the trace may hold more
        # calls than the profiled forward under load: profiler bookkeeping differs, so at least as many)
        events = [e.get("name") for e in json.loads((out / p["trace"]).read_text())["traceEvents"] if e.get("ph") == "X"]
        assert p["top"] and all(events.count(row["operator"]) >= row["calls"] > 0 for row in p["top"]), p["top"]
        assert p["share"]["matmul"] > 0 and p["share"]["softmax/sdpa"] > 0  # a BERT: projections and attention


class _Plugins:
    @hookimpl
    def register_sparse_selectors(self, register):
        from lsgtool.core.lsg.selectors import gather_tokens

        def head_shift(x):  # head h takes tokens h, h + f, ... (a third party's own rule)
            n, H, f = x.key.shape[2], x.key.shape[1], x.config.sparsity_factor
            idx = (torch.arange(0, n, f)[None] + torch.arange(H)[:, None]) % n
            return gather_tokens(x, idx[None])

        register("head_shift", head_shift)

    @hookimpl
    def register_ssm_variants(self, register):
        from lsgtool.core.ssm.kernels import s4d_inv

        register("twin", s4d_inv)


def test_plugin_selector_and_ssm_variant_appear(runner, tmp_path):
    from lsgtool.core.ssm.locost import LocostConfig, LocostForConditionalGeneration

    pm = make_plugin_manager(load_installed=False)
    pm.register(_Plugins(), name="lsgtool-test-plugins")
    pm.activate()
    app = create_app(pm)
    result = invoke(app, runner, "--sparse", "head_shift", "--block", 16, "--factor", 4, "--length", 256, "--out",
                    tmp_path / "a", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["config"]["sparsity_type"] == "head_shift" and data["distinct_heads"] == list(range(12))
    assert data["map_heads"] == [0, 1, 2, 3]  # the PNG draws four of them
    config = LocostConfig(vocab_size=40, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_decoder_layers=1, num_heads=2,
                          d_state=4, ssm_variant="twin")
    LocostForConditionalGeneration(config).save_pretrained(tmp_path / "twin")
    result = invoke(app, runner, tmp_path / "twin", "--length", 128, "--out", tmp_path / "b", "--json", "--no-plots")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["models"][0]["ssm_variant"] == "twin"


@pytest.mark.parametrize("args, message", [
    (["nosuch/model"], "is not on this machine"),
    (["./missing-folder"], "no such file or folder"),
    (["--block", "30", "--factor", "4"], "--block (30) must be divisible by --factor (4)"),
    (["--sparse", "nosuch"], "unknown sparse selector 'nosuch'"),
    (["--length", "abc"], "--length 'abc'"),
    (["--length", "1k,2k"], "gives 2 lengths"),
    (["--length", "1m"], "longer than the map is drawn for"),
    (["--head", "12"], "--head 12 is out of range: the model has 12 heads"),
    (["--what", "ssm"], "--what ssm needs a LOCOST model"),
    (["minilm"], "is neither an LSG nor a LOCOST model"),
    (["--what", "ssm", "minilm"], "is not a LOCOST model"),
    (["--what", "ops", "--head", "1"], "--head applies to --what lsg"),
    (["--vs-init"], "--vs-init applies to --what ssm"),
    (["--input", "x.txt"], "--input needs an LSG checkpoint"),
])
def test_bad_input_is_one_clear_line_and_exit_2(app, runner, tmp_path, args, message):
    result = invoke(app, runner, *args, "--out", tmp_path / "k")
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and message in text and "Hint:" in text and "Traceback" not in text, text
    assert not (tmp_path / "k").exists()


def test_layer_out_of_range_and_a_missing_input_file(app, runner, lsg_folder, locost_folder, tmp_path):
    for args, message in (([locost_folder, "--layer", 3], "--layer 3 is out of range: the model has 3 SSM layers"),
                          ([lsg_folder, "--layer", 2], "--layer 2 is out of range: the model has 2 layers"),
                          ([lsg_folder, "--input", tmp_path / "none.txt"], "no such file"),
                          ([locost_folder, "--what", "lsg"], "see its kernels with --what ssm")):
        result = invoke(app, runner, *args, "--out", tmp_path / "k")
        assert result.exit_code == 2 and message in " ".join(result.stderr.split()), result.stderr


def test_every_input_error_agrees_on_what_input_and_model_take(app, runner, lsg_folder, tmp_path):
    """Issue 21, item 16: --input is one text file, MODEL_OR_CONFIG the checkpoint that runs on it; no hint says
    otherwise (a folder given to --input was told "pass the folder as an input of its own")."""
    text = tmp_path / "report.txt"
    text.write_text("w1 w2 w3 " * 200)
    weightless = tmp_path / "authors"
    weightless.mkdir()
    (weightless / "config.json").write_text((lsg_folder / "config.json").read_text())
    cases = {
        "no model": ([], text, "--input needs an LSG checkpoint to run on the text."),
        "no weights": ([weightless], text, f"--input runs the model on the text, and '{weightless}' has no weights"),
        "no such file": ([lsg_folder], tmp_path / "none.txt", f"--input {tmp_path / 'none.txt'}: no such file."),
        "a folder": ([lsg_folder], tmp_path, f"--input {tmp_path} is a folder."),
    }
    for case, (models, given, error) in cases.items():
        result = invoke(app, runner, *models, "--input", given, "--out", tmp_path / "k", "--no-plots")
        error_line, hint = result.stderr.split("\nHint: ", 1)
        assert result.exit_code == 2 and error_line.startswith(f"Error: {error}"), (case, result.stderr)
        hint = " ".join(hint.split())
        takes = "--input takes one document (.txt, .md, .vtt, .srt, .pdf, .epub, .docx, .html)"
        assert hint.startswith(takes), (case, hint)
        if case in ("no model", "no weights"):
            assert f"as MODEL_OR_CONFIG, e.g. `lsgtool inspect-kernels ./model-lsg-4096 --input {given}`" in hint, hint
        assert "pass the folder as an input" not in hint and "a folder reads" not in hint, (case, hint)
    assert not (tmp_path / "k").exists()


def test_an_out_folder_it_did_not_write_is_left_untouched(app, runner, tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    result = invoke(app, runner, "--length", 512, "--block", 32, "--out", mine)
    assert result.exit_code == 2 and "was not written by lsgtool inspect-kernels" in result.stderr
    assert [p.name for p in mine.iterdir()] == ["keep.txt"]
    model_like = tmp_path / "model"
    model_like.mkdir()
    (model_like / "config.json").write_text('{"model_type": "bert"}')
    assert invoke(app, runner, "--length", 512, "--out", model_like).exit_code == 2  # not even a model folder
    assert (model_like / "config.json").exists()


def test_ctrl_c_leaves_the_previous_output_as_it_was(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "k"
    env = {**os.environ, "LSGTOOL_LOAD_PLUGINS": ""}
    first = subprocess.run([sys.executable, "-m", "lsgtool", "inspect-kernels", "--length", "512", "--block", "32",
                            "--out", str(out), "--no-plots"], env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    command = [sys.executable, "-m", "lsgtool", "inspect-kernels", "--what", "ops", "--length", "2k,64k", "--out",
               str(out)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = ""
    while "@ 2048" not in line:  # off a terminal, a line per point; stop it while the points run
        line = process.stderr.readline()
        assert line, "no progress line"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted: nothing was written" in stderr and "Traceback" not in stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".k.lsgtool-tmp")]  # no staging left behind


def test_a_config_file_and_the_lsg_authors_layout_are_mapped_without_weights(app, runner, lsg_folder, tmp_path):
    result = invoke(app, runner, lsg_folder / "config.json", "--length", 256, "--out", tmp_path / "a", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["config"]["block_size"] == 16
    authors = tmp_path / "authors"
    authors.mkdir()  # the LSG authors' layout: base model_type, LSG keys beside it, no weights here
    (authors / "config.json").write_text(json.dumps({
        "model_type": "roberta", "architectures": ["LSGRobertaForMaskedLM"], "hidden_size": 768,
        "num_attention_heads": 12, "num_hidden_layers": 12, "max_position_embeddings": 4098, "block_size": 128,
        "sparse_block_size": 128, "sparsity_factor": 4, "sparsity_type": "lsh", "num_global_tokens": 1}))
    result = invoke(app, runner, authors, "--out", tmp_path / "b", "--json", "--no-plots")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["length"] == 4098 and data["padded"] == 4224 and data["nominal"]["connexions"] == 640
    assert data["data_dependent"] is True and any("picks depend on the data" in n for n in data["notes"])
    overridden = invoke(app, runner, authors, "--block", 32, "--length", 1024, "--out", tmp_path / "c", "--json")
    assert json.loads(overridden.stdout)["nominal"]["connexions"] == 3 * 32 + 2 * 32  # --block sets the sparse block too


def test_on_a_terminal_the_work_shows_a_progress_bar(terminal, tmp_path):
    run = terminal(["inspect-kernels", "--what", "ops", "--length", "256", "--out", str(tmp_path / "k"), "--no-plots"],
                   env={"LSGTOOL_LOAD_PLUGINS": ""})
    assert run.returncode == 0, run.output
    assert "\x1b[2Kprofiling" in run.output and "0/3 0:00:0" in run.output  # the bar, redrawn in place as it ran
    assert "written:" in run.output


def test_a_length_past_the_models_positions_is_mapped_and_said(app, runner, lsg_folder, tmp_path):
    result = invoke(app, runner, lsg_folder, "--length", 1024, "--out", tmp_path / "k", "--json", "--no-plots")
    assert result.exit_code == 0, result.output
    assert "takes at most 512 positions" in json.loads(result.stdout)["notes"][0]


def test_help_names_the_plot_extra_to_install(app, runner):
    result = runner.invoke(app, ["inspect-kernels", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "(needs matplotlib: pip install 'lsgtool[plot]')" in result.output
