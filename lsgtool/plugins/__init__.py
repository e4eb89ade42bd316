"""Plugin system: hookspecs, the manager and the built-in registrations."""

from lsgtool.plugins.hookspecs import hookimpl
from lsgtool.plugins.manager import (
    default_plugin_manager,
    get_registry,
    make_plugin_manager,
    set_default_plugin_manager,
)

__all__ = [
    "default_plugin_manager",
    "get_registry",
    "hookimpl",
    "make_plugin_manager",
    "set_default_plugin_manager",
]
