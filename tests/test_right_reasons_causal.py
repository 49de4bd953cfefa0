"""The right-reasons suite on causal LMs (generated answers, saliency of the prompt's first
answer token), Integrated Gradients' token summaries, and the random-partition significance
rate -- with tiny random models; the embedded models' run is the measured one, not a test."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.metrics.alignment import instance_alignment_rows
from faithprobe.qa.prompt import DEFAULT_TEMPLATE, QAPrompt
from faithprobe.records import QAExample
from faithprobe.requests import (
    CONTEXT,
    QUESTION,
    GenerationRequest,
    PromptSaliencyRequest,
    SaliencyRequest,
    TokenSaliency,
)
from faithprobe.subjects.hf.attribution import IntegratedGradients
from faithprobe.subjects.hf.attribution.causal import CausalIntegratedGradients, CausalLMInput
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.right_reasons.suite import same_answer
from test_hf_qa import CONTEXT as QA_CONTEXT
from test_hf_qa import QUESTION as QA_QUESTION
from test_hf_qa import _random_qa

EXAMPLE = QAExample(
    id="c1",
    question="Which film came out earlier, Red Harbor or Blue Field?",
    context="Red Harbor came out in 1950. Blue Field came out in 1960.",
    answers=("Red Harbor",),
)


@pytest.mark.parametrize("template", [DEFAULT_TEMPLATE, "Q: {question}\n{context}\nA:"])
def test_prompt_spans_point_at_the_question_and_the_context(template):
    example = QAExample(**{**EXAMPLE.__dict__, "history": (("Who?", "Ann"),)})
    text, (qs, qe), (cs, ce) = QAPrompt(template).render_with_spans(example)
    assert text == QAPrompt(template).render(example)
    assert text[qs:qe] == example.question and text[cs:ce] == example.context
    # without a {history} slot the turns go before the question, outside its span
    assert ("Who? Ann " + example.question in text) == ("{history}" not in template)


def _prompt_request(method="ig", steps=8, template=DEFAULT_TEMPLATE):
    text, question, context = QAPrompt(template).render_with_spans(EXAMPLE)
    return PromptSaliencyRequest(text, question, context, method, steps)


def test_causal_saliency_attributes_the_first_answer_token_to_question_and_context(
    tiny_llama, tiny_tokenizer
):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny")
    request = _prompt_request()
    (ts,) = subject.answer([request])
    # the target is the token greedy generation starts with
    generated = subject.answer([GenerationRequest(request.prompt, 1, ())])[0]
    ids = tiny_tokenizer(request.prompt).input_ids
    (first,), _ = subject.greedy(ids, 1)
    assert ts.target == first and generated.n_tokens <= 1
    assert ts.target_logit < 0  # a log-probability
    # every question and context token has an offset into its own text; the template none
    for token, offset, value in zip(ts.tokens, ts.offsets, ts.saliency, strict=True):
        if offset is None:
            assert value == 0.0
            continue
        sequence, start, end = offset
        text = EXAMPLE.question if sequence == QUESTION else EXAMPLE.context
        assert 0 <= start < end <= len(text)
        assert text[start:end] in tiny_tokenizer.convert_tokens_to_string([token])
    assert {o[0] for o in ts.offsets if o} == {QUESTION, CONTEXT}
    assert any(o is None for o in ts.offsets)  # the instruction, "Q:", "A:"
    # completeness: the signed (dot) summary sums to F(input) - F(baseline) up to delta
    attributor = subject._saliency.attributor(request)
    enc = attributor.encode(request)
    with torch.no_grad():
        gap = float(
            attributor.target_logit(enc.ids, None, ts.target)
            - attributor.target_logit(attributor.baseline_ids(enc), None, ts.target)
        )
    assert sum(ts.summaries["dot"]) - gap == pytest.approx(ts.delta, abs=1e-4)
    assert ts.settings["baseline"] == "<pad>" and ts.settings["summary"] == "l2"
    assert TokenSaliency.from_json(ts.to_json()) == ts


def test_causal_saliency_does_not_depend_on_the_batch_size(tiny_llama, tiny_tokenizer):
    requests = [_prompt_request("ig", 4), _prompt_request("occlusion", 50),
                _prompt_request("ig", 4, "Q: {question}\n{context}\nA:")]  # fmt: skip
    answers = [
        HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=bs).answer(requests)
        for bs in (1, 7)
    ]
    for a, b in zip(*answers, strict=True):
        assert a.tokens == b.tokens and a.target == b.target and a.offsets == b.offsets
        assert a.saliency == pytest.approx(b.saliency, abs=1e-5)
    assert torch.is_grad_enabled()


def test_a_reply_opening_with_white_space_is_attributed_at_its_first_word(
    tiny_llama, tiny_tokenizer, monkeypatch
):
    """The greedy reply "\\n\\n Red...": the white-space tokens join the input, kept in
    the baseline, and the target is the token after them."""
    newline, space_red = (tiny_tokenizer.convert_tokens_to_ids(t) for t in ("Ċ", "ĠR"))
    real = CausalLMInput._next_logprobs

    def steered(self, ids):
        out = real(self, ids)
        n_newlines = int((ids[0, -2:] == newline).sum())
        choice = newline if n_newlines < 2 else space_red
        return out.index_fill(-1, torch.tensor([choice]), 0.0)

    monkeypatch.setattr(CausalLMInput, "_next_logprobs", steered)
    attributor = CausalIntegratedGradients(tiny_llama, tiny_tokenizer, n_steps=2)
    request = _prompt_request()
    (ts,) = attributor.attribute([request])
    n_prompt = len(tiny_tokenizer(request.prompt).input_ids)
    assert ts.tokens[n_prompt:] == ("Ċ", "Ċ") and ts.offsets[n_prompt:] == (None, None)
    assert ts.target == space_red


def test_ig_summaries_of_an_extractive_qa_model(tiny_pair_tokenizer):
    model = _random_qa(tiny_pair_tokenizer)
    attributor = IntegratedGradients(model, tiny_pair_tokenizer, n_steps=8)
    request = SaliencyRequest(QA_QUESTION, QA_CONTEXT, "ig", 8)
    (ts,) = attributor.attribute([request])
    raw, _ = attributor.token_attributions(attributor.encode(request), ts.target)
    l2, l1, dot = (np.array(ts.summaries[k]) for k in ("l2", "l1", "dot"))
    assert ts.saliency == ts.summaries["l2"]
    assert l2 == pytest.approx(raw.norm(dim=-1).numpy(), abs=1e-6)
    assert l1 == pytest.approx(raw.abs().sum(-1).numpy(), abs=1e-6)
    assert dot == pytest.approx(raw.sum(-1).numpy(), abs=1e-6)
    assert (l1 >= l2 - 1e-7).all() and (np.abs(dot) <= l1 + 1e-7).all() and (dot < 0).any()


def test_the_suite_asks_each_kind_of_subject_its_own_requests():
    suite = get_suite("right-reasons", {"ig_steps": 4})
    (pair, *_) = suite.pairs(None, 0)
    original = pair.original
    extractive = SimpleNamespace(name="qa", accepts={"span-answer", "saliency"})
    causal = SimpleNamespace(
        name="lm",
        accepts={"generation", "candidate-scores", "prompt-saliency"},
        has_chat_template=False,
    )
    endpoint = SimpleNamespace(
        name="api", accepts={"generation", "candidate-scores"}, has_chat_template=False
    )
    assert {type(r) for r in suite.extra_requests(original, extractive).values()} == {
        SaliencyRequest
    }
    asked = suite.extra_requests(original, causal)
    assert set(asked) == {"ig", "occlusion"}
    ig = asked["ig"]
    assert isinstance(ig, PromptSaliencyRequest) and ig.n_steps == 4
    assert ig.prompt[slice(*ig.question)] == original.question
    assert ig.prompt == suite.request(original, causal).prompt  # the prompt it answers
    assert suite.extra_requests(original, endpoint) == {}  # generates, gives no saliency
    assert isinstance(suite.request(original, endpoint), GenerationRequest)


def test_options_name_known_summaries():
    with pytest.raises(UsageError, match="ig_summaries"):
        get_suite("right-reasons", {"ig_summaries": "l2,cosine"})
    scorers = get_suite("right-reasons", {"ig_summaries": "dot", "saliency": "ig"})
    assert [s.name for s in scorers.options.scorers] == ["ig-dot"]


def test_same_answer_normalises():
    assert same_answer("The Red Harbor.", "red harbor") and same_answer(None, "")
    assert not same_answer("Red Harbor", "Blue Field")


def test_random_partitions_pass_about_alpha_of_the_time():
    """The sanity check the significance rate makes: on saliency with no structure, a
    random partition passes the one-tailed test at about alpha (0.05)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        [{"id": f"i{i}", "og_em": 1, "cf_em": 1, "saliency": rng.normal(size=30).tolist(),
          "positive": [0, 1, 2], "negative": list(range(3, 30))} for i in range(600)]
    )  # fmt: skip
    rows = instance_alignment_rows(frame, seed=0)
    assert rows["control_passed"].mean() == pytest.approx(0.05, abs=0.025)


def test_cli_run_on_a_causal_lm(tmp_path, tiny_llama_dir):
    out = tmp_path / "run"
    args = ["run", "right-reasons", "--model", str(tiny_llama_dir), "--limit", 3,
            "--out", out, "--cache-dir", tmp_path / "c", "-o", "ig_steps=2",
            "-o", "max_new_tokens=4"]  # fmt: skip
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    results = pd.read_parquet(out / "results.parquet")
    answered = results[results["dropped_reason"].isna()]
    assert answered["og_generation"].notna().all() and answered["og_prediction"].notna().all()
    for scorer in ("ig-l2", "ig-l1", "ig-dot", "occlusion"):
        assert answered[f"{scorer}_control_passed"].notna().all()
        assert (answered[f"{scorer}_n_positive"] >= 1).all()  # the comparative's tokens
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["consistency"] and len(metrics["alignment"]) == 4 * len(
        answered.groupby(["dataset", "variant"])
    )
    (subject,) = json.loads((out / "run.json").read_text())["subjects"]
    # 3 originals x (1 generation + 2 saliency) + the answered counterfactuals
    assert subject["computed_requests"] == 3 * 3 + len(answered)
