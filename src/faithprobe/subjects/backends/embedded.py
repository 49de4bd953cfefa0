"""``embedded`` / ``embedded:NAME``: a causal LM shipped as GGUF in PyPI packages
(:mod:`faithprobe.subjects.gguf.embedded`), run as any GGUF model is, by its settings
(:class:`~faithprobe.subjects.gguf.settings.GGUFSettings`): converted once into the cache and
loaded like a local causal LM, or computed by llama.cpp as it is; its name is the spec as
given."""

from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.gguf.embedded import converted, embedded_model, gguf_path, load_embedded
from faithprobe.subjects.gguf.runtimes import ANSWERS, load_under_llamacpp
from faithprobe.subjects.gguf.settings import GGUFSettings
from faithprobe.subjects.identity import HF_CAUSAL
from faithprobe.subjects.spec import ModelSpec


def _check(spec: ModelSpec) -> None:
    embedded_model(spec.text)
    spec.settings.check()


def _load(spec: ModelSpec, loading: Loading):
    if spec.settings.llama_cpp:
        return load_under_llamacpp(gguf_path(embedded_model(spec.text)), spec.text, spec.settings)
    return load_embedded(spec.text, batch_size=loading.batch_size, settings=spec.settings)


BACKEND = Backend(
    "embedded",
    "causal LMs shipped as GGUF in PyPI packages: 'embedded' (the default, "
    "SmolLM2-135M-Instruct) or 'embedded:NAME' (see 'embedded models'); dequantised once "
    "into the cache (or, with runtime=llama.cpp, computed by llama.cpp as they are)",
    load=_load,
    check=_check,
    settings=GGUFSettings,
    identity=HF_CAUSAL,
    folder=lambda spec, loading: None if spec.settings.llama_cpp else converted(spec.text),
    answers=ANSWERS,
)
