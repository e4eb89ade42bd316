"""State-space models: S4D kernels, the bidirectional FFT convolution, the LOCOST mixer and encoder-decoder.

The LOCOST models need transformers; they are imported on first use, so the kernels and the mixer do not.
"""

from lsgtool.core.ssm.bissm import bissm_direct, bissm_fft
from lsgtool.core.ssm.kernels import S4DKernel, kernel_cache
from lsgtool.core.ssm.mixer import S4D, SSMShape

BiSSM = bissm_fft
_MODELS = ("LocostConfig", "LocostEncoderModel", "LocostForConditionalGeneration", "LocostModel")


def __getattr__(name: str):
    if name in _MODELS:
        from lsgtool.core.ssm import locost

        return getattr(locost, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BiSSM", *_MODELS, "S4D", "S4DKernel", "SSMShape", "bissm_direct", "bissm_fft", "kernel_cache"]
