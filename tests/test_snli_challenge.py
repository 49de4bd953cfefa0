"""SNLI as a natural-logic challenge set: the official jsonl read two-class (no-consensus
lines dropped), found beside an NLI-XY folder by ``-o challenge=auto``, and the shared
prefixes' counts."""

import json
from pathlib import Path

import pytest

from faithprobe.datasets.nli import read_nli
from faithprobe.datasets.nli_xy import challenge_files
from faithprobe.errors import DataError
from faithprobe.suite_protocol import get_suite

SHARED_SNLI = Path(__file__).resolve().parents[2] / "shared" / "data" / "snli"


def snli_line(pair_id: str, premise: str, hypothesis: str, gold: str) -> str:
    """One line of SNLI 1.0's official jsonl (the fields the reader uses and a few others)."""
    return json.dumps(
        {
            "annotator_labels": [gold if gold != "-" else "neutral"],
            "captionID": pair_id.split("r")[0],
            "gold_label": gold,
            "pairID": pair_id,
            "sentence1": premise,
            "sentence1_parse": "(ROOT ...)",
            "sentence2": hypothesis,
        }
    )


SNLI_DEV = [
    snli_line("1.jpg#0r1e", "A dog runs in a field.", "An animal runs.", "entailment"),
    snli_line("1.jpg#0r1n", "A dog runs in a field.", "A dog chases a ball.", "neutral"),
    snli_line("1.jpg#0r1c", "A dog runs in a field.", "A cat sleeps.", "contradiction"),
    snli_line("2.jpg#1r1n", "Two men talk.", "Two friends talk.", "-"),
]


def write_grid(folder: Path) -> Path:
    """A two-context, one-word-pair NLI-XY folder (see tests/test_natural_logic.py)."""
    folder.mkdir()
    (folder / "contexts.tsv").write_text(
        "source\tcontext\tintervened\tmonotonicity\toperator\tdistractor operator\t"
        "singular\tmass\tplural\tplace\n"
        "T\tA man saw a x.\t\tup\t\t\tx\t\t\t\n"
        "T\tNo man saw a x.\t\tdown\t\t\tx\t\t\t\n"
    )
    (folder / "insertions.tsv").write_text(
        "source\tx_grammar\tx\ty\ty_grammar\tinsertion_rel\nT\ts\tdog\tanimal\ts\tleq\n"
    )
    return folder


@pytest.fixture
def beside(tmp_path):
    """An NLI-XY folder with ``snli/`` beside it: dev, test and a train file."""
    folder = write_grid(tmp_path / "nli-xy")
    snli = tmp_path / "snli"
    snli.mkdir()
    (snli / "snli_1.0_dev.jsonl").write_text("\n".join(SNLI_DEV) + "\n")
    (snli / "snli_1.0_test.jsonl").write_text(SNLI_DEV[0] + "\n")
    (snli / "snli_1.0_train.jsonl").write_text(SNLI_DEV[0] + "\n")
    return folder


def test_official_snli_jsonl_reads_two_class_and_drops_no_consensus(beside):
    examples = read_nli(beside.parent / "snli" / "snli_1.0_dev.jsonl")
    assert [e.id for e in examples] == ["1.jpg#0r1e", "1.jpg#0r1n", "1.jpg#0r1c"]
    assert [e.label for e in examples] == ["entailment", "non-entailment", "non-entailment"]
    assert examples[1].premise == "A dog runs in a field."
    assert examples[2].hypothesis == "A cat sleeps."
    assert examples[2].features == {
        "source": "snli_1.0_dev",
        "line": 3,
        "gold_label": "contradiction",
    }


def test_snli_lines_are_checked_and_a_file_without_consensus_is_an_error(tmp_path):
    bad = tmp_path / "snli_1.0_dev.jsonl"
    bad.write_text(SNLI_DEV[0] + "\n" + json.dumps({"sentence1": "A", "gold_label": "neutral"}))
    with pytest.raises(DataError, match=r"record line 2: field 'sentence2'"):
        read_nli(bad)
    bad.write_text(SNLI_DEV[3] + "\n")
    with pytest.raises(DataError, match="no examples with a gold label"):
        read_nli(bad)


def test_no_consensus_label_is_dropped_in_tsv_too(tmp_path):
    tsv = tmp_path / "snli_1.0_dev.txt"
    tsv.write_text("gold_label\tsentence1\tsentence2\n-\tA\tB\nentailment\tA\tA\n")
    assert [(e.id, e.label) for e in read_nli(tsv)] == [("snli_1.0_dev-3", "entailment")]


def test_auto_challenge_finds_snli_dev_and_test_beside_the_folder_not_train(beside):
    names = [p.name for p in challenge_files(beside)]
    assert names == ["snli_1.0_dev.jsonl", "snli_1.0_test.jsonl"]
    suite = get_suite("natural-logic", {"bases": "2"})
    pairs = [p for p in suite.pairs(beside, seed=0) if p.intervention == "none"]
    assert [p.original.features["source"] for p in pairs] == ["snli_1.0_dev"] * 3 + [
        "snli_1.0_test"
    ]
    assert len(suite.sample(pairs, limit=2, seed=0)) == 3  # <= 2 per challenge set


@pytest.mark.skipif(not SHARED_SNLI.is_dir(), reason="../shared/data/snli not present")
def test_shared_snli_prefixes_keep_the_lines_with_a_consensus_label():
    """The first 1,289 dev and 1,277 test lines of SNLI 1.0: 16 and 23 have no consensus."""
    dev = read_nli(SHARED_SNLI / "snli_1.0_dev_first1289.jsonl")
    test = read_nli(SHARED_SNLI / "snli_1.0_test_first1277.jsonl")
    assert (len(dev), len(test)) == (1289 - 16, 1277 - 23)
    assert sum(e.label == "entailment" for e in dev) == 433
    assert sum(e.label == "entailment" for e in test) == 405
    found = challenge_files(SHARED_SNLI.parent / "nli-xy")
    assert [p.name for p in found][-2:] == [
        "snli_1.0_dev_first1289.jsonl",
        "snli_1.0_test_first1277.jsonl",
    ]
