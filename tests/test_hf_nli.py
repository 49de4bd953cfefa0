"""HFNLI (NLI text-pair requests) against tiny random BERT classifiers."""

from __future__ import annotations

import math

import pytest
import torch

from conftest import tiny_bert_config
from faithprobe.errors import ModelError, UsageError
from faithprobe.records import ENTAILMENT, NON_ENTAILMENT
from faithprobe.requests import CandidateScoreRequest, TextPairRequest
from faithprobe.runner import check_accepts
from faithprobe.subjects import BACKENDS, load_subject
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.masked import HFMasked
from faithprobe.subjects.hf.nli import HFNLI

MNLI_SHUFFLED = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}
SUBJECTS = ("every dog", "some old cat", "no student", "most poodles", "a tall man")
VERBS = ("danced", "moved towards every object", "slept", "ran quickly home")


def _classifier(tokenizer, id2label):
    from transformers import BertForSequenceClassification

    config = tiny_bert_config(len(tokenizer))
    config.num_labels = len(id2label)
    config.id2label = dict(id2label)
    config.label2id = {v: k for k, v in id2label.items()}
    torch.manual_seed(0)
    return BertForSequenceClassification(config).eval()


@pytest.fixture(scope="module")
def three_class(tiny_pair_tokenizer):
    return _classifier(tiny_pair_tokenizer, MNLI_SHUFFLED)


@pytest.fixture(scope="module")
def pairs():
    """20 (premise, hypothesis) requests of varied length, two far longer than max_length."""
    out = []
    for i in range(20):
        s, v = SUBJECTS[i % 5], VERBS[i % 4]
        premise = f"{s} {v}"
        if i % 7 == 3:
            premise = " and ".join([premise] * 15)
        out.append(TextPairRequest(premise, f"{SUBJECTS[(i + 1) % 5]} {v}"))
    return out


def _reference(model, tokenizer, request, max_length=64):
    """Softmax over the model's classes from one plain call, as its documentation shows."""
    enc = tokenizer(
        request.first,
        request.second,
        truncation="longest_first",
        max_length=max_length,
        return_tensors="pt",
        return_token_type_ids=True,  # BERT: segment B marks the hypothesis
    )
    with torch.no_grad():
        return torch.softmax(model(**enc).logits[0], -1).tolist()


def test_three_classes_are_grouped_into_two(three_class, tiny_pair_tokenizer, pairs):
    subject = HFNLI(three_class, tiny_pair_tokenizer, name="mnli3", max_length=64)
    assert subject.label_groups == {ENTAILMENT: (0,), NON_ENTAILMENT: (1, 2)}
    assert subject.accepts == frozenset({"text-pair-classes"})
    scores = subject.answer(pairs)
    for req, s in zip(pairs, scores, strict=True):
        assert s.n_tokens == (1, 1)
        p_ent, p_non = (math.exp(x) for x in s.logprobs)
        assert p_ent + p_non == pytest.approx(1.0, abs=1e-6)
        probs = _reference(three_class, tiny_pair_tokenizer, req)
        assert p_ent == pytest.approx(probs[0], abs=1e-5)
        assert p_non == pytest.approx(probs[1] + probs[2], abs=1e-5)
    assert any(abs(s.logprobs[0] - s.logprobs[1]) > 0.05 for s in scores)
    # labels in another order, and a model class asked for by its own name
    (swapped, own) = subject.answer(
        [
            TextPairRequest(pairs[0].first, pairs[0].second, (NON_ENTAILMENT, ENTAILMENT)),
            TextPairRequest(pairs[0].first, pairs[0].second, ("entailment", "neutral")),
        ]
    )
    assert swapped.logprobs == pytest.approx(scores[0].logprobs[::-1], abs=1e-6)
    neutral = _reference(three_class, tiny_pair_tokenizer, pairs[0])[1]
    assert math.exp(own.logprobs[1]) == pytest.approx(neutral, abs=1e-5)
    with pytest.raises(UsageError, match="no class for the label 'maybe'"):
        subject.answer([TextPairRequest("a", "b", ("maybe",))])


def test_two_class_model_in_any_order(tiny_pair_tokenizer, pairs):
    model = _classifier(tiny_pair_tokenizer, {0: "not_entailment", 1: "entailment"})
    subject = HFNLI(model, tiny_pair_tokenizer, name="rte", max_length=64)
    assert subject.label_groups == {ENTAILMENT: (1,), NON_ENTAILMENT: (0,)}
    (s,) = subject.answer(pairs[:1])
    probs = _reference(model, tiny_pair_tokenizer, pairs[0])
    assert [math.exp(x) for x in s.logprobs] == pytest.approx([probs[1], probs[0]], abs=1e-5)


@pytest.mark.parametrize(
    "id2label, found",
    [
        ({0: "LABEL_0", 1: "LABEL_1"}, "LABEL_0"),
        ({0: "positive", 1: "entailment"}, "positive"),
        ({0: "neutral", 1: "contradiction"}, "no class stands for entailment"),
    ],
)
def test_unmappable_classes_are_refused(tiny_pair_tokenizer, id2label, found):
    model = _classifier(tiny_pair_tokenizer, id2label)
    with pytest.raises(ModelError, match=found) as err:
        HFNLI(model, tiny_pair_tokenizer, name="sentiment")
    assert "id2label" in str(err.value) and "config.json" in str(err.value)
    assert "sentiment" in str(err.value)


