import json
import os
from importlib import metadata

import pytest
import torch
from typer.testing import CliRunner

import lsgtool_doctor
from lsgtool.cli import create_app
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager


def _app(monkeypatch, through_entry_point: bool):
    if through_entry_point:
        monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "doctor")
        return create_app(make_plugin_manager())
    pm = make_plugin_manager(load_installed=False)
    pm.register(lsgtool_doctor, name="doctor")
    return create_app(pm)


def _installed() -> bool:
    return any(ep.name == "doctor" for ep in metadata.entry_points(group="lsgtool"))


@pytest.mark.parametrize("through_entry_point", [False, True])
def test_doctor_reports_json(monkeypatch, through_entry_point):
    if through_entry_point and not _installed():
        pytest.skip("lsgtool-doctor is not pip-installed here (CI installs it)")
    result = CliRunner().invoke(_app(monkeypatch, through_entry_point), ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["versions"]["torch"] == metadata.version("torch")
    assert data["threads"] == torch.get_num_threads()
    assert data["device"] == ("cpu" if not torch.cuda.is_available() else torch.cuda.get_device_name(0))
    assert "doctor" in data["plugins"] and "lsgtool.plugins.builtins" in data["plugins"]
    assert data["available_memory_gib"] > 0
    # bfloat16 on this CPU and on CUDA are separate facts: a CPU runs bf16 even where no GPU exists
    x = torch.ones(2, 2, dtype=torch.bfloat16)
    assert data["bf16_cpu"] is bool((x @ x).float().sum() == 8)
    assert data["bf16_cuda"] == (torch.cuda.is_bf16_supported() if torch.cuda.is_available() else "no CUDA device")
    assert data["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    # which precisions this CPU accelerates, as its flags say (Linux: /proc/cpuinfo)
    flags = next((line.split(":")[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")), None) \
        if os.path.exists("/proc/cpuinfo") else None
    if flags is not None:
        assert data["cpu_accelerates"]["bfloat16"].startswith("yes" if {"avx512_bf16", "amx_bf16"} & set(flags) else "no")
        assert data["cpu_accelerates"]["int8"].startswith(
            "yes" if {"avx512_vnni", "avx_vnni", "amx_int8"} & set(flags) else "no")


def test_doctor_table_and_plugins_listing(monkeypatch):
    app = _app(monkeypatch, through_entry_point=False)
    runner = CliRunner()
    table = runner.invoke(app, ["doctor"])
    assert table.exit_code == 0 and "available memory" in table.stdout
    listing = json.loads(runner.invoke(app, ["plugins", "--json"]).stdout)
    assert any(p["name"] == "doctor" and p["registers"] == {"commands": ["doctor"]} for p in listing["plugins"])


def test_doctor_states_the_tested_range_and_names_a_broken_contract(monkeypatch):
    """Installed against tested versions; a transformers whose T5Attention renamed `mask` is named, with advice."""
    from transformers.models.t5.modeling_t5 import T5Attention

    from packaging.version import Version

    from lsgtool.core import compat

    app, runner = _app(monkeypatch, through_entry_point=False), CliRunner()
    data = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)["compatibility"]
    low, high = compat.TESTED["transformers"]
    installed = metadata.version("transformers")
    assert data["versions"]["transformers"] == {"installed": installed, "tested": f"{low}–{high}",
                                                "within": Version(low) <= Version(installed) <= Version(high)}
    assert data["broken_contracts"] == []
    if all(v["within"] for v in data["versions"].values()):  # a newer release than CI last passed on says so
        assert data["advice"] == "everything is within the tested range."
    monkeypatch.setattr(T5Attention, "forward", lambda self, hidden_states, attention_mask=None: None)
    data = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)["compatibility"]
    assert any("T5Attention.forward no longer takes 'mask'" in text for text in data["broken_contracts"])
    assert data["advice"].startswith("install a tested transformers")
    table = runner.invoke(app, ["doctor"])
    assert table.exit_code == 0 and "broken contracts" in table.stdout and "tested 5.0.0" in table.stdout


class _RaisingSelectors:
    @hookimpl
    def register_sparse_selectors(self, register):
        raise RuntimeError("plugin bug at registration")


def test_doctor_names_a_plugin_whose_hook_raised():  # issue 29, item 14
    pm = make_plugin_manager(load_installed=False)
    pm.register(lsgtool_doctor, name="doctor")
    pm.register(_RaisingSelectors(), name="lsgtool-raiser")
    result = CliRunner().invoke(create_app(pm), ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    [problem] = json.loads(result.stdout)["plugin_problems"]
    assert problem.startswith("plugin 'lsgtool-raiser' (registered in code) failed in its hook register_sparse_selectors: "
                              "RuntimeError: plugin bug at registration.")
    assert "lsgtool-raiser" in json.loads(result.stdout)["plugins"]


@pytest.mark.parametrize("missing", [None, "torchao is not installed (No module named 'torchao')"])
def test_doctor_says_when_int8_is_accelerated_but_torchao_is_missing(monkeypatch, missing):
    from lsgtool import plugin_api
    from lsgtool.core import precision

    monkeypatch.setattr(precision, "_capabilities", lambda: {"avx512_vnni": True})
    monkeypatch.setattr(plugin_api, "int8_missing", lambda: missing, raising=False)  # what the plugin reads
    result = CliRunner().invoke(_app(monkeypatch, through_entry_point=False), ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    said = json.loads(result.stdout)["cpu_accelerates"]["int8"]
    assert said.startswith("yes (avx512_vnni)") and (f"--dtype int8 needs torchao: {missing}" in said) is bool(missing)
