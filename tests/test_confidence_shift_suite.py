"""The confidence-shift suite end to end: tiny causal LM, a small Social IQA-shaped file."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.datasets import read_choices
from faithprobe.errors import UsageError
from faithprobe.multiple_choice_prompts import LetterPrompt
from faithprobe.records import ChoiceExample
from faithprobe.registry import load_target
from faithprobe.report import run_to_folder as run
from faithprobe.requests import (
    CandidateScoreRequest,
    Generation,
    GenerationRequest,
    LetterChoice,
    LetterChoiceRequest,
)
from faithprobe.runner import RunConfig
from faithprobe.subjects.base import Subject
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.suite_protocol import SUITES, get_suite
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
        "competence",
        "original_accuracy",
        "pseudo_accuracy",
        "shift_types",
        "pooled_shifts",
        "confidence_spread",
        "confidence_profile",
        "probe_contrasts",
        "maxprob_detection",
        "kept_confidence",
        "kept_confidence_features",
        "benchmark_positions",
        "benchmark_choices",
        "benchmark_word_frequencies",
        "benchmark_shortcuts",
        "accuracy_by_normalisation",
        "dataset",
    ):
        assert (out / "tables" / f"{name}.md").is_file(), name
    results = pd.read_parquet(out / "results.parquet")
    assert results["original_id"].nunique() == 10
    assert len(results) == 10 * 3 * 3  # instances x probes x trials
    shifts = {r["probe"]: r for r in metrics["shift_types"]}
    # No-Question repeats one input: one distinct trial per instance
    assert shifts["no_question"]["distinct_trials"] == 1
    assert shifts["no_question"]["samples_per_test"] == 2 and shifts["no_question"]["df"] == 1
    assert 2 < shifts["wrong_question"]["samples_per_test"] <= 6  # 2 wrong choices x 3 trials
    (contrast,) = metrics["probe_contrasts"]
    assert contrast["n_instances"] == 10
    assert {r["probe"] for r in metrics["pooled_shifts"]} == set(shifts)
    (competence,) = metrics["competence"]
    assert competence["n"] == 10 and competence["baseline_answer"].startswith("position:")
    assert {r["probe"] for r in metrics["confidence_spread"]} == set(shifts)
    html = (out / "report.html").read_text()
    for section in ("accuracy", "shifts", "confidence", "maxprob", "benchmark", "kept", "dataset",
                    "examples"):  # fmt: skip
        assert f'<section id="{section}">' in html
    assert "<script" not in html
    assert "samples per test (df)" in html and "pooled over instances" in html
    assert "Table 2, column 5" in html
    assert {r["probe"] for r in metrics["kept_confidence"]} == set(shifts)
    # every question of this file is of one kind: no category to compare
    features = metrics["kept_confidence_features"]
    assert not any(r["feature"].startswith("category") for r in features)
    assert "How the instances that keep their confidence differ" in html
    assert "Benchmark irregularities (the method" in html

    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output


def test_results_do_not_depend_on_batch_size(tmp_path, siqa_file, tiny_llama, tiny_tokenizer):
    frames = []
    for bs in (1, 16):
        subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny", batch_size=bs)
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


LENGTHS = {
    "per-token": lambda row: np.asarray(row["n_tokens"], float),
    "per-char": lambda row: np.asarray([len(c) for c in row["choices"]], float),
    "per-byte": lambda row: np.asarray([len(c.encode()) for c in row["choices"]], float),
}


@pytest.mark.parametrize("normalisation", list(LENGTHS))
def test_normalisations_divide_by_tokens_characters_or_bytes(
    tmp_path, siqa_file, tiny_llama, tiny_tokenizer, normalisation
):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny")
    folder = run(
        RunConfig(
            suite="confidence-shift",
            data=siqa_file,
            out=tmp_path / normalisation,
            cache=False,
            limit=3,
            options={"trials": "1", "normalisation": normalisation},
        ),
        subjects=[subject],
    )
    results = pd.read_parquet(folder / "results.parquet")
    row = results.iloc[0]
    scores = np.asarray(row["logprobs"]) / LENGTHS[normalisation](row)
    expected = np.exp(scores - scores.max())
    assert list(row["confidences"]) == pytest.approx(list(expected / expected.sum()))
    # every normalisation's original accuracy is in metrics.json, the chosen one equal to
    # the headline accuracy, and shown in the report
    metrics = json.loads((folder / "metrics.json").read_text())
    by = {r["normalisation"]: r for r in metrics["accuracy_by_normalisation"]}
    assert set(by) == {"sum", "per-token", "per-char", "per-byte"}
    assert by[normalisation]["value"] == metrics["original_accuracy"][0]["value"]
    assert (folder / "tables" / "accuracy_by_normalisation.md").is_file()
    assert "acc_norm" in (folder / "report.html").read_text()


def test_per_char_differs_from_per_token_on_choices_of_unequal_length():
    """A sum of -6 over 3 tokens and 4 characters against -4 over 1 token and 8
    characters: per token the first wins, per character the second."""
    from faithprobe.suites.confidence_shift.normalisation import choice_scores

    lp, nt, ch = (-6.0, -4.0), (3, 1), ("abcd", "abcdefgh")
    assert list(choice_scores(lp, nt, ch, "per-token")) == [-2.0, -4.0]
    assert list(choice_scores(lp, nt, ch, "per-char")) == [-1.5, -0.5]
    assert list(choice_scores(lp, nt, ("éé", "abcdefgh"), "per-byte")) == [-1.5, -0.5]
    assert list(choice_scores(lp, nt, ch, "sum")) == [-6.0, -4.0]


def test_bad_options_and_missing_data_are_usage_errors(siqa_file):
    with pytest.raises(UsageError, match="no option 'trails'"):
        get_suite("confidence-shift", {"trails": "3"})
    with pytest.raises(UsageError, match="expected int"):
        get_suite("confidence-shift", {"trials": "many"})
    with pytest.raises(UsageError, match="normalisation='max': choose from 'sum', 'per-token'"):
        get_suite("confidence-shift", {"normalisation": "max"})
    with pytest.raises(UsageError, match="normalisation='mean': choose from"):  # its old name
        get_suite("confidence-shift", {"normalisation": "mean"})
    with pytest.raises(UsageError, match="option rule='lm-eval': choose from 'standard', 'qa'$"):
        get_suite("confidence-shift", {"rule": "lm-eval"})
    with pytest.raises(UsageError, match="option format='csv': choose from 'auto', 'socialiqa'"):
        get_suite("confidence-shift", {"format": "csv"})
    with pytest.raises(UsageError, match="unknown probes"):
        get_suite("confidence-shift", {"probes": "no_question,typo"})
    with pytest.raises(UsageError, match="needs --data"):
        get_suite("confidence-shift").pairs(None, 0)
    res = runner.invoke(app, ["run", "confidence-shift", "--data", str(siqa_file), "-o", "x"])
    assert res.exit_code == 2 and "KEY=VALUE" in res.output


def test_command_line_templates_turn_backslash_n_into_newlines():
    typed = "Q: {prompt}" + "\\" + "nA:"  # what a shell passes for 'Q: {prompt}\nA:'
    frames = get_suite("confidence-shift", {"template": typed}).frames
    assert {f.template for f in frames.values()} == {"Q: {prompt}\nA:"}
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
    assert set(res["answer_mode"]) == {"letter-replies"} and res["confidences"].isna().all()
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
    # the card's confidence effects say they need probabilities, and how it answered
    (mode,) = metrics["answer_modes"]
    assert mode["answer_mode"] == "letters parsed from replies"
    assert mode["no_answer"]["k"] > 0 and mode["no_answer"]["n"] > mode["no_answer"]["k"]
    effects = load_target(SUITES.get("confidence-shift").headline)(metrics)
    needs = [e for e in effects if getattr(e, "needs", "")]  # the competences have none
    assert {e.key for e in needs} == {"confidence_spread_no_right_answer"} | {
        f"maxprob_detection_{p}" for p in DEFAULT_PROBES
    }
    assert all(e.verdict == "needs probabilities" and not e.has_interval for e in needs)
    assert (out / "tables" / "abstentions.md").is_file()
    assert "-- reply: " in (out / "report.html").read_text()


def test_answer_option_forces_letters_or_scores(siqa_file):
    lm = type("LM", (), {"accepts": frozenset({"candidate-scores", "generation"}), "name": "lm"})
    example = get_suite("confidence-shift").pairs(siqa_file, 0)[0].original
    assert isinstance(get_suite("confidence-shift").request(example, lm()), CandidateScoreRequest)
    forced = get_suite("confidence-shift", {"answer": "letter"}).request(example, lm())
    assert isinstance(forced, GenerationRequest) and forced.prompt.startswith("Question: ")
    with pytest.raises(UsageError, match="option answer='guess': choose from"):
        get_suite("confidence-shift", {"answer": "guess"})


# -- formats as their communities score them ----------------------------------------------

HELLASWAG = Path(__file__).parent / "data" / "hellaswag_val_tiny.jsonl"


def test_hellaswag_is_scored_as_a_continuation_and_the_old_rule_stays_an_option():
    def roof(suite):  # HellaSwag's ind 24, as the suite reads it
        return next(p.original for p in suite.pairs(HELLASWAG, 0) if p.original.id.endswith("-24"))

    standard = roof(get_suite("confidence-shift"))
    request = get_suite("confidence-shift").request(standard)
    assert request.context == "Roof shingle removal: A man is sitting on a roof. He"
    assert request.filled(request.candidates[3])[0] == (
        "Roof shingle removal: A man is sitting on a roof. He starts pulling up roofing on a roof."
    )
    old = get_suite("confidence-shift", {"rule": "qa"})
    request = old.request(roof(old))
    assert request.context == "Q: A man is sitting on a roof. he\nA:"
    # an explicit template frames every format
    fixed = get_suite("confidence-shift", {"template": "Context: {prompt}\\nEnding:"})
    assert fixed.request(standard).context.startswith("Context: Roof shingle removal: ")
    # Social IQA keeps lm-eval's Q/A frame under the standard rule
    siqa = ChoiceExample("s", "Kai ran. Why?", ("a", "b"), 0, {"frame": "question"})
    assert get_suite("confidence-shift").request(siqa).context == "Q: Kai ran. Why?\nA:"


def test_probes_none_runs_the_originals_only(tmp_path, tiny_llama, tiny_tokenizer):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny")
    folder = run(
        RunConfig(suite="confidence-shift", data=HELLASWAG, out=tmp_path / "none",
                  cache=False, options={"probes": "none", "normalisation": "per-char"}),
        subjects=[subject],
    )  # fmt: skip
    results = pd.read_parquet(folder / "results.parquet")
    assert len(results) == 4 and set(results["probe"]) == {"original"}
    assert (results["prediction"] == results["original_prediction"]).all()
    assert (results["expectation_met"] == results["original_correct"]).all()
    examples = sorted(read_choices(HELLASWAG), key=lambda e: e.id)
    direct = subject.answer([get_suite("confidence-shift").request(e) for e in examples])
    got = results.sort_values("original_id")["original_logprobs"]
    for lp, want in zip(got, direct, strict=True):  # scored as lm-eval's continuation
        assert list(lp) == pytest.approx(list(want.logprobs), abs=1e-5)
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["original_accuracy"][0]["n"] == 4
    assert metrics["pseudo_accuracy"] == [] and metrics["shift_types"] == []
    assert metrics["options"]["probes"] == "none"
    assert (folder / "report.html").is_file()


class LetterScorer(LetterWriter):
    """LetterWriter behind an endpoint that gives the letters' log-probabilities: sure of
    its letter with the question, even among the letters without it."""

    accepts = frozenset({"letter-choice", "generation"})
    fingerprint = "letter-scorer-1"

    def answer(self, requests, progress=None):
        assert all(isinstance(r, LetterChoiceRequest) and r.letters == "ABC" for r in requests)
        replies = super().answer(
            [GenerationRequest(r.prompt, r.max_new_tokens, r.stop, chat=True) for r in requests]
        )
        out = []
        for reply in replies:
            sure = LetterPrompt.parse(reply.text, ("x", "y", "z"))
            logprobs = tuple(
                float(np.log(1 / 3)) if sure is None else (-0.05 if i == sure else -4.0)
                for i in range(3)
            )
            out.append(LetterChoice(reply.text, reply.n_tokens, (*logprobs[:2], None)
                                    if sure == 0 else logprobs))  # fmt: skip
        return out


def test_letter_log_probabilities_give_chat_models_shift_types_and_maxprob(tmp_path, siqa_file):
    config = RunConfig(suite="confidence-shift", data=siqa_file, out=tmp_path / "run",
                       cache_dir=tmp_path / "cache", options={"trials": "2"})  # fmt: skip
    out = run(config, subjects=[LetterScorer()])
    res = pd.read_parquet(out / "results.parquet")
    assert set(res["answer_mode"]) == {"letter-probabilities"}
    assert res["confidences"].notna().all()
    nq = res[res["probe"] == "no_question"].iloc[0]
    assert list(nq["confidences"]) == pytest.approx([1 / 3] * 3) and nq["abstained"]
    sure = res[res["original_reply"] == "A"].iloc[0]  # C absent from the top k: probability 0
    assert sure["original_confidences"][2] == 0 and sure["original_maxprob"] > 0.9
    assert 0.9 < sure["original_letter_mass"] < 1
    metrics = json.loads((out / "metrics.json").read_text())
    assert {r["probe"] for r in metrics["shift_types"]} == set(DEFAULT_PROBES)
    assert {r["probe"] for r in metrics["maxprob_detection"]} == set(DEFAULT_PROBES)
    assert metrics["needs"] == []
    assert metrics["answer_modes"][0]["answer_mode"] == "letters with probabilities (top_logprobs)"
    assert metrics["accuracy_by_normalisation"] == []  # no choice scores
    assert {r["probe"] for r in metrics["abstentions"]} >= {"original", "no_question"}
