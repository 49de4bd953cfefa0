"""The edits of the ``reasoning`` suite that another model writes: ``-o paraphraser=MODEL``
(the model's own reasoning reworded, then answered) and ``-o corruptor=MODEL`` (one step
rewritten with a mistake, on any task, the rest regenerated).

The writing models here are scripted subjects that the run's model pool loads in place of the
model the option names (the spec is real and checked; only its loading is replaced): a
paraphraser that rewords the plain steps of the reference writers and keeps their conclusion,
one that drops the conclusion, one that writes nothing, and a corruptor that negates a step.
The subjects are the planted references ``ref:cot-reader`` (answers from its stated
conclusion: faithful) and ``ref:rationaliser`` (answer fixed, reasoning decorative)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe import runner
from faithprobe.cli import app
from faithprobe.interventions.reasoning_edits import read_mistake, read_paraphrase, written_text
from faithprobe.qa.cot import reasoning_part
from faithprobe.reference_models.reasoning import PLAIN_STEPS
from faithprobe.requests import Generation, GenerationRequest
from faithprobe.runner import RunConfig, run
from faithprobe.subjects.base import Subject
from faithprobe.suite_protocol import get_suite

SAMPLE = Path(__file__).resolve().parents[1] / "src/faithprobe/catalog/samples/bbh"
TASKS = "date_understanding,web_of_lies,logical_deduction_three_objects"  # web_of_lies: no rule
WRITER = "openai:writer,base_url=http://127.0.0.1:9/v1"  # a real spec, never contacted
REWORDED = "First we see what is asked, and then we work through it in order."


def _between(prompt: str, tag: str) -> str:
    """The text the suite put between the last ``<tag>`` and ``</tag>`` of its prompt."""
    return prompt.rsplit(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0]


class Writer(Subject):
    """A scripted writing model: ``write`` turns the text it is given into its reply, which
    it wraps as a chat model may; it records the prompts of every call."""

    kind, accepts, has_chat_template = "test", frozenset({GenerationRequest.kind}), True

    def __init__(self, name: str, write) -> None:
        self.name, self.write = name, write
        self.calls: list[list[str]] = []

    @property
    def fingerprint(self) -> str:
        return f"{self.name}-1"

    def answer(self, requests, progress=None):
        self.calls.append([r.prompt for r in requests])
        return [Generation(self._reply(r.prompt), 9) for r in requests]

    def _reply(self, prompt: str) -> str:
        tag = "text" if "<text>" in prompt else "step"
        written = self.write(_between(prompt, tag))
        return (
            f'Sure! Here is the rewritten {tag}:\n\n<{tag}>"{written}"</{tag}>' if written else ""
        )


def keeping(reasoning: str) -> str:
    """Rewords the writers' plain steps, keeps the rest (their conclusion) as it is."""
    return reasoning.replace(PLAIN_STEPS, REWORDED)


def dropping(reasoning: str) -> str:
    """Rewords the plain steps and leaves out everything else: the conclusion is lost."""
    return REWORDED if PLAIN_STEPS in reasoning else ""


def negating(step: str) -> str:
    return f"It is not true that {step[0].lower()}{step[1:]}"


@pytest.fixture
def writers(monkeypatch) -> dict[str, Writer]:
    """The run's model pool loads the scripted writer in place of :data:`WRITER`."""
    loaded: dict[str, Writer] = {}
    real = runner.load_subject

    def load(spec, **kwargs):
        return loaded[spec] if spec in loaded else real(spec, **kwargs)

    monkeypatch.setattr(runner, "load_subject", load)
    return loaded


def _run(tmp_path: Path, name: str, options: dict, models=("ref:cot-reader",)):
    config = RunConfig(suite="reasoning", models=list(models), data=SAMPLE,
                       options={"tasks": TASKS, **options}, out=tmp_path / name,
                       cache_dir=tmp_path / "cache")  # fmt: skip
    return run(config)


def _paraphrased(results: pd.DataFrame) -> pd.DataFrame:
    return results[results["intervention"] == "paraphrase"].set_index("subject")


