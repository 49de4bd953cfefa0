"""Batches fitted to an accelerator's memory (:mod:`faithprobe.subjects.hf.memory_fit`),
on the CPU: the tiny Llama is given a memory limit by a hook that raises CUDA's
out-of-memory error for a forward pass over more tokens than it allows."""

from __future__ import annotations

import pytest
import torch

from faithprobe.errors import ModelError
from faithprobe.requests import CandidateScoreRequest, GenerationRequest
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.memory_fit import FitStore, is_out_of_memory, largest_fitting

STORY = "Mary went to the garden and then John went to the kitchen with the"
# each opening with a letter of its own, so that packed scoring finds no beginning to
# share and the batches stay as large as the requests
SCORED = [
    CandidateScoreRequest(f"{chr(65 + k)}: {STORY} {'big ' * k}", ("garden", "kitchen", "red sofa"))
    for k in range(24)
]
GENERATED = [GenerationRequest(f"{STORY} {'cat ' * k}", 6) for k in range(10)]


class Limit:
    """A forward pre-hook refusing more than ``tokens`` input tokens, as a full GPU does."""

    def __init__(self, tokens: int) -> None:
        self.tokens, self.refused, self.largest = tokens, 0, 0

    def __call__(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids.numel() > self.tokens:
            self.refused += 1
            raise torch.OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {ids.numel()} tokens' worth"
            )
        self.largest = max(self.largest, ids.numel())


@pytest.fixture
def limited(tiny_llama, tiny_tokenizer, tmp_path):
    """(A subject whose batches are fitted to a limit, the limit, its fit store)."""
    limit = Limit(900)
    handle = tiny_llama.register_forward_pre_hook(limit, with_kwargs=True)
    store = FitStore(tmp_path / "fit.json")
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="limited", fit_memory=True,
                       fit_store=store)  # fmt: skip
    yield subject, limit, store
    handle.remove()


def _plain(tiny_llama, tiny_tokenizer):
    return HFCausal(tiny_llama, tiny_tokenizer, name="plain")


def _unlimited(limit: Limit, tiny_llama, tiny_tokenizer, requests):
    """The answers of the same model without batches fitted, the limit lifted meanwhile."""
    tokens, limit.tokens = limit.tokens, 1 << 30
    try:
        return _plain(tiny_llama, tiny_tokenizer).answer(requests)
    finally:
        limit.tokens, limit.largest = tokens, 0


def _same(got, want):
    for a, b in zip(got, want, strict=True):
        if hasattr(a, "logprobs"):
            assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
        else:
            assert a.text == b.text


def test_the_largest_budget_that_fits_is_found_once_and_remembered(
    limited, tiny_llama, tiny_tokenizer
):
    subject, limit, store = limited
    want = _unlimited(limit, tiny_llama, tiny_tokenizer, SCORED + GENERATED)
    _same(subject.answer(SCORED + GENERATED), want)
    found = store.get(f"{subject.fingerprint}/cpu")
    assert found == 512  # 2**20 halved until a forward over it fits under 900 tokens
    assert subject.max_batch_tokens == found and limit.largest <= 900
    assert limit.refused == 11  # the tries from 2**20 down to 1024: none on a real batch
    # a second subject on the same model and card starts from it: nothing is tried again
    tried = limit.refused
    again = HFCausal(tiny_llama, tiny_tokenizer, name="again", fit_memory=True, fit_store=store)
    _same(again.answer(SCORED[:4]), want[:4])
    assert again.max_batch_tokens == found and limit.refused == tried


def test_running_out_of_memory_mid_run_halves_the_batch_and_retries(
    limited, tiny_llama, tiny_tokenizer
):
    """A remembered budget that no longer fits (another job took memory): the run goes on
    with halved batches, answers unchanged, and the smaller budget is remembered."""
    subject, limit, store = limited
    key = f"{subject.fingerprint}/cpu"
    store.put(key, 8192)
    want = _unlimited(limit, tiny_llama, tiny_tokenizer, SCORED + GENERATED)
    _same(subject.answer(SCORED + GENERATED), want)
    assert limit.refused >= 1
    assert subject.max_batch_tokens < 8192 and store.get(key) == subject.max_batch_tokens


def test_a_request_that_does_not_fit_alone_fails_in_one_line(limited):
    subject, limit, _ = limited
    limit.tokens = 10  # less than any request
    with pytest.raises(ModelError, match="one request alone does not fit in the memory of cpu"):
        subject.answer(SCORED[:2])


def test_other_errors_are_not_taken_for_memory(limited):
    subject, limit, _ = limited

    def broken(*_args, **_kwargs):
        raise RuntimeError("CUDA error: device-side assert triggered")

    subject._fitted = True
    handle = subject.model.register_forward_pre_hook(broken, with_kwargs=True)
    try:
        with pytest.raises(RuntimeError, match="device-side assert"):
            subject.answer(SCORED[:2])
    finally:
        handle.remove()
    assert not is_out_of_memory(RuntimeError("CUDA error: device-side assert triggered"))
    assert is_out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"))


def test_on_the_cpu_batches_are_not_fitted(tiny_llama, tiny_tokenizer):
    subject = _plain(tiny_llama, tiny_tokenizer)
    assert not subject.fits_memory
    subject.answer(SCORED[:2])
    assert (subject.batch_size, subject.max_batch_tokens) == (16, 32_768)


def test_largest_fitting_halves_down_to_its_floor():
    assert largest_fitting(lambda t: t <= 5000, start=1 << 16, floor=256) == 4096
    assert largest_fitting(lambda t: False, start=1 << 16, floor=256) == 256
    assert largest_fitting(lambda t: True, start=1 << 16, floor=256) == 1 << 16
