"""`lsgtool convert` never deletes what it did not write, and an interrupted or killed run leaves no output
folder that looks finished (issue 12)."""

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from lsgtool.cli import create_app
from lsgtool.plugins.manager import make_plugin_manager

SMALL = ["--max-length", "128", "--block", "16"]


@pytest.fixture
def app():
    return create_app(make_plugin_manager(load_installed=False))


def _convert(runner, app, source, out, *extra):
    return runner.invoke(app, ["convert", str(source), "--out", str(out), *SMALL, *extra])


def test_overwrite_refuses_a_file_and_leaves_it(app, runner, tiny_folder, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    result = _convert(runner, app, tiny_folder, notes, "--overwrite")
    assert result.exit_code == 2 and "is a file, not a folder lsgtool wrote" in result.stderr
    assert "Hint:" in result.stderr and notes.read_text() == "my notes"


def test_overwrite_refuses_a_folder_of_other_files_and_leaves_it(app, runner, tiny_folder, tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    result = _convert(runner, app, tiny_folder, photos, "--overwrite")
    assert result.exit_code == 2 and "holds files lsgtool did not write (cat.jpg)" in result.stderr
    assert [p.name for p in photos.iterdir()] == ["cat.jpg"] and (photos / "cat.jpg").read_bytes() == b"\xff\xd8 a cat"


def test_overwrite_refuses_the_current_folder_cleanly(app, runner, tiny_folder, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "config.json").write_text('{"model_type": "bert"}')  # even a model folder: it is where the user is
    monkeypatch.chdir(work)
    for target in (".", ".."):
        result = _convert(runner, app, tiny_folder, target, "--overwrite")
        assert result.exit_code == 2 and "current folder or one of its parents" in result.stderr, result.output
    assert sorted(p.name for p in work.iterdir()) == ["config.json"]
    assert not [p for p in tmp_path.iterdir() if ".old." in p.name or "lsgtool-tmp" in p.name]


def test_overwrite_replaces_its_own_output_and_a_model_folder(app, runner, tiny_folder, tmp_path):
    out = tmp_path / "lsg"
    assert _convert(runner, app, tiny_folder, out).exit_code == 0
    marker = json.loads((out / ".lsgtool.json").read_text())
    assert marker["written_by"] == "lsgtool" and marker["verified"] is True
    again = _convert(runner, app, tiny_folder, out, "--overwrite", "--sparse", "stride")
    assert again.exit_code == 0, again.output
    assert json.loads((out / "config.json").read_text())["sparsity_type"] == "stride"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_output_has_normal_permissions(app, runner, tiny_folder, tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "lsg"
        assert _convert(runner, app, tiny_folder, out).exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()} == {0o644}


def test_ctrl_c_during_verification_leaves_nothing(app, runner, tiny_folder, tmp_path, monkeypatch, ctrl_c):
    import lsgtool.core.convert.verify as verify_module

    def interrupted(*args, **kwargs):
        ctrl_c()  # handled before verify returns

    monkeypatch.setattr(verify_module, "verify", interrupted)
    out = tmp_path / "lsg"
    result = _convert(runner, app, tiny_folder, out)
    assert result.exit_code == 130 and "Error: interrupted: nothing was written" in result.stderr, result.output
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    monkeypatch.undo()
    assert _convert(runner, app, tiny_folder, out).exit_code == 0  # the re-run is not refused


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run(app, runner, tiny_folder, tmp_path):
    out = tmp_path / "lsg"
    script = textwrap.dedent(f"""
        import sys, time
        from lsgtool.core.writing import stage
        folder = stage({str(out)!r})
        (folder / "model.safetensors").write_bytes(b"x" * 1000)
        print(folder, flush=True)
        time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    staged = child.stdout.readline().strip()
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert os.path.isdir(staged)
    result = _convert(runner, app, tiny_folder, out)
    assert result.exit_code == 0, result.output
    assert not os.path.exists(staged) and f"Removed {staged}" in result.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_live_runs_staging_folder_and_foreign_hidden_folders_are_kept(tmp_path):
    from lsgtool.core.writing import clean_stale, stage

    out = tmp_path / "lsg"
    live = stage(out)  # this process is alive
    foreign = tmp_path / ".lsg.lsgtool-tmp.mine"  # looks like ours, carries no marker
    foreign.mkdir()
    assert clean_stale(out) == [] and live.is_dir() and foreign.is_dir()


@pytest.mark.parametrize("args, message", [
    (["--sparse-block", "0"], "'--sparse-block'"),
    (["--block", "0"], "'--block'"),
    (["--block", "30", "--factor", "4"], "--block (30) must be divisible by --factor (4)"),
])
def test_bad_values_name_the_flag(app, runner, tiny_folder, tmp_path, args, message):
    result = runner.invoke(app, ["convert", str(tiny_folder), "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 2 and message in result.stderr and "Hint:" in result.stderr
    assert "block_size" not in result.stderr and "sparse_block_size" not in result.stderr
    assert not (tmp_path / "o").exists()


def test_an_unwritable_out_is_refused_before_loading(app, runner, tiny_folder, tmp_path):
    result = runner.invoke(app, ["convert", str(tmp_path / "missing-model"), "--out", "/proc/x"])
    assert result.exit_code == 2 and "--out /proc/x: cannot write in '/proc'" in result.stderr


def test_an_error_off_a_terminal_is_exactly_the_two_lines(app, runner, tmp_path):
    folder = tmp_path / "config-only"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 32}))
    result = runner.invoke(app, ["convert", str(folder), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("Error: ") and "has a config.json but no weights" in lines[0]
    assert lines[1].startswith("Hint: ")
