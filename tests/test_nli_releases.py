"""The NLI benchmarks the natural-logic method scores (its Table 6: SNLI, MultiNLI matched
and mismatched, ANLI R1-R3) read as their authors release them: ANLI's jsonl (``uid``,
``context``, ``label`` e/n/c; one folder per round) and the form its README shows
(``premise``), MultiNLI's jsonl and ``.txt``, GLUE's MNLI TSV. Each round is its own
challenge set; ``-o challenge=auto`` finds what a data folder holds; a bad record is one
line naming the file, the record and the field. The files are written here in those
formats, from text written for these tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_corpus import refused, runner
from faithprobe.cli import app
from faithprobe.datasets.nli import read_two_class
from faithprobe.datasets.nli_xy import challenge_files
from faithprobe.suite_protocol import get_suite
from test_snli_challenge import write_grid

# (context, hypothesis, label) per round: each round's items differ
ROUNDS = {
    "R1": [
        ("The Orla river rises in the Kettle Hills and flows north for 80 km into Lake Varn.",
         "The Orla flows into a lake.", "e"),
        ("The Orla river rises in the Kettle Hills and flows north for 80 km into Lake Varn.",
         "The Orla flows south.", "c"),
        ("The Orla river rises in the Kettle Hills and flows north for 80 km into Lake Varn.",
         "The Orla is popular with anglers.", "n"),
    ],
    "R2": [
        ("Ines Dalton (born 1961) is a British painter. Her first exhibition was held in Leeds "
         "in 1985.", "Ines Dalton exhibited her work before 1990.", "e"),
        ("Ines Dalton (born 1961) is a British painter. Her first exhibition was held in Leeds "
         "in 1985.", "Ines Dalton's first exhibition was in London.", "c"),
    ],
    "R3": [
        ("Customer: the heater stopped working after two days. Agent: we will send a new one "
         "by Friday.", "The customer will receive a heater.", "e"),
        ("Customer: the heater stopped working after two days. Agent: we will send a new one "
         "by Friday.", "The heater worked for a month.", "c"),
        ("Customer: the heater stopped working after two days. Agent: we will send a new one "
         "by Friday.", "The customer paid by card.", "n"),
        ("Customer: the heater stopped working after two days. Agent: we will send a new one "
         "by Friday.", "The agent offered a refund.", "n"),
    ],
}  # fmt: skip


def anli_line(uid: str, context: str, hypothesis: str, label: str, genre: str = "wiki") -> str:
    """One line of ANLI's release (v0.1 and v1.0 alike): the fields its files hold."""
    return json.dumps(
        {
            "uid": uid,
            "context": context,
            "hypothesis": hypothesis,
            "label": label,
            "model_label": "e" if label != "e" else "n",
            "emturk": False,
            "genre": genre,
            "reason": "written for faithprobe's tests",
            "tag": "",
        }
    )


def mnli_line(pair_id: str, premise: str, hypothesis: str, gold: str, genre: str) -> str:
    """One line of MultiNLI 1.0's jsonl (``multinli_1.0_dev_matched.jsonl``)."""
    return json.dumps(
        {
            "annotator_labels": [gold if gold != "-" else "neutral", "neutral"],
            "genre": genre,
            "gold_label": gold,
            "pairID": pair_id,
            "promptID": pair_id[:-1],
            "sentence1": premise,
            "sentence1_binary_parse": "( ... )",
            "sentence1_parse": "(ROOT)",
            "sentence2": hypothesis,
            "sentence2_binary_parse": "( ... )",
            "sentence2_parse": "(ROOT)",
        }
    )


MNLI_MATCHED = [
    mnli_line(
        "101e",
        "The office closes at noon on Fridays.",
        "The office shuts early on Fridays.",
        "entailment",
        "government",
    ),
    mnli_line(
        "101c",
        "The office closes at noon on Fridays.",
        "The office is open all day on Fridays.",
        "contradiction",
        "government",
    ),
    mnli_line(
        "102n", 'He said the train was "late again".', "The train is often late.", "-", "telephone"
    ),
]
MNLI_MISMATCHED = [
    mnli_line(
        "201n",
        "The novel's hero sails to Lisbon.",
        "The hero is a sailor by trade.",
        "neutral",
        "fiction",
    ),
]
# MultiNLI's .txt and GLUE's MNLI .tsv: the columns of their header lines, in order
MNLI_TXT_COLUMNS = [
    "gold_label", "sentence1_binary_parse", "sentence2_binary_parse", "sentence1_parse",
    "sentence2_parse", "sentence1", "sentence2", "promptID", "pairID", "genre",
    "label1", "label2", "label3", "label4", "label5",
]  # fmt: skip
GLUE_COLUMNS = [
    "index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
    "sentence1_parse", "sentence2_parse", "sentence1", "sentence2",
    "label1", "label2", "label3", "label4", "label5", "gold_label",
]  # fmt: skip


