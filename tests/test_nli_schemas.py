"""The natural-logic suite's declared ``--data`` formats (:mod:`faithprobe.suites.natural_logic.
schema`): the shipped example folder runs end to end and reports what each file gave; every
allowed-value field given a value outside the allowed ones, and every required field
emptied or removed, in a file that is otherwise the example's, is refused by ``faithprobe
run`` in one line naming the file, the record, the field (and the allowed values); a context
or a word pair that would be in no example is an error; the shared data (where present) is
accepted whole. The cases come from the schemas, so a field declared later is covered."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from cli_corpus import refused, runner
from faithprobe.cli import app
from faithprobe.datasets.nli import (
    ANLI_JSONL,
    ANLI_README_JSONL,
    HELP_TSV,
    MNLI_TSV,
    OWN_JSONL,
    SNLI_JSONL,
    read_two_class,
)
from faithprobe.datasets.nli_xy import (
    CONTEXTS_SCHEMA,
    INSERTIONS_SCHEMA,
    challenge_files,
    read_nli_xy,
)
from faithprobe.datasets.schema import DataSchema, Field, schemas_for
from schema_cases import WRONG, bounded, outside, required, with_value, without

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "natural-logic"
SHARED = ROOT.parent / "shared" / "data"
# each challenge layout -> its example file
CHALLENGES = {
    MNLI_TSV.schema.name: "challenge-mnli.tsv",
    HELP_TSV.schema.name: "challenge-help.tsv",
    OWN_JSONL.schema.name: "challenge.jsonl",
    SNLI_JSONL.schema.name: "challenge-snli.jsonl",
    ANLI_JSONL.schema.name: "challenge-anli.jsonl",
    ANLI_README_JSONL.schema.name: "challenge-anli-readme.jsonl",
}
GRID_FILES = {CONTEXTS_SCHEMA.name: "contexts.tsv", INSERTIONS_SCHEMA.name: "insertions.tsv"}
FILES = {**GRID_FILES, **CHALLENGES}
SCHEMAS = schemas_for("natural-logic")


def _tsv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return list(reader.fieldnames or []), list(reader)


def _write_tsv(path: Path, header: list[str], rows: list[dict]) -> None:
    header = header + [k for r in rows for k in r if k not in header]
    header = list(dict.fromkeys(header))
    lines = ["\t".join(header)] + ["\t".join(str(r.get(h, "")) for h in header) for r in rows]
    path.write_text("\n".join(lines) + "\n")


def _records(path: Path) -> tuple[list[str], list[dict]]:
    if path.suffix == ".jsonl":
        return [], [json.loads(line) for line in path.read_text().splitlines()]
    return _tsv(path)


def _write(path: Path, header: list[str], rows: list[dict]) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        _write_tsv(path, header, rows)


def _line(path: Path, index: int) -> str:
    """The record name of row ``index`` of ``path`` (a TSV's header is line 1)."""
    return f"record line {index + (1 if path.suffix == '.jsonl' else 2)}"


def _run(tmp_path: Path, schema: DataSchema) -> tuple[list, Path]:
    """A copy of the example folder and the arguments of a run reading ``schema``'s file."""
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    name = FILES[schema.name]
    challenge = str(data / name) if name in CHALLENGES.values() else "none"
    args = ["run", "natural-logic", "--data", data, "--model", "ref:reader", "-o", "bases=4",
            "-o", f"challenge={challenge}", "--out", tmp_path / "out",
            "--cache-dir", tmp_path / "cache"]  # fmt: skip
    return args, data / name


def _cases(pick) -> list[tuple[DataSchema, Field]]:
    return [(s, f) for s in SCHEMAS for f in pick(s)]


def _id(case: tuple[DataSchema, Field]) -> str:
    return f"{FILES[case[0].name]}:{case[1].name}"


BOUNDED = _cases(bounded)
REQUIRED = _cases(required)


def test_every_format_has_an_example_file_and_every_value_field_is_bounded():
    assert set(FILES) == {s.name for s in SCHEMAS}
    assert all((EXAMPLE / name).is_file() for name in FILES.values())
    names = {(FILES[s.name], f.name) for s, f in BOUNDED}
    assert names >= {
        ("contexts.tsv", "monotonicity"),
        ("contexts.tsv", "place"),
        ("insertions.tsv", "x_grammar"),
        ("insertions.tsv", "y_grammar"),
        ("insertions.tsv", "insertion_rel"),
        ("challenge-mnli.tsv", "gold_label"),
        ("challenge-help.tsv", "gold_label"),
        ("challenge.jsonl", "label"),
        ("challenge-snli.jsonl", "gold_label"),
        ("challenge-anli.jsonl", "label"),
        ("challenge-anli-readme.jsonl", "label"),
    }


@pytest.mark.parametrize("case", BOUNDED, ids=[_id(c) for c in BOUNDED])
def test_a_value_outside_the_allowed_ones_is_one_line(tmp_path, case):
    schema, field = case
    args, path = _run(tmp_path, schema)
    header, rows = _records(path)
    rows[0] = with_value(rows[0], field.name, outside(field))
    _write(path, header, rows)
    expect = [str(path), _line(path, 0), f"field '{field.name}'", WRONG, field.says_values()]
    refused(args, watch=[tmp_path], expect=expect)


@pytest.mark.parametrize("case", REQUIRED, ids=[_id(c) for c in REQUIRED])
def test_a_required_field_removed_or_empty_is_one_line(tmp_path, case):
    schema, field = case
    args, path = _run(tmp_path, schema)
    header, rows = _records(path)
    rows[-1] = without(rows[-1], field.name) if path.suffix == ".jsonl" else {
        **rows[-1], field.name: ""}  # fmt: skip
    _write(path, header, rows)
    where = _line(path, len(rows) - 1)
    refused(args, watch=[tmp_path], expect=[str(path), where, f"field '{field.name}'", "missing"])


@pytest.mark.parametrize("schema", [CONTEXTS_SCHEMA, INSERTIONS_SCHEMA], ids=GRID_FILES.values())
def test_a_required_column_missing_from_the_header_is_one_line(tmp_path, schema):
    args, path = _run(tmp_path, schema)
    header, rows = _tsv(path)
    column = next(f.name for f in required(schema) if f.name != "source")
    _write_tsv(path, [h for h in header if h != column], [without(r, column) for r in rows])
    refused(args, watch=[tmp_path], expect=[str(path), "line 1", column, "header lacks"])


def test_rules_between_fields_are_one_line(tmp_path):
    args, path = _run(tmp_path, CONTEXTS_SCHEMA)
    header, rows = _tsv(path)
    _write_tsv(path, header, [{**rows[0], "context": "A woman bought a pear."}, *rows[1:]])
    refused(args, watch=[tmp_path], expect=[str(path), "line 2", "'context'", "slot token x"])
    bare = {**rows[0], "singular": "", "mass": "", "plural": ""}
    _write_tsv(path, header, [bare, *rows[1:]])
    refused(args, watch=[tmp_path], expect=[str(path), "line 2", "no noun kind"])


def test_a_context_or_pair_in_no_example_is_an_error(tmp_path):
    args, contexts = _run(tmp_path, CONTEXTS_SCHEMA)
    header, rows = _tsv(contexts)
    lonely = {**rows[0], "context": "A x stood there.", "singular": "", "place": "x"}
    _write_tsv(contexts, header, [*rows, lonely])
    refused(args, watch=[tmp_path], expect=[str(contexts), f"line {len(rows) + 2}",
                                            "takes no insertion pair"])  # fmt: skip
    _write_tsv(contexts, header, rows)
    insertions = contexts.parent / "insertions.tsv"
    header, pairs = _tsv(insertions)
    stray = {**pairs[0], "x": "Paris", "y": "France", "x_grammar": "l", "y_grammar": "l"}
    _write_tsv(insertions, header, [*pairs, stray])
    refused(args, watch=[tmp_path], expect=[str(insertions), f"line {len(pairs) + 2}",
                                            "fits no context"])  # fmt: skip


def test_values_are_read_case_insensitively(tmp_path):
    data = tmp_path / "grid"
    shutil.copytree(EXAMPLE, data)
    header, rows = _tsv(data / "contexts.tsv")
    _write_tsv(data / "contexts.tsv", header, [{**rows[0], "monotonicity": "UP",
                                                "singular": "X"}, *rows[1:]])  # fmt: skip
    header, pairs = _tsv(data / "insertions.tsv")
    _write_tsv(data / "insertions.tsv", header, [{**pairs[0], "x_grammar": "Singular",
                                                  "insertion_rel": "LEQ"}, *pairs[1:]])  # fmt: skip
    assert [e.label for e in read_nli_xy(data).examples] == [
        e.label for e in read_nli_xy(EXAMPLE).examples
    ]


def test_the_example_runs_end_to_end_and_reports_what_each_file_gave(tmp_path):
    files = ",".join(str(EXAMPLE / name) for name in CHALLENGES.values())
    out = tmp_path / "out"
    res = runner.invoke(app, ["run", "natural-logic", "--data", str(EXAMPLE), "--model",
                              "ref:reader", "-o", "bases=0", "-o", f"challenge={files}",
                              "--out", str(out), "--cache-dir", str(tmp_path / "cache")])  # fmt: skip
    assert res.exit_code == 0, res.output
    metrics = json.loads((out / "metrics.json").read_text())
    read = {r["data"]: (r["read"], r["used"]) for r in metrics["data_read"]}
    assert read == {
        "contexts.tsv": (8, 8),
        "insertions.tsv": (6, 12),  # rows; pairs with their reverses
        "grid": (48, 48),
        "bases": (48, 48),
        "challenge-mnli.tsv": (4, 4),
        "challenge-help.tsv": (3, 3),
        "challenge.jsonl": (3, 3),
        "challenge-snli.jsonl": (4, 3),  # one gold label "-" (no consensus) skipped
        "challenge-anli.jsonl": (3, 3),
        "challenge-anli-readme.jsonl": (3, 3),
    }
    assert all(s["pairs"] > 0 for s in metrics["set_sizes"]), metrics["set_sizes"]
    accuracy = {r["source"]: (r["n"], r["value"]) for r in metrics["challenge_accuracy"]}
    assert accuracy == {
        "challenge-mnli": (4, 1.0),
        "challenge-help": (3, 1.0),
        "challenge": (3, 1.0),
        "challenge-snli": (3, 1.0),
        "challenge-anli": (3, 1.0),
        "challenge-anli-readme": (3, 1.0),
    }
    effects = {r["feature"]: r for r in metrics["effects"]}
    assert {f: (r["tce"]["value"], r["dce"]["value"]) for f, r in effects.items()} == {
        "context": (1.0, 0.0),
        "insertion": (1.0, 0.0),
    }
    assert "What the data gave" in (out / "report.html").read_text()


needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")


@needs_shared
@pytest.mark.parametrize(
    ("folder", "contexts", "rows", "examples", "entailment"),
    [
        ("nli-xy", 208, 147, 29_436, 11_981),
        ("nli-xy/small/train", 63, 45, 2_894, 1_214),  # the method's splits: no place column
        ("nli-xy/small/dev", 60, 42, 2_436, 987),
        ("nli-xy/small/test", 89, 63, 5_330, 2_162),
    ],
)
def test_the_shared_nli_xy_folders_are_accepted(folder, contexts, rows, examples, entailment):
    grid = read_nli_xy(SHARED / folder)
    assert (len(grid.contexts), grid.insertion_rows) == (contexts, rows)
    assert len(grid.examples) == examples
    assert sum(e.label == "entailment" for e in grid.examples) == entailment


@needs_shared
def test_the_shared_challenge_sets_are_accepted_and_count_what_they_skip():
    found = challenge_files(SHARED / "nli-xy")
    assert len(found) == 7, found
    skipped = {}
    for path in found:
        challenge = read_two_class(path)
        assert challenge.examples, path
        skipped[path.name] = challenge.no_consensus
    assert skipped == {
        "help_test.tsv": 0,
        "monotonicity_fragments_easy_test.tsv": 0,
        "MED.tsv": 0,
        "leskexppmb_and.tsv": 0,
        "leskexppmb_or.tsv": 0,
        "snli_1.0_dev_first1289.jsonl": 16,
        "snli_1.0_test_first1277.jsonl": 23,
    }
