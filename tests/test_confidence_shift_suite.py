"""The confidence-shift suite end to end: tiny causal LM, a small Social IQA-shaped file."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.prompts import LetterPrompt
from faithprobe.report import run_to_folder as run
from faithprobe.requests import CandidateScoreRequest, Generation, GenerationRequest
from faithprobe.runner import RunConfig
from faithprobe.subjects.base import Subject
from faithprobe.subjects.hf_causal import HFCausalLM
from faithprobe.suite import get_suite
from faithprobe.suites.confidence_shift import DEFAULT_PROBES

runner = CliRunner()
PEOPLE = ["Kai", "Robin", "Sam", "Ann", "Bo", "Lee", "Max", "Zoe"]
ACTS = ["fed the dog", "lost a bet", "sang loudly", "ran home", "won a prize", "cooked rice"]


@pytest.fixture(scope="module")
def siqa_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("siqa")
    records, labels = [], []
    for i in range(12):
        who, act = PEOPLE[i % len(PEOPLE)], ACTS[i % len(ACTS)]
        records.append(
            {
                "context": f"{who} {act}.",
                "question": "How would you describe " + who + "?",
                "answerA": f"happy {i}",
                "answerB": f"sad {i}",
                "answerC": f"tired {i}",
            }
        )
        labels.append(str(1 + i % 3))
    path = root / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "dev-labels.lst").write_text("\n".join(labels) + "\n")
    return path


@pytest.fixture(scope="module")
def model_dir(tiny_llama_dir):
    return tiny_llama_dir


def test_cli_run_writes_every_table_of_the_method(tmp_path, siqa_file, model_dir):
    out = tmp_path / "run"
    res = runner.invoke(
        app,
        ["run", "confidence-shift", "--data", str(siqa_file), "--model", str(model_dir),
         "--out", str(out), "--no-cache", "-o", "trials=3", "--limit", "10"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "No-Right-Answer" in res.output and "pseudo-acc" in res.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["options"]["trials"] == 3
    assert {r["probe"] for r in metrics["pseudo_accuracy"]} == {
        "no_question",
        "wrong_question",
        "no_right_answer",
    }
    for name in (
        "summary",
        "original_accuracy",
        "pseudo_accuracy",
        "shift_types",
        "confidence_profile",
        "maxprob_detection",
        "dataset",
    ):
        assert (out / "tables" / f"{name}.md").is_file(), name
    results = pd.read_parquet(out / "results.parquet")
    assert results["original_id"].nunique() == 10
    assert len(results) == 10 * 3 * 3  # instances x probes x trials
    shifts = {r["probe"]: r for r in metrics["shift_types"]}
    # No-Question repeats one input: one distinct trial per instance
    assert shifts["no_question"]["distinct_trials"] == 1
    html = (out / "report.html").read_text()
    for section in ("accuracy", "shifts", "confidence", "maxprob", "dataset", "examples"):
        assert f'<section id="{section}">' in html
    assert "<script" not in html

    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output


def test_results_do_not_depend_on_batch_size(tmp_path, siqa_file, tiny_llama, tiny_tokenizer):
    frames = []
    for bs in (1, 16):
        subject = HFCausalLM(tiny_llama, tiny_tokenizer, name="tiny", batch_size=bs)
        folder = run(
            RunConfig(
                suite="confidence-shift",
                data=siqa_file,
                out=tmp_path / f"bs{bs}",
                cache=False,
                options={"trials": "2"},
            ),
            subjects=[subject],
        )
        frames.append(pd.read_parquet(folder / "results.parquet").sort_values("pair_id"))
    a, b = frames
    assert (a["prediction"].to_numpy() == b["prediction"].to_numpy()).all()
    diff = a["confidences"].explode().astype(float) - b["confidences"].explode().astype(float)
    assert diff.abs().max() < 1e-5


def test_mean_normalisation_divides_by_token_counts(
    tmp_path, siqa_file, tiny_llama, tiny_tokenizer
):
    subject = HFCausalLM(tiny_llama, tiny_tokenizer, name="tiny")
    folder = run(
        RunConfig(
            suite="confidence-shift",
            data=siqa_file,
            out=tmp_path / "mean",
            cache=False,
            limit=3,
            options={"trials": "1", "normalisation": "mean"},
        ),
        subjects=[subject],
    )
    row = pd.read_parquet(folder / "results.parquet").iloc[0]
    scores = np.asarray(row["logprobs"]) / np.asarray(row["n_tokens"])
    expected = np.exp(scores - scores.max())
    assert list(row["confidences"]) == pytest.approx(list(expected / expected.sum()))


def test_bad_options_and_missing_data_are_usage_errors(siqa_file):
    with pytest.raises(UsageError, match="no option 'trails'"):
        get_suite("confidence-shift", {"trails": "3"})
    with pytest.raises(UsageError, match="expected int"):
        get_suite("confidence-shift", {"trials": "many"})
    with pytest.raises(UsageError, match="normalisation"):
        get_suite("confidence-shift", {"normalisation": "max"})
    with pytest.raises(UsageError, match="unknown probes"):
        get_suite("confidence-shift", {"probes": "no_question,typo"})
    with pytest.raises(UsageError, match="needs --data"):
        get_suite("confidence-shift").pairs(None, 0)
    res = runner.invoke(app, ["run", "confidence-shift", "--data", str(siqa_file), "-o", "x"])
    assert res.exit_code == 2 and "KEY=VALUE" in res.output


def test_command_line_templates_turn_backslash_n_into_newlines():
    typed = "Q: {prompt}" + "\\" + "nA:"  # what a shell passes for 'Q: {prompt}\nA:'
    assert get_suite("confidence-shift", {"template": typed}).prompt.template == "Q: {prompt}\nA:"
    nl = get_suite("natural-logic", {"template": "{premise}" + "\\" + "n{hypothesis}?"})
    assert nl.prompt.render("P", "H") == "P\nH?"


# -- models that can only write: multiple choice by letter --------------------------------


class LetterWriter(Subject):
    """A writer that knows the answer is always the choice starting with "happy" when the
    question is there, and declines without a question (or, for "Zoe", writes prose)."""

    name = kind = "letter-writer"
    accepts = frozenset({"generation"})
    fingerprint = "letter-writer-1"

    def answer(self, requests, progress=None):
        out = []
        for r in requests:
            assert isinstance(r, GenerationRequest) and r.chat and r.stop == ("\n",)
            question = r.prompt.split("\n", 1)[0]
            listed = [line for line in r.prompt.splitlines() if line[:3] in ("A. ", "B. ", "C. ")]
            happy = next((line[0] for line in listed if line[3:].startswith("happy")), None)
            if question == "Question: " or happy is None:
                text = "I cannot answer without a question."
            elif "Zoe" in question:
                text = f"The answer is {happy}."
            else:
                text = happy
            out.append(Generation(text, 3))
        if progress:
            progress(len(requests))
        return out


def test_letter_prompt_lists_the_choices_and_reads_the_reply_back():
    prompt = LetterPrompt().render("Why?", ("go home", "eat", "sleep"))
    assert prompt == (
        "Question: Why?\nA. go home\nB. eat\nC. sleep\n"
        "Answer with the letter of the correct choice (A, B or C) only."
    )
    choices = ("go home", "eat", "sleep")
    for reply, index in [("B", 1), ("(C)", 2), ("B. eat", 1), ("Answer: A", 0),
                         ("The answer is C.", 2), ("eat", 1), ("Sleep.", 2),
                         ("I think C is right", 2), ("A good choice would be B", 1),
                         ("I cannot answer this.", None), ("B and C", None), ("D", None)]:  # fmt: skip
        assert LetterPrompt.parse(reply, choices) == index, reply


def test_a_model_that_can_only_write_answers_by_letter_and_abstentions_are_counted(
    tmp_path, siqa_file
):
    config = RunConfig(suite="confidence-shift", data=siqa_file, out=tmp_path / "run",
                       cache_dir=tmp_path / "cache", options={"trials": "2"})  # fmt: skip
    out = run(config, subjects=[LetterWriter()])
    res = pd.read_parquet(out / "results.parquet")
    assert set(res["answer_mode"]) == {"letter"} and res["confidences"].isna().all()
    # label i % 3 + 1: instance i's right answer is "happy" only when i % 3 == 0
    orig = res.drop_duplicates("original_id")
    assert orig["original_correct"].sum() == 4 and not orig["original_abstained"].any()
    nq = res[res["probe"] == "no_question"]
    assert nq["abstained"].all() and (nq["prediction"] == -1).all()
    metrics = json.loads((out / "metrics.json").read_text())
    abst = {r["probe"]: r["value"] for r in metrics["abstentions"]}
    assert abst["original"] == 0 and abst["no_question"] == 1
    assert metrics["shift_types"] == [] and metrics["maxprob_detection"] == []
    assert {r["probe"] for r in metrics["pseudo_accuracy"]} == set(DEFAULT_PROBES)
    assert (out / "tables" / "abstentions.md").is_file()
    assert "-- reply: " in (out / "report.html").read_text()


def test_answer_option_forces_letters_or_scores(siqa_file):
    lm = type("LM", (), {"accepts": frozenset({"candidate-scores", "generation"}), "name": "lm"})
    example = get_suite("confidence-shift").pairs(siqa_file, 0)[0].original
    assert isinstance(get_suite("confidence-shift").request(example, lm()), CandidateScoreRequest)
    forced = get_suite("confidence-shift", {"answer": "letter"}).request(example, lm())
    assert isinstance(forced, GenerationRequest) and forced.prompt.startswith("Question: ")
    with pytest.raises(UsageError, match="answer must be one of"):
        get_suite("confidence-shift", {"answer": "guess"})
