"""``model_type: "lsg"``: converted folders that transformers' Auto classes load once lsgtool is imported.

``AutoConfig`` maps "lsg" to ``LSGModelConfig``; every ``AutoModel*`` class maps it to a loader that hands the
folder, the task and the caller's options to ``lsgtool.load``.
"""

from __future__ import annotations

from transformers import PretrainedConfig

from lsgtool.core.lsg.folder import MODEL_TYPE, TASKS
from lsgtool.core.errors import UsageError

_INTERNAL = ("_from_auto", "_commit_hash", "adapter_kwargs", "code_revision")


class LSGModelConfig(PretrainedConfig):
    """The configuration of an lsgtool-layout folder as AutoConfig reads it: the base config's keys, the LSG
    keys and ``base_model_type`` (``lsgtool.load`` builds the base model's own config from the same file)."""

    model_type = MODEL_TYPE

    def __init__(self, base_model_type: str = "bert", **kwargs):
        self.base_model_type = base_model_type
        super().__init__(**kwargs)


def _loader(auto_name: str, task: str) -> type:
    from transformers import PreTrainedModel

    class LSGAutoLoader(PreTrainedModel):
        config_class = LSGModelConfig

        @classmethod
        def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, **kwargs):
            from lsgtool.core.load import load

            if model_args:
                raise UsageError(f"{auto_name}.from_pretrained on an LSG folder takes no positional model arguments.",
                                 "pass options by name.")
            for name in _INTERNAL:
                kwargs.pop(name, None)
            overrides = None
            if isinstance(config, LSGModelConfig):  # what transformers read from the folder, maybe changed by the caller
                skip = ("model_type", "base_model_type", "transformers_version")
                overrides = {k: v for k, v in config.to_dict().items() if k not in skip}
            return load(pretrained_model_name_or_path, task=task, config_overrides=overrides, **kwargs)

    LSGAutoLoader.__name__ = LSGAutoLoader.__qualname__ = f"LSG{auto_name.removeprefix('Auto')}Loader"
    return LSGAutoLoader


_registered = False


def register_auto_classes() -> None:
    """Teach AutoConfig and the AutoModel* classes the "lsg" model type (idempotent)."""
    global _registered
    if _registered:
        return
    import transformers
    from transformers import AutoConfig

    AutoConfig.register(MODEL_TYPE, LSGModelConfig, exist_ok=True)
    for task, auto_name in TASKS.items():
        getattr(transformers, auto_name).register(LSGModelConfig, _loader(auto_name, task), exist_ok=True)
    _registered = True


register_auto_classes()
