"""Chat-only models answer every candidate-scoring step by letter (:mod:`faithprobe.asking.
letters`): distractors and natural-logic ask a chat-only endpoint the options as letters, as
confidence-shift does, and read its choice from the reply and its probabilities from the
letters' top_logprobs; the letter path survives the test server's faults, a refusal and a
reply naming no option are no answer, counted; and the card says how each model answered and
which effects need probabilities."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from faithprobe.asking.letters import LetterAsker, answer_mode
from faithprobe.audit.card_page import card_rows
from faithprobe.audit.execute import AuditConfig, audit
from faithprobe.multiple_choice_prompts import LetterPrompt
from faithprobe.records import NLIExample
from faithprobe.report import run_to_folder as run
from faithprobe.requests import (
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    LetterChoice,
    LetterChoiceRequest,
)
from faithprobe.runner import RunConfig
from faithprobe.serving import Faults, OpenAIServer
from faithprobe.serving.openai_server import SCRIPTED_REPLIES
from faithprobe.suite_protocol import get_suite
from test_audit import TINY_STEPS, data_dir  # noqa: F401 -- data_dir: the audit's data folder
from test_natural_logic import write_grid
from test_openai_subject import remote, results

LETTER_COLUMNS = ["pair_id", "reply", "original_reply", "prediction", "abstained",
                  "original_abstained"]  # fmt: skip


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    return write_grid(tmp_path_factory.mktemp("nli") / "nli-xy")


def suite_run(tmp_path: Path, name: str, suite: str, subject, data=None, **options) -> Path:
    limit = 2 if suite == "natural-logic" else 12
    options = {"challenge": "none", **options} if suite == "natural-logic" else options
    config = RunConfig(suite=suite, data=data, limit=limit, out=tmp_path / name,
                       cache_dir=tmp_path / f"cache-{name}", options=options)  # fmt: skip
    return run(config, subjects=[subject])


def test_the_asker_reads_the_reply_and_the_letters_probabilities():
    asker = LetterAsker(LetterPrompt())
    options = ("Paris", "Rome", "Oslo")
    read = asker.read(LetterChoice("B. Rome", 3, (math.log(0.2), math.log(0.6), None)), options)
    assert read.choice == 1 and not read.abstained and read.reply == "B. Rome"
    assert read.probabilities == pytest.approx((0.25, 0.75, 0.0))
    assert read.letter_mass == pytest.approx(0.8)
    assert read.logprobs()[:2] == pytest.approx([math.log(0.25), math.log(0.75)])
    assert math.isnan(read.logprobs()[2])  # outside the top k: no log-probability
    refused = asker.read(LetterChoice(SCRIPTED_REPLIES["refusal"], 7, None), options)
    assert refused.abstained and refused.probabilities is None and math.isnan(refused.letter_mass)
    assert asker.read(Generation("Oslo", 1), options).choice == 2  # an option's own text
    # the subject's mode: letters with probabilities if any answer brought them
    assert answer_mode([CandidateScores((0.0,), (1,))]) == "scores"
    assert answer_mode([Generation("A", 1)]) == "letter-replies"
    assert answer_mode([LetterChoice("A", 1, None), LetterChoice("B", 1, (0.0, None))]) == (
        "letter-probabilities"
    )


def test_which_models_are_asked_by_letter():
    def model(*kinds):
        return type("M", (), {"accepts": frozenset(kinds), "name": "m"})()

    cloze = get_suite("distractors").pairs(None, 0)[0].original
    nli = get_suite("natural-logic")
    chat, lm, ref = model("generation", "letter-choice"), model("candidate-scores", "generation"), (
        model("candidate-scores", "text-pair-classes", "letter-choice"))  # fmt: skip
    asked = get_suite("distractors").request(cloze, chat)
    assert isinstance(asked, LetterChoiceRequest) and asked.letters == "ABCDEF"
    assert "___." in asked.prompt and "A. " in asked.prompt
    assert asked.scoring == CandidateScoreRequest(cloze.context, cloze.candidates, cloze.suffix)
    assert isinstance(get_suite("distractors").request(cloze, lm), CandidateScoreRequest)
    forced = get_suite("distractors", {"answer": "letter"}).request(cloze, lm)
    assert isinstance(forced, GenerationRequest) and forced.chat
    # natural-logic: a classifier's letters stand for its classes, a language model's for
    # its label words
    pair = NLIExample("x", "Some dogs bark.", "Some animals bark.", "entailment")
    by_letter = get_suite("natural-logic", {"answer": "letter"})
    asked = by_letter.request(pair, ref)
    assert asked.scoring.kind == "text-pair-classes" and asked.letters == "AB"
    assert "A. True\nB. False" in asked.prompt and "Hypothesis: Some animals bark." in asked.prompt
    assert by_letter.request(pair, lm).kind == "generation"
    assert nli.request(pair, chat).kind == "letter-choice"
    assert get_suite("natural-logic", {"answer": "scores"}).request(pair, lm).kind == (
        "candidate-scores"
    )
    # a letter request keeps the key it had before it carried its scoring request
    assert replace(asked, scoring=None).key("f") == asked.key("f")


@pytest.mark.parametrize("suite", ["distractors", "natural-logic"])
def test_a_chat_only_endpoint_answers_by_letter_as_the_local_model_does(
    suite, tiny_chat_llama, grid, tmp_path
):
    data = grid if suite == "natural-logic" else None
    with OpenAIServer(tiny_chat_llama, chat_only=True) as server:
        chat = results(suite_run(tmp_path, "chat", suite, remote(server, api="chat"), data))
    local = suite_run(tmp_path, "local", suite, tiny_chat_llama, data, answer="letter")
    direct = results(local)
    assert set(chat["answer_mode"]) == {"letter-probabilities"}
    assert set(direct["answer_mode"]) == {"letter-replies"}
    pd.testing.assert_frame_equal(chat[LETTER_COLUMNS], direct[LETTER_COLUMNS])
    # no prediction where the reply named no option; counted in the metrics
    assert (direct["prediction"].isna() == direct["abstained"]).all()
    metrics = json.loads((local / "metrics.json").read_text())
    (mode,) = metrics["answer_modes"]
    assert mode["answer_mode"] == "letters parsed from replies"
    inputs = pd.concat(
        [
            direct[["original_id", "original_abstained"]].set_axis(["id", "a"], axis=1),
            direct[["intervened_id", "abstained"]].set_axis(["id", "a"], axis=1),
        ]
    )
    inputs = inputs.drop_duplicates("id")  # fmt: skip
    assert (mode["no_answer"]["n"], mode["no_answer"]["k"]) == (len(inputs), inputs["a"].sum())
    page = (local / "report.html").read_text()
    assert "How each model answered" in page and "letters parsed from replies" in page
    if suite == "natural-logic":  # parsed replies: no p(entailment)
        assert direct["p_entailment"].isna().all()
    else:  # ... and no relative probability: the table says it needs probabilities
        assert direct["log_relative_probability"].isna().all()
        rel = [e for e in metrics["estimates"] if e["metric"] == "relative_probability"]
        assert rel and all(e.get("needs") == "probabilities" for e in rel)
        assert "needs probabilities" in (local / "report.html").read_text()


def test_letter_asking_survives_the_servers_faults(tiny_chat_llama, tmp_path):
    """429, 500, dropped connections and slow replies are retried: the same answers as
    without faults. A refusal and a reply naming no option are no answer, counted."""
    with OpenAIServer(tiny_chat_llama, chat_only=True) as server:
        clean = results(suite_run(tmp_path, "clean", "distractors", remote(server, api="chat")))
        server.inject(Faults(first=("429", "500", "drop", "slow"), rate=0.2, seed=1,
                             slow_seconds=0.2))  # fmt: skip
        chat = remote(server, api="chat")
        faulty = results(suite_run(tmp_path, "faulty", "distractors", chat))
        assert chat.usage()["retries"] >= 4
        pd.testing.assert_frame_equal(faulty[LETTER_COLUMNS], clean[LETTER_COLUMNS])

        scripting = remote(server, api="chat")
        scripting.answer([LetterChoiceRequest("Where?\nA. here\nB. there\nAnswer:", "AB")])
        server.inject(Faults(first=("refusal", "no-letter")))  # after its self-check
        scripted = suite_run(tmp_path, "scripted", "distractors", scripting)
    rows = results(scripted)
    replies = pd.concat([rows[["original_id", "original_reply", "original_abstained"]]
                         .set_axis(["id", "reply", "abstained"], axis=1),
                         rows[["intervened_id", "reply", "abstained"]]
                         .set_axis(["id", "reply", "abstained"], axis=1)]).drop_duplicates("id")  # fmt: skip
    faulted = replies[replies["reply"].isin(SCRIPTED_REPLIES.values())]
    assert set(faulted["reply"]) == set(SCRIPTED_REPLIES.values()) and len(faulted) == 2
    assert faulted["abstained"].all()
    (mode,) = json.loads((scripted / "metrics.json").read_text())["answer_modes"]
    assert mode["no_answer"]["k"] == replies["abstained"].sum() >= 2


def test_the_card_says_how_each_model_answered_and_what_needs_probabilities(
    tiny_chat_llama,
    data_dir,  # noqa: F811 -- the fixture imported from test_audit
    tmp_path,
):
    """A chat-only endpoint and the same model asked by letter locally: the audit runs the
    three candidate-scoring steps for both, names each answer mode, and gives the local
    model's confidence-shift effects as needing probabilities."""
    steps = [replace(s, options={**s.options, "answer": "letter"}) for s in TINY_STEPS
             if s.name in ("distractors", "natural-logic", "confidence-shift")]  # fmt: skip
    with OpenAIServer(tiny_chat_llama, chat_only=True, model_name="chat") as server:
        subjects = [remote(server, api="chat"), tiny_chat_llama]
        config = AuditConfig(models=[], out=tmp_path / "audit", data_dir=data_dir,
                             cache_dir=tmp_path / "cache", steps=steps, command="test")  # fmt: skip
        folder = audit(config, subjects=subjects)
    metrics = json.loads((folder / "metrics.json").read_text())
    chat, local = "openai:chat", "tiny"
    for step in metrics["steps"]:
        assert step["status"] == "ran" and step["answer_modes"] == {
            chat: "letters with probabilities (top_logprobs); endpoint self-check passed",
            local: "letters parsed from replies",
        }, step["step"]
    needs = [e for e in metrics["effects"] if e.get("needs")]
    assert {e["step"] for e in needs} == {"confidence-shift"}
    assert all(e["verdict"] == "needs probabilities" and e["value"] is None for e in needs)
    # the local model's because it gives none; the endpoint's only where the random tiny
    # model's first reply token never has a letter among its top_logprobs
    why = {e["subject"]: e["reading"] for e in needs}
    assert why[local] == "needs probabilities: it answered by letters parsed from replies"
    assert chat not in why or why[chat].endswith("top_logprobs of its replies' first tokens")
    assert not any(d["key"] in {e["key"] for e in needs} and local in (d["a"], d["b"])
                   for d in metrics["differences"])  # fmt: skip
    _, rows = card_rows(metrics)
    answered = [r for r in rows if r[0].strip() == "answered by"]
    assert len(answered) == 3 and answered[0][2:4] == [
        "letters with probabilities (top_logprobs); endpoint self-check passed",
        "letters parsed from replies"]  # fmt: skip
    page = (folder / "index.html").read_text()
    assert "answered by letters parsed from replies" in page and "needs probabilities" in page
    assert "letters parsed from replies" in (folder / "card.md").read_text()
