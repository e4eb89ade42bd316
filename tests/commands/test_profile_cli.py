"""`lsgtool profile` end to end on tiny sizes: table, JSON, CSV, PNG; budget and memory guard; plugin variants;
levels and peers; --model; --find-max."""

import json

import pytest

from lsgtool.cli import create_app
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager

TINY = ["--hidden", "32", "--heads", "4", "--repeats", "1"]


@pytest.fixture
def app():
    return create_app(make_plugin_manager(load_installed=False))


def test_tiny_run_writes_table_json_csv_and_plots(app, runner, tmp_path):
    out = tmp_path / "prof"
    result = runner.invoke(app, ["profile", "--lengths", "256,512", "--variants", "full,lsg-pooling,locost-s4d_lin",
                                 *TINY, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    points = {(p["variant"], p["length"]): p for p in data["points"]}
    assert set(points) == {(v, n) for v in ("full", "lsg-pooling", "locost-s4d_lin") for n in (256, 512)}
    assert all(p["time_s"] > 0 and p["peak_mb"] is not None and p["error"] is None for p in points.values())
    assert set(data["summary"]) == {"full", "lsg-pooling", "locost-s4d_lin"}
    assert sorted(f.name for f in out.iterdir()) == [".lsgtool.json", "memory.png", "results.csv", "results.json", "time.png"]
    assert (out / "time.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "results.csv").read_text().splitlines()[0].startswith("variant,length,time_s")
    table = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full,lsg-norm", *TINY, "--out", str(out)])
    assert table.exit_code == 0 and "time exponent" in table.stdout and "lsg-norm" in table.stdout
    # not a terminal: a line per finished point on stderr instead of the live table; none with --json
    assert "lsg-norm @ 256: " in table.stderr and " MB" in table.stderr and "@" not in result.stderr


def test_budget_and_memory_limit_skip_longer_lengths(app, runner, tmp_path):
    over = runner.invoke(app, ["profile", "--lengths", "256,512", "--variants", "full", *TINY, "--budget", "0.01",
                               "--out", str(tmp_path / "a"), "--json"])
    errors = [p["error"] for p in json.loads(over.stdout)["points"]]
    assert errors == ["over the 0.01 s budget", "skipped: over the 0.01 s budget at 256"]
    limited = runner.invoke(app, ["profile", "--lengths", "256,2k", "--variants", "full", *TINY, "--memory-limit", "0.5",
                                  "--out", str(tmp_path / "b"), "--json"])
    errors = [p["error"] for p in json.loads(limited.stdout)["points"]]
    assert errors[0].startswith("over the 0.5 MB memory limit") and errors[1].startswith("skipped: over the 0.5 MB")


class _Selector:
    @hookimpl
    def register_sparse_selectors(self, register):
        from lsgtool.core.lsg.selectors import stride_selector

        register("every_other", stride_selector)


def test_plugin_selectors_and_ssm_variants_become_variants(runner):
    from lsgtool.profiling.variants import available_variants

    pm = make_plugin_manager(load_installed=False)
    pm.register(_Selector(), name="lsgtool-every-other")
    pm.activate()
    names = available_variants()
    assert "lsg-every_other" in names and "locost-s4d_inv" in names and "longformer" in names
    result = runner.invoke(create_app(pm), ["profile", "--variants", "lsg-topk"])
    assert result.exit_code == 2 and "unknown variant 'lsg-topk'" in result.stderr and "lsg-every_other" in result.stderr


def test_levels_peers_and_the_locost_alias(app, runner, tmp_path):
    result = runner.invoke(app, ["profile", "--lengths", "700", "--variants", "locost,longformer,bigbird,longt5,led",
                                 "--level", "encoder", "--layers", "2", "--mode", "train", "--threads", "1", *TINY,
                                 "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [p["variant"] for p in data["points"]] == ["locost-s4d_lin", "longformer", "bigbird", "longt5", "led"]
    assert all(p["error"] is None and p["threads"] == 1 for p in data["points"]), data["points"]
    assert data["meta"]["baseline"] == "locost-s4d_lin" and data["meta"]["layers"] == 2


@pytest.fixture
def converted(tmp_path, tiny_folder):
    from lsgtool import convert, save

    model, tokenizer = convert(str(tiny_folder), max_length=256, block_size=16, sparsity_factor=2)
    return save(model, tokenizer, tmp_path / "tiny-lsg-256")


def test_model_profiles_a_converted_folder_up_to_its_positions(app, runner, tmp_path, converted):
    result = runner.invoke(app, ["profile", "--model", str(converted), "--lengths", "128,256,512", "--repeats", "1",
                                 "--out", str(tmp_path / "p"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    points = {(p["variant"], p["length"]): p for p in data["points"]}
    assert data["meta"]["level"] == "model" and data["meta"]["baseline"] == "full"
    assert all(points[(v, n)]["peak_mb"] > 0 for v in ("model", "full") for n in (128, 256))
    assert points[("model", 512)]["error"] == "longer than the model's 256 positions"


def test_model_converts_a_source_model_per_length(app, runner, tmp_path, tiny_folder):
    result = runner.invoke(app, ["profile", "--model", str(tiny_folder), "--variants", "lsg-stride,full,model",
                                 "--lengths", "128", "--repeats", "1", "--out", str(tmp_path / "p"), "--json"])
    points = {p["variant"]: p for p in json.loads(result.stdout)["points"]}
    assert points["lsg-stride"]["error"] is None and points["full"]["error"] is None
    assert points["model"]["error"] == "longer than the model's 64 positions"  # the unconverted BERT


def test_find_max_stops_at_the_memory_limit(app, runner, tmp_path):
    result = runner.invoke(app, ["profile", "--find-max", "--variants", "full", "--hidden", "256", "--heads", "4",
                                 "--mode", "train", "--lengths", "2k..64k", "--memory-limit", "100",
                                 "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)["longest"]
    assert 2048 <= row["length"] < 65536 and row["peak_mb"] <= 100
    assert row["limited_by"].startswith(("over the 100 MB memory limit", "estimated"))
    longer = [p for p in row["probes"] if p["length"] > row["length"]]
    assert longer and all(p["error"] for p in longer)  # every longer probe failed
    assert sorted(f.name for f in tmp_path.iterdir()) == [".lsgtool.json", "longest.csv", "longest.json", "longest.png"]
    table = runner.invoke(app, ["profile", "--find-max", "--variants", "lsg-norm", *TINY, "--lengths", "1k..2k",
                                "--out", str(tmp_path)])
    assert table.exit_code == 0 and "top of the" in table.stdout and "2048" in table.stdout


INSTALLED = """
from lsgtool.plugins import hookimpl

@hookimpl
def register_sparse_selectors(register):
    from lsgtool.core.lsg.selectors import stride_selector
    register("every_other", stride_selector)

@hookimpl
def register_ssm_variants(register):
    from lsgtool.core.ssm.kernels import BUILTIN_VARIANTS
    register("s4d_copy", BUILTIN_VARIANTS["s4d_lin"])
"""


def test_an_installed_plugin_is_measured_in_the_point_processes(install_plugin, monkeypatch, runner, tmp_path):
    install_plugin("lsgtool-every-other", "every_other_mod", INSTALLED)
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "lsgtool-every-other")
    app = create_app(make_plugin_manager())
    result = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "lsg-every_other,locost-s4d_copy", *TINY,
                                 "--block-size", "32", "--out", str(tmp_path / "p"), "--json"])
    assert result.exit_code == 0, result.output
    points = json.loads(result.stdout)["points"]
    assert [p["variant"] for p in points] == ["lsg-every_other", "locost-s4d_copy"]
    assert all(p["error"] is None and p["time_s"] > 0 for p in points), points


@pytest.mark.parametrize(
    "args, message",
    [
        (["--lengths", "8k..1k"], "--lengths '8k..1k': range '8k..1k' runs backwards"),  # issue 29, item 19: the flag
        (["--lengths", "4q"], "--lengths '4q': length '4q' is not a number"),  # issue 29, item 19: named the flag
        (["--level", "layerz"], "invalid value for '--level': 'layerz' is not one of 'attention', 'layer', 'encoder'"),
        (["--baseline", "bigbird", "--variants", "full"], "--baseline 'bigbird' is not among"),
        (["--hidden", "30", "--heads", "4"], "must be divisible"),
        (["--variants", "full,full"], "variants repeat"),
        (["--repeats", "0"], "invalid value for '--repeats': Input should be greater than or equal to 1"),
        (["--threads", "0"], "invalid value for '--threads': Input should be greater than or equal to 1"),
        (["--block-size", "0"], "invalid value for '--block-size': Input should be greater than or equal to 1"),
        (["--budget", "0"], "invalid value for '--budget': 0 is not positive"),
        (["--variants", ","], "--variants is empty"),
        (["--variants", ""], "--variants is empty"),
        (["--variants", "lsg-norm", "--sparsity-factor", "3"], "--block-size (128) must be divisible by --sparsity-factor (3)"),
        (["--model", "no-such-model-here"], "model 'no-such-model-here' is not on this machine"),
        (["--model", "locost-base", "--variants", "lsg-norm"], "does not apply to the locost model"),
    ],
)
def test_bad_options_exit_2(app, runner, args, message):
    result = runner.invoke(app, ["profile", *args])
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and message in text and "Hint:" in text and "╭" not in text, text


def test_ctrl_c_keeps_the_finished_points_marked_incomplete(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "prof"
    command = [sys.executable, "-m", "lsgtool", "profile", "--lengths", "256..64k", "--variants", "full", *TINY,
               "--out", str(out), "--no-plots"]
    env = {**os.environ, "LSGTOOL_LOAD_PLUGINS": ""}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stderr.readline()  # off a terminal, a line per finished point
    assert first.startswith("full @ 256: "), first
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Error: interrupted after" in stderr and "Traceback" not in stderr and "INCOMPLETE" in stdout
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["incomplete"].startswith("interrupted after") and data["points"][0]["length"] == 256
    assert all(p["error"] is None for p in data["points"]) and (out / "results.csv").exists()

def test_live_view_shows_finished_points_and_the_one_running():
    from rich.console import Console

    from lsgtool.commands.profile import _LiveView
    from lsgtool.profiling.engine import Point

    view = _LiveView("live", total=2)
    view.start(Point("full", 512))
    view.done(Point("full", 512, time_s=0.5, tokens_per_s=1024, peak_mb=10))
    view.start(Point("lsg-norm", 512))
    console = Console(record=True, width=120)
    console.print(view)
    text = console.export_text()
    assert "0.5000" in text and "1024" in text and "measuring lsg-norm @ 512" in text and "1/2" in text


def test_help_shows_the_defaults_that_depend_on_other_options(app, runner):
    result = runner.invoke(app, ["profile", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for shown in ("1k..16k; --quick: 512,2k; --find-max: 1k..1m", "128; --quick: 32", "the memory available at the start"):
        assert shown in text, shown


def test_plots_need_matplotlib_which_is_checked_before_measuring(app, runner, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the optional extra were not installed
    refused = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--out", str(tmp_path / "a")])
    assert refused.exit_code == 2 and "the plots need matplotlib" in refused.stderr
    assert "pip install 'lsgtool[plot]'" in refused.stderr and not (tmp_path / "a").exists()
    done = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--no-plots",
                               "--out", str(tmp_path / "b"), "--json"])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [".lsgtool.json", "results.csv", "results.json"]


def test_flags_win_over_quick_and_the_title_never_says_none_threads(app, runner, tmp_path):
    result = runner.invoke(app, ["profile", "--quick", "--hidden", "32", "--heads", "4", "--lengths", "256",
                                 "--variants", "full", "--repeats", "1", "--out", str(tmp_path / "a"), "--json"])
    assert result.exit_code == 0, result.output
    meta = json.loads(result.stdout)["meta"]
    assert (meta["hidden"], meta["heads"]) == (32, 4)  # not --quick's 64 and 4
    failed = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--budget", "0.001",
                                 "--out", str(tmp_path / "b")], env={"COLUMNS": "200"})
    assert failed.exit_code == 0 and "over the 0.001 s budget" in failed.stdout
    assert "None threads" not in failed.stdout and "torch's default threads" in failed.stdout


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_a_folder_profile_did_not_write_is_refused_untouched(app, runner, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.json").write_text('{"my": "own results"}')
    before = _files(mine)
    result = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--out", str(mine)])
    assert result.exit_code == 2 and "--out" in result.stderr and "left untouched" in result.stderr
    assert "Hint: choose another --out" in result.stderr and _files(mine) == before
    kernels = tmp_path / "kernels"  # written by lsgtool, but by another command
    kernels.mkdir()
    (kernels / ".lsgtool.json").write_text('{"written_by": "lsgtool", "command": "inspect-kernels"}')
    other = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--out", str(kernels)])
    assert other.exit_code == 2 and "not written by lsgtool profile" in other.stderr
    assert not [p for p in tmp_path.iterdir() if "lsgtool-tmp" in p.name]


def test_out_dot_is_refused(app, runner, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "results.csv").write_text("variant,length\n")
    monkeypatch.chdir(work)
    for target in (".", ".."):
        result = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--out", target])
        assert result.exit_code == 2 and "--out" in result.stderr and "Hint:" in result.stderr, result.output
        hint = " ".join(result.stderr.split())  # issue 29, item 19: profile's hint, not convert's ./converted-model
        assert "--out ./profile-out" in hint and "converted-model" not in hint
    assert _files(work) == {"results.csv": b"variant,length\n"}


def test_a_second_run_replaces_the_folder_profile_wrote(app, runner, tmp_path):
    out = tmp_path / "prof"
    first = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--out", str(out)])
    assert first.exit_code == 0 and (out / "time.png").exists()
    assert json.loads((out / ".lsgtool.json").read_text())["command"] == "profile"
    again = runner.invoke(app, ["profile", "--lengths", "512", "--variants", "full", *TINY, "--no-plots",
                                "--out", str(out), "--json"])
    assert again.exit_code == 0, again.output
    assert sorted(_files(out)) == [".lsgtool.json", "results.csv", "results.json"]  # the old plots went with it
    assert json.loads((out / "results.json").read_text())["points"][0]["length"] == 512
    assert [p.name for p in tmp_path.iterdir()] == ["prof"]  # no staging or old folder left beside it


def test_ctrl_c_leaves_the_previous_profile_and_no_staging_folder(app, runner, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "prof"
    assert runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--no-plots",
                               "--out", str(out)]).exit_code == 0
    before = _files(out)
    command = [sys.executable, "-m", "lsgtool", "profile", "--lengths", "256..64k", "--variants", "full", *TINY,
               "--out", str(out), "--no-plots"]
    env = {**os.environ, "LSGTOOL_LOAD_PLUGINS": ""}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stderr.readline()
    assert first.startswith("full @ 256: "), first
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "still holds the previous profile" in stderr and "Traceback" not in stderr and "INCOMPLETE" in stdout
    assert _files(out) == before and [p.name for p in tmp_path.iterdir()] == ["prof"]


@pytest.mark.parametrize("where", ["under a file", "a file"])
def test_an_unwritable_out_is_refused_before_measuring(app, runner, tmp_path, where):
    """Issue 21, item 10: a path under a file, or a file, as --out is refused before the first point is measured
    (root writes in read-only folders, so these are the cases that block everyone)."""
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    out = afile / "prof" if where == "under a file" else afile
    result = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full", *TINY, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: --out {out}") and "Hint: choose another --out" in result.stderr
    assert "Traceback" not in result.stderr and "full @ 256" not in result.stderr and result.stdout == ""
    assert afile.read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_help_names_the_plot_extra_to_install(app, runner):
    """Issue 21, item 17: rich read `[plot]` as a style tag and the help said "(needs matplotlib: lsgtool)"."""
    result = runner.invoke(app, ["profile", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "(needs matplotlib: pip install 'lsgtool[plot]')" in result.output


def test_quick_measures_lsgtools_own_variants_without_the_slow_peers(app, runner, tmp_path):
    """Issue 21, item 17: --quick took ~80 s where the README says under a minute; three quarters of it went to the
    peers' point processes importing transformers' models. --variants still adds them."""
    result = runner.invoke(app, ["profile", "--quick", "--lengths", "256", "--repeats", "1", "--no-plots",
                                 "--out", str(tmp_path / "q"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [p["variant"] for p in data["points"]] == ["full", "lsg-norm", "locost-s4d_lin"]
    assert data["meta"]["hidden"] == 64 and data["meta"]["block_size"] == 32
    help_text = " ".join(runner.invoke(app, ["profile", "--help"], env={"COLUMNS": "200"}).output.split())
    assert "--quick: full,lsg-norm,locost" in help_text and "full, lsg-norm and locost at 512 and 2k tokens" in help_text


@pytest.mark.parametrize("instructions", [{}, {"avx512_bf16": True, "avx512_vnni": True}], ids=["none", "bf16-vnni"])
def test_the_profile_says_which_precisions_this_cpu_accelerates(app, runner, tmp_path, monkeypatch, instructions):
    from lsgtool.core import precision

    monkeypatch.setattr(precision, "_capabilities", lambda: instructions)
    monkeypatch.setattr(precision, "is_x86", lambda: True)  # the instructions judged are x86's
    args = ["profile", "--lengths", "256", "--variants", "full", *TINY, "--dtype", "bfloat16"]
    data = json.loads(runner.invoke(app, [*args, "--out", str(tmp_path / "a"), "--json"]).stdout)
    assert data["meta"]["cpu_accelerates"] == (["bfloat16", "int8"] if instructions else [])
    assert data["meta"]["dtype_accelerated"] is bool(instructions)
    table = runner.invoke(app, [*args, "--out", str(tmp_path / "b")])
    text = " ".join(table.stdout.split())
    assert table.exit_code == 0, table.output
    assert ("this CPU computes faster than float32 in: " + ("bfloat16, int8" if instructions else "none")) in text
    assert ("does not accelerate bfloat16" in text) is not bool(instructions)
