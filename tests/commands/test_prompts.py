"""On a terminal, what is missing is asked for; never in a pipe, under CI or with --json (issue 12)."""

import json
import re

import pytest

from lsgtool.cli import create_app
from lsgtool.plugins.manager import make_plugin_manager


@pytest.fixture
def app():
    return create_app(make_plugin_manager(load_installed=False))


def test_convert_without_a_model_offers_presets_and_folders_and_takes_a_number(terminal, tiny_folder, tmp_path):
    args = ["convert", "--out", "lsg", "--max-length", "128", "--block", "16"]
    first = terminal(args, answers=[("number or value", "./nowhere")], cwd=tmp_path, timeout=60)
    assert first.returncode == 2 and "no such file or folder: 'nowhere'" in first.output  # a typed value is used
    listed = dict((name, n) for n, name in re.findall(r"(\d+)\) (\S+)", first.output))
    assert "minilm" in listed and "locost-base" in listed and "./tiny-bert" in listed
    run = terminal(args, answers=[("number or value", listed["./tiny-bert"])], cwd=tmp_path)
    assert run.returncode == 0, run.output
    assert json.loads((tmp_path / "lsg" / "config.json").read_text())["max_position_embeddings"] >= 128


def test_guided_convert_walks_through_the_task_and_confirms(terminal, tiny_folder, tmp_path):
    run = terminal(["convert", str(tiny_folder), "--out", str(tmp_path / "lsg"), "--guided", "--global", "2"],
                   answers=[("number", "2"),  # summarization
                            ("new maximum length", "256"), ("block size", "16"), ("sparsity factor", "3"),
                            ("it must divide the block size 16", "8"), ("sparse selector", ""),  # the recommended
                            ("convert with these settings?", "y")], cwd=tmp_path)
    assert run.returncode == 0 and not run.unanswered, run.output
    assert "recommended: block_stride" in run.output and "(2 to 8; wide context" in run.output
    # 2 + 2*16 + 3*16 keys; the layout's reach 3*16 + 2*16*8 = 304 is capped at the 256 tokens read (issue 21, item 12)
    assert "each query sees 82 keys and reaches 256 tokens (capped at the max length 256" in run.output
    config = json.loads((tmp_path / "lsg" / "config.json").read_text())
    assert (config["block_size"], config["sparsity_factor"], config["sparsity_type"], config["num_global_tokens"]) == \
        (16, 8, "block_stride", 2)  # --global given on the command line was not asked


def test_guided_answer_no_writes_nothing(terminal, tiny_folder, tmp_path):
    run = terminal(["convert", str(tiny_folder), "--out", str(tmp_path / "lsg"), "--guided"],
                   answers=[("number", "1"), ("new maximum length", ""), ("block size", ""), ("sparsity factor", ""),
                            ("sparse selector", ""), ("global tokens", ""), ("convert with these settings?", "n")],
                   cwd=tmp_path, timeout=60)
    assert run.returncode == 1 and "Aborted." in run.output and not (tmp_path / "lsg").exists()


def test_no_questions_in_a_pipe_under_ci_or_with_json(app, runner, terminal, tiny_folder, tmp_path):
    piped = runner.invoke(app, ["convert", "--guided"])
    assert piped.exit_code == 2 and "Error: missing argument 'MODEL'." in piped.stderr
    guided = runner.invoke(app, ["convert", str(tiny_folder), "--guided"])
    assert guided.exit_code == 2 and "--guided asks questions and needs a terminal" in guided.stderr
    ci = terminal(["convert"], env={"CI": "true"}, timeout=60)
    assert ci.returncode == 2 and "Error: missing argument 'MODEL'." in ci.output and "number" not in ci.output
    as_json = terminal(["convert", "--json"], timeout=60)
    assert as_json.returncode == 2 and "Error: missing argument 'MODEL'." in as_json.output


def test_summarize_without_an_input_offers_the_documents_here(terminal, tmp_path):
    (tmp_path / "big.txt").write_text("A long story. " * 400)
    (tmp_path / "notes.md").write_text("# Notes\n\nShort.")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8")
    run = terminal(["summarize", "--model", str(tmp_path / "nowhere")], answers=[("number or value", "1")],
                   cwd=tmp_path, timeout=60)
    listed = [name for _, name in re.findall(r"(\d+)\) (\S+)", run.output)]
    assert listed == ["big.txt", "notes.md"]  # largest first, only what lsgtool reads
    assert run.returncode == 2 and "nowhere" in run.output  # the chosen input went on to the model check
