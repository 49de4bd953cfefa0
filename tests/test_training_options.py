"""The recipes' shared options on tiny random BERTs: early stopping on held-out training
rows (``--patience``), several seeds averaged (``--seeds``), and the answer-type
classifier's class weights and macro-F1."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.training import common
from faithprobe.training.answer_types import f1, per_label_accuracy, train_answer_types
from faithprobe.training.configs import AnswerTypeTrainConfig
from faithprobe.training.multiple_choice import train_mc
from faithprobe.training.seeds import aggregate, parse_seeds
from faithprobe.training.weighted_loss import WeightedClassifier, inverse_frequency
from test_answer_types import _squad
from test_training_mc import _config, base, data  # noqa: F401 (fixtures)


def test_a_validation_split_holds_out_whole_groups_seeded():
    rows = [([1, 2], None)] * 10
    dataset = common.EncodedDataset(rows, list(range(10)), grouped=False,
                                    groups=[f"g{i // 2}" for i in range(10)])  # fmt: skip
    train, held = common.validation_split(dataset, 0.4, seed=0)
    assert len(train) + len(held) == 10 and len(held) == 4  # 2 of 5 groups, 2 rows each
    assert not set(train.groups) & set(held.groups)
    assert held.labels == [i for i, g in enumerate(dataset.groups) if g in set(held.groups)]
    again, _ = common.validation_split(dataset, 0.4, seed=0)
    assert again.labels == train.labels
    with pytest.raises(UsageError, match="two groups"):
        common.validation_split(common.EncodedDataset(rows[:2], [0, 1], grouped=False,
                                                      groups=["a", "a"]), 0.5, 0)  # fmt: skip


def test_patience_stops_when_the_held_out_loss_stops_falling(data, base, tmp_path):  # noqa: F811
    """A learning rate far too high makes the held-out loss rise at once: training stops
    after ``patience`` checkpoints without a better one, and the best checkpoint is kept."""
    out = tmp_path / "stopped"
    cfg = _config(data, base, out, max_steps=40, save_steps=2, learning_rate=0.5, patience=2,
                  validation=0.25, epochs=20)  # fmt: skip
    summary = train_mc(cfg, progress=False)
    stopping = summary["early_stopping"]
    assert stopping["validation_rows"] == 6 and stopping["patience"] == 2  # a quarter of 24
    assert stopping["stopped_early"] and summary["steps"] < 40
    losses = [e["eval_loss"] for e in stopping["eval_log"]]
    assert stopping["best_eval_loss"] == min(losses)
    assert stopping["best_step"] == stopping["eval_log"][losses.index(min(losses))]["step"]
    assert summary["hyperparameters"]["patience"] == 2
    assert summary["hyperparameters"]["validation"] == 0.25
    plain = train_mc(_config(data, base, tmp_path / "plain"), progress=False)
    assert plain["early_stopping"] is None


def test_seeds_are_parsed_strictly():
    assert parse_seeds("0, 1,2") == (0, 1, 2)
    for bad in ("0", "0,0", "a,1", "1,-2", f"0,{2**32}"):
        with pytest.raises(UsageError):
            parse_seeds(bad)


def test_the_aggregate_is_the_mean_and_sample_sd_of_every_seed_score():
    summaries = [
        {"seed": 0, "scores": {"acc": {"value": 0.5}, "f1": {"value": 0.2}}},
        {"seed": 1, "scores": {"acc": {"value": 0.7}}},
        {"seed": 2, "scores": {"acc": {"value": 0.6}, "f1": {"value": 0.4}}},
    ]
    record = aggregate(summaries)
    assert record["seeds"] == [0, 1, 2] and list(record["scores"]) == ["acc"]  # f1: not every seed
    acc = record["scores"]["acc"]
    assert acc["mean"] == pytest.approx(0.6) and acc["sd"] == pytest.approx(0.1)
    assert acc["values"] == [0.5, 0.7, 0.6] and acc["n"] == 3


def test_seeds_train_one_folder_each_aggregate_and_resume(data, base, tmp_path):  # noqa: F811
    runner = CliRunner()
    train, dev = data
    out = tmp_path / "seeds"
    args = ["train", "mc", "--train", str(train), "--dev", str(dev), "--base", str(base),
            "--out", str(out), "--max-steps", "2", "--batch-size", "4", "--seeds", "3,5"]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    record = json.loads((out / "seeds.json").read_text())
    assert record["seeds"] == [3, 5]
    for seed in (3, 5):
        summary = json.loads((out / f"seed-{seed}" / "training.json").read_text())
        assert summary["seed"] == seed
    values = [json.loads((out / f"seed-{s}" / "training.json").read_text())["scores"]
              ["dev accuracy"]["value"] for s in (3, 5)]  # fmt: skip
    acc = record["scores"]["dev accuracy"]
    assert acc["values"] == values and acc["mean"] == pytest.approx(sum(values) / 2)
    assert "dev accuracy" in (out / "seeds.md").read_text() and "mean ± sd" in res.output
    # the same command again: both seeds kept, nothing trained
    stamp = (out / "seed-3" / "model.safetensors").stat().st_mtime_ns
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert res.output.count("kept") == 2
    assert (out / "seed-3" / "model.safetensors").stat().st_mtime_ns == stamp
    # another command into the same folders is refused, as --out always is
    res = runner.invoke(app, [*args[:-1], "3,5", "--lr", "0.001"])
    assert res.exit_code == 2 and "--overwrite" in res.output
    res = runner.invoke(app, [*args, "--seed", "4"])
    assert res.exit_code == 2 and "--seed or --seeds" in res.output


def test_macro_f1_averages_every_label_gold_or_predicted():
    gold = ["A", "A", "A", "B", "C"]
    predicted = ["A", "A", "B", "B", "A"]
    scored = per_label_accuracy(gold, predicted)
    expected = [f1(2, 3, 3), f1(1, 2, 1), f1(0, 0, 1)]  # A: 2 right of 3 said, 3 gold
    assert scored["macro_f1"] == pytest.approx(sum(expected) / 3)
    assert scored["by_label"]["B"]["f1"] == pytest.approx(2 / 3)
    assert scored["value"] == pytest.approx(3 / 5)
    assert f1(0, 0, 0) == 0.0


def test_class_weights_are_inverse_frequencies_and_weight_the_loss(tiny_pair_tokenizer):
    from transformers import BertForSequenceClassification

    from conftest import tiny_bert_config

    assert inverse_frequency([0, 0, 0, 1], 3) == pytest.approx([4 / 9, 4 / 3, 4 / 3])
    torch.manual_seed(0)
    config = tiny_bert_config(len(tiny_pair_tokenizer))
    config.num_labels = 2
    model = BertForSequenceClassification(config).eval()
    batch = {"input_ids": torch.tensor([[2, 5, 6, 3], [2, 7, 8, 3]]),
             "attention_mask": torch.ones(2, 4, dtype=torch.long)}  # fmt: skip
    labels = torch.tensor([0, 1])
    plain = model(**batch, labels=labels).loss
    even = WeightedClassifier(model, [1.0, 1.0])(**batch, labels=labels)["loss"]
    torch.testing.assert_close(even, plain)
    logits = model(**batch).logits
    only_second = WeightedClassifier(model, [0.0, 1.0])(**batch, labels=labels)["loss"]
    torch.testing.assert_close(
        only_second, torch.nn.functional.cross_entropy(logits[1:], labels[1:])
    )


def test_the_answer_type_recipe_records_its_weights_and_macro_f1(tmp_path, base):  # noqa: F811
    squad = _squad(tmp_path / "squad.json")
    cfg = AnswerTypeTrainConfig(
        out=tmp_path / "types", base=base, train=(squad,), heldout=0.34, min_count=1,
        freeze_layers=1, batch_size=4, max_steps=2, save_steps=2, class_weights=True,
    )  # fmt: skip
    summary = train_answer_types(cfg, progress=False, log=lambda _: None)
    weights = summary["train"]["class_weights"]
    counts = summary["train"]["label_counts"]
    assert set(weights) == set(counts)
    assert weights == pytest.approx({k: sum(counts.values()) / (len(counts) * n)
                                     for k, n in counts.items()})  # fmt: skip
    held = summary["heldout"]["accuracy"]
    assert summary["scores"]["held-out macro-F1"]["value"] == held["macro_f1"]
    assert 0 <= held["macro_f1"] <= 1
    assert summary["hyperparameters"]["class_weights"] is True
