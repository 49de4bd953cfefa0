"""The NLI training recipe on a tiny random BERT, a synthetic TSV and a tiny NLI-XY folder."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from conftest import check_resume, tiny_bert_config
from faithprobe.cli import app
from faithprobe.datasets.nli import read_nli
from faithprobe.errors import DataError, UsageError
from faithprobe.records import ENTAILMENT, NON_ENTAILMENT
from faithprobe.subjects import load_subject
from faithprobe.subjects.hf.nli import HFNLI
from faithprobe.training import nli as recipe
from faithprobe.training.common import ids_digest
from faithprobe.training.configs import NLITrainConfig
from faithprobe.training.nli import train_nli

QUANTIFIERS = ("every", "some", "no", "most")
NOUNS = (("dog", "animal"), ("poodle", "dog"), ("cat", "animal"), ("rose", "flower"))
VERBS = ("danced", "slept", "ran home")
# rows equal to excluded pairs once lowercased and white space collapsed
GRID_TWINS = [("SOME  dog slept.", "some ANIMAL   slept."), ("no animal slept.", "No dog slept.")]
HELP_PAIRS = [("every rose danced", "every flower danced"), ("most cat slept", "most animal slept")]
NEAR_MISSES = [("Some dog slept.", "Some animal slept quickly."), HELP_PAIRS[0][::-1]]


def _tsv(path, rows):
    lines = ["index\tsentence1\tsentence2\tgold_label"]
    lines += [f"{i}\t{p}\t{h}\t{label}" for i, (p, h, label) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _train_rows():
    rows = []
    for q in QUANTIFIERS:
        for x, y in NOUNS:
            for v in VERBS:
                gold = "entailment" if q == "some" else ("neutral", "contradiction")[len(v) % 2]
                rows.append((f"{q} {x} {v}", f"{q} {y} {v}", gold))
    rows += rows[:3]  # the same pairs twice: both copies must land on one side of the split
    rows += [(p, h, "ENTAILMENT") for p, h in GRID_TWINS + NEAR_MISSES]
    return rows  # 48 + 3 + 4; HELP_PAIRS are among the 48


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nli")
    xy = folder / "nli-xy"
    xy.mkdir()
    (xy / "contexts.tsv").write_text(
        "source\tcontext\tmonotonicity\tsingular\tmass\tplural\tplace\n"
        "t\tSome x slept.\tup\tx\t\t\t\n"
        "t\tNo x slept.\tdown\tx\t\t\t\n"
    )
    (xy / "insertions.tsv").write_text(
        "source\tx_grammar\tx\ty\ty_grammar\tinsertion_rel\nt\ts\tdog\tanimal\ts\tleq\n"
    )
    _tsv(xy / "help_test.tsv", [(p, h, "neutral") for p, h in HELP_PAIRS])
    dev = folder / "dev.jsonl"
    dev.write_text(
        "".join(
            json.dumps({"premise": f"some {x} sang", "hypothesis": f"some {y} sang", "label": lab})
            + "\n"
            for (x, y), lab in zip(NOUNS, ("entailment", "neutral") * 2, strict=True)
        )
    )
    return {"train": _tsv(folder / "train.tsv", _train_rows()), "xy": xy, "dev": dev}


def _save_encoder(folder, model, tokenizer):
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def base(tmp_path_factory, tiny_pair_tokenizer):
    """A tiny BERT encoder without any head, like the embedded MiniLM."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(tiny_bert_config(len(tiny_pair_tokenizer)))
    return _save_encoder(tmp_path_factory.mktemp("base"), model, tiny_pair_tokenizer)


def _config(data, base, out, **kwargs):
    settings = dict(
        train=(data["train"],),
        exclude=(data["xy"],),
        heldout=0.25,
        batch_size=8,
        max_steps=4,
        save_steps=2,
        learning_rate=1e-3,
        max_length=48,
    )
    settings.update(kwargs)
    return NLITrainConfig(out=out, base=base, **settings)


