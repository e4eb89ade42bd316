"""``model_type: "lsg"``: converted folders that transformers' Auto classes load once lsgtool is imported.

A converted folder stores the base model's configuration plus the LSG keys, with ``model_type`` "lsg" and
``base_model_type`` naming the original type. ``AutoConfig`` maps "lsg" to ``LSGModelConfig``; every
``AutoModel*`` class maps it to a loader that builds the base architecture and applies LSG (``api.load``).
"""

from __future__ import annotations

from transformers import PretrainedConfig

MODEL_TYPE = "lsg"
AUTO_TASKS = {
    "AutoModel": "base",
    "AutoModelForMaskedLM": "masked-lm",
    "AutoModelForSequenceClassification": "sequence-classification",
    "AutoModelForTokenClassification": "token-classification",
    "AutoModelForQuestionAnswering": "question-answering",
    "AutoModelForSeq2SeqLM": "seq2seq-lm",
    "AutoModelForMultipleChoice": "multiple-choice",
    "AutoModelForPreTraining": "pretraining",
}


class LSGModelConfig(PretrainedConfig):
    """The configuration of an lsgtool-converted model: the base config's keys, the LSG keys, the base type."""

    model_type = MODEL_TYPE

    def __init__(self, base_model_type: str = "bert", **kwargs):
        self.base_model_type = base_model_type
        super().__init__(**kwargs)

    def base_config(self) -> PretrainedConfig:
        from transformers import AutoConfig

        values = {k: v for k, v in self.to_dict().items() if k not in ("model_type", "base_model_type", "transformers_version")}
        return AutoConfig.for_model(self.base_model_type, **values)


def _loader(auto_name: str, task: str) -> type:
    from transformers import PreTrainedModel

    class LSGAutoLoader(PreTrainedModel):
        config_class = LSGModelConfig

        @classmethod
        def from_pretrained(cls, pretrained_model_name_or_path, *args, **kwargs):
            from lsgtool.core.convert.api import load

            return load(pretrained_model_name_or_path, task=task if task != "base" else "base")

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
    for auto_name, task in AUTO_TASKS.items():
        getattr(transformers, auto_name).register(LSGModelConfig, _loader(auto_name, task), exist_ok=True)
    _registered = True


register_auto_classes()
