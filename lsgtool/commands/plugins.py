"""``lsgtool plugins``: which plugins are loaded, where they come from and what each registers."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from lsgtool.commands._common import JsonOption, emit, state
from lsgtool.plugins.registry import FAMILIES, inventory


def plugins_command(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List loaded plugins (built-in and installed) and the selectors, commands, ... each one adds."""
    pm = state(ctx).pm
    inv = inventory(pm)
    data: dict[str, Any] = {
        "plugins": [
            {
                "name": name,
                "distribution": pm.sources[name].distribution if name in pm.sources else "?",
                "version": pm.sources[name].version if name in pm.sources else "?",
                "origin": pm.sources[name].origin if name in pm.sources else "registered in code",
                "registers": {family: sorted(names) for family, names in inv.by_plugin.get(name, {}).items() if names},
                "skipped": [{"family": s.family, "name": s.name, "kind": s.kind, "reason": s.reason}
                            for s in inv.skipped if s.plugin == name],
            }
            for name, _ in sorted(pm.list_name_plugin())
        ],
        "presets": _presets(pm),
        "failures": [vars(failure) for failure in pm.failures],
        "clashes": inv.clashes,
        "errors": inv.errors,
    }
    emit(data, as_json, _render)


def _presets(pm) -> list[dict[str, Any]]:
    """What each preset is and whether its weights are on this machine (no download, no model loading)."""
    from lsgtool.core.presets import weights_here

    presets = pm.registry("presets")  # a broken preset plugin's are skipped, and listed under its plugin
    out = []
    for name in presets:
        preset = presets[name]
        out.append({"name": name, "architecture": preset.architecture, "description": preset.description,
                    "weights": preset.weights, "on_this_machine": weights_here(preset), "hint": preset.hint})
    return out


def _render(console: Console, data: dict[str, Any]) -> None:
    table = Table(title="lsgtool plugins")
    for column in ("plugin", "distribution", "version", "from", "registers"):
        table.add_column(column)
    for plugin in data["plugins"]:
        registers = "\n".join(
            [f"{FAMILIES[family].noun}s: {', '.join(names)}" for family, names in plugin["registers"].items()]
            + [f"SKIPPED {_what(skipped)} (see below)" for skipped in plugin["skipped"]]
        )
        origin = "installed" if plugin["origin"].startswith("entry point") else plugin["origin"]
        table.add_row(plugin["name"], plugin["distribution"], plugin["version"], origin, registers or "-")
    console.print(table)
    if data["presets"]:
        presets = Table(title="model presets")
        for column in ("preset", "what it is, what it is good for", "weights here"):
            presets.add_column(column)
        for preset in data["presets"]:
            here = "yes" if preset["on_this_machine"] else f"no: {preset['hint'] or 'not published'}"
            presets.add_row(preset["name"], preset["description"], here)
        console.print(presets)
    for failure in data["failures"]:
        console.print(f"failed to load: {failure['name']} ({failure['distribution']}): {failure['reason']}", markup=False)
    for plugin in data["plugins"]:
        for skipped in plugin["skipped"]:
            console.print(f"skipped: {skipped['reason']}", markup=False)


def _what(skipped: dict[str, Any]) -> str:
    """A skipped registration in a few words, for the table (the reason is printed below it)."""
    noun = FAMILIES[skipped["family"]].noun
    if skipped["kind"] == "hook_error":
        return f"every {noun}: its hook raised"
    return f"{noun} {skipped['name']!r}: " + ("name taken" if skipped["kind"] == "clash" else "invalid")
