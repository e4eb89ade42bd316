"""Plugin system: hookspecs, the manager and the built-in registrations."""

from lsgtool.plugins.hookspecs import hookimpl
from lsgtool.plugins.manager import install_default, make_plugin_manager

__all__ = ["hookimpl", "install_default", "make_plugin_manager"]
