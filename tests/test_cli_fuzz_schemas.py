"""The bad-value corpus of the declared ``--data`` schemas: every field with allowed values
(or a least value) given a value outside them, in a file that is otherwise the shipped
example, is refused by ``faithprobe run`` as a bad input must be
(:func:`cli_corpus.refused`): one line naming the file, the record, the field and the
allowed values, exit 2, nothing written. The cases come from the schema itself, so a field
declared later is covered without a new case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_corpus import refused
from faithprobe.datasets.schema import Field
from faithprobe.suites.distractors.schema import DISTRACTORS_SCHEMA
from schema_cases import bounded, first_place, outside, with_value

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "distractors.jsonl"
BOUNDED = bounded(DISTRACTORS_SCHEMA)


@pytest.mark.parametrize("field", BOUNDED, ids=[f.name for f in BOUNDED])
def test_a_value_outside_the_allowed_ones_is_one_line(tmp_path, field: Field):
    records = [json.loads(line) for line in EXAMPLE.read_text().splitlines()]
    variant = next(r for r in records if r["features"].get("base_id") is not None)
    bad = with_value(variant, first_place(variant, field), outside(field))
    records[records.index(variant)] = bad
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    expect = [str(data), bad["id"], field.name, field.says_values()]
    args = ["run", "distractors", "--data", data, "--model", "ref:reader",
            "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=expect)


def test_every_bounded_field_is_covered():
    assert {f.name for f in BOUNDED} >= {
        "features.setting",
        "features.attractor_type",
        "features.position",
        "features.n_attractors",
    }