def test_batch_size_does_not_change_scores(three_class, tiny_pair_tokenizer, pairs):
    def scores(**kwargs):
        subject = HFNLI(three_class, tiny_pair_tokenizer, name="x", max_length=64, **kwargs)
        return subject.answer(pairs)

    for a, b, c in zip(
        scores(batch_size=1),
        scores(batch_size=8),
        scores(batch_size=8, max_batch_tokens=100),
        strict=True,
    ):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
        assert a.logprobs == pytest.approx(c.logprobs, abs=1e-5)


def test_truncation_and_fingerprint(three_class, tiny_pair_tokenizer, pairs):
    subject = HFNLI(three_class, tiny_pair_tokenizer, name="x", max_length=32)
    (row, _), truncated = subject._encode(
        TextPairRequest("every dog danced " * 20, "some animal danced")
    )
    assert len(row[0]) == 32 and row[1][-1] == 1  # the hypothesis survives, as segment B
    assert truncated
    assert HFNLI(three_class, tiny_pair_tokenizer, name="x", max_length=10_000).max_length == 300
    same = HFNLI(three_class, tiny_pair_tokenizer, name="y", max_length=32)
    longer = HFNLI(three_class, tiny_pair_tokenizer, name="x", max_length=64)
    assert subject.fingerprint == same.fingerprint != longer.fingerprint
    regrouped = HFNLI(three_class, tiny_pair_tokenizer, name="x", max_length=32)
    regrouped.label_groups = {ENTAILMENT: (0, 1), NON_ENTAILMENT: (2,)}
    regrouped._fingerprint = None
    assert regrouped.fingerprint != subject.fingerprint


def test_load_subject_detects_a_sequence_classifier(
    three_class, tiny_pair_tokenizer, tmp_path, pairs
):
    assert "hf-nli" in BACKENDS
    folder = tmp_path / "nli"
    three_class.save_pretrained(folder)
    tiny_pair_tokenizer.save_pretrained(folder)
    loaded = load_subject(str(folder))
    assert isinstance(loaded, HFNLI)
    forced = load_subject(f"hf-nli:{folder}")
    assert isinstance(forced, HFNLI)
    assert loaded.fingerprint == forced.fingerprint
    assert loaded.label_groups == {ENTAILMENT: (0,), NON_ENTAILMENT: (1, 2)}
    in_memory = HFNLI(three_class, tiny_pair_tokenizer, name="m")
    for a, b in zip(loaded.answer(pairs), in_memory.answer(pairs), strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)

    unnamed = tmp_path / "unnamed"
    _classifier(tiny_pair_tokenizer, {0: "LABEL_0", 1: "LABEL_1"}).save_pretrained(unnamed)
    tiny_pair_tokenizer.save_pretrained(unnamed)
    with pytest.raises(ModelError, match="LABEL_1"):
        load_subject(str(unnamed))


def test_other_backends_refuse_text_pairs_clearly(
    tiny_llama, tiny_bert_mlm, tiny_tokenizer, three_class, tiny_pair_tokenizer
):
    pair = TextPairRequest("every dog danced", "some dog danced")
    for subject in (
        HFCausal(tiny_llama, tiny_tokenizer, name="tiny-llama"),
        HFMasked(tiny_bert_mlm, tiny_tokenizer, name="tiny-bert"),
    ):
        with pytest.raises(UsageError, match="cannot answer text-pair-classes requests") as err:
            subject.answer([pair])
        assert subject.name in str(err.value) and "need a model" not in str(err.value)
        with pytest.raises(UsageError) as err:  # the runner names the backends that can
            check_accepts(subject, [pair])
        assert str(err.value).endswith("text-pair-classes requests need a model of backend hf-nli")
        # and they still answer what they did
        (s,) = subject.answer([CandidateScoreRequest("The capital is", ("Paris", "Rome"))])
        assert len(s.logprobs) == 2
    nli = HFNLI(three_class, tiny_pair_tokenizer, name="nli")
    with pytest.raises(UsageError, match=r"nli \(hf-nli\) cannot answer candidate-scores"):
        nli.answer([CandidateScoreRequest("The capital is", ("Paris",))])


def test_argmax_grouping_picks_the_top_class(three_class, tiny_pair_tokenizer, pairs):
    """``grouping="max"`` (natural-logic's ``decision=argmax``): each label scores its most
    probable class, so entailment tops the answer exactly where a plain argmax over the
    three classes picks it; the default keeps the key requests had before the field."""
    subject = HFNLI(three_class, tiny_pair_tokenizer, name="mnli3", max_length=64)
    argmax = [TextPairRequest(r.first, r.second, grouping="max") for r in pairs]
    answers = subject.answer(argmax)
    by_sum = subject.answer(pairs)
    differ = 0
    for req, s, summed in zip(pairs, answers, by_sum, strict=True):
        probs = _reference(three_class, tiny_pair_tokenizer, req)
        assert [math.exp(x) for x in s.logprobs] == pytest.approx(
            [probs[0], max(probs[1:])], abs=1e-5
        )
        top_is_entailment = max(range(3), key=probs.__getitem__) == 0
        if abs(probs[0] - max(probs[1:])) > 1e-4:  # a near tie may round either way
            assert (s.logprobs[0] > s.logprobs[1]) == top_is_entailment
        differ += (s.logprobs[0] > s.logprobs[1]) != (summed.logprobs[0] > summed.logprobs[1])
    assert differ  # near-flat random classes: the two rules part on some pairs
    key = TextPairRequest("Every dog barked.", "Every poodle barked.").key("fp")
    assert key == "08694727c6a27eefb57a55c49b1f9c5e7dbfcdd623a88fe7ac625fa1fa4b69e5"
    assert argmax[0].key("fp") != pairs[0].key("fp")
