"""``openai:MODEL``: a model behind an OpenAI-compatible endpoint
(:class:`~faithprobe.subjects.endpoint.subject.OpenAISubject`), with the endpoint's settings
(:class:`~faithprobe.subjects.endpoint.settings.EndpointConfig`). The API key is looked for when the
spec is checked, so a missing one is told before anything is read."""

from faithprobe.errors import ModelError
from faithprobe.requests import CandidateScoreRequest, GenerationRequest, LetterChoiceRequest
from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.endpoint.settings import EndpointConfig
from faithprobe.subjects.spec import ModelSpec


def _check(spec: ModelSpec) -> None:
    if not spec.target.strip():
        raise ModelError(f"model {spec.text!r}: name the endpoint's model, as in openai:MODEL")
    spec.settings.api_key(spec.text)


def _load(spec: ModelSpec, loading: Loading):
    from faithprobe.subjects.endpoint.subject import OpenAISubject  # the HTTP client, numpy

    return OpenAISubject(spec.target, spec.settings)


BACKEND = Backend(
    "openai",
    "a model behind an OpenAI-compatible endpoint (--model-option base_url=URL; key from "
    "$OPENAI_API_KEY): candidate scores by echoed completions log-probabilities, greedy "
    "generation by completions or chat completions; api=chat for chat-only endpoints (the "
    "candidates asked as lettered options)",
    load=_load,
    check=_check,
    settings=EndpointConfig,
    answers={
        CandidateScoreRequest.kind: "an endpoint serving completions with logprobs",
        GenerationRequest.kind: "",
        LetterChoiceRequest.kind: "",
    },
)
