"""Register the "lsg" model type with transformers as soon as transformers is imported.

``import lsgtool`` must make ``transformers.AutoModel*.from_pretrained`` understand converted folders, yet
must not import transformers itself (``lsgtool --help`` stays fast). If transformers is already imported
we register now; otherwise a one-shot import hook registers right after transformers finishes importing.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys


MODULES = ("lsgtool.core.load.auto", "lsgtool.core.ssm.locost")  # each registers itself when imported


def _register() -> None:
    """Import ``MODULES``; what that imports of transformers imports torchao where it is installed, whose notes on
    its GPU libraries are not shown (``precision.hidden_torchao_notes``)."""
    import importlib
    import warnings

    from lsgtool.core.precision import hidden_torchao_notes

    with hidden_torchao_notes():
        for name in MODULES:
            module = sys.modules.get(name)
            if module is not None and getattr(module.__spec__, "_initializing", False):
                continue  # this module's own import pulled transformers in; it registers at its end
            try:
                importlib.import_module(name)
            except Exception as exc:  # never break the user's `import transformers`
                warnings.warn(f"lsgtool could not register its model types with transformers: {exc}", stacklevel=2)


class _AfterTransformers(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "transformers":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            _register()

        spec.loader.exec_module = exec_then_register
        return spec


def install() -> None:
    if "transformers" in sys.modules:
        _register()
    elif not any(isinstance(finder, _AfterTransformers) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterTransformers())