def test_the_paraphraser_is_asked_once_per_reasoning_and_a_rerun_asks_nothing(tmp_path, writers):
    writers[WRITER] = paraphraser = Writer("keeping", keeping)
    options = {"paraphraser": WRITER, "interventions": "paraphrase"}
    first = _run(tmp_path, "first", options)
    (asked,) = paraphraser.calls  # one call for every paraphrase of the run
    rows = _paraphrased(first.results)
    assert len(rows) == 18  # 3 tasks x 6 items
    # each reasoning once (items with the same answer have the same reasoning here)
    reasonings = {reasoning_part(said) for said in rows["original_reply"]}
    assert sorted(_between(p, "text") for p in asked) == sorted(reasonings)
    (pool,) = first.record["pair_models"]
    assert (pool["spec"], pool["computed_requests"]) == (WRITER, len(reasonings))
    again = _run(tmp_path, "again", options)
    assert len(paraphraser.calls) == 1  # every paraphrase came from the run's cache
    assert again.record["pair_models"][0]["computed_requests"] == 0
    pd.testing.assert_frame_equal(_paraphrased(again.results), rows)


@pytest.mark.parametrize(
    ("write", "reader_changed", "reader_met"),
    # a paraphrase that keeps what the reasoning says: the faithful reader keeps its answer
    # as the rationaliser does; one that loses the conclusion moves the reader only (it can
    # no longer tell: no answer, so its expectation cannot be judged)
    [(keeping, 0.0, True), (dropping, 1.0, None)],
)
def test_the_references_keep_or_change_their_answer_as_planted(
    tmp_path, writers, write, reader_changed, reader_met
):
    writers[WRITER] = Writer("paraphraser", write)
    options = {"paraphraser": WRITER, "interventions": "early,paraphrase"}
    result = _run(tmp_path, "refs", options, models=("ref:cot-reader", "ref:rationaliser"))
    effects = {e["subject"]: e["changed"]["value"] for e in result.metrics["effects"]
               if e["intervention"] == "paraphrase"}  # fmt: skip
    assert effects == {"ref:cot-reader": reader_changed, "ref:rationaliser": 0.0}
    rows = _paraphrased(result.results)
    assert rows["not_made"].isna().all() and (rows["edited_by"] == WRITER).all()
    assert rows["edit"].str.contains(REWORDED).all()
    assert rows["edit"].str.endswith("So the answer is").all()
    assert set(rows["expectation"]) == {"answer survives a paraphrase"}
    met = rows["expectation_met"]
    assert list(met["ref:cot-reader"].unique()) == [reader_met]
    assert list(met["ref:rationaliser"].unique()) == [True]


def test_a_paraphrase_left_empty_is_not_made(tmp_path, writers):
    writers[WRITER] = Writer("silent", lambda text: "")
    result = _run(tmp_path, "silent", {"paraphraser": WRITER, "interventions": "paraphrase"})
    rows = _paraphrased(result.results)
    assert (rows["not_made"] == "no paraphrase").all() and rows["prediction"].isna().all()
    # no answer after a paraphrase to count: the row says so, with no estimate
    (effect,) = result.metrics["effects"]
    assert effect["changed"]["n"] == 0 and effect["n_dropped"] == len(rows)


def test_the_corruptor_makes_a_mistake_on_a_task_without_a_rule(tmp_path, writers):
    writers[WRITER] = corruptor = Writer("negating", negating)
    result = _run(tmp_path, "corrupted", {"corruptor": WRITER, "interventions": "mistake"})
    mistakes = result.results[result.results["intervention"] == "mistake"]
    assert set(mistakes["task"]) == set(TASKS.split(","))  # every task, web_of_lies too
    assert mistakes["not_made"].isna().all() and (mistakes["edited_by"] == WRITER).all()
    (asked,) = corruptor.calls
    assert len(asked) == len(mistakes) and all("Question: " in p for p in asked)
    lies = mistakes[mistakes["task"] == "web_of_lies"]
    # the corrupted step ends the edit, and the model went on from it
    assert lies["edit"].str.contains("It is not true that ").all()
    assert lies["reply"].notna().all()
    # a mistake anywhere breaks the reader's conclusion: it can no longer tell its answer
    (effect,) = result.metrics["effects"]
    assert effect["changed"]["value"] == 1.0 and effect["changed"]["n"] == len(mistakes)
    without = get_suite("reasoning", {"tasks": TASKS, "interventions": "mistake"})
    assert "web_of_lies" not in {p.original.task for p in without.pairs(SAMPLE, 0)}


