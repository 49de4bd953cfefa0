"""The settings of the backends that compute in this process with transformers: where
(``device``, ``device_map``), in which number format (``dtype``), with which attention
kernel, on inputs of at most how many tokens -- and, for models in folders or on the
Hugging Face Hub, which ``revision`` and whether the folder's own code may run.

Declared as options (:mod:`faithprobe.options`), so they are given like any backend's
settings -- ``--model-option dtype=bfloat16`` or ``hf-causal:meta-llama/Llama-3.1-8B,
device_map=auto`` -- listed by ``faithprobe list`` and checked once, when the model spec is
parsed (:meth:`LocalSettings.check`: a device that is not there, a dtype it lacks). Imports
no torch: a device is resolved by :mod:`~faithprobe.subjects.placement`, which imports it
only where an accelerator may be present.

What changes answers enters the model's fingerprint (:meth:`LocalSettings.fingerprint_parts`,
:func:`answer_parts`): the device kind and the dtype, the attention kernel and the input
bound when they are set. The revision enters through the files it names (a model's
fingerprint hashes them), ``device_map`` changes where layers sit, not what they compute,
and none of them adds anything at their defaults on a CPU, so every fingerprint made before
these settings existed is unchanged.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from faithprobe.errors import UsageError
from faithprobe.numbers import TOKENS
from faithprobe.options import check_numbers, option
from faithprobe.subjects.placement import DEVICE_HELP, DTYPES, Placement, check_device, resolve
from faithprobe.subjects.placement import placement_parts as _placement_parts

# accelerate's ways of spreading a model's layers over the visible devices
DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")
# transformers' attention kernels a model may be asked for by name
ATTENTION = ("eager", "sdpa", "flash_attention_2", "flash_attention_3", "flex_attention")
# a kernel outside torch -> the module transformers imports for it and its package's name
KERNEL_PACKAGES = {
    "flash_attention_2": ("flash_attn", "flash-attn"),
    "flash_attention_3": ("flash_attn_interface", "flash-attn-3"),
}
MIN_LENGTH = 8  # the shortest input bound that leaves room for a prompt and an answer


@dataclass(frozen=True)
class LocalSettings:
    """How a transformers model is placed and run (module docstring)."""

    device: str = option("auto", f"where the model computes: {DEVICE_HELP}")
    dtype: str = option(
        "auto",
        "the weights' and activations' number format (auto: bfloat16 on a GPU that computes "
        "in it, else float16 on a GPU, float32 on the CPU)",
        choices=DTYPES,
    )
    device_map: str | None = option(
        None,
        "spread a model too large for one GPU over the visible GPUs (and the CPU, if they "
        "are full) through accelerate; empty: the whole model on 'device'",
        choices=DEVICE_MAPS,
    )
    attn_implementation: str | None = option(
        None, "the attention kernel transformers uses (empty: transformers' choice)", ATTENTION
    )
    max_length: int | None = option(
        None,
        "the most tokens the model is fed (empty: its position limit); longer inputs are cut "
        "by the backend's stated rule and their answers marked truncated",
        range=(MIN_LENGTH, TOKENS),
    )

    def __post_init__(self) -> None:
        check_device(self.device)
        check_numbers(self)
        if self.device_map is not None and self.device not in ("auto", "cuda"):
            raise UsageError(
                f"device_map={self.device_map} spreads a model over the visible GPUs: give it "
                f"with device=auto or device=cuda, not device={self.device}"
            )

    def placement(self) -> Placement:
        """The device and dtype resolved on this machine (a UsageError where they are not
        here); :func:`~faithprobe.subjects.placement.resolve` is cached, so asking again is
        free."""
        return resolve(self.device, self.dtype)

    def check(self) -> None:
        """The parse-time check: the device is here and computes in the dtype, and the
        attention kernel's package is installed (transformers would say so only once the
        weights are loaded)."""
        self.placement()
        module, package = KERNEL_PACKAGES.get(self.attn_implementation or "", (None, None))
        if module is not None and importlib.util.find_spec(module) is None:
            raise UsageError(
                f"attn_implementation={self.attn_implementation} needs the {package} package "
                f"(pip install {package}; it computes on a CUDA GPU), which is not installed "
                "here: drop the setting, or give sdpa or eager"
            )

    def fingerprint_parts(self) -> tuple[str, ...]:
        """What these settings add to the fingerprint of a model run under them."""
        placed = self.placement()
        return answer_parts(placed.kind, placed.dtype, self)


@dataclass(frozen=True)
class HubSettings(LocalSettings):
    """A model in a folder or on the Hugging Face Hub: also its revision, and whether its
    own code may run."""

    revision: str | None = option(
        None, "a Hugging Face id's branch, tag or commit (empty: its default branch)"
    )
    trust_remote_code: bool = option(
        False, "run the model's own code from its folder or repository (off: only "
        "transformers' own architectures load)"
    )  # fmt: skip


def answer_parts(kind: str, dtype: str, settings: LocalSettings | None) -> tuple[str, ...]:
    """The fingerprint parts of a model computing on a device of ``kind`` in ``dtype`` under
    ``settings`` (None: the defaults): the placement's, then the attention kernel and the
    input bound where they are set."""
    parts = list(_placement_parts(kind, dtype))
    if settings is not None and settings.attn_implementation:
        parts.append(f"attn={settings.attn_implementation}")
    if settings is not None and settings.max_length is not None:
        parts.append(f"max_length={settings.max_length}")
    return tuple(parts)
