"""``gguf:PATH``: a local GGUF causal LM (:mod:`faithprobe.subjects.gguf.models`), converted
once into the cache and then loaded like a local causal LM, placed as its settings say
(:class:`~faithprobe.subjects.local_settings.LocalSettings`); its name is the spec as given."""

from faithprobe.errors import ModelError
from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.gguf.models import ensure_converted, find_gguf, load_gguf
from faithprobe.subjects.identity import HF_CAUSAL
from faithprobe.subjects.local_settings import LocalSettings
from faithprobe.subjects.spec import ModelSpec


def _check(spec: ModelSpec) -> None:
    if not spec.target.strip():
        raise ModelError(f"model {spec.text!r}: name the file, as in gguf:PATH.gguf")
    find_gguf(spec.target)
    spec.settings.check()


def _load(spec: ModelSpec, loading: Loading):
    return load_gguf(
        spec.target, name=spec.text, batch_size=loading.batch_size, settings=spec.settings
    )


BACKEND = Backend(
    "gguf",
    "a local GGUF causal LM, gguf:PATH (the file, or a folder holding one), of an "
    "architecture transformers reads from GGUF (llama, mistral, qwen2/3, gemma2/3, phi3...): "
    "dequantised once into the cache, with its tokenizer and chat template",
    load=_load,
    check=_check,
    settings=LocalSettings,
    identity=HF_CAUSAL,
    folder=lambda spec, loading: ensure_converted(find_gguf(spec.target)),
)
