"""The plugin manager: built-in plugins first, then installed ones from the ``lsgtool`` entry-point group.

A manager fills ``lsgtool.core``'s registries (``registries()``, made the ones library code reads with
``activate()``); the CLI activates its manager at start-up, and ``import lsgtool`` sets ``install_default``
as what fills them on first use in library code. Environment switch: ``LSGTOOL_LOAD_PLUGINS`` unset loads every installed plugin; set to an empty string it
loads none (built-ins only); set to ``a,b`` it loads only the plugins with those entry-point or
distribution names.
"""

from __future__ import annotations

import importlib
import logging
import os
import shlex
from dataclasses import dataclass
from importlib import metadata

import pluggy

from lsgtool.core import registry as core_registry
from lsgtool.core.registry import Registries, Registry
from lsgtool.plugins import hookspecs
from lsgtool.plugins.registry import FAMILIES, Collected, Skipped, collect

log = logging.getLogger("lsgtool.plugins")

ENV_LOAD_PLUGINS = "LSGTOOL_LOAD_PLUGINS"
ENTRY_POINT_GROUP = "lsgtool"
BUILTIN_PLUGINS = ("lsgtool.plugins.builtins", "lsgtool.commands")


@dataclass(frozen=True)
class PluginSource:
    """Where a loaded plugin came from."""

    distribution: str
    version: str
    origin: str  # "builtin" or "entry point <group>:<value>"


@dataclass(frozen=True)
class PluginFailure:
    """An installed plugin that could not be loaded, and why."""

    name: str
    distribution: str
    reason: str


class LsgtoolPluginManager(pluggy.PluginManager):
    """A pluggy manager that also remembers plugin origins, load failures and collected registries."""

    def __init__(self) -> None:
        super().__init__("lsgtool")
        self.add_hookspecs(hookspecs)
        self.sources: dict[str, PluginSource] = {}
        self.failures: list[PluginFailure] = []
        self.problems: list[str] = []  # skipped registrations (clash, malformed, hook raised), unknown names asked for
        self.announce = False  # log problems as they are found (the CLI prints those found before it starts once)
        self._collected: dict[str, Collected] = {}

    def problem(self, message: str) -> None:
        """Record a problem once (re-collecting a registry finds it again)."""
        if message not in self.problems:
            self.problems.append(message)
            if self.announce:
                log.warning(message)

    def registry(self, family: str) -> Registry:
        """The registry of one family (``sparse_selectors``, ``commands``, ...), collected once."""
        return self._collect(family).registry

    def skipped(self, family: str) -> list[Skipped]:
        """What collecting ``family`` skipped (invalid, clashing, from a hook that raised), each with its reason."""
        return list(self._collect(family).skipped)

    def _collect(self, family: str) -> Collected:
        if family not in FAMILIES:
            raise KeyError(f"unknown plugin family {family!r}; known: {', '.join(FAMILIES)}")
        if family not in self._collected:
            self._collected[family] = collect(self, family)
        return self._collected[family]

    def collect_all(self) -> None:
        """Collect every family now, so ``problems`` holds everything skipped (``lsgtool doctor``)."""
        for family in FAMILIES:
            self._collect(family)

    def describe(self, plugin: str) -> str:
        """Where ``plugin`` comes from, for messages: ``distribution NAME VERSION`` or ``registered in code``."""
        source = self.sources.get(plugin)
        return f"distribution {source.distribution} {source.version}" if source else "registered in code"

    def how_to_leave_out(self, plugin: str) -> str:
        """The next step for a user whose plugin is broken: uninstall it, or load the others only."""
        source = self.sources.get(plugin)
        if source is None or not source.origin.startswith("entry point"):
            return f"Unregister it (`pm.unregister(name={plugin!r})`)."
        others = sorted(name for name, s in self.sources.items() if s.origin != "builtin" and name != plugin)
        keep = f"`{ENV_LOAD_PLUGINS}={shlex.quote(','.join(others))}` loads " + ("the others only" if others else
                                                                                 "the built-ins only")
        return f"Uninstall it (`pip uninstall {source.distribution}`), or leave it out: {keep}."

    def registries(self) -> Registries:
        """This manager's core registries (each collected on first use, re-collected after register/unregister)."""
        return Registries(self.registry)

    def activate(self) -> Registries | None:
        """Make this manager's registries the ones ``lsgtool.core`` reads; returns the previously active set."""
        return core_registry.use(self.registries())

    def register(self, plugin, name=None):
        self._collected.clear()
        return super().register(plugin, name)

    def unregister(self, plugin=None, name=None):
        self._collected.clear()
        return super().unregister(plugin, name)


def _wanted() -> set[str] | None:
    value = os.environ.get(ENV_LOAD_PLUGINS)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def load_entry_point_plugins(pm: LsgtoolPluginManager, only: set[str] | None = None) -> None:
    """Register installed plugins; one that fails to import or validate is recorded and skipped."""
    installed: set[str] = set()
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist else "?"
        version = ep.dist.version if ep.dist else "?"
        installed |= {ep.name, dist}
        if only is not None and ep.name not in only and dist not in only:
            continue
        if pm.has_plugin(ep.name):
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # a broken plugin must never take the CLI down
            _record_failure(pm, ep.name, dist, exc)
            continue
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            pm.unregister(name=ep.name)
            _record_failure(pm, ep.name, dist, exc)
            continue
        pm.sources[ep.name] = PluginSource(dist, version, f"entry point {ENTRY_POINT_GROUP}:{ep.value}")
    for name in sorted((only or set()) - installed):
        pm.problem(f"{ENV_LOAD_PLUGINS} names {name!r}, but no installed plugin is called that (installed: "
                   f"{', '.join(sorted(installed)) or 'none'}); it was ignored.")


def _record_failure(pm: LsgtoolPluginManager, name: str, dist: str, exc: BaseException) -> None:
    reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
    pm.failures.append(PluginFailure(name, dist, reason))
    if pm.announce:
        log.warning("plugin %r (%s) failed to load and was skipped: %s", name, dist, reason)


def make_plugin_manager(load_installed: bool | None = None, announce: bool = False) -> LsgtoolPluginManager:
    """A fresh manager with the built-in plugins and, unless disabled, the installed ones; ``announce`` logs
    failures and problems (on the ``lsgtool.plugins`` logger) as they are found."""
    from lsgtool.core.writing import lsgtool_version  # package metadata: nothing from the package root above

    pm = LsgtoolPluginManager()
    version = lsgtool_version()
    pm.announce = announce
    for module_name in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
        pm.sources[module_name] = PluginSource("lsgtool", version, "builtin")
    wanted = _wanted()
    if load_installed is None:
        load_installed = wanted is None or bool(wanted)
    if load_installed:
        load_entry_point_plugins(pm, only=wanted)
    return pm


def install_default() -> Registries:
    """A manager with the built-ins and the installed plugins (``LSGTOOL_LOAD_PLUGINS`` honoured): its registries."""
    return make_plugin_manager(announce=True).registries()
