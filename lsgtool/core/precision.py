"""Which reduced precisions a device computes faster than float32.

torch runs bfloat16 on any x86-64 CPU, but without AVX512-BF16 or AMX it converts to float32 and back around every
product, slower than float32 itself; likewise float16 without AVX512-FP16/AMX-FP16, and int8 products without
VNNI or AMX-INT8. So a reduced precision is worth asking for on a CPU only where these instructions exist.
"""

from __future__ import annotations

import torch

__all__ = ["INSTRUCTIONS", "accelerated", "cpu_accelerated"]

# the CPU instructions (torch.cpu.get_capabilities' names) that make each precision's products fast
INSTRUCTIONS = {"bfloat16": ("avx512_bf16", "amx_bf16"), "float16": ("avx512_fp16", "amx_fp16"),
                "int8": ("avx512_vnni", "avx_vnni", "amx_int8")}
_PROBES = {"avx512_bf16": "_is_avx512_bf16_supported", "amx_bf16": "_is_amx_tile_supported",
           "amx_fp16": "_is_amx_fp16_supported", "avx512_vnni": "_is_vnni_supported",
           "amx_int8": "_is_amx_tile_supported"}  # the torch versions before get_capabilities


def _capabilities() -> dict[str, bool]:
    get = getattr(torch.cpu, "get_capabilities", None)
    if get is not None:
        try:
            return {k: bool(v) for k, v in get().items() if isinstance(v, bool)}
        except RuntimeError:
            pass
    found = {}
    for name, probe in _PROBES.items():
        check = getattr(torch.cpu, probe, None)
        found[name] = bool(check()) if check is not None else False
    return found


def cpu_accelerated() -> dict[str, list[str]]:
    """Each reduced precision this CPU accelerates, with the instructions that do it (an absent key: not)."""
    capabilities = _capabilities()
    return {precision: found for precision, names in INSTRUCTIONS.items()
            if (found := [n for n in names if capabilities.get(n)])}


def accelerated(dtype: str | torch.dtype, device: str = "cpu") -> bool:
    """Whether ``device`` computes ``dtype`` faster than float32 (float32 itself: True). On CUDA, bfloat16 where
    the GPU supports it (Ampere on), float16 always."""
    name = str(dtype).removeprefix("torch.")
    if name == "float32":
        return True
    kind = torch.device(device).type
    if kind == "cuda":
        return bool(torch.cuda.is_available() and (name != "bfloat16" or torch.cuda.is_bf16_supported()))
    if kind == "cpu":
        return name in cpu_accelerated()
    return True  # other accelerators: their own business
