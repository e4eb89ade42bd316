"""An installed plugin whose hook raises, or whose registration ``Registry.add`` refuses, is skipped and named once;
the built-ins keep working through every command, and ``lsgtool plugins`` shows what was skipped and why."""

import json

import pytest

from lsgtool.cli import create_app
from lsgtool.plugins.manager import make_plugin_manager
from lsgtool.plugins.registry import HOOKS

# every hook registers something valid, then raises: nothing of a hook that raised is kept
RAISING = "from lsgtool.plugins import hookimpl\n" + "".join(f"""
@hookimpl
def {hook}(register):
    register("half_done_{key}", print)
    raise RuntimeError("plugin bug at registration")
""" for key, hook in HOOKS.items())

BAD_NAME = """
from lsgtool.plugins import hookimpl
from lsgtool.core.lsg.selectors import stride_selector

@hookimpl
def register_sparse_selectors(register):
    register("Bad Name!", stride_selector)
    register("good_name", stride_selector)
"""


def _hook_warning(hook):
    return (f"Warning: plugin 'lsgtool-raiser' (distribution lsgtool-raiser 1.0) failed in its hook {hook}: RuntimeError: "
            "plugin bug at registration. Skipped every")


@pytest.fixture
def raising_app(install_plugin, monkeypatch):
    install_plugin("lsgtool-raiser", "raiser_everywhere", RAISING)
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "lsgtool-raiser")
    return create_app(make_plugin_manager())


@pytest.mark.parametrize("family", list(HOOKS))
def test_a_hook_that_raises_skips_that_plugin_and_keeps_the_builtins(install_plugin, monkeypatch, family):  # issue 29, item 14
    install_plugin("lsgtool-raiser", f"raiser_{family}", RAISING)
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "lsgtool-raiser")
    pm = make_plugin_manager()
    builtins = make_plugin_manager(load_installed=False).registry(family)
    assert list(pm.registry(family)) == list(builtins) and len(builtins)  # the half-done registration is not kept
    [skipped] = pm.skipped(family)
    assert (skipped.plugin, skipped.kind) == ("lsgtool-raiser", "hook_error")
    assert pm.problems == [skipped.reason]  # reported once, however often the family is read
    pm.registry(family)
    assert pm.problems == [skipped.reason]
    assert skipped.reason.startswith(_hook_warning(HOOKS[family]).removeprefix("Warning: "))
    assert "`pip uninstall lsgtool-raiser`" in skipped.reason and "`LSGTOOL_LOAD_PLUGINS=''`" in skipped.reason


def _warned_once_per_hook(stderr, hooks):
    for hook in HOOKS.values():
        assert stderr.count(_hook_warning(hook)) == (1 if hook in hooks else 0), (hook, stderr)


def test_convert_works_beside_a_plugin_whose_hooks_raise(raising_app, runner, tiny_folder, tmp_path):  # issue 29, item 14
    result = runner.invoke(raising_app, ["convert", str(tiny_folder), "--out", str(tmp_path / "o"), "--max-length",
                                         "128", "--block", "16", "--sparse", "norm", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["lsg"]["sparsity_type"] == "norm"
    _warned_once_per_hook(result.stderr, {"register_commands", "register_presets", "register_architectures",
                                          "register_sparse_selectors"})


def test_inspect_kernels_works_beside_a_plugin_whose_hooks_raise(raising_app, runner, tmp_path):  # issue 29, item 14
    result = runner.invoke(raising_app, ["inspect-kernels", "--block", "16", "--sparse", "stride", "--length", "256",
                                         "--no-plots", "--out", str(tmp_path / "k"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["nominal"]["keys_per_query"] > 0
    _warned_once_per_hook(result.stderr, {"register_commands", "register_sparse_selectors"})


def test_summarize_works_beside_a_plugin_whose_hooks_raise(raising_app, runner, tiny_folder, tmp_path):  # issue 29, item 14
    doc = tmp_path / "doc.txt"
    doc.write_text(" ".join(f"w{i} w{i + 1} w{i + 2}." for i in range(20)))
    result = runner.invoke(raising_app, ["summarize", str(doc), "--model", str(tiny_folder), "--method", "extractive",
                                         "--max-new-tokens", "10", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["method"] == "extractive"
    assert result.stderr.count(_hook_warning("register_commands")) == 1
    assert not any(line.startswith("Error:") for line in result.stderr.splitlines())


def test_plugins_lists_every_hook_that_raised(raising_app, runner):  # issue 29, item 14
    listing = runner.invoke(raising_app, ["plugins", "--json"])
    assert listing.exit_code == 0, listing.output
    data = json.loads(listing.stdout)
    plugin = next(p for p in data["plugins"] if p["name"] == "lsgtool-raiser")
    assert plugin["registers"] == {}
    assert sorted((s["family"], s["kind"]) for s in plugin["skipped"]) == sorted((f, "hook_error") for f in HOOKS)
    assert data["errors"] == [s["reason"] for s in plugin["skipped"]]
    _warned_once_per_hook(listing.stderr, set(HOOKS.values()))
    table = runner.invoke(raising_app, ["plugins"], env={"COLUMNS": "400"})
    assert table.exit_code == 0 and "SKIPPED every sparse selector: its hook raised" in table.stdout
    assert all(f"skipped: {s['reason']}" in table.stdout for s in plugin["skipped"])


@pytest.fixture
def bad_name_app(install_plugin, monkeypatch):
    install_plugin("lsgtool-badname", "badname_mod", BAD_NAME)
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "lsgtool-badname")
    return create_app(make_plugin_manager())


REFUSED = ("plugin 'lsgtool-badname' registered an invalid sparse selector name 'Bad Name!'. Skipped that registration "
           "of 'lsgtool-badname'; names must match ^[a-z][a-z0-9_]*$.")


def test_plugins_marks_an_invalid_name_with_the_reason_commands_warn_with(bad_name_app, runner, tmp_path):  # issue 29, item 14
    listing = runner.invoke(bad_name_app, ["plugins", "--json"])
    assert listing.exit_code == 0, listing.output
    plugin = next(p for p in json.loads(listing.stdout)["plugins"] if p["name"] == "lsgtool-badname")
    assert plugin["registers"] == {"sparse_selectors": ["good_name"]}
    assert plugin["skipped"] == [{"family": "sparse_selectors", "name": "Bad Name!", "kind": "invalid", "reason": REFUSED}]
    assert listing.stderr.count(f"Warning: {REFUSED}") == 1
    table = runner.invoke(bad_name_app, ["plugins"], env={"COLUMNS": "400"})
    assert "SKIPPED sparse selector 'Bad Name!': invalid" in table.stdout and f"skipped: {REFUSED}" in table.stdout
    kernels = runner.invoke(bad_name_app, ["inspect-kernels", "--block", "16", "--sparse", "good_name", "--length",
                                           "256", "--no-plots", "--out", str(tmp_path / "k"), "--json"])
    assert kernels.exit_code == 0, kernels.output
    assert kernels.stderr.count(f"Warning: {REFUSED}") == 1  # the same message, once
