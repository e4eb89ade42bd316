"""Collect what plugins register, hook by hook, into the registries of ``lsgtool.core.registry``.

Core owns the selector, SSM-variant, architecture and preset registries; commands are the CLI's own
family and live here. Each family is filled by calling every implementation of its hook. What is not kept (a
name or object ``Registry.add`` refuses, a name taken, everything from a hook that raised) is a ``Skipped``
whose reason is the one warning every command prints and ``lsgtool plugins`` lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lsgtool.core.errors import PluginError
from lsgtool.core.families import FAMILIES as CORE_FAMILIES
from lsgtool.core.registry import PRESET_NAME, Family, Registry

COMMANDS = Family("commands", "command", PRESET_NAME)
FAMILIES: dict[str, Family] = {**CORE_FAMILIES, "commands": COMMANDS}
HOOKS = {key: f"register_{key}" for key in FAMILIES}


@dataclass(frozen=True)
class Skipped:
    """Something a plugin registered that is not used, and why."""

    family: str
    plugin: str
    kind: str  # "invalid" (Registry.add refused the name or the object), "clash" (name taken), "hook_error"
    reason: str  # the warning, naming the plugin; the same text everywhere it is shown
    name: str | None = None  # None for a hook error: nothing the hook registered is used
    owner: str | None = None  # for a clash: the plugin whose registration was kept


@dataclass
class Collected:
    """One family's registry and what was skipped while filling it."""

    registry: Registry
    skipped: list[Skipped] = field(default_factory=list)


def collect(pm, family_key: str) -> Collected:
    """Call every implementation of the family's hook and gather what each registers: built-ins first, so a
    plugin's name that clashes with a built-in is the one skipped. A clashing or malformed registration, or all
    of a hook that raised, is skipped and reported once (``pm.problem``); the rest of the family works."""
    collected = Collected(Registry(FAMILIES[family_key]))
    for impl in _builtins_first(pm, HOOKS[family_key]):
        offered: list[tuple[object, object]] = []
        try:
            impl.function(lambda name, obj: offered.append((name, obj)))
        except Exception as exc:  # a broken plugin must not take the built-ins down; a broken built-in is our bug
            if _is_builtin(pm, impl.plugin_name):
                raise
            collected.skipped.append(_hook_error(pm, family_key, impl.plugin_name, exc))
            continue
        for name, obj in offered:
            refused = _add(collected.registry, name, obj, impl.plugin_name)
            if refused is not None:
                collected.skipped.append(refused)
    for skipped in collected.skipped:
        pm.problem(skipped.reason)
    return collected


def _is_builtin(pm, plugin: str) -> bool:
    return getattr(pm.sources.get(plugin), "origin", "") == "builtin"


def _builtins_first(pm, hook: str) -> list:
    return sorted(getattr(pm.hook, hook).get_hookimpls(), key=lambda impl: not _is_builtin(pm, impl.plugin_name))


def _add(registry: Registry, name, obj, plugin: str) -> Skipped | None:
    """Add one registration (``Registry.add`` is the one validation); a refusal as a ``Skipped``."""
    owner = registry.entry(name).plugin if isinstance(name, str) and name in registry else None
    try:
        registry.add(name, obj, plugin)
    except PluginError as exc:
        reason = f"{exc.message} Skipped that registration of {plugin!r}" + (f"; {exc.hint}" if exc.hint else ".")
        return Skipped(registry.family.key, plugin, "clash" if owner else "invalid", reason, str(name), owner)
    return None


def _hook_error(pm, family_key: str, plugin: str, exc: Exception) -> Skipped:
    error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    reason = (f"plugin {plugin!r} ({pm.describe(plugin)}) failed in its hook {HOOKS[family_key]}: {error}. Skipped "
              f"every {FAMILIES[family_key].noun} it registers; the built-ins and other plugins keep working. "
              f"{pm.how_to_leave_out(plugin)}")
    return Skipped(family_key, plugin, "hook_error", reason)


@dataclass
class Inventory:
    """What each plugin registers per family (names in use), and every registration skipped."""

    by_plugin: dict[str, dict[str, list[str]]]
    skipped: list[Skipped]

    @property
    def clashes(self) -> list[str]:
        return [f"{FAMILIES[s.family].noun} {s.name!r}: {s.owner!r} and {s.plugin!r}"
                for s in self.skipped if s.kind == "clash"]

    @property
    def errors(self) -> list[str]:
        return [s.reason for s in self.skipped if s.kind == "hook_error"]


def inventory(pm) -> Inventory:
    """Every family collected (as commands collect them): what each plugin registers, and what was skipped."""
    by_plugin: dict[str, dict[str, list[str]]] = {name: {} for name, _ in pm.list_name_plugin()}
    skipped: list[Skipped] = []
    for key in FAMILIES:
        registry = pm.registry(key)
        for name in registry:
            by_plugin.setdefault(registry.entry(name).plugin, {}).setdefault(key, []).append(name)
        skipped += pm.skipped(key)
    return Inventory(by_plugin, skipped)
