"""Collect what plugins register, hook by hook, into the registries of ``lsgtool.core.registry``.

Core owns the selector, SSM-variant, architecture and preset registries; commands are the CLI's own
family and live here. Each family is filled by calling every implementation of its hook.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsgtool.core.errors import PluginError
from lsgtool.core.families import FAMILIES as CORE_FAMILIES
from lsgtool.core.registry import PRESET_NAME, Family, Registry

COMMANDS = Family("commands", "command", PRESET_NAME)
FAMILIES: dict[str, Family] = {**CORE_FAMILIES, "commands": COMMANDS}
HOOKS = {key: f"register_{key}" for key in FAMILIES}


def collect(pm, family_key: str) -> Registry:
    """Call every implementation of the family's hook and gather what each registers: built-ins first, so a
    plugin's name that clashes with a built-in is the one skipped. A clashing or malformed registration is
    skipped and reported once (``pm.problem``); the rest of the family works."""
    registry = Registry(FAMILIES[family_key])
    sources = getattr(pm, "sources", {})
    impls = sorted(getattr(pm.hook, HOOKS[family_key]).get_hookimpls(),
                   key=lambda impl: getattr(sources.get(impl.plugin_name), "origin", "") != "builtin")
    for impl in impls:
        impl.function(lambda name, obj, _plugin=impl.plugin_name: _add(pm, registry, name, obj, _plugin))
    return registry


def _add(pm, registry: Registry, name, obj, plugin: str) -> None:
    try:
        registry.add(name, obj, plugin)
    except PluginError as exc:
        report = getattr(pm, "problem", None)
        if report is None:
            raise
        report(f"{exc.message} Skipped that registration of {plugin!r}" + (f"; {exc.hint}" if exc.hint else "."))


@dataclass
class Inventory:
    """What each plugin registers per family, plus names claimed twice and hooks that raised."""

    by_plugin: dict[str, dict[str, list[str]]]
    clashes: list[str]
    errors: list[str]


def inventory(pm) -> Inventory:
    """Like ``collect`` for every family, but records problems instead of raising (for ``lsgtool plugins``)."""
    by_plugin: dict[str, dict[str, list[str]]] = {name: {} for name, _ in pm.list_name_plugin()}
    owners: dict[tuple[str, str], str] = {}
    clashes: list[str] = []
    errors: list[str] = []
    for key, family in FAMILIES.items():
        for impl in getattr(pm.hook, HOOKS[key]).get_hookimpls():
            names = by_plugin.setdefault(impl.plugin_name, {}).setdefault(key, [])
            try:
                impl.function(lambda name, obj, _names=names: _names.append(name))
            except Exception as exc:
                errors.append(f"{impl.plugin_name}: {HOOKS[key]} raised {type(exc).__name__}: {exc}")
            for name in names:
                first = owners.setdefault((key, name), impl.plugin_name)
                if first != impl.plugin_name:
                    clashes.append(f"{family.noun} {name!r}: {first!r} and {impl.plugin_name!r}")
    return Inventory(by_plugin, clashes, errors)