def test_a_written_edit_is_read_from_a_wrapped_reply_and_must_change_the_text():
    reasoning = "We start with 2. Then 3 more.\nThat makes 5."
    assert written_text("```\nHere is the rewritten text:\n<text>'A. B.'</text>\n```", "text") == (
        "A. B."
    )
    assert written_text("  A.\n B.  ", "text") == "A.\nB."  # no tags: the whole reply
    assert written_text("Step: 2. Sherrie lies.", "step") == "2. Sherrie lies."  # label echoed
    edit = read_paraphrase("<text>First 2, then 3 more: 5. So the answer is 5.", reasoning)
    assert edit.text == "First 2, then 3 more: 5. So the answer is"  # its own cue cut off
    assert read_paraphrase(
        "<text>we START with 2. then 3 more. that makes 5.", reasoning
    ).reason == ("copied")
    mistake = read_mistake("<step>That makes 6.</step>\nAnd more.", reasoning, 2)
    assert mistake.text == "We start with 2. Then 3 more.\nThat makes 6."
    assert mistake.change["before"] == "That makes 5." and mistake.change["rule"] == "model"
    assert read_mistake("<step>That makes 5.</step>", reasoning, 2).reason == "unchanged"
    assert read_mistake("", reasoning, 0).reason == "no mistake"


def test_paraphrase_joins_the_default_interventions_only_with_a_paraphraser():
    assert "paraphrase" not in get_suite("reasoning").options.intervention_names
    assert (
        "paraphrase"
        in get_suite("reasoning", {"paraphraser": "embedded"}).options.intervention_names
    )


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["interventions=paraphrase"], ["paraphrase needs a model", "paraphraser=MODEL"]),
        (["paraphraser=nope:zz"], ["paraphraser", "'nope:zz'"]),
        (["corruptor=/no/such/model"], ["corruptor", "/no/such/model"]),
        (["paraphraser=ref:cot-reader"], ["paraphraser=ref:cot-reader", "reference model"]),
    ],
)
def test_a_bad_writing_model_is_one_line(tmp_path, options, words):
    args = ["run", "reasoning", "--data", SAMPLE, "--model", "ref:cot-reader",
            *[a for o in options for a in ("-o", o)],
            "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=words)


@pytest.mark.integration
def test_the_embedded_model_paraphrased_by_itself(tmp_path):
    """SmolLM2 answers two items and paraphrases its own reasoning; the run completes and
    every paraphrase row carries the paraphrase or why it was not made."""
    out = tmp_path / "r"
    args = ["run", "reasoning", "--data", str(SAMPLE), "--model", "embedded", "--limit", "2",
            "-o", "paraphraser=embedded", "-o", "interventions=paraphrase",
            "-o", "tasks=date_understanding", "-o", "max_new_tokens=48",
            "--out", str(out), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(out / "results.parquet")
    assert list(rows["intervention"]) == ["paraphrase", "paraphrase"]
    # a reasoning that states no answer has none to change: it is not paraphrased
    stated = rows[rows["original_prediction"].notna()]
    assert (rows.loc[rows["original_prediction"].isna(), "not_made"] == "no answer stated").all()
    assert (stated["edited_by"] == "embedded").all()
    assert (stated["edit"].str.endswith("So the answer is") | stated["not_made"].notna()).all()
    models = json.loads((out / "run.json").read_text())["pair_models"]
    reasonings = {reasoning_part(said) for said in stated["original_reply"]} - {""}
    assert sum(m["computed_requests"] for m in models) == len(reasonings)
