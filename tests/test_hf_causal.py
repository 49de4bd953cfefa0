import pytest
import torch

from faithprobe.generators.distractors import DistractorConfig, generate
from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects.hf.causal import HFCausal

# Made-up words split into several tokens, so the multi-token path runs.
ODD = ("Helsinkiborough", "Quazzlefort")


def _requests(n: int = 40) -> list[CandidateScoreRequest]:
    items = generate(DistractorConfig(), seed=0)[::97][:n]
    reqs = [CandidateScoreRequest(i.context, i.candidates + ODD, i.suffix) for i in items]
    return reqs + [CandidateScoreRequest("", ("Paris", "Helsinkiborough"))]


def _naive(model, tokenizer, request: CandidateScoreRequest) -> list[float]:
    """One full forward per candidate over context + candidate tokens."""
    ctx = tokenizer(request.context).input_ids or [tokenizer.bos_token_id]
    out = []
    for c in request.candidates:
        sep = " " if request.context else ""
        cont = tokenizer(sep + c, add_special_tokens=False).input_ids
        with torch.no_grad():
            logits = model(torch.tensor([ctx + cont])).logits[0]
        logp = torch.log_softmax(logits.float(), -1)
        out.append(sum(float(logp[len(ctx) - 1 + k, t]) for k, t in enumerate(cont)))
    return out


@pytest.mark.parametrize("model_name", ["tiny_llama", "tiny_gpt2"])
def test_batch_size_invariance_and_naive_agreement(model_name, request, tiny_tokenizer):
    model = request.getfixturevalue(model_name)
    reqs = _requests()
    one = HFCausal(model, tiny_tokenizer, name="t", batch_size=1).answer(reqs)
    many = HFCausal(model, tiny_tokenizer, name="t", batch_size=32).answer(reqs)
    tight = HFCausal(model, tiny_tokenizer, name="t", batch_size=32, max_batch_tokens=300).answer(
        reqs
    )
    assert any(k > 1 for s in one for k in s.n_tokens)
    for a, b, c in zip(one, many, tight, strict=True):
        assert a.n_tokens == b.n_tokens
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1e-4
        assert max(abs(x - y) for x, y in zip(a.logprobs, c.logprobs, strict=True)) < 1e-4
    for r, s in zip(reqs[:5] + reqs[-1:], one[:5] + one[-1:], strict=True):
        ref = _naive(model, tiny_tokenizer, r)
        assert max(abs(x - y) for x, y in zip(ref, s.logprobs, strict=True)) < 1e-4


def test_progress_counts_every_request(tiny_llama, tiny_tokenizer):
    seen = []
    reqs = _requests(10)
    HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=4).answer(reqs, progress=seen.append)
    assert sum(seen) == len(reqs)


def test_fingerprint_ignores_batch_size_and_tracks_weights(tiny_llama, tiny_tokenizer):
    a = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=1).fingerprint
    b = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=8).fingerprint
    assert a == b
    changed = type(tiny_llama)(tiny_llama.config)
    assert HFCausal(changed, tiny_tokenizer, name="t").fingerprint != a
