"""HFMC against tiny random BERT / RoBERTa multiple-choice models (no downloads)."""

from __future__ import annotations

import math

import pytest
import torch

from faithprobe.generators.distractors import DistractorConfig, generate
from faithprobe.multiple_choice_prompts import ChoicePrompt
from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects import BACKENDS, load_subject
from faithprobe.subjects.hf.mc import HFMC


@pytest.fixture(scope="module")
def requests_():
    """~40 requests with 2 to 5 choices, one with an empty context, a few very long ones."""
    items = generate(DistractorConfig(), 0)
    picked = items[:: max(1, len(items) // 40)][:40]
    prompt = ChoicePrompt()
    out = []
    for n, item in enumerate(picked):
        choices = (item.candidates * 3)[: 2 + n % 4]
        context = prompt.render(item.context)
        if n % 9 == 4:
            context = " ".join([item.context] * 12)  # far longer than max_length below
        out.append(CandidateScoreRequest(context, tuple(choices), item.suffix))
    out.append(CandidateScoreRequest("", ("the first one", "another answer", "a third")))
    return out


@pytest.fixture(scope="module")
def tiny_roberta_mc(tiny_pair_tokenizer):
    """RoBERTa: no token type ids, positions counted from the non-pad tokens."""
    from transformers import RobertaConfig, RobertaForMultipleChoice

    config = RobertaConfig(
        vocab_size=len(tiny_pair_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=300,
        type_vocab_size=1,
        pad_token_id=0,
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    return RobertaForMultipleChoice(config).eval()


@pytest.fixture(params=["bert", "roberta"])
def model(request, tiny_bert_mc, tiny_roberta_mc):
    return {"bert": tiny_bert_mc, "roberta": tiny_roberta_mc}[request.param]


def _subject(model, tokenizer, **kwargs):
    kwargs.setdefault("max_length", 64)
    return HFMC(model, tokenizer, name="tiny-mc", **kwargs)


def _reference(model, tokenizer, request, max_length) -> list[float]:
    """One plain call of the model per request, as its documentation shows."""
    k = len(request.candidates)
    enc = tokenizer(
        [request.context] * k,
        list(request.candidates),
        truncation="only_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
        return_token_type_ids=model.config.model_type == "bert",
    )
    with torch.no_grad():
        logits = model(**{key: v[None] for key, v in enc.items()}).logits[0]
    return torch.log_softmax(logits, -1).tolist()


def test_scores_are_a_distribution_over_choices(model, tiny_pair_tokenizer, requests_):
    scores = _subject(model, tiny_pair_tokenizer).answer(requests_)
    for req, s in zip(requests_, scores, strict=True):
        assert len(s.logprobs) == len(req.candidates)
        assert s.n_tokens == (1,) * len(req.candidates)
        assert math.isclose(sum(math.exp(x) for x in s.logprobs), 1.0, abs_tol=1e-5)
    # random weights at initializer_range=0.2 give clearly different scores per choice
    assert any(max(s.logprobs) - min(s.logprobs) > 0.1 for s in scores)


def test_matches_plain_per_request_calls(model, tiny_pair_tokenizer, requests_):
    subject = _subject(model, tiny_pair_tokenizer, batch_size=32)
    scores = subject.answer(requests_)
    for req, s in zip(requests_, scores, strict=True):
        ref = _reference(model, tiny_pair_tokenizer, req, 64)
        assert s.logprobs == pytest.approx(ref, abs=1e-5)


def test_batch_size_does_not_change_scores(model, tiny_pair_tokenizer, requests_):
    one = _subject(model, tiny_pair_tokenizer, batch_size=1).answer(requests_)
    many = _subject(model, tiny_pair_tokenizer, batch_size=32).answer(requests_)
    small_budget = _subject(model, tiny_pair_tokenizer, batch_size=32, max_batch_tokens=300).answer(
        requests_
    )
    for a, b, c in zip(one, many, small_budget, strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
        assert a.logprobs == pytest.approx(c.logprobs, abs=1e-4)


def test_only_the_context_is_truncated(tiny_bert_mc, tiny_pair_tokenizer):
    subject = _subject(tiny_bert_mc, tiny_pair_tokenizer, max_length=32)
    context = "Alice lives in Paris and Bob lives in Rome. " * 10
    choice = "Paris is where she lives"
    (row,), truncated = subject._encode(CandidateScoreRequest(context, (choice,)))
    ids, types = row
    assert truncated
    choice_ids = tiny_pair_tokenizer(choice, add_special_tokens=False).input_ids
    assert len(ids) == 32
    assert list(ids[-len(choice_ids) - 1 : -1]) == choice_ids
    assert types[-1] == 1 and types[0] == 0
    # a choice longer than the whole budget is cut too rather than failing
    (row,), truncated = subject._encode(CandidateScoreRequest("short", (context,)))
    assert len(row[0]) == 32 and truncated


def test_max_length_is_capped_by_the_model(tiny_bert_mc, tiny_pair_tokenizer):
    assert _subject(tiny_bert_mc, tiny_pair_tokenizer, max_length=10_000).max_length == 300


def test_suffix_is_ignored_and_fingerprint_tracks_max_length(tiny_bert_mc, tiny_pair_tokenizer):
    subject = _subject(tiny_bert_mc, tiny_pair_tokenizer)
    a, b = subject.answer(
        [
            CandidateScoreRequest("Q: who?\nA:", ("Alice", "Bob")),
            CandidateScoreRequest("Q: who?\nA:", ("Alice", "Bob"), suffix=" lives here."),
        ]
    )
    # Two rows of one batch: another CPU may round them apart by an ulp (1.2e-7 was seen),
    # far below 1e-5, which is itself far below any score difference the suites read.
    assert a.n_tokens == b.n_tokens
    assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
    other = _subject(tiny_bert_mc, tiny_pair_tokenizer, max_length=32)
    assert subject.fingerprint != other.fingerprint
    assert subject.fingerprint == _subject(tiny_bert_mc, tiny_pair_tokenizer).fingerprint


def test_load_subject_detects_a_multiple_choice_folder(
    tmp_path, tiny_bert_mc, tiny_pair_tokenizer, requests_
):
    assert "hf-mc" in BACKENDS
    tiny_bert_mc.save_pretrained(tmp_path / "mc")
    tiny_pair_tokenizer.save_pretrained(tmp_path / "mc")
    loaded = load_subject(str(tmp_path / "mc"))
    assert isinstance(loaded, HFMC)
    forced = load_subject(f"hf-mc:{tmp_path / 'mc'}")
    assert isinstance(forced, HFMC)
    assert loaded.fingerprint == forced.fingerprint
    in_memory = HFMC(tiny_bert_mc, tiny_pair_tokenizer, name="x")
    for a, b in zip(
        loaded.answer(requests_[:8]),
        in_memory.answer(requests_[:8]),
        strict=True,
    ):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
