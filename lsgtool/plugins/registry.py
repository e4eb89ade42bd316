"""Collect what plugins register into named, validated registries that remember who gave what."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable

from lsgtool.core.errors import PluginError, UsageError

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_COMMAND_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass(frozen=True)
class Family:
    """One kind of registrable thing: its hook, the noun used in messages, and its validator."""

    key: str
    hook: str
    noun: str
    name_pattern: re.Pattern = _NAME
    check: Callable[[Any], str | None] = lambda obj: None


def _callable(obj: Any) -> str | None:
    return None if callable(obj) else f"expected a callable, got {type(obj).__name__}"


def _adapter(obj: Any) -> str | None:
    from lsgtool.core.convert.adapters import ArchitectureAdapter

    return None if isinstance(obj, ArchitectureAdapter) else f"expected an ArchitectureAdapter, got {type(obj).__name__}"


def _preset(obj: Any) -> str | None:
    from lsgtool.core.presets import ModelPreset

    return None if isinstance(obj, ModelPreset) else f"expected a ModelPreset, got {type(obj).__name__}"


FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        Family("sparse_selectors", "register_sparse_selectors", "sparse selector", check=_callable),
        Family("architectures", "register_architectures", "architecture", check=_adapter),
        Family("ssm_variants", "register_ssm_variants", "SSM variant", check=_callable),
        Family("presets", "register_presets", "model preset", _COMMAND_NAME, _preset),
        Family("commands", "register_commands", "command", _COMMAND_NAME, _callable),
    )
}


@dataclass(frozen=True)
class Entry:
    name: str
    obj: Any
    plugin: str


class Registry(Mapping[str, Any]):
    """Read-only name → object mapping for one family; ``entry(name).plugin`` says who registered it."""

    def __init__(self, family: Family, entries: dict[str, Entry]):
        self.family = family
        self._entries = dict(sorted(entries.items()))

    def __getitem__(self, name: str) -> Any:
        return self._entries[name].obj

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, name: str) -> Entry:
        return self._entries[name]

    def require(self, name: str) -> Any:
        """The object registered as ``name``, or a UsageError listing the valid names."""
        if name in self._entries:
            return self._entries[name].obj
        available = ", ".join(self._entries) or "(none)"
        raise UsageError(
            f"unknown {self.family.noun} {name!r}.",
            f"available: {available} — install more with `pip install lsgtool-<name>` "
            "and check `lsgtool plugins`.",
        )


def collect(pm, family_key: str) -> Registry:
    """Call every implementation of the family's hook and gather what each registers."""
    family = FAMILIES[family_key]
    entries: dict[str, Entry] = {}
    for impl in getattr(pm.hook, family.hook).get_hookimpls():
        plugin = impl.plugin_name

        def register(name: str, obj: Any, _plugin: str = plugin) -> None:
            if not isinstance(name, str) or not family.name_pattern.match(name):
                raise PluginError(
                    f"plugin {_plugin!r} registered an invalid {family.noun} name {name!r}.",
                    f"names must match {family.name_pattern.pattern}.",
                )
            problem = family.check(obj)
            if problem:
                raise PluginError(f"plugin {_plugin!r} registered {family.noun} {name!r}: {problem}.")
            if name in entries:
                raise PluginError(
                    f"{family.noun} {name!r} is registered by both {entries[name].plugin!r} and {_plugin!r}.",
                    "uninstall one of the two plugins, or leave one out with LSGTOOL_LOAD_PLUGINS.",
                )
            entries[name] = Entry(name, obj, _plugin)

        impl.function(register)
    return Registry(family, entries)


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
    for family in FAMILIES.values():
        for impl in getattr(pm.hook, family.hook).get_hookimpls():
            names = by_plugin.setdefault(impl.plugin_name, {}).setdefault(family.key, [])
            try:
                impl.function(lambda name, obj, _names=names: _names.append(name))
            except Exception as exc:
                errors.append(f"{impl.plugin_name}: {family.hook} raised {type(exc).__name__}: {exc}")
            for name in names:
                first = owners.setdefault((family.key, name), impl.plugin_name)
                if first != impl.plugin_name:
                    clashes.append(f"{family.noun} {name!r}: {first!r} and {impl.plugin_name!r}")
    return Inventory(by_plugin, clashes, errors)