def tsv(columns: list[str], rows: list[dict]) -> str:
    return "\n".join(["\t".join(columns)] + ["\t".join(r.get(c, "x") for c in columns)
                                             for r in rows]) + "\n"  # fmt: skip


@pytest.fixture
def data(tmp_path) -> Path:
    """A data folder as `faithprobe data fetch` lays it out: nli-xy/, anli/R1..R3 (dev and
    test, and R1's train), mnli/ (MultiNLI's dev files and its train file)."""
    write_grid(tmp_path / "nli-xy")
    for name, items in ROUNDS.items():
        folder = tmp_path / "anli" / name
        folder.mkdir(parents=True)
        lines = [anli_line(f"{name}-{i}", *item) for i, item in enumerate(items)]
        (folder / "test.jsonl").write_text("\n".join(lines) + "\n")
        (folder / "dev.jsonl").write_text(anli_line(f"{name}-dev", *items[0]) + "\n")
    (tmp_path / "anli" / "R1" / "train.jsonl").write_text(anli_line("R1-train", *ROUNDS["R1"][0]))
    mnli = tmp_path / "mnli"
    mnli.mkdir()
    (mnli / "multinli_1.0_dev_matched.jsonl").write_text("\n".join(MNLI_MATCHED) + "\n")
    (mnli / "multinli_1.0_dev_mismatched.jsonl").write_text("\n".join(MNLI_MISMATCHED) + "\n")
    (mnli / "multinli_1.0_train.jsonl").write_text(MNLI_MATCHED[0] + "\n")
    return tmp_path


def test_anli_rounds_read_two_class_each_a_challenge_set_named_by_its_round(data):
    read = read_two_class(data / "anli" / "R3" / "test.jsonl")
    assert (read.name, read.file, read.no_consensus) == ("anli-R3-test", "R3/test.jsonl", 0)
    assert [e.id for e in read.examples] == ["R3-0", "R3-1", "R3-2", "R3-3"]
    assert [e.label for e in read.examples] == ["entailment"] + ["non-entailment"] * 3
    first = read.examples[0]
    assert first.premise == ROUNDS["R3"][0][0] and first.hypothesis == ROUNDS["R3"][0][1]
    assert first.features == {"source": "anli-R3-test", "line": 1, "gold_label": "e"}
    # the same records outside a round folder are named by the file alone
    alone = data / "anli-test.jsonl"
    alone.write_text((data / "anli" / "R1" / "test.jsonl").read_text())
    assert read_two_class(alone).name == "anli-test"


def test_the_form_the_anli_readme_shows_reads_the_same(data):
    """``premise`` for ``context`` (the README's example, the authors' build output; its
    round folders are lower case there: build/anli/r1)."""
    folder = data / "build" / "r1"
    folder.mkdir(parents=True)
    lines = [json.dumps({"uid": f"b{i}", "premise": c, "hypothesis": h, "label": lab,
                         "reason": ""}) for i, (c, h, lab) in enumerate(ROUNDS["R1"])]  # fmt: skip
    (folder / "dev.jsonl").write_text("\n".join(lines) + "\n")
    read = read_two_class(folder / "dev.jsonl")
    release = read_two_class(data / "anli" / "R1" / "test.jsonl")
    assert read.name == "anli-R1-dev"
    assert [(e.premise, e.hypothesis, e.label) for e in read.examples] == [
        (e.premise, e.hypothesis, e.label) for e in release.examples
    ]


def test_multinli_jsonl_txt_and_glue_tsv_read_alike(data):
    matched = read_two_class(data / "mnli" / "multinli_1.0_dev_matched.jsonl")
    assert (matched.name, matched.no_consensus) == ("multinli_1.0_dev_matched", 1)
    assert [(e.id, e.label) for e in matched.examples] == [
        ("101e", "entailment"), ("101c", "non-entailment")]  # fmt: skip
    rows = [json.loads(line) for line in MNLI_MATCHED]
    txt = data / "multinli_1.0_dev_matched.txt"
    txt.write_text(tsv(MNLI_TXT_COLUMNS, rows))
    glue = data / "dev_matched.tsv"
    glue.write_text(tsv(GLUE_COLUMNS, rows))
    for path in (txt, glue):
        read = read_two_class(path)
        assert read.no_consensus == 1, path
        assert [(e.premise, e.hypothesis, e.label) for e in read.examples] == [
            (e.premise, e.hypothesis, e.label) for e in matched.examples
        ], path


