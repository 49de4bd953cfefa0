"""The settings of GGUF models (:mod:`faithprobe.subjects.gguf.settings`): which runtime
computes the file, checked once at parse, whether or not llama.cpp is installed."""

from __future__ import annotations

import pytest

from faithprobe.errors import ModelError, UsageError
from faithprobe.subjects import parse_model
from faithprobe.subjects.gguf import llamacpp
from faithprobe.subjects.gguf.settings import GGUFSettings


def test_the_default_runtime_is_the_dequantised_model_with_the_local_settings():
    settings = parse_model("embedded,dtype=bfloat16").settings
    assert settings == GGUFSettings(dtype="bfloat16")
    assert not settings.llama_cpp
    assert settings.fingerprint_parts() == ("dtype=bfloat16",)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("embedded,runtime=llama.cpp,dtype=float16", "dtype=float16 does not apply to runtime"),
        ("embedded,runtime=llama.cpp,attn_implementation=sdpa", "attn_implementation=sdpa"),
        ("embedded,runtime=llama.cpp,device=cuda:1", "give device=cuda and choose the GPU"),
        ("embedded,threads=2", "give it with runtime=llama.cpp"),
        ("embedded,runtime=llama.cpp,threads=0", "threads=0: expected a number from 1 to 4096"),
        ("embedded,runtime=onnx", "choose from 'transformers', 'llama.cpp'"),
    ],
)
def test_settings_that_do_not_fit_the_runtime_are_one_line(spec, message):
    with pytest.raises(UsageError, match=message):
        parse_model(spec)


def test_llama_cpp_not_installed_is_said_at_parse_with_the_extra(monkeypatch):
    def absent(package):
        raise llamacpp.metadata.PackageNotFoundError(package)

    monkeypatch.setattr(llamacpp.metadata, "version", absent)
    with pytest.raises(ModelError, match=r"needs llama-cpp-python: pip install 'faithprobe\["):
        parse_model("embedded,runtime=llama.cpp")


def test_a_gpu_asked_of_a_cpu_build_is_refused_and_auto_stays_on_the_cpu(monkeypatch):
    monkeypatch.setattr(llamacpp, "runtime_version", lambda: "0.3.36")
    monkeypatch.setattr(llamacpp, "supports_gpu", lambda: False)
    assert GGUFSettings(runtime="llama.cpp").gpu_layers() == 0
    with pytest.raises(UsageError, match="built without GPU support"):
        parse_model("embedded,runtime=llama.cpp,device=cuda")
    monkeypatch.setattr(llamacpp, "supports_gpu", lambda: True)
    assert GGUFSettings(runtime="llama.cpp").gpu_layers() == -1
    assert GGUFSettings(runtime="llama.cpp", device="cpu").gpu_layers() == 0
