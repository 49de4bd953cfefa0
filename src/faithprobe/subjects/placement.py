"""Where a local model computes, and in which number format: ``device`` and ``dtype`` as a
user writes them, resolved to what this machine has.

``device``: ``auto`` (the first accelerator, else the CPU), ``cpu``, ``cuda``, ``cuda:N`` or
``mps``; ``dtype``: ``auto`` (bfloat16 on a GPU that computes in it natively, float16 on one
that does not, float32 on the CPU), ``float32``, ``bfloat16`` or ``float16``.
:func:`resolve` refuses a device that is not there (``cuda`` without CUDA, ``cuda:3`` on a
machine with two GPUs) and a dtype the device lacks (bfloat16 on a GPU older than Ampere),
each in one line, when the model spec is parsed -- before any data is read.

Resolving ``auto`` needs torch only where an accelerator may be present: a cheap look at
the machine (:func:`accelerator_possible`: NVIDIA or ROCm device files, Apple silicon)
tells a plain CPU machine without importing torch, so a run whose answers are all cached
still builds its cache keys without it (:mod:`~faithprobe.subjects.deferred`).

What changes answers -- the kind of device (its kernels round differently) and the dtype --
enters the model's fingerprint (:meth:`Placement.fingerprint_parts`); the CPU in float32
adds nothing, so the fingerprints of every run made before these settings existed, and the
answers cached under them, stay valid.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from faithprobe.errors import UsageError, excerpt
from faithprobe.options import check_among

DEVICE_KINDS = ("cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")
_DEVICE = re.compile(r"auto|cpu|mps|cuda(?::\d+)?")
DEVICE_HELP = "auto (the first accelerator, else the CPU), cpu, cuda, cuda:N or mps"


def check_device(text: str) -> None:
    """Refuse a device name no machine has (``gpu``, ``cuda:x``); whether it is present here
    is :func:`resolve` 's to say."""
    if not isinstance(text, str) or not _DEVICE.fullmatch(text):
        raise UsageError(f"device={excerpt(text)}: choose {DEVICE_HELP}")


def accelerator_possible() -> bool:
    """Whether this machine may have an accelerator torch can use: NVIDIA's or AMD's device
    files (unless ``CUDA_VISIBLE_DEVICES`` hides every GPU), Apple silicon, or a system
    without ``/dev`` to look in. False means surely none, told without importing torch."""
    if sys.platform == "darwin":
        return platform.machine() == "arm64"
    if not Path("/dev").is_dir():  # Windows and the like: ask torch
        return True
    if os.environ.get("CUDA_VISIBLE_DEVICES", "unset").strip() in ("", "-1"):
        return False
    dev = Path("/dev")
    return (dev / "nvidiactl").exists() or (dev / "kfd").exists() or any(dev.glob("nvidia[0-9]*"))


@dataclass(frozen=True)
class Placement:
    """A resolved device (``cpu``, ``cuda``, ``cuda:1``, ``mps``) and dtype (``float32``,
    ``bfloat16``, ``float16``)."""

    device: str
    dtype: str

    @property
    def kind(self) -> str:
        return self.device.partition(":")[0]

    def fingerprint_parts(self) -> tuple[str, ...]:
        """What of the placement enters the fingerprint (the module docstring)."""
        return placement_parts(self.kind, self.dtype)


def placement_parts(kind: str, dtype: str) -> tuple[str, ...]:
    """The fingerprint parts of computing on a device of ``kind`` in ``dtype``: none for the
    CPU in float32 (every fingerprint made before devices and dtypes were settings)."""
    parts = [] if kind == "cpu" else [f"device={kind}"]
    return (*parts, f"dtype={dtype}") if dtype != "float32" else tuple(parts)


@cache
def resolve(device: str = "auto", dtype: str = "auto") -> Placement:
    """``device`` and ``dtype`` as this machine has them (module docstring); a UsageError in
    one line for a device that is not there or a dtype it lacks. Cached: a process asks
    torch once."""
    return placed(device, dtype, _import_torch)


def _import_torch():
    import torch

    return torch


def placed(device: str, dtype: str, torch_module: Callable[[], Any]) -> Placement:
    """:func:`resolve` with the torch that ``torch_module()`` returns (called only where an
    accelerator may be present; a stand-in lets tests play GPUs this machine lacks)."""
    check_device(device)
    check_among(dtype, DTYPES, f"dtype={excerpt(dtype)}")
    if device == "cpu" or (device == "auto" and not accelerator_possible()):
        return Placement("cpu", "float32" if dtype == "auto" else dtype)
    torch = torch_module()
    found = _present(torch, device)
    if found == "cpu":
        return Placement("cpu", "float32" if dtype == "auto" else dtype)
    natively = _computes_bfloat16(torch, found)
    if dtype == "auto":
        return Placement(found, "bfloat16" if natively else "float16")
    if dtype == "bfloat16" and not natively:
        raise UsageError(
            f"dtype=bfloat16: {_device_name(torch, found)} does not compute in bfloat16; "
            "use dtype=float16 or float32"
        )
    return Placement(found, dtype)


def _present(torch, device: str) -> str:
    """``device`` if torch sees it here (``auto``: the first accelerator, else ``cpu``)."""
    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    if device == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if device == "mps" and not mps:
        raise UsageError("device=mps: this machine has no Apple GPU torch can use; use device=cpu")
    if device.startswith("cuda"):
        if not cuda:
            built = f"CUDA {torch.version.cuda}" if torch.version.cuda else "no CUDA"
            raise UsageError(
                f"device={device}: no CUDA GPU is visible (torch {torch.__version__}, built "
                f"with {built}); use device=cpu or device=auto"
            )
        index = int(device.partition(":")[2] or 0)
        if index >= (count := torch.cuda.device_count()):
            raise UsageError(f"device={device}: this machine shows {count} CUDA GPU(s), "
                             f"numbered from 0")  # fmt: skip
    return device


def _computes_bfloat16(torch, device: str) -> bool:
    """Whether ``device`` computes in bfloat16 natively (CUDA: Ampere and newer; MPS:
    macOS 14 and newer), not by emulation."""
    if device.startswith("cuda"):
        with torch.cuda.device(torch.device(device)):
            try:
                return torch.cuda.is_bf16_supported(including_emulation=False)
            except TypeError:  # an older torch: no emulation to tell apart
                return torch.cuda.is_bf16_supported()
    try:
        torch.ones(1, dtype=torch.bfloat16, device=device)
    except (RuntimeError, TypeError):
        return False
    return True


def _device_name(torch, device: str) -> str:
    if device.startswith("cuda"):
        major, minor = torch.cuda.get_device_capability(torch.device(device))
        return f"{torch.cuda.get_device_name(torch.device(device))} (compute capability {major}.{minor})"
    return device