@pytest.fixture(scope="module")
def trained(data, base, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "nli"
    logs = []
    summary = train_nli(
        _config(data, base, out, dev=(data["dev"],)), progress=False, log=logs.append
    )
    return summary, out, logs


def test_the_model_loads_as_a_pair_classifier(trained, base):
    summary, out, _ = trained
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["BertForSequenceClassification"]
    assert config["id2label"] == {"0": ENTAILMENT, "1": NON_ENTAILMENT}
    assert (out / "model.safetensors").is_file() and not (out / "checkpoints").exists()
    subject = load_subject(str(out))
    assert isinstance(subject, HFNLI)
    assert subject.label_groups == {ENTAILMENT: (0,), NON_ENTAILMENT: (1,)}
    trained_emb = load_file(out / "model.safetensors")["bert.embeddings.word_embeddings.weight"]
    before = load_file(base / "model.safetensors")["embeddings.word_embeddings.weight"]
    assert not torch.equal(trained_emb, before)


def test_exactly_the_overlapping_pairs_are_removed(trained, data):
    summary, _, logs = trained
    n_rows = len(_train_rows())
    t = summary["train"]
    assert t["read"] == n_rows
    assert t["removed_overlapping"] == len(GRID_TWINS) + len(HELP_PAIRS) == 4
    assert t["files"] == [
        {
            "path": str(data["train"].resolve()),
            "role": "train",
            "read": n_rows,
            "removed_overlapping": 4,
        }
    ]
    assert t["extra_removed_overlapping"] == 0
    assert t["held_out"] + t["used"] == n_rows - 4
    assert any("Removed 4 of 55" in line for line in logs)
    sources = summary["exclude"]["sources"]
    assert len(sources) == 1 and sources[0]["examples"] == 4 + len(HELP_PAIRS)
    assert sources[0]["files"] == [str((data["xy"] / "help_test.tsv").resolve())]
    assert "warning" not in summary["exclude"]

    # an NLI file as --exclude: its pairs only, compared lowercased and white space collapsed
    keys, (source,) = recipe.excluded_pairs((data["xy"] / "help_test.tsv",))
    assert source["kind"] == "NLI file" and source["pairs"] == 2
    assert keys == {recipe.pair_key(p, h) for p, h in HELP_PAIRS}
    assert recipe.pair_key(" Every  ROSE danced", "every flower\tdanced") in keys


def test_the_held_out_split_is_disjoint_and_seeded(trained, data):
    summary, _, _ = trained
    keys, _ = recipe.excluded_pairs((data["xy"],))
    kept = [ex for ex in read_nli(data["train"]) if recipe._key(ex) not in keys]
    train, held = recipe.heldout_split(kept, 0.25, 0)
    assert {recipe._key(ex) for ex in train}.isdisjoint(recipe._key(ex) for ex in held)
    assert len(train) + len(held) == len(kept)
    assert ids_digest(ex.id for ex in train) == summary["train"]["ids_sha256_16"]
    assert len(held) == summary["heldout"]["examples"] == summary["heldout_accuracy"]["n"]
    again, _ = recipe.heldout_split(kept, 0.25, 0)
    other, _ = recipe.heldout_split(kept, 0.25, 1)
    assert [ex.id for ex in again] == [ex.id for ex in train]
    assert [ex.id for ex in other] != [ex.id for ex in train]
    assert summary["heldout"]["pairs"] == round(0.25 * len({recipe._key(ex) for ex in kept}))


def test_training_json_records_the_run(trained, data, base):
    summary, out, _ = trained
    saved = json.loads((out / "training.json").read_text())
    assert saved == json.loads(json.dumps(summary))
    assert saved["task"] == "nli" and saved["base_path"] == str(base)
    assert saved["steps"] == 4 and saved["seed"] == 0 and saved["resumed_from_step"] == 0
    assert saved["hyperparameters"]["learning_rate"] == 1e-3
    assert saved["hyperparameters"]["heldout"] == 0.25
    balance = saved["train"]["label_balance"]
    assert set(balance) == {ENTAILMENT, NON_ENTAILMENT}
    assert sum(balance.values()) == saved["train"]["used"]
    acc = saved["heldout_accuracy"]
    assert acc["ci_low"] <= acc["value"] <= acc["ci_high"]
    assert acc["value"] == pytest.approx(acc["correct"] / acc["n"])
    assert sum(v["n"] for v in acc["by_label"].values()) == acc["n"]
    (dev,) = saved["dev"]
    assert dev["path"] == str(data["dev"].resolve()) and dev["examples"] == 4
    assert dev["accuracy"]["n"] == 4 and dev["also_in_training"] == 0


def test_without_exclude_a_warning_is_given_and_recorded(data, base, tmp_path):
    logs = []
    summary = train_nli(
        _config(data, base, tmp_path / "o", exclude=(), heldout=0.0, max_steps=1),
        progress=False,
        log=logs.append,
    )
    assert any(line.startswith("warning: no --exclude") for line in logs)
    assert "warning" in summary["exclude"] and summary["train"]["removed_overlapping"] == 0
    assert summary["heldout_accuracy"] is None and summary["train"]["used"] == 55


def test_extra_files_are_trained_on_but_their_evaluated_pairs_are_removed(data, base, tmp_path):
    """The HELP contrast: HELP's TSVs sit beside the NLI-XY folder (``../help/*.tsv``), so
    as --train they are excluded whole; as --extra only their evaluated pairs go."""
    import shutil

    xy = shutil.copytree(data["xy"], tmp_path / "nli-xy")
    (tmp_path / "help").mkdir()
    fresh = [("every cat ran home", "every animal ran home"), ("no rose slept", "no flower slept")]
    rows = [(p, h, "entailment") for p, h in [GRID_TWINS[0], HELP_PAIRS[1], *fresh]]
    extra = _tsv(tmp_path / "help" / "leskexppmb_and.tsv", rows)

    as_train = train_nli(
        _config(data, base, tmp_path / "a", train=(data["train"], extra), exclude=(xy,)),
        progress=False,
    )
    assert as_train["train"]["files"][1]["removed_overlapping"] == 4
    assert str(extra.resolve()) in as_train["exclude"]["sources"][0]["files"]

    logs = []
    summary = train_nli(
        _config(data, base, tmp_path / "b", extra_train=(extra,), exclude=(xy,)),
        progress=False,
        log=logs.append,
    )
    t = summary["train"]
    assert [f["role"] for f in t["files"]] == ["train", "extra"]
    assert t["files"][1]["read"] == 4 and t["files"][1]["removed_overlapping"] == 2
    assert t["extra_removed_overlapping"] == 2 and t["removed_overlapping"] == 4 + 2
    assert t["held_out"] + t["used"] == len(_train_rows()) - 4 + 2
    (source,) = summary["exclude"]["sources"]
    assert source["not_excluded_trained_on"] == [str(extra.resolve())]
    assert str(extra.resolve()) not in source["files"]
    assert any("--extra leskexppmb_and.tsv: 2 of 4 examples kept" in line for line in logs)


def test_an_interrupted_run_resumes_from_its_checkpoint(data, base, tmp_path, monkeypatch):
    def config(out, **kwargs):
        return _config(data, base, out, max_steps=6, save_steps=3, **kwargs)

    summary = check_resume(
        train_nli, recipe, config, tmp_path, monkeypatch, changed={"heldout": 0.5}
    )
    assert summary["train"]["removed_overlapping"] == 4


def test_a_base_with_another_head_gets_a_fresh_two_class_one(data, tmp_path, tiny_pair_tokenizer):
    from transformers import BertForSequenceClassification

    config = tiny_bert_config(len(tiny_pair_tokenizer))
    config.num_labels = 3
    base = _save_encoder(
        tmp_path / "b3", BertForSequenceClassification(config), tiny_pair_tokenizer
    )
    train_nli(_config(data, base, tmp_path / "o", max_steps=1), progress=False)
    assert load_file(tmp_path / "o/model.safetensors")["classifier.weight"].shape[0] == 2


def test_bad_inputs_get_clear_errors(data, base, tmp_path):
    with pytest.raises(DataError, match="missing.tsv: training file not found"):
        train_nli(_config(data, base, tmp_path / "o", train=(tmp_path / "missing.tsv",)))
    with pytest.raises(DataError, match="--exclude path not found"):
        train_nli(_config(data, base, tmp_path / "o", exclude=(tmp_path / "nope",)))
    with pytest.raises(UsageError, match="heldout"):
        train_nli(_config(data, base, tmp_path / "o", heldout=1.0))
    with pytest.raises(UsageError, match="--train"):
        train_nli(_config(data, base, tmp_path / "o", train=()))
    assert not (tmp_path / "o").exists()


def test_cli_trains_and_reports(data, base, tmp_path):
    runner = CliRunner()
    common = ["train", "nli", "--train", data["train"], "--exclude", data["xy"], "--base", base]
    common = [str(a) for a in common] + ["--max-steps", "2", "--batch-size", "8"]
    res = runner.invoke(app, [*common, "--out", str(tmp_path / "cli"), "--dev", str(data["dev"])])
    assert res.exit_code == 0, res.output
    assert "held-out accuracy" in res.output and "95% CI" in res.output
    assert "dev.jsonl: accuracy" in res.output and "4 removed as overlapping" in res.output
    assert isinstance(load_subject(str(tmp_path / "cli")), HFNLI)
    command = json.loads((tmp_path / "cli/training.json").read_text())["extra"]["command"]
    assert command.startswith("faithprobe ")

    res = runner.invoke(
        app, [*common, "--exclude", str(tmp_path / "x"), "--out", str(tmp_path / "y")]
    )
    assert res.exit_code == 2
    said = " ".join(res.output.split())  # the console wraps long lines
    assert "error:" in said and "--exclude path not found" in said
