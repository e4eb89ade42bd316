"""Built-in registrations: the same hooks a third-party plugin implements."""

from lsgtool.plugins.hookspecs import hookimpl


@hookimpl
def register_sparse_selectors(register):
    from lsgtool.core.lsg.selectors import BUILTIN_SELECTORS

    for name, selector in BUILTIN_SELECTORS.items():
        register(name, selector)


@hookimpl
def register_architectures(register):
    from lsgtool.core.convert.adapters import OFFICIAL

    for model_type, adapter in OFFICIAL.items():
        register(model_type.replace("-", "_"), adapter)
