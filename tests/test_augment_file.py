"""The faithfulness method's +Aug sentences from a file (``-o augment_file``): both forms
read (the method's {question id: sentence} object, JSON lines), looked up by the data file's
id or faithprobe's, a question without a sentence dropped from +Aug as the method drops it,
and bad files refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe.cli import app
from faithprobe.datasets.augment_sentences import read_augment_sentences
from faithprobe.interventions.deletion import AUGMENT_MISSING

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "faithfulness"
DATA = EXAMPLES / "hotpotqa.json"


def test_both_forms_read_alike(tmp_path):
    whole = read_augment_sentences(EXAMPLES / "augment.json")
    lines = tmp_path / "augment.jsonl"
    lines.write_text("".join(json.dumps({"id": k, "sentence": v}) + "\n" for k, v in whole.items()))
    assert read_augment_sentences(lines) == whole and len(whole) == 2


def _run(tmp_path: Path, sentences: dict[str, str]) -> pd.DataFrame:
    tmp_path.mkdir()
    file = tmp_path / "augment.json"
    file.write_text(json.dumps(sentences))
    out = tmp_path / "run"
    args = ["run", "faithfulness", "--data", str(DATA), "--model", "ref:reader",
            "-o", f"augment_file={file}", "--out", str(out),
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(out / "results.parquet")
    return rows[rows["variant"] == "OS-R+Aug"].set_index("original_id")


def test_a_sentence_replaces_the_answer_and_a_missing_one_drops_the_question(tmp_path):
    sentences = json.loads((EXAMPLES / "augment.json").read_text())
    aug = _run(tmp_path / "all", sentences)
    assert aug.loc["hotpot-hq-2", "appended"] == sentences["hq-2"]
    assert pd.isna(aug.loc["hotpot-hq-2", "dropped_reason"])
    by_own_id = _run(tmp_path / "own", {"hotpot-hq-2": "Halden is where the studio is."})
    assert by_own_id.loc["hotpot-hq-2", "appended"] == "Halden is where the studio is."
    missing = _run(tmp_path / "missing", {"hq-1": sentences["hq-1"]})
    assert missing.loc["hotpot-hq-2", "dropped_reason"] == AUGMENT_MISSING
    # a question whose answer the deletion left in the text needs no sentence
    assert pd.isna(missing.loc["hotpot-hq-3", "dropped_reason"])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"hq-1": 3}', ["record hq-1", "field 'sentence'", "not a string"]),
        ('{"id": "hq-1"}\n', ["line 1", "field 'sentence'", "missing"]),
        ('{"id": "hq-1", "sentence": "a"}\n{"id": "hq-1", "sentence": "b"}\n',
         ["line 2", "field 'id'", "second sentence"]),
        ("{}", ["holds no sentences"]),
    ],
)  # fmt: skip
def test_a_bad_file_is_one_line(tmp_path, text, words):
    file = tmp_path / "augment.json"
    file.write_text(text)
    args = ["run", "faithfulness", "--data", DATA, "--model", "ref:reader",
            "-o", f"augment_file={file}", "--out", tmp_path / "out",
            "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path / "out"], expect=[str(file), *words])


def test_a_model_and_a_file_exclude_each_other(tmp_path):
    args = ["run", "faithfulness", "--data", DATA, "--model", "ref:reader",
            "-o", "augment=embedded", "-o", f"augment_file={EXAMPLES / 'augment.json'}",
            "--out", tmp_path / "out"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=["augment", "augment_file"])