def test_auto_finds_the_methods_benchmark_splits_not_train_nor_anli_dev(data):
    found = [p.relative_to(data).as_posix() for p in challenge_files(data / "nli-xy")]
    assert found == [
        "mnli/multinli_1.0_dev_matched.jsonl",
        "mnli/multinli_1.0_dev_mismatched.jsonl",
        "anli/R1/test.jsonl",
        "anli/R2/test.jsonl",
        "anli/R3/test.jsonl",
    ]
    suite = get_suite("natural-logic", {"bases": "2"})
    pairs = [p for p in suite.pairs(data / "nli-xy", seed=0) if p.intervention == "none"]
    sources = [p.original.features["source"] for p in pairs]
    assert sources == ["multinli_1.0_dev_matched"] * 2 + ["multinli_1.0_dev_mismatched"] + [
        "anli-R1-test"] * 3 + ["anli-R2-test"] * 2 + ["anli-R3-test"] * 4  # fmt: skip
    assert [r["data"] for r in suite.data_read][-5:] == [
        "multinli_1.0_dev_matched.jsonl", "multinli_1.0_dev_mismatched.jsonl",
        "R1/test.jsonl", "R2/test.jsonl", "R3/test.jsonl"]  # fmt: skip
    kept = suite.sample(pairs, limit=2, seed=0)
    assert len(kept) == 2 + 1 + 2 + 2 + 2  # at most 2 per set: every round is a set


def test_a_run_scores_each_round_beside_its_majority_baseline(data, tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(app, ["run", "natural-logic", "--data", str(data / "nli-xy"),
                              "--model", "ref:reader", "--model", "ref:constant",
                              "-o", "bases=0", "--out", str(out),
                              "--cache-dir", str(tmp_path / "cache")])  # fmt: skip
    assert res.exit_code == 0, res.output
    metrics = json.loads((out / "metrics.json").read_text())
    rows = {(r["subject"], r["source"]): r for r in metrics["challenge_accuracy"]}
    for name, items in ROUNDS.items():
        reader = rows[("ref:reader", f"anli-{name}-test")]
        n_ent = sum(label == "e" for *_, label in items)
        assert reader["n"] == len(items) and reader["value"] == 1.0
        majority = max(n_ent, len(items) - n_ent) / len(items)
        assert reader["majority_baseline"] == pytest.approx(majority)
        constant = rows[("ref:constant", f"anli-{name}-test")]
        assert constant["value"] <= constant["majority_baseline"]
    read = {r["data"]: (r["read"], r["used"]) for r in metrics["data_read"]}
    assert read["R3/test.jsonl"] == (4, 4) and read["multinli_1.0_dev_matched.jsonl"] == (3, 2)


@pytest.mark.parametrize(
    ("line", "expect"),
    [
        ({"uid": "u1", "context": "A.", "hypothesis": "B.", "label": "entailment"},
         ["line 2", "field 'label'", "allowed values: e, n, c"]),
        ({"context": "A.", "hypothesis": "B.", "label": "e"}, ["line 2", "field 'uid'", "missing"]),
        ({"uid": "u1", "hypothesis": "B.", "label": "n"},
         ["line 2", "field 'context'", "missing", "field 'premise'"]),
        ({"uid": "R1-0", "context": "A.", "hypothesis": "B.", "label": "c"},
         ["line 2", "field 'uid'", "duplicate id 'R1-0'"]),
        ({"uid": "u1", "context": "A.", "hypothesis": "", "label": "c"},
         ["line 2", "field 'hypothesis'", "missing"]),
    ],
    ids=["three-class-word", "no-uid", "no-context", "duplicate-uid", "empty-hypothesis"],
)  # fmt: skip
def test_a_bad_anli_record_is_one_line_naming_file_record_and_field(data, tmp_path, line, expect):
    path = data / "anli" / "R1" / "test.jsonl"
    first = path.read_text().splitlines()[0]
    path.write_text(first + "\n" + json.dumps(line) + "\n")
    args = ["run", "natural-logic", "--data", data / "nli-xy", "--model", "ref:reader",
            "-o", f"challenge={path}", "--out", tmp_path / "out",
            "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=[str(path), *expect])


def test_an_unlabelled_glue_or_multinli_test_file_is_one_line(data, tmp_path):
    path = data / "test_matched.tsv"
    path.write_text(tsv([c for c in GLUE_COLUMNS if not c.startswith(("label", "gold"))],
                        [json.loads(MNLI_MATCHED[0])]))  # fmt: skip
    args = ["run", "natural-logic", "--data", data / "nli-xy", "--model", "ref:reader",
            "-o", f"challenge={path}", "--out", tmp_path / "out",
            "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path],
            expect=[str(path), "line 1", "field 'gold_label'", "unlabelled"])  # fmt: skip
