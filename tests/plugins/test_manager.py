import json

import pytest

from lsgtool.cli import create_app
from lsgtool.core.errors import PluginError
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager

SELECTOR_PLUGIN = """
from lsgtool.plugins import hookimpl
from lsgtool.core.lsg.selectors import stride_selector

@hookimpl
def register_sparse_selectors(register):
    register("every_other", stride_selector)

@hookimpl
def register_commands(register):
    def hello(name: str = "world"):
        '''Say hello.'''
        print(f"hello {name}")
    register("hello", hello)
"""


def test_installed_entry_point_is_discovered(install_plugin, monkeypatch, runner):
    install_plugin("lsgtool-everyother", "everyother_mod", SELECTOR_PLUGIN, version="2.5")
    monkeypatch.delenv("LSGTOOL_LOAD_PLUGINS")
    pm = make_plugin_manager()
    assert pm.sources["lsgtool-everyother"].version == "2.5"
    assert pm.registry("sparse_selectors").entry("every_other").plugin == "lsgtool-everyother"
    pm.check_pending()
    app = create_app(pm)
    result = runner.invoke(app, ["hello", "--name", "lsg"])
    assert result.exit_code == 0 and result.stdout == "hello lsg\n"
    listing = json.loads(runner.invoke(app, ["plugins", "--json"]).stdout)
    plugin = next(p for p in listing["plugins"] if p["name"] == "lsgtool-everyother")
    assert plugin["version"] == "2.5" and plugin["origin"].startswith("entry point lsgtool:")
    assert plugin["registers"] == {"sparse_selectors": ["every_other"], "commands": ["hello"]}


def test_env_switch_disables_or_selects_installed_plugins(install_plugin, monkeypatch):
    install_plugin("lsgtool-everyother", "everyother_mod2", SELECTOR_PLUGIN)
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "")
    assert "every_other" not in make_plugin_manager().registry("sparse_selectors")
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "something-else")
    assert "every_other" not in make_plugin_manager().registry("sparse_selectors")
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "lsgtool-everyother")
    assert "every_other" in make_plugin_manager().registry("sparse_selectors")


def test_broken_plugin_is_reported_and_cli_keeps_working(install_plugin, monkeypatch, runner):
    install_plugin("lsgtool-broken", "broken_mod", "import not_a_module_that_exists\n")
    install_plugin("lsgtool-typo", "typo_mod", SELECTOR_PLUGIN.replace("register_commands", "register_comands"))
    monkeypatch.delenv("LSGTOOL_LOAD_PLUGINS")
    pm = make_plugin_manager()
    reasons = {f.name: f.reason for f in pm.failures}
    assert "ModuleNotFoundError" in reasons["lsgtool-broken"]
    assert "register_comands" in reasons["lsgtool-typo"]
    pm.check_pending()
    result = runner.invoke(create_app(pm), ["plugins"])
    assert result.exit_code == 0
    assert result.stderr.count("plugin 'lsgtool-broken' (lsgtool-broken) failed to load") == 1  # once per run
    assert "not_a_module_that_exists" in result.stderr
    assert "failed to load: lsgtool-broken" in result.stdout


class _Clash:
    @hookimpl
    def register_sparse_selectors(self, register):
        register("norm", lambda inputs: None)


def test_name_clash_keeps_the_builtin_skips_the_plugin_and_is_reported_once():
    from lsgtool.core.lsg.selectors import BUILTIN_SELECTORS

    pm = make_plugin_manager(load_installed=False)
    pm.register(_Clash(), name="lsgtool-clash")
    selectors = pm.registry("sparse_selectors")
    assert selectors.entry("norm").plugin == "lsgtool.plugins.builtins" and selectors["norm"] is BUILTIN_SELECTORS["norm"]
    assert "lsh" in selectors  # the rest of the family works
    pm.unregister(name="lsgtool-clash")
    pm.register(_Clash(), name="lsgtool-clash")
    pm.registry("sparse_selectors")  # collected again: the problem is not repeated
    assert len(pm.problems) == 1
    assert "'lsgtool.plugins.builtins' and 'lsgtool-clash'" in pm.problems[0] and "Skipped" in pm.problems[0]


def test_a_clash_does_not_stop_commands_that_do_not_use_the_name(runner, tiny_folder, tmp_path):
    pm = make_plugin_manager(load_installed=False)
    pm.register(_Clash(), name="lsgtool-clash")
    result = runner.invoke(create_app(pm), ["convert", str(tiny_folder), "--out", str(tmp_path / "o"),
                                            "--max-length", "128", "--block", "16", "--sparse", "norm"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("Warning: sparse selector 'norm' is registered by both") == 1


def test_clash_is_listed_by_plugins_command(runner):
    pm = make_plugin_manager(load_installed=False)
    pm.register(_Clash(), name="lsgtool-clash")
    result = runner.invoke(create_app(pm), ["plugins", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["clashes"] == ["sparse selector 'norm': 'lsgtool.plugins.builtins' and 'lsgtool-clash'"]


class _Commands:
    @hookimpl
    def register_commands(self, register):
        register("plugins", lambda: None)


def test_command_clash_keeps_the_builtin_command(runner):
    pm = make_plugin_manager(load_installed=False)
    pm.register(_Commands(), name="lsgtool-dup")
    result = runner.invoke(create_app(pm), ["plugins", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["plugins"]  # the built-in `plugins` ran
    assert "'lsgtool.commands' and 'lsgtool-dup'" in result.stderr


class _BadName:
    @hookimpl
    def register_sparse_selectors(self, register):
        register("Top K", lambda inputs: None)


def test_invalid_registration_names_the_plugin_and_is_skipped():
    pm = make_plugin_manager(load_installed=False)
    pm.register(_BadName(), name="lsgtool-badname")
    assert "norm" in pm.registry("sparse_selectors") and "Top K" not in pm.registry("sparse_selectors")
    assert "plugin 'lsgtool-badname' registered an invalid sparse selector name 'Top K'" in pm.problems[0]


def test_a_registry_without_a_manager_still_refuses_a_clash():
    from lsgtool.core.families import FAMILIES
    from lsgtool.core.registry import Registry

    registry = Registry(FAMILIES["sparse_selectors"])
    registry.add("x", lambda inputs: None, "a")
    with pytest.raises(PluginError, match="registered by both 'a' and 'b'"):
        registry.add("x", lambda inputs: None, "b")


def test_load_plugins_variable_naming_no_installed_plugin_is_reported(monkeypatch, runner):
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "nosuchplugin")
    pm = make_plugin_manager()
    assert any("LSGTOOL_LOAD_PLUGINS names 'nosuchplugin'" in p for p in pm.problems)
    result = runner.invoke(create_app(pm), ["plugins"])
    assert result.stderr.count("Warning: LSGTOOL_LOAD_PLUGINS names 'nosuchplugin'") == 1


def test_registry_require_lists_available_names():
    from lsgtool.core.errors import UsageError

    registry = make_plugin_manager(load_installed=False).registry("sparse_selectors")
    with pytest.raises(UsageError) as info:
        registry.require("topk")
    assert info.value.message == "unknown sparse selector 'topk'."
    assert "block_stride, bos_pooling, lsh, none, norm, pooling, stride" in info.value.hint
