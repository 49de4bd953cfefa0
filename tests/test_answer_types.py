"""The answer-type classifier of the heuristic baselines: its labels from gold answers, its
training recipe on a tiny random BERT, and the heuristic answering by its types."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from conftest import tiny_bert_config
from faithprobe.cli import app
from faithprobe.datasets.qa_formats import read_qa
from faithprobe.datasets.splits import document_key, heldout_part
from faithprobe.errors import UsageError
from faithprobe.heuristics.subject import HeuristicSubject
from faithprobe.heuristics.type_classifier import NO_ENTITY, AnswerTypeClassifier
from faithprobe.requests import SpanAnswerRequest
from faithprobe.subjects import load_subject, parse_model
from faithprobe.training.answer_types import answer_label, train_answer_types
from faithprobe.training.configs import AnswerTypeTrainConfig

PEOPLE = ("Mary Smith", "John Brown", "Anna Keller", "Peter Walsh", "Laura Stone", "David Moore")
CITIES = ("Paris", "London", "Berlin", "Madrid", "Vienna", "Prague")


def test_an_answer_takes_the_label_of_the_entity_it_matches():
    entities = [(0, 4, "DATE"), (10, 20, "PERSON"), (30, 35, "GPE")]
    assert answer_label(entities, 10, 20) == "PERSON"  # the same span
    assert answer_label(entities, 6, 20) == "PERSON"  # "the " + entity: overlap 10 of 14
    assert answer_label(entities, 0, 12) == NO_ENTITY  # DATE 4 of 12, PERSON 2 of 12
    assert answer_label(entities, 0, 9) == NO_ENTITY  # DATE covers 4 of 9: under half
    assert answer_label(entities, 22, 29) == NO_ENTITY  # no entity there
    assert answer_label([], 0, 5) == NO_ENTITY


def _squad(path, n_articles: int = 6):
    """A SQuAD-format file: per article a who (PERSON), a when (DATE) and a what (no entity)
    question."""
    articles = []
    for i in range(n_articles):
        person, city, year = PEOPLE[i], CITIES[i], str(1950 + i)
        context = (f"In {year}, the old senator met {person} in {city}. "
                   "The committee approved a new bridge over the river.")  # fmt: skip
        qas = [
            (f"Who did the senator meet in {city}?", person),
            (f"When did the senator meet {person}?", year),
            ("What did the committee approve?", "a new bridge"),
        ]
        articles.append(
            {
                "title": f"article {i}",
                "paragraphs": [
                    {
                        "context": context,
                        "qas": [
                            {
                                "id": f"{i}-{j}",
                                "question": q,
                                "answers": [{"text": a, "answer_start": context.index(a)}],
                            }
                            for j, (q, a) in enumerate(qas)
                        ],
                    }
                ],
            }
        )
    path.write_text(json.dumps({"version": "1.1", "data": articles}))
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory, tiny_pair_tokenizer):
    """A tiny BERT encoder without a head, like the embedded MiniLM."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(tiny_bert_config(len(tiny_pair_tokenizer)))
    folder = tmp_path_factory.mktemp("base")
    model.save_pretrained(folder)
    tiny_pair_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def trained(tmp_path_factory, base):
    folder = tmp_path_factory.mktemp("data")
    data = _squad(folder / "squad.json")
    out = folder / "types"
    cfg = AnswerTypeTrainConfig(
        out=out, base=base, train=(data,), heldout=0.34, min_count=1, freeze_layers=1,
        batch_size=4, max_steps=3, save_steps=3, learning_rate=1e-3,
    )  # fmt: skip
    return data, out, train_answer_types(cfg, progress=False, log=lambda _: None)


def test_the_recipe_labels_trains_and_scores_per_type(trained, base):
    data, out, summary = trained
    assert summary["task"] == "answer-types"
    assert sorted(summary["labels"].values()) == sorted(["DATE", "PERSON", NO_ENTITY])
    assert summary["labels"][str(len(summary["labels"]) - 1)] == NO_ENTITY
    # 4 of 6 articles trained on, 2 held out: one question of each type per article
    assert summary["train"]["label_counts"] == {"DATE": 4, "PERSON": 4, NO_ENTITY: 4}
    held = summary["heldout"]
    assert held["label_counts"] == {"DATE": 2, "PERSON": 2, NO_ENTITY: 2}
    accuracy = held["accuracy"]
    assert accuracy["n"] == 6 and set(accuracy["by_label"]) == {"DATE", "PERSON", NO_ENTITY}
    assert sum(r["correct"] for r in accuracy["by_label"].values()) == accuracy["correct"]
    assert sum(r["predicted"] for r in accuracy["by_label"].values()) == 6
    assert accuracy["majority_label"]["value"] == pytest.approx(1 / 3)
    # the held-out documents are those `-o heldout_of=<out>` selects
    heldout = heldout_part(read_qa(data, "squad"), data, out)
    assert len(heldout) == held["questions"] == 6
    assert {document_key(ex) for ex in heldout} == set(summary["split"]["heldout"])


