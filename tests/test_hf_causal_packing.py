"""Packed candidate scoring (``HFCausal._score_packed``) against one full forward per
candidate and against the per-candidate path it replaced, on tiny random models.

The models are initialised wide (initializer_range=0.2) so that a candidate seeing another
candidate's tokens, or sitting at the wrong positions, moves its log-prob far beyond the
1e-4 allowed for float32 rounding.
"""

from __future__ import annotations

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects.hf import causal as hf_causal
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.packed_scoring import (
    groups,
    layout,
    pack_groups,
    packed_batches,
    per_request,
    shared_pieces,
)

TOLERANCE = 1e-4
LONG = ("Helsinkiborough", "Quazzlefort")  # several tokens each
SHORT = ("Paris", "France", "Italy")  # one token each after the separating space


def _llama_config(vocab_size: int, positions: int) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=positions,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, initializer_range=0.2,
    )  # fmt: skip


def _gpt2_config(vocab_size: int, positions: int) -> GPT2Config:
    return GPT2Config(
        vocab_size=vocab_size, n_embd=32, n_layer=2, n_head=4, n_positions=positions,
        bos_token_id=1, eos_token_id=2, initializer_range=0.2,
    )  # fmt: skip


def _build(cls, config):
    torch.manual_seed(0)
    return cls(config).eval()


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def subject(request, tiny_tokenizer) -> HFCausal:
    """A wide tiny model (Llama: rotary positions; GPT-2: learned absolute positions)."""
    n = len(tiny_tokenizer)
    if request.param == "llama":
        model = _build(LlamaForCausalLM, _llama_config(n, 256))
    else:
        model = _build(GPT2LMHeadModel, _gpt2_config(n, 256))
    return HFCausal(model, tiny_tokenizer, name=request.param)


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def short(request, tiny_tokenizer) -> HFCausal:
    """A wide tiny model taking 64 positions."""
    n = len(tiny_tokenizer)
    if request.param == "llama":
        model = _build(LlamaForCausalLM, _llama_config(n, 64))
    else:
        model = _build(GPT2LMHeadModel, _gpt2_config(n, 64))
    return HFCausal(model, tiny_tokenizer, name=request.param)


def _requests() -> list[CandidateScoreRequest]:
    """Contexts of different lengths; candidates of one and of several tokens, mixed."""
    contexts = [
        "The fish lives in",
        "Anna visited her friend who works in a bakery that has bread and flowers in",
        "The meat",
        "",
    ]
    sets = [LONG + SHORT, SHORT, ("Quazzlefort",), (*SHORT[:1], *LONG, "Helsinkiborough Paris")]
    return [CandidateScoreRequest(c, s) for c in contexts for s in sets]


def _full_forwards(model, ctx: list[int], cands: list[list[int]]) -> list[float]:
    """One unpadded forward over context + candidate (but its last token, which is only
    predicted) for each candidate, log-probs read off the full logits."""
    out = []
    for tokens in cands:
        with torch.inference_mode():
            logits = model(torch.tensor([ctx + tokens[:-1]])).logits[0].float()
        logp = torch.log_softmax(logits, -1)
        out.append(sum(float(logp[len(ctx) - 1 + k, t]) for k, t in enumerate(tokens)))
    return out


def _score(subject: HFCausal, path, encoded) -> list[list[float]]:
    with torch.inference_mode():
        return [list(s.logprobs) for s in path(encoded)]


def _far(a: list[list[float]], b: list[list[float]]) -> float:
    return max(abs(x - y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))


def test_packed_scores_match_full_forwards_and_the_per_candidate_path(subject):
    assert subject._packs
    encoded = [subject._encode(r)[0] for r in _requests()]
    packed = _score(subject, subject._score_packed, encoded)
    full = [_full_forwards(subject.model, ctx, cands) for ctx, cands in encoded]
    assert _far(packed, full) < TOLERANCE
    assert _far(packed, _score(subject, subject._score_shared, encoded)) < TOLERANCE


