"""Memory of the current process: RSS and its high-water mark on Linux (resettable), free memory."""

from __future__ import annotations


def _status(field: str) -> float:
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field)) / 1024


def reset_peak_rss() -> float:
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS and return it, in MB."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    return peak_rss_mb()


def peak_rss_mb() -> float:
    return _status("VmHWM")


def rss_mb() -> float:
    return _status("VmRSS")


def available_mb(device: str = "cpu") -> float:
    """Memory a new point may use: MemAvailable on CPU, free device memory on CUDA."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.mem_get_info()[0] / 2**20
    with open("/proc/meminfo") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("MemAvailable")) / 1024