def test_embeddings_and_the_lowest_layers_stay_frozen(trained, base):
    _, out, summary = trained
    after = load_file(out / "model.safetensors")
    before = load_file(base / "model.safetensors")
    for name in ("embeddings.word_embeddings.weight", "encoder.layer.0.output.dense.weight"):
        assert torch.equal(after[f"bert.{name}"], before[name])
    top = "encoder.layer.1.output.dense.weight"
    assert not torch.equal(after[f"bert.{top}"], before[top])
    total = sum(t.numel() for t in after.values() if t.dtype.is_floating_point)
    assert 0 < summary["train"]["trainable_parameters"] < total


def test_the_classifier_predicts_one_of_its_labels(trained):
    _, out, summary = trained
    classifier = AnswerTypeClassifier(out)
    label = classifier.label("Who did the senator meet in Paris?")
    assert label in summary["labels"].values()
    assert classifier("Who did the senator meet in Paris?") == (
        frozenset() if label == NO_ENTITY else frozenset({label})
    )


def _forced(tmp_path, tokenizer, label: str):
    """A tiny classifier over (DATE, PERSON, OTHER) that always predicts ``label``."""
    from transformers import BertForSequenceClassification

    labels = ["DATE", "PERSON", NO_ENTITY]
    config = tiny_bert_config(len(tokenizer))
    config.num_labels = 3
    config.id2label = dict(enumerate(labels))
    config.label2id = {v: k for k, v in config.id2label.items()}
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([5.0 if x == label else 0.0 for x in labels]))
    folder = tmp_path / label
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


CONTEXT = "In 1961, the senator met Mary Smith in Paris. The committee approved a new bridge."


@pytest.mark.parametrize(
    ("label", "answer"), [("DATE", "1961"), ("PERSON", "Mary Smith"), (NO_ENTITY, "the senator")]
)
def test_the_heuristic_extracts_the_type_the_classifier_predicts(
    tmp_path, tiny_pair_tokenizer, label, answer
):
    folder = _forced(tmp_path, tiny_pair_tokenizer, label)
    request = SpanAnswerRequest("Who met someone in 1962?", CONTEXT)
    wh = HeuristicSubject("first+entity")
    trained = load_subject(f"heuristic:first+entity,answer_types={folder}")
    assert wh.answer([request])[0].text == "Mary Smith"  # who -> PERSON, ORG, NORP
    (found,) = trained.answer([request])
    assert found.text == answer
    assert CONTEXT[found.start : found.end] == answer
    assert trained.name == f"heuristic:first+entity,answer_types={folder}" != wh.name
    assert trained.fingerprint != wh.fingerprint
    assert trained.describe()["answer_types"] == str(folder)


def test_an_answer_types_setting_that_names_no_model_is_refused(tmp_path):
    with pytest.raises(UsageError, match="answer_types"):
        parse_model(f"heuristic:overlap+entity,answer_types={tmp_path}")


def test_the_command_line_recipe(tmp_path, base):
    data = _squad(tmp_path / "squad.json")
    out = tmp_path / "types"
    result = CliRunner().invoke(
        app,
        ["train", "answer-types", "--train", str(data), "--out", str(out), "--base", str(base),
         "--heldout", "0.34", "--min-count", "1", "--freeze-layers", "1", "--max-steps", "2",
         "--batch-size", "4"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "held-out accuracy" in result.output and "majority label" in result.output
    assert (out / "training.json").is_file() and not (out / "checkpoints").exists()


def test_the_baseline_scores_the_trained_types_beside_the_wh_word_map(
    tmp_path, tiny_pair_tokenizer
):
    import pandas as pd

    data = _squad(tmp_path / "squad.json")
    folder = _forced(tmp_path, tiny_pair_tokenizer, "DATE")
    out = tmp_path / "baseline"
    result = CliRunner().invoke(
        app,
        ["baseline", "heuristics", "--data", str(data), "--out", str(out),
         "--answer-types", str(folder)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "predictions.parquet")
    first = rows[rows["selector"] == "first"].set_index(["extractor", "question"])["prediction"]
    who = "Who did the senator meet in Paris?"
    assert first[("entity", who)] == "Mary Smith"  # who -> PERSON
    assert first[("entity-trained", who)] == "1950"  # the forced classifier: DATE