def test_packed_scores_do_not_depend_on_the_batch(subject):
    reqs = _requests()
    one = HFCausal(subject.model, subject.tokenizer, name="t", batch_size=1).answer(reqs)
    many = HFCausal(subject.model, subject.tokenizer, name="t", batch_size=16).answer(reqs)
    assert [a.n_tokens for a in one] == [a.n_tokens for a in many]
    assert _far([list(a.logprobs) for a in one], [list(a.logprobs) for a in many]) < TOLERANCE


def test_requests_sharing_a_row_do_not_see_each_other(subject):
    """Sixteen short requests (four contexts, four candidate sets each) in pieces of their
    own, eight pieces a row, and in the pieces that share beginnings, two rows a forward:
    each request scores as its own full forwards do."""
    encoded = [subject._encode(r)[0] for r in _requests()]
    full = [_full_forwards(subject.model, ctx, cands) for ctx, cands in encoded]
    found = groups(encoded, subject.max_length)
    rows = [
        [layout([group]) for _, group in found[:8]],
        [layout([group]) for _, group in found[8:]],
    ]
    with torch.inference_mode():
        cand, logprobs = subject._score_rows(rows)
    scores = torch.zeros(sum(len(c) for _, c in encoded), dtype=torch.float64)
    scores.index_add_(0, cand, logprobs)
    alone = [list(a.logprobs) for a in per_request(encoded, scores)]
    assert _far(alone, full) < TOLERANCE

    made = shared_pieces([group for _, group in found], hf_causal.PACKED_ROW_TOKENS)
    assert max(len(piece) for piece in made) >= 4  # beginnings are shared
    two_rows = HFCausal(subject.model, subject.tokenizer, name="t", batch_size=2)
    answers = two_rows.answer(_requests())
    assert _far([list(a.logprobs) for a in answers], full) < TOLERANCE


def _alike() -> list[CandidateScoreRequest]:
    """Contexts beginning alike every way a tree can hold them: one the beginning of
    another, two leaving each other in the middle of a word, one asked twice with
    different candidates, and one sharing nothing."""
    return [
        CandidateScoreRequest("Anna visited her friend", LONG + SHORT),
        CandidateScoreRequest("Anna visited her friend who works in a bakery", SHORT),
        CandidateScoreRequest("Anna visited her friendliest neighbour in", LONG),
        CandidateScoreRequest("Anna visited her friend", ("Quazzlefort Paris",)),
        CandidateScoreRequest("Anna visited", ("her", "Helsinkiborough")),
        CandidateScoreRequest("The meat", SHORT),
    ]


def test_requests_beginning_alike_read_their_beginning_once_and_score_alone(subject):
    encoded = [subject._encode(r)[0] for r in _alike()]
    found = [group for _, group in groups(encoded, subject.max_length)]
    (piece,) = shared_pieces(found, hf_causal.PACKED_ROW_TOKENS)
    shared = len(layout([found[i] for i in piece]).ids)
    distinct = {tuple(ctx[:k]) for ctx, _ in encoded for k in range(1, len(ctx) + 1)}
    assert shared == len(distinct) + sum(len(t) - 1 for _, c in encoded for t in c)
    packed = _score(subject, subject._score_packed, encoded)
    full = [_full_forwards(subject.model, ctx, cands) for ctx, cands in encoded]
    assert _far(packed, full) < TOLERANCE


@pytest.mark.parametrize("row_tokens", [1, 8, 40])
def test_shared_pieces_hold_every_group_once_within_their_bound(subject, row_tokens):
    encoded = [subject._encode(r)[0] for r in _alike() + _requests()]
    found = [group for _, group in groups(encoded, subject.max_length)]
    made = shared_pieces(found, row_tokens)
    assert sorted(i for piece in made for i in piece) == list(range(len(found)))
    for piece in made:
        alone = max(len(layout([found[i]]).ids) for i in piece)
        assert len(layout([found[i] for i in piece]).ids) <= alone + row_tokens or len(piece) == 1
        contexts = [found[i][0] for i in piece]
        assert contexts == sorted(contexts)


