"""The confidence-shift suite's ``--data`` formats (Social IQA and its labels file, HellaSwag,
prompt/choices/label JSON lines): the shipped examples run end to end with a reference model,
the real Social IQA release passes its schemas, and every declared constraint (a value
outside the allowed ones, a removed required field, a broken rule, a file too small for its
probes) is refused by ``faithprobe run`` in one line naming the file, the record, the field
and what is allowed, with nothing written. The cases come from the schemas, so a field
declared later is covered without a new case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_corpus import refused, runner
from faithprobe.cli import app
from faithprobe.datasets.multiple_choice import (
    CHOICE_JSONL_SCHEMA,
    HELLASWAG_SCHEMA,
    SOCIALIQA_LABELS_SCHEMA,
    SOCIALIQA_SCHEMA,
    read_socialiqa,
)
from faithprobe.datasets.schema import DataSchema, Field, schemas_for
from schema_cases import bounded, first_place, outside, with_value, without

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "confidence-shift"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "socialiqa"
# each JSON-lines format and its example file
FORMATS = {
    "socialiqa": (SOCIALIQA_SCHEMA, EXAMPLES / "socialiqa.jsonl"),
    "hellaswag": (HELLASWAG_SCHEMA, EXAMPLES / "hellaswag.jsonl"),
    "choices": (CHOICE_JSONL_SCHEMA, EXAMPLES / "choices.jsonl"),
}


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(folder: Path, name: str, records: list[dict]) -> Path:
    """The records as ``folder/NAME.jsonl``, with the Social IQA example's labels file
    beside it (a copy of the shipped one) for a Social IQA file."""
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    shutil.copy(EXAMPLES / "socialiqa-labels.lst", folder / f"{name}-labels.lst")
    return path


def _run(data: Path, out: Path, *options: str) -> list:
    args = ["run", "confidence-shift", "--data", data, "--model", "ref:reader", "-o", "trials=2",
            "--out", out / "run", "--cache-dir", out / "cache"]  # fmt: skip
    for option in options:
        args += ["-o", option]
    return [str(a) for a in args]


def _removable(schema: DataSchema, record: dict) -> list[Field]:
    """The fields ``record`` must hold: required, or required under a condition it meets
    (HellaSwag's fields of the standard rule)."""
    return [f for f in schema.fields if f.required and f.needed(record)]


def test_the_suite_declares_every_format_it_reads():
    assert schemas_for("confidence-shift") == (
        SOCIALIQA_SCHEMA,
        SOCIALIQA_LABELS_SCHEMA,
        HELLASWAG_SCHEMA,
        CHOICE_JSONL_SCHEMA,
    )


@pytest.mark.parametrize("name", FORMATS)
def test_each_example_runs_end_to_end_and_every_instance_is_in_every_view(tmp_path, name):
    _, example = FORMATS[name]
    res = runner.invoke(app, _run(example, tmp_path))
    assert res.exit_code == 0, res.output[-2000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    n = len(_records(example))
    assert metrics["dataset"]["n_instances"] == n
    assert [(p["instances"], p["left_out"]) for p in metrics["dataset"]["by_probe"]] == [(n, 0)] * 3
    # the planted reader is right on every original instance, so the file was read as meant
    (acc,) = metrics["original_accuracy"]
    assert acc["value"] == 1.0


CASES = [
    (name, f, "outside")
    for name, (schema, _) in FORMATS.items()
    for f in bounded(schema)
] + [
    (name, f, "removed")
    for name, (schema, example) in FORMATS.items()
    for f in _removable(schema, _records(example)[1])
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "field", "change"), CASES, ids=[f"{n}-{f.name}-{c}" for n, f, c in CASES]
)
def test_a_bad_value_or_a_missing_field_is_one_line(tmp_path, name, field: Field, change):
    schema, example = FORMATS[name]
    records = _records(example)
    where = first_place(records[1], field)
    if change == "outside":
        records[1] = with_value(records[1], where, outside(field))
        expect = [field.says_values()]
    else:
        records[1] = without(records[1], where)
        expect = ["missing (required"]
    data = _write(tmp_path, "items", records)
    refused(_run(data, tmp_path), watch=[tmp_path], expect=[str(data), "line 2", where, *expect])


def test_every_format_is_covered_by_the_generated_cases():
    covered = {(n, f.name) for n, f, _ in CASES}
    assert {("socialiqa", k) for k in ("context", "question", "answerA", "answerC")} <= covered
    assert {("hellaswag", k) for k in ("activity_label", "ctx_a", "endings", "label")} <= covered
    assert {("choices", k) for k in ("prompt", "choices", "label")} <= covered


@pytest.mark.parametrize("label", ["4", "0", "B", "-1"])
def test_a_socialiqa_label_outside_1_to_3_is_one_line(tmp_path, label):
    data = _write(tmp_path, "dev", _records(EXAMPLES / "socialiqa.jsonl"))
    labels = (tmp_path / "dev-labels.lst").read_text().split()
    labels[3] = label
    (tmp_path / "dev-labels.lst").write_text("\n".join(labels) + "\n")
    (allowed,) = bounded(SOCIALIQA_LABELS_SCHEMA)
    expect = [str(tmp_path / "dev-labels.lst"), "record line 4", "'label'"]
    line = refused(_run(data, tmp_path), watch=[tmp_path], expect=expect)
    assert allowed.says_values() in line or "is not a integer" in line


@pytest.mark.parametrize("name", ["hellaswag", "choices"])
@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (lambda r, k: {**r, "label": len(r[k])}, "expected a choice index in 0.."),
        (lambda r, k: {**r, "label": "first"}, "expected a choice index in 0.."),
        (lambda r, k: {**r, k: r[k][:1], "label": 0}, "needs at least two choices, got 1"),
    ],
    ids=["label-past-the-choices", "label-not-a-number", "one-choice"],
)
def test_the_rules_between_fields_are_one_line(tmp_path, name, change, expect):
    schema, example = FORMATS[name]
    key = "endings" if name == "hellaswag" else "choices"
    records = _records(example)
    records[2] = change(records[2], key)
    data = _write(tmp_path, "items", records)
    rule = next(r for r in schema.rules if expect[:8] in (r.fault(records[2]) or ""))
    refused(_run(data, tmp_path), watch=[tmp_path], expect=[str(data), "line 3", expect, rule.says])


