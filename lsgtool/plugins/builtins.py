"""Built-in registrations: the same hooks a third-party plugin implements."""

from lsgtool.plugins.hookspecs import hookimpl


@hookimpl
def register_sparse_selectors(register):
    from lsgtool.core.lsg.selectors import BUILTIN_SELECTORS

    for name, selector in BUILTIN_SELECTORS.items():
        register(name, selector)
