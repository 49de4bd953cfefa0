"""The ``reasoning`` suite end to end on the shipped BBH sample, with a scripted model whose
behaviour is known: it reasons in three steps to (A), answers a cut or filled reasoning with
(B), carries a corrupted reasoning on to (A), and follows a suggested or hinted answer. The
suite must ask the follow-ups from the model's own reasoning, read every answer, and report
the changes that behaviour implies."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe.cli import app
from faithprobe.qa.cot_chat import plain_prompt
from faithprobe.requests import Generation, GenerationRequest
from faithprobe.runner import RunConfig, run
from faithprobe.subjects.base import Subject
from faithprobe.suite_protocol import get_suite

SAMPLE = Path(__file__).resolve().parents[1] / "src/faithprobe/catalog/samples/bbh"
TASKS = "date_understanding,object_counting,web_of_lies,tracking_shuffled_objects_three_objects"


class Scripted(Subject):
    """The behaviour in the module docstring, read off the prompt alone."""

    name, kind, accepts = "scripted", "test", frozenset({GenerationRequest.kind})

    @property
    def fingerprint(self) -> str:
        return "scripted-1"

    def answer(self, requests, progress=None):
        # a subject that only generates is asked in chat form: read as the plain prompt
        return [Generation(self._say(plain_prompt(r.prompt, r.reply_start)), 5) for r in requests]

    @staticmethod
    def _say(prompt: str) -> str:
        question = prompt.rsplit("\nQ: ", 1)[-1]
        number = "How many" in question
        first = "7" if number else ("Yes" if "tell the truth" in question else "(A)")
        if prompt.endswith("step by step."):
            cue = re.search(r"I think the answer is (\S+) but|indicates the answer is (\S+)\.",
                            question)  # fmt: skip
            said = (cue.group(1) or cue.group(2)) if cue else first
            return (
                f" We start with 2 things. Then 3 more come. That makes 5. So the answer is {said}."
            )
        if prompt.endswith("So the answer is"):
            return " 9." if number else (" No." if first == "Yes" else " (B).")
        if prompt.endswith("A:"):
            return f" {first}"
        return " Then we are done. So the answer is " + first + "."


def _run(tmp_path: Path) -> tuple[pd.DataFrame, dict]:
    config = RunConfig(suite="reasoning", models=[], data=SAMPLE, options={"tasks": TASKS},
                       out=tmp_path / "run", cache_dir=tmp_path / "cache")  # fmt: skip
    result = run(config, subjects=[Scripted()])
    return result.results, result.metrics


def test_pairs_on_the_sample():
    suite = get_suite("reasoning", {"tasks": TASKS})
    pairs = suite.pairs(SAMPLE, 0)
    by = pd.Series([p.intervention for p in pairs]).value_counts().to_dict()
    items = 4 * 6
    assert by["early"] == 3 * items and by["filler"] == items
    assert by["mistake"] == 3 * 6  # dates, counting, tracking: web_of_lies has no rule
    assert by["always_a"] == 2 * 6  # the multiple-choice tasks only
    dropped = {p.intervention for p in pairs if p.dropped}
    assert dropped == {"suggested", "hint"}  # object counting's numbers offer no wrong answer
    assert all(p.original.task == "object_counting" for p in pairs if p.dropped)


@pytest.mark.parametrize("options", [{}, {"interventions": "always_a"}, {"tasks": TASKS}])
def test_limit_draws_the_items_before_their_variants_are_made(options, monkeypatch):
    """The same pairs as sampling all of them (so --limit shortens reading a huge task file
    to reading it): variants are made of the drawn items only (and of those passed over
    for making none: always_a on a task without options)."""
    suite = get_suite("reasoning", options)
    for limit, seed in [(1, 0), (3, 0), (7, 5), (500, 1)]:
        drawn = [p.id for p in suite.sampled_pairs(SAMPLE, limit, seed)]
        assert drawn == [p.id for p in suite.sample(suite.pairs(SAMPLE, seed), limit, seed)]
    made = []
    variants = type(suite)._variants
    monkeypatch.setattr(type(suite), "_variants", lambda s, item, *a: made.append(item.id) or
                        variants(s, item, *a))  # fmt: skip
    pairs = suite.sampled_pairs(SAMPLE, 2, 0)
    assert len({p.original.id for p in pairs}) == 2
    names = len(suite.options.intervention_names)
    empty = {i for i in made if not any(p.original.id == i for p in pairs)}
    assert len(made) == names * (2 + len(empty)) < len(suite.pairs(SAMPLE, 0))


def test_a_run_reads_the_model_and_reports_what_it_did(tmp_path):
    results, metrics = _run(tmp_path)
    early = results[results["intervention"] == "early"]
    assert early["original_prediction"].notna().all()
    # every cut was asked from the model's own reasoning, and the (B)/9/No it then gave read
    assert early["edit"].str.endswith("So the answer is").all()
    assert (early["prediction"] != early["original_prediction"]).all()
    assert set(early["edit"][early["fraction"] == 0]) == {"So the answer is"}
    mistake = results[(results["intervention"] == "mistake") & results["not_made"].isna()]
    assert len(mistake) and (mistake["prediction"] == mistake["original_prediction"]).all()
    effects = {(e["intervention"], e["fraction"]): e["changed"]["value"]
               for e in metrics["effects"]}  # fmt: skip
    assert effects[("early", 0.0)] == 1.0 and effects[("filler", None)] == 1.0
    assert effects[("mistake", None)] == 0.0
    (aoc,) = metrics["early"]
    assert aoc["aoc"]["value"] == pytest.approx(5 / 6)  # same-answer curve 0, 0, 0, then 1
    cued = {c["intervention"]: c for c in metrics["cued"]}
    suggested = cued["suggested"]
    assert suggested["with_cue"]["value"] == 1.0  # it always takes the suggestion
    assert suggested["shift"]["value"] == pytest.approx(1 - suggested["without_cue"]["value"])
    # without reasoning it answers as it always does: the cue moves nothing there
    assert suggested["without_reasoning"]["value"] == 0.0 and cued["hint"]["without_reasoning"]
    assert cued["always_a"]["without_reasoning"] is None  # its exemplars need reasoning
    assert cued["suggested"]["verbalised"]["value"] == 0.0  # it never says so
    (acc,) = metrics["accuracy"]
    assert acc["n_items"] == 24 and 0 <= acc["best_constant"] <= 1


def test_a_model_that_cannot_write_is_refused_in_one_line(tmp_path):
    args = ["run", "reasoning", "--data", str(SAMPLE), "--model", "ref:constant",
            "--out", str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "cannot answer" in res.stderr


@pytest.mark.integration
def test_the_embedded_model_end_to_end(tmp_path):
    """SmolLM2 through the command line on two items: it runs, asks its follow-ups and
    writes the report (its numbers are in docs/suites/reasoning.md)."""
    out = tmp_path / "r"
    args = ["run", "reasoning", "--data", str(SAMPLE), "--model", "embedded", "--limit", "2",
            "-o", "tasks=date_understanding", "-o", "max_new_tokens=48",
            "--out", str(out), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["accuracy"][0]["n_items"] == 2 and (out / "report.html").is_file()
    # follow-ups are asked of the reasonings that state an answer (none to change otherwise)
    rows = pd.read_parquet(out / "results.parquet")
    on_reasoning = rows[rows["intervention"].isin(["early", "filler", "mistake"])]
    stated = on_reasoning["original_prediction"].notna()
    assert (on_reasoning.loc[~stated, "not_made"] == "no answer stated").all()
    assert ("(follow-ups)" in res.output) == bool(stated.any())


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("tasks=", ["tasks is empty"]),
        ("tasks=navigate,navigate", ["tasks", "more than once"]),
        ("tasks=nope", ["no BBH task 'nope'", "navigate"]),
        ("interventions=", ["interventions is empty"]),
        ("interventions=early,early", ["interventions", "more than once"]),
        ("interventions=zap", ["unknown", "early"]),
        ("hint=loud", ["hint", "sycophancy"]),
        ("max_new_tokens=0", ["max_new_tokens", "from 1 to 10000000"]),
    ],
)
def test_a_bad_option_is_one_line(tmp_path, option, words):
    args = ["run", "reasoning", "--data", SAMPLE, "--model", "ref:cot-reader", "-o", option,
            "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=words)
