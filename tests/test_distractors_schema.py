"""The distractors suite's declared ``--data`` schema: the example file runs, the rules
between fields and the links between records are enforced, and the report says how many
items each view counted (the docs page and ``faithprobe data schema``: test_data_schemas)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_corpus import refused, runner
from faithprobe.cli import app
from faithprobe.errors import DataError
from faithprobe.suites.distractors.schema import DISTRACTORS_SCHEMA
from faithprobe.suites.distractors.suite import DistractorsSuite
from released_tsv import run_reader

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "distractors.jsonl"


def test_the_example_file_runs_and_the_report_counts_each_view(tmp_path):
    out = tmp_path / "run"
    metrics = run_reader(EXAMPLE, out)
    views = {v["view"]: v for v in metrics["views"]}
    # 2 base items; per base: 3 attractors after the fact, 2 between, 1 with filler
    assert (views["main"]["n_items"], views["main"]["n_base"]) == (6, 2)
    assert views["pooled"]["n_items"] == 10 and views["pooled"]["n_left_out"] == 2
    assert views["filler"]["n_items"] == 2
    assert "Items each view counted" in (out / "tables" / "views.md").read_text()
    assert "Items each view counted" in (out / "report.html").read_text()


def _record(features: dict, **changes) -> dict:
    return {"id": "v", "context": "c", "target": "a", "candidates": ["a", "b"],
            "features": features, **changes}  # fmt: skip


VARIANT = {"base_id": "b", "n_attractors": 1, "setting": "single", "attractor_type": "B",
           "position": "after"}  # fmt: skip


@pytest.mark.parametrize(
    ("features", "field", "words"),
    [
        ({"base_id": None, "n_attractors": 2}, "features.n_attractors", "base item"),
        ({**VARIANT, "attractor_type": "none"}, "features.attractor_type", "exactly when"),
        ({**VARIANT, "n_attractors": 0}, "features.attractor_type", "exactly when"),
        (
            {**VARIANT, "n_attractors": 0, "attractor_type": "none"},
            "features.n_attractors",
            "no filler and no padding",
        ),
        ({**VARIANT, "attractors": ["x", "y"]}, "features.attractors", "2 attractors listed"),
        ({**VARIANT, "setting": None}, "features.setting", "not a string"),
        ({"base_id": "b", "n_attractors": 1}, "features.setting", "required when"),
        ({**VARIANT, "n_attractors": -1}, "features.n_attractors", "allowed values: ≥ 0"),
    ],
)
def test_rules_name_the_record_and_the_field(features, field, words):
    with pytest.raises(DataError) as err:
        DISTRACTORS_SCHEMA.check("f.jsonl", "v", _record(features))
    assert err.value.field == field and err.value.record == "v"
    assert words in str(err.value)


def test_the_generated_items_keep_the_schema():
    suite = DistractorsSuite()
    items = {p.intervened.id: p.intervened for p in suite.pairs(None, 0)}
    for item in items.values():
        if "|fact_swap" in item.id:
            continue
        record = {"id": item.id, "context": item.context, "target": item.target,
                  "candidates": list(item.candidates), "features": item.features}  # fmt: skip
        DISTRACTORS_SCHEMA.check("generated", item.id, record)


def test_a_variant_must_name_a_base_item(tmp_path):
    lines = [
        _record({"base_id": None, "n_attractors": 0}, id="b"),
        _record(VARIANT, id="v1"),
        _record({**VARIANT, "base_id": "v1"}, id="v2"),
    ]
    data = tmp_path / "chain.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(DataError, match="'v1' is a variant, not a base item") as err:
        DistractorsSuite().pairs(data, 0)
    assert err.value.record == "v2" and err.value.field == "features.base_id"


def test_a_filler_item_no_curve_starts_from_is_refused(tmp_path):
    lines = [
        _record({"base_id": None, "n_attractors": 0}, id="b"),
        _record(VARIANT, id="v1"),
        _record({**VARIANT, "n_attractors": 0, "attractor_type": "none", "filler": ["x"]}, id="f"),
    ]
    data = tmp_path / "filler.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(DataError, match="no view would count it") as err:
        DistractorsSuite().pairs(data, 0)
    assert err.value.record == "f"


def test_filler_option_with_data_is_refused_and_nothing_recorded(tmp_path):
    out = tmp_path / "run"
    args = ["run", "distractors", "--data", EXAMPLE, "--model", "ref:reader", "-o", "filler=2",
            "--out", out, "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=["-o filler=2", "--data", "features.padding"])
    assert not out.exists()


def test_generate_breaks_items_down_by_filler_and_padding(tmp_path):
    out = tmp_path / "items.jsonl"
    args = ["generate", "distractors", "--out", str(out), "-o", "item_sets=sports",
            "-o", "fillers=0,1", "-o", "filler_sentences=1"]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    header = next(line for line in res.stdout.splitlines() if "attractor type" in line)
    assert "filler" in header and "padding" in header
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in res.stdout.splitlines()]
    rows = [r for r in rows if len(r) == 6]
    # the filler-only and the padded no-attractor items are rows of their own
    assert ["single", "none", "0", "1", "0", "8"] in rows
    assert ["single", "none", "0", "0", "1", "8"] in rows
