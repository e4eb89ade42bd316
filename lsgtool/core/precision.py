"""Which reduced precisions a device computes faster than float32.

torch runs bfloat16 on any x86-64 CPU, but without AVX512-BF16 or AMX it converts to float32 and back around every
product, slower than float32 itself; likewise float16 without AVX512-FP16/AMX-FP16, and int8 products without
VNNI or AMX-INT8. So a reduced precision is worth asking for on an x86 CPU only where these instructions exist
(other CPUs are not judged here: ``accelerated`` says True for them).
"""

from __future__ import annotations

import contextlib
import logging
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    import torch


__all__ = ["INSTRUCTIONS", "INT8", "accelerated", "cpu_accelerated", "cpuinfo", "hide_torchao_notes", "int8_missing",
           "quantize_int8", "require_int8"]

# the CPU instructions (torch.cpu.get_capabilities' names) that make each precision's products fast
INSTRUCTIONS = {"bfloat16": ("avx512_bf16", "amx_bf16"), "float16": ("avx512_fp16", "amx_fp16"),
                "int8": ("avx512_vnni", "avx_vnni", "amx_int8")}
X86 = ("x86_64", "amd64", "i386", "i686", "x86")


def is_x86() -> bool:
    return platform.machine().lower() in X86


def cpuinfo(field: str) -> str | None:
    """The first value of ``field`` in the kernel's /proc/cpuinfo ("model name", "flags"), None where absent."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.split(":", 1)[0].strip() == field:
                return line.split(":", 1)[1].strip()
    return None


def _capabilities() -> dict[str, bool]:
    """torch's own reading of the CPU (torch.cpu.get_capabilities), else the kernel's (/proc/cpuinfo's flags,
    which use the same names), else nothing."""
    import torch

    get = getattr(torch.cpu, "get_capabilities", None)
    if get is not None:
        with contextlib.suppress(RuntimeError):
            return {k: bool(v) for k, v in get().items() if isinstance(v, bool)}
    return dict.fromkeys((cpuinfo("flags") or "").split(), True)


def cpu_accelerated() -> dict[str, list[str]]:
    """Each reduced precision this CPU accelerates, with the instructions that do it (an absent key: not)."""
    capabilities = _capabilities()
    return {precision: found for precision, names in INSTRUCTIONS.items()
            if (found := [n for n in names if capabilities.get(n)])}


def accelerated(dtype: str | torch.dtype, device: str = "cpu") -> bool:
    """Whether ``device`` computes ``dtype`` faster than float32 (float32 itself: True). On CUDA, bfloat16 where
    the GPU supports it (Ampere on), float16 always."""
    import torch

    name = str(dtype).removeprefix("torch.")
    if name == "float32":
        return True
    kind = torch.device(device).type
    if kind == "cuda":
        return bool(torch.cuda.is_available() and (name != "bfloat16" or torch.cuda.is_bf16_supported()))
    if kind == "cpu":
        return name in cpu_accelerated() or not is_x86()
    return True  # other accelerators: their own business


INT8 = "int8"  # the dtype name that asks for int8 products (``load(..., dtype="int8")``; ``summarize --dtype int8``)
INT8_HINT = 'pip install torchao (or pip install "lsgtool[int8]"), or use float32 or bfloat16.'
TORCHAO_NOISE = ("torchao", "torch.utils._pytree")  # the loggers torchao's import speaks through


class TorchaoImportNotes(logging.Filter):
    """torchao says, as it loads, which of its GPU libraries (mxfp8, CUTLASS) did not load, and torch that it
    registers enums as before: neither concerns its CPU products; below ERROR they are not shown. One instance
    (``HIDE_TORCHAO_NOTES``), added to ``TORCHAO_NOISE``'s loggers for a block (``hidden_torchao_notes``) or for
    the whole process (the CLI, where transformers imports torchao to load any model once it is installed)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


HIDE_TORCHAO_NOTES = TorchaoImportNotes()


def hide_torchao_notes() -> None:
    for logger in map(logging.getLogger, TORCHAO_NOISE):
        logger.addFilter(HIDE_TORCHAO_NOTES)  # added once however often it is called
        # a logger's filter does not see its children's records ("torchao.kernel.intmm: Detected no triton",
        # shown where a handler is set, as absl's under rouge-score); its level is theirs
        logger.setLevel(max(logger.level, logging.ERROR))


@contextlib.contextmanager
def hidden_torchao_notes() -> Iterator[None]:
    """``hide_torchao_notes`` for a block; a filter and a level the process had before are left in place."""
    loggers = [logging.getLogger(name) for name in TORCHAO_NOISE]
    added = [logger for logger in loggers if HIDE_TORCHAO_NOTES not in logger.filters]
    levels = [logger.level for logger in loggers]
    hide_torchao_notes()
    try:
        yield
    finally:
        for logger in added:
            logger.removeFilter(HIDE_TORCHAO_NOTES)
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def int8_missing() -> str | None:
    """Why int8 products cannot be had here (None: torchao, which makes them, imports)."""
    try:
        with hidden_torchao_notes():
            from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_  # noqa: F401
    except ImportError as exc:
        return f"torchao is not installed ({exc})"
    except Exception as exc:  # a torchao built for another torch can fail to import in other ways
        return f"torchao does not import here ({type(exc).__name__}: {exc})".splitlines()[0]
    return None


def require_int8(asked: str = "dtype int8") -> None:
    """A ``UsageError`` naming ``asked`` (the option as the caller's user typed it) where int8 cannot run here."""
    from lsgtool.core.errors import UsageError

    if (missing := int8_missing()) is not None:
        raise UsageError(f"{asked}: {missing}.", INT8_HINT)


def quantize_int8(model: torch.nn.Module) -> int:
    """The linear layers of ``model``'s encoder (of the model itself for an encoder alone) with int8 weights and
    activations quantized to int8 at each call (torchao's ``Int8DynamicActivationInt8WeightConfig``: VNNI or AMX
    products on an x86 CPU). The decoder stays as it is: its step reads the encoder output, not weights, and LOCOST's
    folded cross-attention reads its projections' weights as matrices. Returns how many layers were quantized."""
    import torch

    from lsgtool.core.errors import UsageError

    require_int8()
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_

    encoder = model
    if getattr(model.config, "is_encoder_decoder", False):
        encoder = model.get_encoder() if hasattr(model, "get_encoder") else model
        if encoder is model:  # transformers' get_encoder gives the model back when it finds no encoder by name
            raise UsageError(f"dtype int8: no encoder found in {type(model).__name__} to quantize.",
                             "load it in float32 or bfloat16.")
    count = sum(isinstance(m, torch.nn.Linear) for m in encoder.modules())
    with hidden_torchao_notes():  # nothing is compiled: torch's inductor settings are left alone
        quantize_(encoder, Int8DynamicActivationInt8WeightConfig(set_inductor_config=False))
    return count
