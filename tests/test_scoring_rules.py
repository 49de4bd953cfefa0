"""The methods' scoring rules of a candidate-score request (``first_token``, ``start``):
every backend that scores candidates against a plain-transformers computation by hand, the
cache key of a request that does not use them unchanged, and the distractors suite's options
that ask for them (``-o scoring=first-token``, ``-o start=bos``), recorded and shown."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace

import pytest
import torch

from faithprobe.errors import UsageError
from faithprobe.generators.distractors import DistractorConfig, generate
from faithprobe.report import write_run
from faithprobe.requests import MODEL_START, CandidateScoreRequest, GenerationRequest
from faithprobe.runner import RunConfig, run
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.masked import HFMasked
from faithprobe.suite_protocol import get_suite

ODD = ("Helsinkiborough", "Quazzlefort")  # made-up words of several tokens


def _requests(**rule) -> list[CandidateScoreRequest]:
    items = generate(DistractorConfig(), seed=0)[::97][:12]
    reqs = [CandidateScoreRequest(i.context, i.candidates + ODD, i.suffix, **rule) for i in items]
    return reqs + [CandidateScoreRequest("", ("Paris", "Helsinkiborough"), **rule)]


def test_a_request_without_a_rule_keeps_its_key():
    """Digests of requests made before the rule fields existed (and ``chat``'s, whose key
    rule is now the same mechanism)."""
    context = "Sebastian lives in France. The capital of Sebastian's country is"
    plain = CandidateScoreRequest(context, ("Paris", "Santiago"), ".")
    assert plain.key("fp") == "d1355a597626bf5e2f81ab5ad3994146d3387489d6518e271c4a81a3a3be70dd"
    assert GenerationRequest("Q: why?").key("fp") == (
        "482e2967c43502f14dfd2684c9fb727876984d0cda8cb282ff5a4bb8d7d03109"
    )
    assert GenerationRequest("Q: why?", chat=True).key("fp") == (
        "f52523310a1d36edc3db4a8e35f0973543e3ae6df5d740692dac3acba1642954"
    )
    keys = {
        CandidateScoreRequest(context, ("Paris", "Santiago"), ".", **rule).key("fp")
        for rule in ({}, {"first_token": True}, {"start": MODEL_START}, {"start": "<s>"})
    }
    assert len(keys) == 4


def _by_hand(model, tokenizer, request: CandidateScoreRequest, start: list[int]) -> list[float]:
    """The first token's log-probability of each candidate after ``start`` + the context, by
    one plain forward of the model over those ids alone."""
    ids = start + (tokenizer(request.context).input_ids if request.context else [])
    ids = ids or [tokenizer.bos_token_id]
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), -1)
    out = []
    for c in request.candidates:
        sep = " " if request.context else ""
        out.append(float(logp[tokenizer(sep + c, add_special_tokens=False).input_ids[0]]))
    return out


@pytest.mark.parametrize("model_name", ["tiny_llama", "tiny_gpt2"])
@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("start", ["", MODEL_START, "<s>", "Once upon a time."])
def test_causal_first_token_matches_a_plain_forward(
    model_name, packed, start, request, tiny_tokenizer
):
    model = request.getfixturevalue(model_name)
    reqs = _requests(first_token=True, start=start)
    answers = []
    for batch_size in (1, 32):
        subject = HFCausal(model, tiny_tokenizer, name="t", batch_size=batch_size)
        assert subject._packs  # both tiny models take the packed path unless told not to
        subject.__dict__["_packs"] = packed
        answers.append(subject.answer(reqs))
    bos = tiny_tokenizer.bos_token_id
    start_ids = {"": [], MODEL_START: [bos], "<s>": [bos]}.get(start)
    if start_ids is None:
        start_ids = tiny_tokenizer(start, add_special_tokens=False).input_ids
    for r, one, many in zip(reqs, *answers, strict=True):
        assert one.n_tokens == many.n_tokens == (1,) * len(r.candidates)
        assert one.logprobs == pytest.approx(many.logprobs, abs=1e-5)
        assert one.logprobs == pytest.approx(
            _by_hand(model, tiny_tokenizer, r, start_ids), abs=1e-5
        )


def test_the_rules_change_the_scores(tiny_llama, tiny_tokenizer):
    """The default sums every token; the first-token rule and the start token each move the
    scores of a multi-token candidate (so the tests above could tell them apart)."""
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t")
    context = "Sebastian lives in France. The capital of Sebastian's country is"
    rules = ({}, {"first_token": True}, {"first_token": True, "start": MODEL_START})
    got = [subject.answer([CandidateScoreRequest(context, ODD, **r)])[0] for r in rules]
    assert got[0].n_tokens[0] > 1 and got[1].n_tokens == (1, 1)
    for a, b in itertools.pairwise(got):
        assert abs(a.logprobs[0] - b.logprobs[0]) > 1e-3


def test_an_empty_context_is_not_given_two_start_tokens(tiny_llama, tiny_tokenizer):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t")
    bare, started = (
        subject.scoring_ids(CandidateScoreRequest("", ("Paris",), start=s))[0][0]
        for s in ("", MODEL_START)
    )
    assert bare == started == [tiny_tokenizer.bos_token_id]


def test_the_start_is_kept_when_the_context_is_cut(tiny_llama, tiny_tokenizer):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t")
    subject.max_length = 12
    request = CandidateScoreRequest("Grace lives in Chile. " * 8, ("Paris",), start=MODEL_START)
    (context, candidates), cut = subject.scoring_ids(request)
    assert cut and context[0] == tiny_tokenizer.bos_token_id
    assert len(context) + len(candidates[0]) - 1 == 12


@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_masked_first_token_is_read_at_one_mask(name, request, tiny_tokenizer):
    model = request.getfixturevalue(f"tiny_{name}_mlm")
    item = generate(DistractorConfig(), 0)[0]
    req = CandidateScoreRequest(item.context, (item.candidates[0], ODD[0]), item.suffix, True)
    one, many = (
        HFMasked(model, tiny_tokenizer, name="m", batch_size=b).answer([req, req])[0]
        for b in (1, 32)
    )
    prefix = tiny_tokenizer(item.context, add_special_tokens=False).input_ids
    rest = tiny_tokenizer(item.suffix, add_special_tokens=False).input_ids
    with torch.no_grad():
        ids = torch.tensor([prefix + [tiny_tokenizer.mask_token_id] + rest])
        logp = torch.log_softmax(model(input_ids=ids).logits[0, len(prefix)], -1)
    firsts = []
    for c in req.candidates:
        cand = tiny_tokenizer(" " + c, add_special_tokens=False).input_ids
        filled = tiny_tokenizer(req.filled(c)[0], add_special_tokens=False).input_ids
        assert prefix + cand + rest == filled  # sanity of the build
        firsts.append(cand[0])
    assert one.n_tokens == (1, 1)
    assert one.logprobs == pytest.approx([float(logp[t]) for t in firsts], abs=1e-5)
    assert one.logprobs == pytest.approx(many.logprobs, abs=1e-5)
    started = HFMasked(model, tiny_tokenizer, name="m").answer(
        [CandidateScoreRequest(req.context, req.candidates, req.suffix, True, MODEL_START)]
    )[0]
    assert started.logprobs == pytest.approx(one.logprobs, abs=1e-6)  # it reads its own
    with pytest.raises(UsageError, match="masked LM.*no start text"):
        HFMasked(model, tiny_tokenizer, name="m").answer(
            [CandidateScoreRequest("a", ("b",), start="<|endoftext|>")]
        )


def test_a_multiple_choice_head_refuses_the_rules(tiny_bert_mc, tiny_pair_tokenizer):
    from faithprobe.subjects.hf.mc import HFMC

    subject = HFMC(tiny_bert_mc, tiny_pair_tokenizer, name="mc")
    with pytest.raises(UsageError, match="multiple-choice head"):
        subject.answer([CandidateScoreRequest("Which?", ("a", "b"), first_token=True)])


def test_an_endpoint_reads_the_first_echoed_token_and_refuses_a_start():
    from faithprobe.subjects.endpoint.subject import OpenAISubject

    logprobs = SimpleNamespace(
        tokens=["Alice", " lives", " in", " Par", "is"],
        token_logprobs=[None, -2.0, -3.0, -4.0, -0.5],
        text_offset=[0, 5, 11, 14, 18],
    )
    span = OpenAISubject._span_logprob
    subject = SimpleNamespace(name="e")
    prompt = "Alice lives in Paris"
    assert span(subject, logprobs, len("Alice lives in"), prompt, "Paris") == (-4.5, 2)
    assert span(subject, logprobs, len("Alice lives in"), prompt, "Paris", True) == (-4.0, 1)
    request = CandidateScoreRequest("Alice lives in", ("Paris",), start=MODEL_START)
    with pytest.raises(UsageError, match="no start-of-text token"):
        OpenAISubject._score(subject, request, None)


def test_the_suite_asks_by_its_options():
    suite = get_suite("distractors", {"scoring": "first-token", "start": "bos"})
    item = generate(DistractorConfig(), 0)[0]
    req = suite.request(item)
    assert req.first_token and req.start == MODEL_START
    assert get_suite("distractors").request(item).default_rule
    with pytest.raises(UsageError, match="option scoring=.*choose from"):
        get_suite("distractors", {"scoring": "mean"})
    with pytest.raises(UsageError, match="answer=letter asks by letter"):
        get_suite("distractors", {"scoring": "first-token", "answer": "letter"})
    chat_only = SimpleNamespace(name="chat", accepts=frozenset({"letter-choice"}))
    assert get_suite("distractors").request(item, chat_only).kind == "letter-choice"
    with pytest.raises(UsageError, match="asked by letter: the scoring rule"):
        suite.request(item, chat_only)


def test_a_run_records_and_shows_the_rule(tmp_path, tiny_llama, tiny_tokenizer):
    config = RunConfig(
        suite="distractors",
        out=tmp_path / "run",
        cache=False,
        limit=6,
        options={"scoring": "first-token", "start": "bos"},
    )
    out = write_run(run(config, subjects=[HFCausal(tiny_llama, tiny_tokenizer, name="t")]))
    options = json.loads((out / "run.json").read_text())["options"]
    assert options["scoring"] == "first-token" and options["start"] == "bos"
    html = (out / "report.html").read_text()
    assert "scoring=&#39;first-token&#39;, start=&#39;bos&#39;" in html
    recorded = json.loads((out / "metrics.json").read_text())["options"]
    assert recorded["scoring"] == "first-token" and recorded["start"] == "bos"
