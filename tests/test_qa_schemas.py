"""The declared ``--data`` formats of the ``faithfulness`` and ``right-reasons`` suites
(SQuAD/Quoref, CoQA and HotpotQA JSON; the negation edit file; the coreference counterfactual
file): the real files they describe pass them, the shipped examples run end to end, and the
bad-value corpus generated from each schema (:mod:`schema_cases`: every field with allowed
values given one outside them, every required field removed, in a file that is otherwise the
example) is refused by ``faithprobe run`` in one line naming the file, the field and the
allowed values, with nothing written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cli_corpus import refused, runner
from faithprobe.cli import app
from faithprobe.coreference.counterfactuals import COUNTERFACTUALS_SCHEMA
from faithprobe.datasets.augment_sentences import AUGMENT_SCHEMA
from faithprobe.datasets.coqa import COQA_SCHEMA
from faithprobe.datasets.hotpotqa import HOTPOTQA_SCHEMA, read_hotpotqa
from faithprobe.datasets.json_doc import load_json
from faithprobe.datasets.schema import DataSchema, Field, schemas_for
from faithprobe.datasets.squad import SQUAD_SCHEMA
from faithprobe.interventions.negation import EDITS_SCHEMA
from schema_cases import bounded, first_place, outside, required, with_value, without

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared" / "data"
SQUAD = EXAMPLES / "faithfulness" / "squad.json"
HOTPOT = EXAMPLES / "faithfulness" / "hotpotqa.json"
STORIES = EXAMPLES / "negation" / "stories.coqa.json"
EDITS = EXAMPLES / "negation" / "edits.jsonl"
COMPARISONS = EXAMPLES / "right-reasons" / "comparisons.hotpotqa.json"
QUOREF = EXAMPLES / "right-reasons" / "coreference.quoref.json"
COUNTERFACTUALS = EXAMPLES / "right-reasons" / "counterfactuals.jsonl"


@dataclass(frozen=True)
class Format:
    """One declared format, the example file its corpus changes and the run that reads it:
    ``args`` with ``{file}`` standing for the changed file."""

    schema: DataSchema
    example: Path
    suite: str
    args: tuple[str, ...]
    lines: bool = False  # JSON lines (the first record is changed), else one JSON document

    def read(self) -> Any:
        if self.lines:
            return [json.loads(x) for x in self.example.read_text().splitlines() if x.strip()]
        return json.loads(self.example.read_text())

    def write(self, doc: Any, path: Path) -> None:
        if self.lines:
            path.write_text("".join(json.dumps(r) + "\n" for r in doc))
        else:
            path.write_text(json.dumps(doc))


FORMATS = {
    "squad": Format(SQUAD_SCHEMA, SQUAD, "faithfulness", ("--data", "{file}")),
    "coqa": Format(COQA_SCHEMA, STORIES, "faithfulness", ("--data", "{file}")),
    "hotpotqa": Format(HOTPOTQA_SCHEMA, HOTPOT, "faithfulness", ("--data", "{file}")),
    "edits": Format(
        EDITS_SCHEMA, EDITS, "faithfulness", ("--data", str(STORIES), "-o", "edits={file}"), True
    ),
    "counterfactuals": Format(
        COUNTERFACTUALS_SCHEMA,
        COUNTERFACTUALS,
        "right-reasons",
        ("--data", str(QUOREF), "-o", "counterfactuals={file}", "-o", "saliency="),
        True,
    ),
}


def _record_of(doc: Any) -> Any:
    """The record the schema's field paths start from: the first line of a JSON-lines file
    or the first question of a HotpotQA list, else the document."""
    return doc[0] if isinstance(doc, list) else doc


def _cases(pick) -> list:
    return [
        pytest.param(name, field, id=f"{name}:{field.name}")
        for name, fmt in FORMATS.items()
        for field in pick(fmt.schema)
    ]


def _refused_run(tmp_path: Path, name: str, doc: Any, expect: list[str]) -> str:
    fmt = FORMATS[name]
    data = tmp_path / fmt.example.name
    fmt.write(doc, data)
    args = ["run", fmt.suite, *(a.replace("{file}", str(data)) for a in fmt.args),
            "--model", "ref:reader", "--out", tmp_path / "out",
            "--cache-dir", tmp_path / "cache"]  # fmt: skip
    return refused(args, watch=[tmp_path], expect=[str(data), *expect])


def _short(field: Field) -> str:
    """The field's last part, as the reader names it."""
    return field.name.rsplit(".", 1)[-1]


@pytest.mark.parametrize(("name", "field"), _cases(bounded))
def test_a_value_outside_the_allowed_ones_is_one_line(tmp_path, name: str, field: Field):
    fmt = FORMATS[name]
    doc = fmt.read()
    record = _record_of(doc)
    bad = with_value(record, first_place(record, field), outside(field))
    doc = [bad, *doc[1:]] if isinstance(doc, list) else bad
    _refused_run(tmp_path, name, doc, [_short(field), field.says_values()])


@pytest.mark.parametrize(("name", "field"), _cases(required))
def test_a_missing_required_field_is_one_line(tmp_path, name: str, field: Field):
    fmt = FORMATS[name]
    doc = fmt.read()
    record = _record_of(doc)
    bad = without(record, first_place(record, field))
    doc = [bad, *doc[1:]] if isinstance(doc, list) else bad
    _refused_run(tmp_path, name, doc, [_short(field), "missing"])


