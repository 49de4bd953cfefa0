"""natural-logic's ``-o decision=argmax`` (the method's rule: entailment iff it is a
classifier's top class) on a tiny random three-class classifier, end to end: every prediction
equals a plain transformers argmax over the three classes, the default rule's equals
p(entailment) > 1/2, the option is recorded and the report says which rule decided."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from conftest import tiny_bert_config
from faithprobe.cli import app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "natural-logic"


@pytest.fixture(scope="module")
def classifier(tmp_path_factory, tiny_pair_tokenizer):
    from transformers import BertForSequenceClassification

    config = tiny_bert_config(len(tiny_pair_tokenizer))
    config.num_labels = 3
    config.id2label = {0: "contradiction", 1: "entailment", 2: "neutral"}
    config.label2id = {v: k for k, v in config.id2label.items()}
    torch.manual_seed(3)
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # entailment often on top at below 1/2: where the rules part
        model.classifier.weight.mul_(0.05)
        model.classifier.bias.copy_(torch.tensor([0.0, 0.25, 0.0]))
    folder = tmp_path_factory.mktemp("mnli3")
    model.save_pretrained(folder)
    tiny_pair_tokenizer.save_pretrained(folder)
    return folder, model, tiny_pair_tokenizer


def _run(folder: Path, out: Path, decision: str) -> pd.DataFrame:
    args = ["run", "natural-logic", "--data", str(EXAMPLE), "--model", f"hf-nli:{folder}",
            "-o", "bases=0", "-o", "challenge=none", "-o", f"decision={decision}",
            "--out", str(out), "--cache-dir", str(out.parent / "cache")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return pd.read_parquet(out / "results.parquet")


def _probs(model, tokenizer, premise: str, hypothesis: str) -> list[float]:
    enc = tokenizer(premise, hypothesis, return_tensors="pt", return_token_type_ids=True)
    with torch.no_grad():
        return torch.softmax(model(**enc).logits[0], -1).tolist()


def test_argmax_decides_as_a_plain_argmax_and_is_reported(classifier, tmp_path):
    folder, model, tokenizer = classifier
    runs = {d: _run(folder, tmp_path / d, d) for d in ("threshold", "argmax")}
    differ = 0
    for decision, rows in runs.items():
        for row in rows.drop_duplicates("intervened_id").itertuples():
            p = _probs(model, tokenizer, row.premise, row.hypothesis)
            entailment = p[1] > max(p[0], p[2]) if decision == "argmax" else p[1] > 0.5
            margin = p[1] - (max(p[0], p[2]) if decision == "argmax" else 0.5)
            if abs(margin) > 1e-4:  # a near tie may round either way in another batch
                assert (row.prediction == "entailment") == entailment
            differ += decision == "argmax" and (p[1] > max(p[0], p[2])) != (p[1] > 0.5)
    assert differ
    run = json.loads((tmp_path / "argmax" / "run.json").read_text())
    assert run["options"]["decision"] == "argmax"
    assert "decision=argmax" in (tmp_path / "argmax" / "report.html").read_text()