def test_a_row_per_request_scores_as_shared_rows_do(subject, monkeypatch):
    shared = subject.answer(_requests())
    monkeypatch.setattr(hf_causal, "PACKED_ROW_TOKENS", 1)
    alone = HFCausal(subject.model, subject.tokenizer, name="t").answer(_requests())
    assert _far([list(a.logprobs) for a in alone], [list(a.logprobs) for a in shared]) < TOLERANCE


def test_single_token_candidates_are_read_off_the_context(subject):
    (ctx, cands), _ = subject._encode(CandidateScoreRequest("The fish lives in", SHORT))
    assert all(len(tokens) == 1 for tokens in cands)
    packed = _score(subject, subject._score_packed, [(ctx, cands)])
    assert _far(packed, [_full_forwards(subject.model, ctx, cands)]) < TOLERANCE


def test_a_truncated_context_with_many_candidates_is_split_over_rows(short):
    """72 candidate tokens to feed after a context cut to fit 64 positions: two rows, each
    candidate still at positions below 64 (GPT-2's learned positions would index past its
    table otherwise) and scored as one full forward over the kept context would score it."""
    request = CandidateScoreRequest("the fish lives in France and" * 40, ("Helsinkiborough",) * 12)
    (ctx, cands), truncated = short._encode(request)
    assert truncated and len(ctx) + len(cands[0]) - 1 == short.max_length
    assert len(pack_groups(cands, short.max_length)) == 2
    (answer,) = short.answer([request])
    assert answer.truncated
    assert _far([list(answer.logprobs)], [_full_forwards(short.model, ctx, cands)]) < TOLERANCE


class _DropsCustomMasks(LlamaForCausalLM):
    """A model that ignores a 4D attention mask, as one predating custom masks might."""

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        if attention_mask is not None and attention_mask.dim() == 4:
            attention_mask = None
        return super().forward(input_ids, attention_mask, position_ids, **kwargs)


class _RefusesCustomMasks(LlamaForCausalLM):
    """A model that raises on a 4D attention mask."""

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        if attention_mask is not None and attention_mask.dim() == 4:
            raise ValueError("attention_mask must be 2D")
        return super().forward(input_ids, attention_mask, position_ids, **kwargs)


class _ProjectsElsewhere(LlamaForCausalLM):
    """A model whose logits do not come out of the layer it names as its output embeddings."""

    def get_output_embeddings(self):
        return torch.nn.Identity()


@pytest.mark.parametrize("cls", [_DropsCustomMasks, _RefusesCustomMasks, _ProjectsElsewhere])
def test_a_model_packing_cannot_serve_keeps_the_per_candidate_path(cls, tiny_tokenizer):
    model = _build(cls, _llama_config(len(tiny_tokenizer), 256))
    subject = HFCausal(model, tiny_tokenizer, name="old")
    assert not subject._packs
    reqs = _requests()
    answers = subject.answer(reqs)
    full = [_full_forwards(model, *subject._encode(r)[0]) for r in reqs]
    assert _far([list(a.logprobs) for a in answers], full) < TOLERANCE


@pytest.mark.parametrize("row_tokens", [1, 10, 40])
@pytest.mark.parametrize("max_rows,max_tokens", [(1, 1000), (3, 1000), (16, 60), (16, 10)])
def test_packed_batches_place_every_piece_once_within_the_limits(row_tokens, max_rows, max_tokens):
    lengths = [5, 30, 7, 7, 12, 1, 25, 3, 3, 18, 9, 70]
    plan = packed_batches(lengths, max_rows=max_rows, max_tokens=max_tokens, row_tokens=row_tokens)
    assert sorted(i for batch in plan for row in batch for i in row) == list(range(len(lengths)))
    for batch in plan:
        longest = max(lengths[i] for row in batch for i in row)
        capacity = max(longest, min(row_tokens, max_tokens))
        assert all(sum(lengths[i] for i in row) <= capacity for row in batch)
        assert len(batch) <= max_rows
        assert capacity * len(batch) <= max_tokens or len(batch) == 1


def test_packed_batches_fill_rows_longest_first():
    assert packed_batches([3, 6, 2, 5, 4], max_rows=2, max_tokens=100, row_tokens=10) == [
        [[1, 4], [3, 0, 2]]
    ]