def test_the_corpus_covers_the_values_worth_checking():
    names = {f"{n}:{f.name}" for n, fmt in FORMATS.items() for f in bounded(fmt.schema)}
    assert names >= {
        "hotpotqa:type",
        "hotpotqa:level",
        "edits:answer",
        "squad:data[].paragraphs[].qas[].answers[].answer_start",
        "coqa:data[].answers[].span_start",
        "counterfactuals:answer_start",
    }


def test_each_suite_lists_its_formats_once():
    assert schemas_for("faithfulness") == (
        SQUAD_SCHEMA,
        COQA_SCHEMA,
        HOTPOTQA_SCHEMA,
        EDITS_SCHEMA,
        AUGMENT_SCHEMA,
    )  # fmt: skip (augment_file's bad values: test_augment_file)
    assert schemas_for("right-reasons") == (SQUAD_SCHEMA, HOTPOTQA_SCHEMA, COUNTERFACTUALS_SCHEMA)


# --- the real files ------------------------------------------------------------------------


def _shared(relative: str) -> Path:
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    return path


@pytest.mark.parametrize("relative", ["squad/dev-v1.1.json", "quoref/quoref-dev-v0.1.json"])
def test_the_squad_format_schema_accepts_squad_and_quoref(relative: str):
    path = _shared(relative)
    SQUAD_SCHEMA.check(path, "top level", load_json(path))


def test_the_hotpotqa_schema_accepts_hotpotqa_dev():
    path = _shared("hotpotqa/hotpot_dev_distractor_v1_first103.json")
    doc = load_json(path)
    for i, record in enumerate(doc):
        HOTPOTQA_SCHEMA.check(path, f"[{i}]", record)
    examples = read_hotpotqa(path)
    assert len(examples) == len(doc) == 103
    assert sum(e.features["type"] == "comparison" for e in examples) == 21


# --- the examples run end to end -------------------------------------------------------------


def _run(tmp_path: Path, suite: str, *args: str) -> dict:
    out = tmp_path / "out"
    res = runner.invoke(app, ["run", suite, *args, "--model", "ref:reader", "--out", str(out),
                              "--cache-dir", str(tmp_path / "cache")])  # fmt: skip
    assert res.exit_code == 0, res.output[-2000:]
    return json.loads((out / "metrics.json").read_text())


def _sizes(metrics: dict, key: str) -> dict[str, tuple[int, int]]:
    return {r[key]: (r["items"], r["dropped"]) for r in metrics["sizes"]}


def test_faithfulness_runs_the_squad_example(tmp_path):
    sizes = _sizes(_run(tmp_path, "faithfulness", "--data", str(SQUAD)), "variant")
    assert sizes["OS"] == (6, 0) and sizes["TS"][0] == sizes["TS-R"][0] == 6


def test_faithfulness_runs_the_hotpotqa_example(tmp_path):
    sizes = _sizes(_run(tmp_path, "faithfulness", "--data", str(HOTPOT)), "variant")
    assert sizes == {"OS": (3, 0), "OS-R": (3, 0)}


def test_faithfulness_runs_the_coqa_example_with_its_edits(tmp_path):
    metrics = _run(tmp_path, "faithfulness", "--data", str(STORIES), "-o", f"edits={EDITS}")
    assert _sizes(metrics, "variant")["OS"] == (36, 0)
    assert {r["n"] for r in metrics["negation"]} == {36}  # every story has its edit


def test_right_reasons_runs_the_comparison_example_and_counts_the_selection(tmp_path):
    metrics = _run(tmp_path, "right-reasons", "--data", str(COMPARISONS), "-o", "saliency=")
    rows = {(r["dataset"], r["variant"]): r["items"] for r in metrics["sizes"]}
    assert set(rows.values()) == {3}  # three comparison questions, in both conditions
    assert {(r["dataset"], r["reason"], r["count"]) for r in metrics["selection"]} == {
        ("comparison-hotpotqa-paragraph", "no comparative", 1),
        ("comparison-hotpotqa-supporting", "no comparative", 1),
    }


def test_right_reasons_runs_the_coreference_example_with_its_counterfactuals(tmp_path):
    metrics = _run(tmp_path, "right-reasons", "--data", str(QUOREF), "-o",
                   f"counterfactuals={COUNTERFACTUALS}", "-o", "saliency=")  # fmt: skip
    (size,) = metrics["sizes"]
    assert (size["items"], size["cf_imported"], size["dropped"]) == (2, 2, 0)
    assert sum(r["count"] for r in metrics["selection"]) == 1  # the third question


def test_a_file_with_no_question_to_select_is_one_line(tmp_path):
    bridge = [q for q in json.loads(COMPARISONS.read_text()) if q["type"] == "bridge"]
    data = tmp_path / "bridge.json"
    data.write_text(json.dumps(bridge))
    refused(["run", "right-reasons", "--data", data, "--model", "ref:reader",
             "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"],
            watch=[tmp_path], expect=[str(data), "no comparative 1"])  # fmt: skip
