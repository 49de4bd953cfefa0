"""The multiple-choice training recipe on a tiny random BERT and hand-made Social IQA files."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from conftest import check_resume
from faithprobe.cli import app
from faithprobe.errors import DataError, ModelError, UsageError
from faithprobe.subjects import load_subject
from faithprobe.subjects.hf.mc import HFMC
from faithprobe.training import multiple_choice as recipe
from faithprobe.training.configs import MCTrainConfig
from faithprobe.training.multiple_choice import train_mc

NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank")
PLACES = ("Paris", "Rome", "Oslo", "Lima")


def _siqa_records(n: int, offset: int = 0):
    records, labels = [], []
    for i in range(n):
        who = NAMES[(i + offset) % len(NAMES)]
        place = PLACES[(i + offset) % len(PLACES)]
        other = PLACES[(i + offset + 1) % len(PLACES)]
        answers = [f"go to {place}", f"stay in {other}", "sleep all day"]
        label = (i + offset) % 3
        answers[0], answers[label] = answers[label], answers[0]
        records.append(
            {
                "context": f"{who} wanted to see {place} and packed a bag.",
                "question": f"What will {who} want to do next?",
                "answerA": answers[0],
                "answerB": answers[1],
                "answerC": answers[2],
            }
        )
        labels.append(label + 1)
    return records, labels


def _write_siqa(folder, split, n, offset=0):
    records, labels = _siqa_records(n, offset)
    path = folder / f"{split}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / f"{split}-labels.lst").write_text("".join(f"{x}\n" for x in labels))
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("siqa")
    return _write_siqa(folder, "train", 24), _write_siqa(folder, "dev", 9, offset=5)


@pytest.fixture(scope="module")
def base(tmp_path_factory, tiny_pair_tokenizer):
    """A tiny BERT encoder without any head, like the embedded MiniLM."""
    from transformers import BertModel

    from conftest import tiny_bert_config

    folder = tmp_path_factory.mktemp("base")
    torch.manual_seed(0)
    BertModel(tiny_bert_config(len(tiny_pair_tokenizer))).save_pretrained(folder)
    tiny_pair_tokenizer.save_pretrained(folder)
    return folder


def _config(data, base, out, **kwargs):
    train, dev = data
    settings = dict(batch_size=4, max_steps=4, save_steps=2, learning_rate=1e-3, max_length=48)
    settings.update(kwargs)
    return MCTrainConfig(train=train, dev=dev, out=out, base=base, **settings)


def test_recipe_trains_and_writes_a_loadable_model(data, base, tmp_path):
    out = tmp_path / "mc"
    before = load_file(base / "model.safetensors")
    summary = train_mc(_config(data, base, out), progress=False)

    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["BertForMultipleChoice"]
    assert (out / "model.safetensors").is_file()
    assert not (out / "checkpoints").exists()
    saved = json.loads((out / "training.json").read_text())
    assert saved == json.loads(json.dumps(summary))
    acc = saved["dev_accuracy"]
    assert acc["n"] == 9 and 0 <= acc["correct"] <= 9
    assert acc["ci_low"] <= acc["value"] <= acc["ci_high"]
    assert acc["value"] == pytest.approx(acc["correct"] / 9)
    assert saved["steps"] == 4 and saved["seed"] == 0
    assert saved["train"]["examples_used"] == 24
    assert saved["hyperparameters"]["learning_rate"] == 1e-3
    assert saved["base_path"] == str(base)

    subject = load_subject(str(out))
    assert isinstance(subject, HFMC)
    after = load_file(out / "model.safetensors")
    assert "classifier.weight" in after
    trained = after["bert.embeddings.word_embeddings.weight"]
    assert not torch.equal(trained, before["embeddings.word_embeddings.weight"])


def test_training_is_seeded(data, base, tmp_path):
    a = train_mc(_config(data, base, tmp_path / "a", limit=10), progress=False)
    b = train_mc(_config(data, base, tmp_path / "b", limit=10), progress=False)
    assert a["train"]["examples_used"] == 10
    assert a["train"]["ids_sha256_16"] == b["train"]["ids_sha256_16"]
    wa = load_file(tmp_path / "a" / "model.safetensors")
    wb = load_file(tmp_path / "b" / "model.safetensors")
    for name in wa:
        torch.testing.assert_close(wa[name], wb[name], atol=0, rtol=0)


def test_an_interrupted_run_resumes_from_its_checkpoint(data, base, tmp_path, monkeypatch):
    def config(out, **kwargs):
        return _config(data, base, out, max_steps=6, save_steps=3, **kwargs)

    check_resume(train_mc, recipe, config, tmp_path, monkeypatch, changed={"learning_rate": 2e-3})


def test_a_finished_or_foreign_out_folder_is_not_overwritten(data, base, tmp_path):
    out = tmp_path / "done"
    train_mc(_config(data, base, out, max_steps=1), progress=False)
    with pytest.raises(UsageError, match="--overwrite"):
        train_mc(_config(data, base, out, max_steps=1), progress=False)
    train_mc(_config(data, base, out, max_steps=2), overwrite=True, progress=False)
    assert json.loads((out / "training.json").read_text())["steps"] == 2

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty"):
        train_mc(_config(data, base, foreign), progress=False)
    assert (foreign / "notes.txt").read_text() == "mine"


def test_bad_inputs_get_clear_errors(data, base, tmp_path):
    with pytest.raises(DataError, match="missing.jsonl: training file not found"):
        train_mc(_config((tmp_path / "missing.jsonl", data[1]), base, tmp_path / "o"))
    with pytest.raises(UsageError, match="limit"):
        train_mc(_config(data, base, tmp_path / "o", limit=0))
    with pytest.raises(UsageError, match="learning_rate"):
        train_mc(_config(data, base, tmp_path / "o", learning_rate=0))
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        json.dumps({"prompt": "p", "choices": ["a", "b"], "label": 0})
        + "\n"
        + json.dumps({"prompt": "q", "choices": ["a", "b", "c"], "label": 2})
        + "\n"
    )
    with pytest.raises(DataError, match="same number"):
        train_mc(_config((mixed, data[1]), base, tmp_path / "o"))
    with pytest.raises(ModelError, match="no config.json"):
        train_mc(_config(data, tmp_path, tmp_path / "o"))
    from transformers import GPT2Config

    GPT2Config(n_layer=1, n_embd=8, n_head=2).save_pretrained(tmp_path / "gpt2")
    with pytest.raises(ModelError, match="cannot load"):
        train_mc(_config(data, tmp_path / "gpt2", tmp_path / "o"))
    assert not (tmp_path / "o").exists()


def test_cli_trains_and_reports(data, base, tmp_path):
    runner = CliRunner()
    train, dev = data
    common = ["train", "mc", "--train", train, "--dev", dev, "--base", base]
    res = runner.invoke(
        app,
        [str(a) for a in common]
        + ["--out", str(tmp_path / "cli"), "--max-steps", "2", "--batch-size", "4"],
    )
    assert res.exit_code == 0, res.output
    assert "dev accuracy" in res.output and "95% CI" in res.output
    assert isinstance(load_subject(str(tmp_path / "cli")), HFMC)

    missing = tmp_path / "nope.jsonl"
    res = runner.invoke(
        app, [str(a) for a in common] + ["--train", str(missing), "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 2
    assert "error:" in res.output and "nope.jsonl" in res.output and "not found" in res.output

    res = runner.invoke(
        app,
        [str(a) for a in common] + ["--out", str(tmp_path / "y"), "--limit", "5", "--full"],
    )
    assert res.exit_code == 2 and "--limit or --full" in res.output


@pytest.mark.integration
def test_the_embedded_encoder_gets_a_multiple_choice_head():
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    from faithprobe.requests import CandidateScoreRequest
    from faithprobe.subjects.hf.minilm import minilm_path

    folder = minilm_path()
    assert json.loads((folder / "config.json").read_text())["model_type"] == "bert"
    model = AutoModelForMultipleChoice.from_pretrained(folder)
    subject = HFMC(model, AutoTokenizer.from_pretrained(folder), name="minilm")
    (scores,) = subject.answer(
        [CandidateScoreRequest("Q: Where does Alice live?\nA:", ("Paris", "in a box", "blue"))]
    )
    assert len(scores.logprobs) == 3 and scores.n_tokens == (1, 1, 1)
