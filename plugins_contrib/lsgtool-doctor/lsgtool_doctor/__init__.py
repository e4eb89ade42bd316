"""``lsgtool doctor``: what a bug report needs — versions, device, threads, memory, loaded plugins."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from lsgtool.plugin_api import JsonOption, available_mb, compatibility_report, emit, hookimpl, state


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_runs_bf16() -> bool:
    """Whether this CPU runs a bfloat16 matmul (torch runs it on any x86-64 CPU with AVX2; natively with
    AVX512-BF16/AMX, see cpu_capability)."""
    import torch

    try:
        x = torch.ones(4, 4, dtype=torch.bfloat16)
        return bool((x @ x).float().sum().item() == 64.0)
    except RuntimeError:
        return False


def _accelerated() -> dict[str, str]:
    """Each reduced precision and whether this CPU computes it faster than float32 (and with what): what
    ``--dtype`` is worth asking for here (lsgtool runs float32 where a precision is not accelerated)."""
    from lsgtool import plugin_api

    try:
        found, instructions = plugin_api.cpu_accelerated(), plugin_api.INSTRUCTIONS
    except AttributeError:  # an lsgtool older than the report
        return {"all": "unknown (this lsgtool does not say)"}
    said = {p: f"yes ({', '.join(found[p])})" if p in found else f"no (none of {', '.join(names)})"
            for p, names in instructions.items()}
    missing = getattr(plugin_api, "int8_missing", lambda: None)()
    if "int8" in found and missing:
        said["int8"] += f"; --dtype int8 needs torchao: {missing}"
    return said


def collect(pm) -> dict[str, Any]:
    import torch

    cuda = torch.cuda.is_available()
    pm.collect_all()  # every registry, so plugin_problems names every plugin hook that raised or was refused
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": {d: _version(d) for d in ("lsgtool", "torch", "transformers", "datasets", "typer", "pluggy")},
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "cuda": torch.version.cuda if cuda else None,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "bf16_cpu": _cpu_runs_bf16(),
        "cpu_accelerates": _accelerated(),
        "bf16_cuda": bool(torch.cuda.is_bf16_supported()) if cuda else "no CUDA device",
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "available_memory_gib": round(available_mb("cpu") / 1024, 2),
        "plugins": sorted(name for name, _ in pm.list_name_plugin()),
        "plugin_failures": [f"{f.name}: {f.reason}" for f in pm.failures],
        "plugin_problems": list(pm.problems),
        "compatibility": compatibility_report(),
    }


def doctor(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Report versions, device, threads, available memory and loaded plugins (paste it into bug reports)."""
    emit(collect(state(ctx).pm), as_json, _render)


def _render(console: Console, data: dict[str, Any]) -> None:
    table = Table(title="lsgtool doctor", show_header=False)
    table.add_column("what")
    table.add_column("value")
    for key, value in data.items():
        if key == "compatibility":
            for dist, v in value["versions"].items():
                mark = {True: "tested", False: "OUTSIDE the tested range", None: "-"}[v["within"]]
                table.add_row(f"{dist} (tested {v['tested']})", f"{v['installed']}: {mark}")
            table.add_row("broken contracts", "\n".join(value["broken_contracts"]) or "none")
            table.add_row("advice", value["advice"])
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(value) or "-"
        table.add_row(key.replace("_", " "), str(value))
    console.print(table)


@hookimpl
def register_commands(register):
    register("doctor", doctor)
