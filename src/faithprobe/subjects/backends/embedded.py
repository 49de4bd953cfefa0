"""``embedded`` / ``embedded:NAME``: a causal LM shipped as GGUF in PyPI packages
(:mod:`faithprobe.subjects.gguf.embedded`), converted once into the cache and then loaded like a
local causal LM, placed as its settings say
(:class:`~faithprobe.subjects.local_settings.LocalSettings`); its name is the spec as given."""

from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.gguf.embedded import converted, embedded_model, load_embedded
from faithprobe.subjects.identity import HF_CAUSAL
from faithprobe.subjects.local_settings import LocalSettings
from faithprobe.subjects.spec import ModelSpec


def _check(spec: ModelSpec) -> None:
    embedded_model(spec.text)
    spec.settings.check()


def _load(spec: ModelSpec, loading: Loading):
    return load_embedded(spec.text, batch_size=loading.batch_size, settings=spec.settings)


BACKEND = Backend(
    "embedded",
    "causal LMs shipped as GGUF in PyPI packages: 'embedded' (the default, "
    "SmolLM2-135M-Instruct) or 'embedded:NAME' (see 'embedded models'); dequantised once "
    "into the cache",
    load=_load,
    check=_check,
    settings=LocalSettings,
    identity=HF_CAUSAL,
    folder=lambda spec, loading: converted(spec.text),
)
