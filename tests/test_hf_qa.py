"""HFQA (span-answer requests) against tiny BERT question-answering models: one
whose start/end logits are set by hand to point at known tokens, one random."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from conftest import tiny_bert_config
from faithprobe.errors import ModelError, UsageError
from faithprobe.requests import CandidateScoreRequest, SpanAnswerRequest
from faithprobe.runner import check_accepts
from faithprobe.subjects import BACKENDS, load_subject
from faithprobe.subjects.hf.extractive_qa import HFQA
from faithprobe.subjects.hf.mc import HFMC

QUESTION = "Where does Henry live?"
CONTEXT = "Henry lives in France. The capital of Henry's country is Paris. Zoe lives in Finland."
FILLER = "Zoe lives in Finland. "


def _random_qa(tokenizer):
    from transformers import BertForQuestionAnswering

    torch.manual_seed(0)
    return BertForQuestionAnswering(tiny_bert_config(len(tokenizer))).eval()


def _marked_qa(tokenizer, start: str, end: str, cls_weight: float = 0.0):
    """A BERT QA model whose logits depend on the token id alone: the encoder layers add
    nothing to the residual stream, positions and segments are zeroed, and only the
    ``start`` token (start logit), the ``end`` token (end logit) and, if ``cls_weight``,
    the first token (both logits, times ``cls_weight``) have non-zero embeddings."""
    model = _random_qa(tokenizer)
    with torch.no_grad():
        for layer in model.bert.encoder.layer:
            for dense in (layer.attention.output.dense, layer.output.dense):
                dense.weight.zero_()
                dense.bias.zero_()
        emb = model.bert.embeddings
        emb.position_embeddings.weight.zero_()
        emb.token_type_embeddings.weight.zero_()
        emb.word_embeddings.weight.zero_()
        vocab = tokenizer.get_vocab()
        emb.word_embeddings.weight[vocab[start], 0] = 1.0
        emb.word_embeddings.weight[vocab[end], 1] = 1.0
        if cls_weight:
            emb.word_embeddings.weight[tokenizer.cls_token_id, 2] = 1.0
        qa = model.qa_outputs
        qa.weight.zero_()
        qa.bias.zero_()
        qa.weight[0, 0] = qa.weight[1, 1] = 1.0
        qa.weight[0, 2] = qa.weight[1, 2] = cls_weight
    return model


def test_hand_set_logits_pick_the_marked_span(tiny_pair_tokenizer):
    model = _marked_qa(tiny_pair_tokenizer, "ĠThe", "ĠParis")
    subject = HFQA(model, tiny_pair_tokenizer, name="marked")
    assert subject.accepts == frozenset({"span-answer", "saliency"})
    assert subject.max_length == 300  # 384 capped by max_position_embeddings
    (ans,) = subject.answer([SpanAnswerRequest(QUESTION, CONTEXT)])
    # the token offsets of "ĠThe" include the space before it: trimmed away
    assert ans.text == "The capital of Henry's country is Paris"
    assert (ans.start, ans.end) == (23, 62)
    assert CONTEXT[ans.start : ans.end] == ans.text
    assert ans.null_score == pytest.approx(0.0, abs=1e-6)
    assert ans.score > 5  # start logit + end logit of the marked tokens

    # a span longer than max_answer_tokens is not allowed: the marked start stays
    short = HFQA(model, tiny_pair_tokenizer, name="marked", max_answer_tokens=4)
    (ans,) = short.answer([SpanAnswerRequest(QUESTION, CONTEXT)])
    assert ans.text.startswith("The") and len(ans.text) < len("The capital of Henry")
    assert ans.score < 7


def test_answer_in_a_later_window_maps_to_context_offsets(tiny_pair_tokenizer):
    model = _marked_qa(tiny_pair_tokenizer, "ĠParis", "ĠParis")
    subject = HFQA(model, tiny_pair_tokenizer, name="marked", max_length=48, doc_stride=8)
    context = FILLER * 2 + "The capital of Henry's country is Paris. " + FILLER * 6
    request = SpanAnswerRequest(QUESTION, context)
    windows = subject._encode(request)[0].windows
    assert len(windows) >= 4
    where = context.index("Paris")

    def holds(window):
        return any(o and o[0] <= where < o[1] for o in window.offsets)

    assert not holds(windows[0]) and holds(windows[1])
    # together the windows hold every context token
    covered = {o for w in windows for o in w.offsets if o}
    whole = tiny_pair_tokenizer(context, add_special_tokens=False, return_offsets_mapping=True)
    assert covered == set(whole["offset_mapping"])

    (ans,) = subject.answer([request])
    assert (ans.text, ans.start, ans.end) == ("Paris", where, where + 5)

    # a question longer than the window keeps its last half-window of tokens
    history = " ".join(["Zoe lives in Finland?"] * 20)
    (ans,) = subject.answer([SpanAnswerRequest(f"{history} {QUESTION}", context)])
    assert (ans.text, ans.start, ans.end) == ("Paris", where, where + 5)


def test_null_answer_wins_above_the_threshold(tiny_pair_tokenizer):
    model = _marked_qa(tiny_pair_tokenizer, "ĠThe", "ĠParis", cls_weight=2.0)
    request = SpanAnswerRequest(QUESTION, CONTEXT)
    (null,) = HFQA(model, tiny_pair_tokenizer, name="m").answer([request])
    assert (null.text, null.start, null.end) == ("", -1, -1)
    assert null.null_score > null.score > 5  # both still reported
    gap = null.null_score - null.score

    lenient = HFQA(model, tiny_pair_tokenizer, name="m", null_threshold=gap + 1)
    (span,) = lenient.answer([request])
    assert span.text == "The capital of Henry's country is Paris"
    assert (span.score, span.null_score) == pytest.approx((null.score, null.null_score))
    strict = HFQA(model, tiny_pair_tokenizer, name="m", null_threshold=gap - 1)
    assert strict.answer([request])[0].text == ""
    assert lenient.fingerprint != strict.fingerprint

    # no context at all: nothing to extract, the null answer
    (empty,) = lenient.answer([SpanAnswerRequest(QUESTION, "")])
    assert (empty.text, empty.start, empty.end, empty.score) == ("", -1, -1, -math.inf)


def _requests():
    out = []
    for i in range(10):
        ctx = f"Henry lives in France. {FILLER * (i % 4 * 3)}The capital is Paris."
        out.append(SpanAnswerRequest(f"Who lives in {('France', 'Finland')[i % 2]}?", ctx))
    return out


def _brute_force(model, tokenizer, request, max_answer_tokens=30):
    """The best span and null score of a one-window request from a plain model call."""
    enc = tokenizer(
        request.question,
        request.context,
        return_offsets_mapping=True,
        return_tensors="pt",
        return_token_type_ids=True,
    )
    offsets = enc.pop("offset_mapping")[0].tolist()
    context = [s == 1 for s in enc.sequence_ids(0)]
    with torch.no_grad():
        out = model(**enc)
    start, end = out.start_logits[0].tolist(), out.end_logits[0].tolist()
    best = max(
        (start[s] + end[e], offsets[s][0], offsets[e][1])
        for s in range(len(start))
        for e in range(s, min(s + max_answer_tokens, len(end)))
        if context[s] and context[e]
    )
    return best, start[0] + end[0]


def test_batch_size_changes_nothing(tiny_pair_tokenizer):
    model = _random_qa(tiny_pair_tokenizer)
    requests = _requests()
    settings = dict(name="random", max_length=64, doc_stride=16, null_threshold=1e9)
    one = HFQA(model, tiny_pair_tokenizer, batch_size=1, **settings).answer(requests)
    four = HFQA(model, tiny_pair_tokenizer, batch_size=4, **settings).answer(requests)
    for a, b in zip(one, four, strict=True):
        assert (a.text, a.start, a.end) == (b.text, b.start, b.end)
        assert a.score == pytest.approx(b.score, abs=1e-5)
        assert a.null_score == pytest.approx(b.null_score, abs=1e-5)
    assert len({a.text for a in one}) > 2  # the random model answers differently
    lengths = [len(tiny_pair_tokenizer(r.question, r.context)["input_ids"]) for r in requests]
    assert min(lengths) <= 64 < max(lengths)  # some requests need several windows
    # one-window requests agree with a brute-force search over a plain model call
    for req, a, n in zip(requests, one, lengths, strict=True):
        if n <= 64:
            (score, start, end), null = _brute_force(model, tiny_pair_tokenizer, req)
            assert a.score == pytest.approx(score, abs=1e-5)
            assert a.null_score == pytest.approx(null, abs=1e-5)
            assert req.context[start:end].strip() == a.text


def test_load_subject_detects_a_question_answering_model(tiny_pair_tokenizer, tmp_path):
    model = _marked_qa(tiny_pair_tokenizer, "ĠThe", "ĠParis")
    folder = tmp_path / "qa"
    model.save_pretrained(folder)
    tiny_pair_tokenizer.save_pretrained(folder)
    request = SpanAnswerRequest(QUESTION, CONTEXT)
    loaded = load_subject(str(folder))
    assert isinstance(loaded, HFQA) and "hf-qa" in BACKENDS
    forced = load_subject(f"hf-qa:{folder}")
    assert isinstance(forced, HFQA)
    assert loaded.fingerprint == forced.fingerprint
    assert loaded.answer([request]) == forced.answer([request])
    assert loaded.answer([request])[0].text == "The capital of Henry's country is Paris"


def test_mismatched_requests_and_tokenizers_get_clear_errors(tiny_pair_tokenizer, tiny_bert_mc):
    subject = HFQA(_random_qa(tiny_pair_tokenizer), tiny_pair_tokenizer, name="qa")
    with pytest.raises(UsageError, match="cannot answer candidate-scores.*span-answer"):
        subject.answer([CandidateScoreRequest("The sky is", ("blue", "green"))])
    mc = HFMC(tiny_bert_mc, tiny_pair_tokenizer, name="mc")
    with pytest.raises(UsageError, match=r"cannot answer span-answer requests; it answers [^.]*$"):
        mc.answer([SpanAnswerRequest(QUESTION, CONTEXT)])  # a subject knows no backends
    with pytest.raises(  # the runner names them
        UsageError, match=r"span-answer requests need a model of backend heuristic, hf-qa$"
    ):
        check_accepts(mc, [SpanAnswerRequest(QUESTION, CONTEXT)])
    with pytest.raises(ValueError, match="doc_stride"):
        HFQA(subject.model, tiny_pair_tokenizer, name="qa", max_length=32, doc_stride=32)

    slow = SimpleNamespace(is_fast=False)  # transformers 5 builds fast tokenizers only
    with pytest.raises(ModelError, match="slow.*fast"):
        HFQA(subject.model, slow, name="slow")


def _head(hidden: int, bias: tuple[float, ...] = (0.0, 2.0, 1.0, -1.0), seed: int = 1):
    """An answer-kind head: random weights (a different output per input) or, with
    ``seed=None``, zero weights and ``bias`` (the same output for every input)."""
    from faithprobe.subjects.hf.answer_kind_head import AnswerKindHead

    if seed is not None:
        torch.manual_seed(seed)
    head = AnswerKindHead(hidden)
    if seed is None:
        with torch.no_grad():
            head.classifier.weight.zero_()
            head.classifier.bias.copy_(torch.tensor(bias))
    return head.eval()


def test_the_answer_kind_head_answers_kind_requests(tiny_pair_tokenizer):
    from faithprobe.requests import ANSWER_KINDS, AnswerKindRequest, CandidateScores

    model = _random_qa(tiny_pair_tokenizer)
    plain = HFQA(model, tiny_pair_tokenizer, name="qa")
    request = AnswerKindRequest("Does Henry live in France?", CONTEXT)
    with pytest.raises(UsageError, match="cannot answer answer-kind.*answer-kind \\(yes/no"):
        check_accepts(plain, [request])
    fixed = HFQA(model, tiny_pair_tokenizer, name="qa",
                           answer_kind_head=_head(32, seed=None))  # fmt: skip
    assert fixed.accepts == frozenset({"span-answer", "saliency", "answer-kind"})
    assert plain.accepts == frozenset({"span-answer", "saliency"})
    (ans,) = fixed.answer([request])
    want = torch.log_softmax(torch.tensor([0.0, 2.0, 1.0, -1.0]), dim=0).tolist()
    assert isinstance(ans, CandidateScores) and len(ans.logprobs) == len(ANSWER_KINDS)
    assert ans.logprobs == pytest.approx(want, abs=1e-6)
    # span answers are the plain model's, with or without the head
    span = SpanAnswerRequest(QUESTION, CONTEXT)
    assert fixed.answer([span]) == plain.answer([span])
    # the head is part of the fingerprint
    other = HFQA(model, tiny_pair_tokenizer, name="qa", answer_kind_head=_head(32))
    assert len({plain.fingerprint, fixed.fingerprint, other.fingerprint}) == 3


def test_answer_kinds_do_not_depend_on_the_batch_size(tiny_pair_tokenizer):
    from faithprobe.requests import AnswerKindRequest

    model, head = _random_qa(tiny_pair_tokenizer), _head(32)
    requests = [AnswerKindRequest(r.question, r.context) for r in _requests()]
    settings = dict(name="random", max_length=64, doc_stride=16, answer_kind_head=head)
    one = HFQA(model, tiny_pair_tokenizer, batch_size=1, **settings).answer(requests)
    four = HFQA(model, tiny_pair_tokenizer, batch_size=4, **settings).answer(requests)
    for a, b in zip(one, four, strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
    assert len({round(a.logprobs[1], 4) for a in one}) > 2  # the head reads the input


def test_the_window_least_likely_unknown_gives_the_kinds(tiny_pair_tokenizer, monkeypatch):
    from faithprobe.requests import AnswerKindRequest

    subject = HFQA(_random_qa(tiny_pair_tokenizer), tiny_pair_tokenizer, name="qa",
                             max_length=48, doc_stride=8, answer_kind_head=_head(32))  # fmt: skip
    request = AnswerKindRequest(QUESTION, FILLER * 8)
    n = len(subject._encode(request)[0].windows)
    assert n >= 3
    rows = torch.log_softmax(torch.randn(n, 4, generator=torch.Generator().manual_seed(0)), -1)
    rows[1, 3] = rows[2, 3] = -20.0  # windows 1 and 2 least likely unknown: the first wins
    monkeypatch.setattr(subject, "_kind_logprobs", lambda windows: rows[: len(windows)])
    (ans,) = subject.answer([request])
    assert ans.logprobs == pytest.approx(rows[1].tolist())


def test_a_saved_head_is_loaded_with_its_folder(tiny_pair_tokenizer, tmp_path):
    import json

    from faithprobe.requests import AnswerKindRequest
    from faithprobe.subjects.hf.answer_kind_head import CONFIG_FILE, WEIGHTS_FILE

    folder = tmp_path / "qa"
    _random_qa(tiny_pair_tokenizer).save_pretrained(folder)
    tiny_pair_tokenizer.save_pretrained(folder)
    head = _head(32)
    head.save(folder)
    loaded = load_subject(str(folder))
    request = AnswerKindRequest("Does Henry live in France?", CONTEXT)
    in_memory = HFQA(loaded.model, tiny_pair_tokenizer, name="m", answer_kind_head=head)
    assert loaded.answer([request])[0].logprobs == pytest.approx(
        in_memory.answer([request])[0].logprobs, abs=1e-6
    )
    config = json.loads((folder / CONFIG_FILE).read_text())
    (folder / CONFIG_FILE).write_text(json.dumps({**config, "kinds": ["yes", "no"]}))
    with pytest.raises(ModelError, match="kinds"):
        load_subject(str(folder))
    (folder / CONFIG_FILE).write_text(json.dumps({**config, "hidden_size": 16}))
    with pytest.raises(ModelError, match="does not fit"):
        load_subject(str(folder))
    (folder / WEIGHTS_FILE).unlink()
    assert "answer-kind" not in load_subject(str(folder)).accepts