def test_hellaswag_under_the_qa_rule_needs_ctx_or_ctx_a_and_ctx_b(tmp_path):
    records = _records(EXAMPLES / "hellaswag.jsonl")
    for r in records:  # the qa rule reads the raw ctx: the standard rule's fields may go
        del r["activity_label"], r["ctx_a"], r["ctx_b"]
    data = _write(tmp_path, "items", records)
    res = runner.invoke(app, _run(data, tmp_path, "rule=qa", "probes=none"))
    assert res.exit_code == 0, res.output[-2000:]
    del records[1]["ctx"]
    _write(tmp_path, "items", records)
    expect = [str(data), "line 2", "'ctx_a'", "when ctx is absent"]
    refused(_run(data, tmp_path / "again", "rule=qa"), watch=[tmp_path / "again"], expect=expect)
    # the standard rule (the default) needs the fields lm-eval builds its query from
    refused(_run(data, tmp_path / "again"), watch=[tmp_path / "again"], expect=["activity_label"])


def _choices(tmp_path: Path, rows: list[tuple[str, list[str], int]]) -> Path:
    records = [{"id": i, "prompt": p, "choices": c, "label": y} for i, (p, c, y) in enumerate(rows)]
    return _write(tmp_path, "items", records)


def test_a_file_too_small_for_a_donor_probe_is_one_line(tmp_path):
    one = _choices(tmp_path, [("Which is red?", ["sky", "blood"], 1)])
    refused(_run(one, tmp_path), watch=[tmp_path], expect=[str(one), "Wrong-Question",
            "another instance with a different prompt", "holds 1 instance)"])  # fmt: skip
    res = runner.invoke(app, _run(one, tmp_path, "probes=no_question"))
    assert res.exit_code == 0, res.output[-2000:]  # No-Question needs no donor


# instance 0's right answer "a" is nowhere else, but both other right answers ("b", "c") are
# among its own choices: No-Right-Answer has no donor for it, and a donor for the others
NO_DONOR_FOR_FIRST = [
    ("Which letter comes first?", ["a", "b", "c"], 0),
    ("Which letter is a b?", ["b", "d"], 0),
    ("Which letter is a c?", ["c", "e"], 0),
]


def test_an_instance_no_probe_asked_for_can_take_is_one_line(tmp_path):
    data = _choices(tmp_path, NO_DONOR_FOR_FIRST)
    expect = [str(data), "record 0", "No-Right-Answer", "right answer is not among its choices"]
    refused(_run(data, tmp_path, "probes=no_right_answer"), watch=[tmp_path], expect=expect)


def test_an_instance_some_probes_leave_out_is_counted_in_the_dataset_view(tmp_path):
    data = _choices(tmp_path, NO_DONOR_FOR_FIRST)
    res = runner.invoke(app, _run(data, tmp_path))
    assert res.exit_code == 0, res.output[-2000:]
    dataset = json.loads((tmp_path / "run" / "metrics.json").read_text())["dataset"]
    by_probe = {p["probe"]: (p["instances"], p["left_out"]) for p in dataset["by_probe"]}
    assert by_probe == {"no_question": (3, 0), "wrong_question": (3, 0), "no_right_answer": (2, 1)}
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["data_record"]["left_out"] == {"no_right_answer": ["0"]}
    report = runner.invoke(app, ["report", str(tmp_path / "run")])
    assert report.exit_code == 0, report.output[-2000:]
    assert "left_out" in (tmp_path / "run" / "report.html").read_text()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/socialiqa not present")
def test_the_real_socialiqa_release_passes_its_schemas():
    path = SHARED / "dev.jsonl"
    for i, record in enumerate(_records(path)):
        SOCIALIQA_SCHEMA.check(path, f"line {i + 1}", record)
    for i, raw in enumerate((SHARED / "dev-labels.lst").read_text().split()):
        SOCIALIQA_LABELS_SCHEMA.check(path, f"line {i + 1}", {"label": int(raw)})
    items = read_socialiqa(path)
    assert len(items) == 1954 and {i.label for i in items} == {0, 1, 2}
