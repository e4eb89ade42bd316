"""`lsgtool profile` end to end on tiny sizes: table, JSON, CSV, PNG; budget and memory guard; plugin variants."""

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
    assert sorted(f.name for f in out.iterdir()) == ["memory.png", "results.csv", "results.json", "time.png"]
    assert (out / "time.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "results.csv").read_text().splitlines()[0].startswith("variant,length,time_s")
    table = runner.invoke(app, ["profile", "--lengths", "256", "--variants", "full,lsg-norm", *TINY, "--out", str(out)])
    assert table.exit_code == 0 and "time exponent" in table.stdout and "lsg-norm" in table.stdout


def test_budget_and_memory_guard_skip_longer_lengths(app, runner, tmp_path):
    over = runner.invoke(app, ["profile", "--lengths", "256,512", "--variants", "full", *TINY, "--budget", "0.01",
                               "--out", str(tmp_path / "a"), "--json"])
    errors = [p["error"] for p in json.loads(over.stdout)["points"]]
    assert errors == ["over the 0.01 s budget", "skipped: over the 0.01 s budget at 256"]
    guarded = runner.invoke(app, ["profile", "--lengths", "256,2k", "--variants", "full", *TINY, "--memory-limit", "0.5",
                                  "--out", str(tmp_path / "b"), "--json"])
    points = json.loads(guarded.stdout)["points"]
    assert points[0]["error"] is None and points[1]["error"].startswith("estimated ")


class _Selector:
    @hookimpl
    def register_sparse_selectors(self, register):
        from lsgtool.core.lsg.selectors import stride_selector

        register("every_other", stride_selector)


def test_plugin_selectors_and_ssm_variants_become_variants(runner):
    from lsgtool.core.profile.variants import available_variants

    pm = make_plugin_manager(load_installed=False)
    pm.register(_Selector(), name="lsgtool-every-other")
    names = available_variants(pm)
    assert "lsg-every_other" in names and "locost-s4d_inv" in names and "longformer" in names
    result = runner.invoke(create_app(pm), ["profile", "--variants", "lsg-topk"])
    assert result.exit_code == 2 and "unknown variant 'lsg-topk'" in result.stderr and "lsg-every_other" in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--lengths", "8k..1k"], "runs backwards"),
        (["--level", "layerz"], "--level 'layerz' is not one of"),
        (["--baseline", "bigbird", "--variants", "full"], "--baseline 'bigbird' is not among"),
        (["--hidden", "30", "--heads", "4"], "must be divisible"),
    ],
)
def test_bad_options_exit_2(app, runner, args, message):
    result = runner.invoke(app, ["profile", *args])
    assert result.exit_code == 2 and message in result.stderr
