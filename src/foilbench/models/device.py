"""Device and dtype selection with clear errors (a GPU asked for where none exists)."""

from __future__ import annotations

from foilbench.errors import ModelError

DTYPES = ("float32", "float16", "bfloat16")


def select_device(device: str = "auto") -> str:
    """``auto`` -> cuda if available, else mps, else cpu. An unavailable device raises."""
    import torch

    device = (device or "auto").lower()
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ModelError(f"device {device!r} requested but no CUDA GPU is available here "
                             "(use --device cpu or --device auto)")
        index = device.partition(":")[2]
        if index and int(index) >= torch.cuda.device_count():
            raise ModelError(f"device {device!r} requested but only "
                             f"{torch.cuda.device_count()} CUDA device(s) exist")
        return device
    if device == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise ModelError("device 'mps' requested but Apple MPS is not available here")
        return device
    if device == "cpu":
        return device
    raise ModelError(f"unknown device {device!r}; use auto, cpu, cuda, cuda:N or mps")


def select_dtype(dtype: str, device: str):
    """torch dtype for a name; half precision on the CPU is refused (slow and lossy)."""
    import torch

    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    if dtype == "float16" and device == "cpu":
        raise ModelError("float16 on the CPU is not supported; use float32 or bfloat16")
    return getattr(torch, dtype)
