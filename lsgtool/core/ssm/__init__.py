"""State-space models: S4D kernels, the bidirectional FFT convolution, and the LOCOST encoder-decoder."""

from lsgtool.core.ssm.bissm import bissm_direct, bissm_fft
from lsgtool.core.ssm.kernels import S4DKernel
from lsgtool.core.ssm.locost import (
    LocostConfig,
    LocostEncoderModel,
    LocostForConditionalGeneration,
    LocostModel,
)

BiSSM = bissm_fft

__all__ = ["BiSSM", "LocostConfig", "LocostEncoderModel", "LocostForConditionalGeneration", "LocostModel",
           "S4DKernel", "bissm_direct", "bissm_fft"]
