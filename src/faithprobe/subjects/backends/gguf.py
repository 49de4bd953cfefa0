"""``gguf:PATH``: a local GGUF causal LM, run as its settings say
(:class:`~faithprobe.subjects.gguf.settings.GGUFSettings`): converted once into the cache
(:mod:`faithprobe.subjects.gguf.models`) and then loaded like a local causal LM, or, with
``runtime=llama.cpp``, computed by llama.cpp as it is
(:mod:`faithprobe.subjects.gguf.llamacpp`); its name is the spec as given."""

from faithprobe.errors import ModelError
from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.gguf.models import ensure_converted, find_gguf, load_gguf
from faithprobe.subjects.gguf.runtimes import ANSWERS, load_under_llamacpp
from faithprobe.subjects.gguf.settings import GGUFSettings
from faithprobe.subjects.identity import HF_CAUSAL
from faithprobe.subjects.spec import ModelSpec


def _check(spec: ModelSpec) -> None:
    if not spec.target.strip():
        raise ModelError(f"model {spec.text!r}: name the file, as in gguf:PATH.gguf")
    find_gguf(spec.target)
    spec.settings.check()


def _load(spec: ModelSpec, loading: Loading):
    if spec.settings.llama_cpp:
        return load_under_llamacpp(find_gguf(spec.target), spec.text, spec.settings)
    return load_gguf(
        spec.target, name=spec.text, batch_size=loading.batch_size, settings=spec.settings
    )


BACKEND = Backend(
    "gguf",
    "a local GGUF causal LM, gguf:PATH (the file, or a folder holding one), of an "
    "architecture transformers reads from GGUF (llama, mistral, qwen2/3, gemma2/3, phi3...): "
    "dequantised once into the cache, with its tokenizer and chat template; or, with "
    "runtime=llama.cpp, computed by llama.cpp at the cost of the file",
    load=_load,
    check=_check,
    settings=GGUFSettings,
    local=True,
    identity=HF_CAUSAL,
    folder=lambda spec, loading: (
        None if spec.settings.llama_cpp else ensure_converted(find_gguf(spec.target))
    ),
    answers=ANSWERS,
)
