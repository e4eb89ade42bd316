"""The registries ``lsgtool.core`` owns: sparse selectors, SSM variants, architecture adapters, model presets.

Core says what each registry holds and checks it (``lsgtool.core.families``); it never looks for plugins. The plugin layer fills a
``Registries`` set from the built-in registrations and installed plugins (through the same hooks) and makes
it the active one with ``use``. Library code reads the active set through ``get_registry(family)``; if
none was made active, the first read asks the installer the package set up (``set_installer``) for one,
so ``import lsgtool`` and the Python API see installed plugins without the CLI. Modules and configs
resolve a name once, when they are built, never per call.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lsgtool.core.errors import PluginError, UsageError

NAME = re.compile(r"^[a-z][a-z0-9_]*$")
PRESET_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def _callable(obj: Any) -> str | None:
    return None if callable(obj) else f"expected a callable, got {type(obj).__name__}"


@dataclass(frozen=True)
class Family:
    """One kind of registrable thing: its key, the noun used in messages and how entries are checked.

    ``check`` runs when something is registered (cheap: types); ``contract`` once, on first use of an
    entry (may build it: the SSM-variant contract needs torch).
    """

    key: str
    noun: str
    name_pattern: re.Pattern = NAME
    check: Callable[[Any], str | None] = _callable
    contract: Callable[[Any], str | None] | None = None


@dataclass(frozen=True)
class Entry:
    name: str
    obj: Any
    plugin: str


class Registry(Mapping[str, Any]):
    """Name → object for one family; ``entry(name).plugin`` says who registered it."""

    def __init__(self, family: Family):
        self.family = family
        self._entries: dict[str, Entry] = {}
        self._honoured: set[str] = set()  # entries whose contract was checked

    def add(self, name: str, obj: Any, plugin: str) -> None:
        """Register ``obj`` as ``name`` for ``plugin``; a bad name or object, or a taken name, is a PluginError."""
        family = self.family
        if not isinstance(name, str) or not family.name_pattern.match(name):
            raise PluginError(f"plugin {plugin!r} registered an invalid {family.noun} name {name!r}.",
                              f"names must match {family.name_pattern.pattern}.")
        if name in self._entries:  # before the object's check: a taken name is a clash whatever comes with it
            raise PluginError(
                f"{family.noun} {name!r} is registered by both {self._entries[name].plugin!r} and {plugin!r}.",
                "uninstall one of the two plugins, or leave one out with LSGTOOL_LOAD_PLUGINS.",
            )
        problem = family.check(obj)
        if problem:
            raise PluginError(f"plugin {plugin!r} registered {family.noun} {name!r}: {problem}.")
        self._entries[name] = Entry(name, obj, plugin)

    def __getitem__(self, name: str) -> Any:
        return self._entries[name].obj

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, name: str) -> Entry:
        return self._entries[name]

    def require(self, name: str) -> Any:
        """The object registered as ``name`` (its contract checked on first use), or a UsageError listing names."""
        if name not in self._entries:
            available = ", ".join(self) or "(none)"
            raise UsageError(
                f"unknown {self.family.noun} {name!r}.",
                f"available: {available} — install more with `pip install lsgtool-<name>` and check `lsgtool plugins`.",
            )
        entry = self._entries[name]
        if self.family.contract is not None and name not in self._honoured:
            problem = self.family.contract(entry.obj)
            if problem:
                raise PluginError(f"{self.family.noun} {name!r} of plugin {entry.plugin!r} breaks the hook contract: "
                                  f"{problem}.", "see the hook's docstring in lsgtool/plugins/hookspecs.py.")
            self._honoured.add(name)
        return entry.obj


class Registries:
    """One set of the core registries; ``collect(family_key)`` gives each (and may cache it)."""

    def __init__(self, collect: Callable[[str], Registry]):
        self._collect = collect

    def __getitem__(self, family: str) -> Registry:
        return self._collect(family)  # an unknown family is the collector's KeyError


_lock = threading.RLock()
_active: Registries | None = None
_installer: Callable[[], Registries] | None = None


def set_installer(installer: Callable[[], Registries] | None) -> None:
    """What fills the registries when library code reads them before anything was made active."""
    global _installer
    _installer = installer


def use(registries: Registries | None) -> Registries | None:
    """Make ``registries`` the active set (None: let the next read install a fresh one); returns the previous."""
    global _active
    with _lock:
        previous, _active = _active, registries
    return previous


def active() -> Registries:
    """The active set, installed on first use."""
    global _active
    with _lock:
        if _active is None:
            if _installer is None:
                raise PluginError("no registries are active and no installer is set.",
                                  "import lsgtool (it installs the plugin layer) or call lsgtool.core.registry.use().")
            _active = _installer()
        return _active


def get_registry(family: str) -> Registry:
    """The active registry of ``family`` (``sparse_selectors``, ``ssm_variants``, ``architectures``, ``presets``)."""
    return active()[family]
