"""The settings of GGUF models (``gguf:PATH``, ``embedded``): those of any local transformers
model (:class:`~faithprobe.subjects.local_settings.LocalSettings`) and who computes the file.

``runtime=transformers`` (the default) dequantises the file once to float32 safetensors and
runs it like any local causal LM, placed and typed as ``device`` and ``dtype`` say.
``runtime=llama.cpp`` runs the quantised blocks as they are, through the optional extra
``faithprobe[llamacpp]`` (:mod:`~faithprobe.subjects.gguf.llamacpp`): memory at the cost of
the file, which is what lets a 7B Q4 model run on a 24 GiB laptop (docs/models.md, "A GGUF
on a laptop"). There ``dtype``, ``device_map`` and ``attn_implementation`` do not apply (the
file's own block types and llama.cpp's kernels compute), ``max_length`` bounds llama.cpp's
context, and ``device`` says whether layers are offloaded to a GPU (``cpu``: none; ``cuda``
or ``mps``: all, by a llama.cpp built with GPU support; ``auto``: all where it was).

Imports nothing heavy: the llama.cpp checks import ``llama_cpp`` only for a model that asks
for it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from faithprobe.errors import UsageError
from faithprobe.options import option
from faithprobe.subjects.local_settings import LocalSettings

TRANSFORMERS, LLAMA_CPP = "transformers", "llama.cpp"
RUNTIMES = (TRANSFORMERS, LLAMA_CPP)
# the LocalSettings that llama.cpp has no use for, with the reason given when one is set
_NOT_UNDER_LLAMA_CPP = ("dtype", "device_map", "attn_implementation")


@dataclass(frozen=True)
class GGUFSettings(LocalSettings):
    """How a GGUF model is run (module docstring)."""

    runtime: str = option(
        TRANSFORMERS,
        "who computes the file: transformers (dequantised once to float32, then placed by "
        "device and dtype) or llama.cpp (its quantised blocks as they are, at the cost of the "
        "file; pip install 'faithprobe[llamacpp]')",
        choices=RUNTIMES,
    )
    threads: int | None = option(
        None, "llama.cpp's CPU threads (empty: the cores this process may use)", range=(1, 4096)
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.runtime == TRANSFORMERS:
            if self.threads is not None:
                raise UsageError(
                    "threads= sets llama.cpp's threads: give it with runtime=llama.cpp"
                )
            return
        defaults = {f.name: f.default for f in fields(LocalSettings)}
        for name in _NOT_UNDER_LLAMA_CPP:
            if getattr(self, name) != defaults[name]:
                raise UsageError(
                    f"{name}={getattr(self, name)} does not apply to runtime=llama.cpp, which "
                    "computes in the file's own block types with its own kernels; drop it or "
                    "use runtime=transformers"
                )
        if self.device.startswith("cuda:"):
            raise UsageError(
                f"device={self.device}: runtime=llama.cpp offloads to the GPUs it sees; give "
                "device=cuda and choose the GPU with CUDA_VISIBLE_DEVICES"
            )

    @property
    def llama_cpp(self) -> bool:
        """Whether llama.cpp computes the file (else transformers, dequantised)."""
        return self.runtime == LLAMA_CPP

    def gpu_layers(self) -> int:
        """The layers llama.cpp offloads: all (-1) on ``cuda``/``mps`` or on ``auto`` with
        a llama.cpp built for a GPU, else none; a UsageError for a GPU asked of a build
        without GPU support."""
        from faithprobe.subjects.gguf.llamacpp import supports_gpu

        if self.device == "cpu":
            return 0
        if supports_gpu():
            return -1
        if self.device == "auto":
            return 0
        raise UsageError(
            f"device={self.device}: this llama-cpp-python was built without GPU support; "
            "reinstall it with CMAKE_ARGS='-DGGML_CUDA=on' (or -DGGML_METAL=on), or give "
            "device=cpu"
        )

    def check(self) -> None:
        if not self.llama_cpp:
            super().check()
            return
        from faithprobe.subjects.gguf.llamacpp import runtime_version

        runtime_version()
        self.gpu_layers()
