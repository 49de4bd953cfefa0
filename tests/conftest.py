"""Tiny randomly initialised models and a tokenizer trained on the fly: no downloads."""

from __future__ import annotations

import copy
import gzip
import os
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<mask>"]


# The tiny tokenizer's training text: generated cloze items (every 7th item of
# DistractorConfig(names_per_pair=2, counts=(1, 2)), seed 0, context + candidates), frozen
# here so that a change to the generator does not change the vocabulary and, with it, every
# tiny random model's outputs that tests rely on (no early EOS, batch-size invariance).
CORPUS = Path(__file__).parent / "data" / "tiny_tokenizer_corpus.txt.gz"


def pytest_configure(config):
    """A pytest-xdist worker takes its share of the cores (2 workers on 2 cores: one torch
    thread each, and the commands it starts too): torch's threads spin while they wait, so
    more threads than cores make every test slower."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:
        share = max(1, (os.cpu_count() or 1) // int(workers))
        torch.set_num_threads(share)
        os.environ["OMP_NUM_THREADS"] = str(share)


# Tests that start Ray (a cluster of processes each) run one module at a time, on one worker.
RAY_MODULES = {"test_audit_cluster", "test_ray_executor"}
# The longest groups (``--durations``: a minute or more on one worker each), handed out first
# so that the run does not end with one worker on a long group while the other idles.
LONGEST_FIRST = ("ray", "test_validity", "test_quiet_console", "test_reasoning_suite")


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test``: ``-n auto --dist loadgroup``) a module's tests go
    to one worker together, so that a module-scoped fixture (a two-node cluster, an audit of
    the reference models) is made once, not once per worker; the Ray modules share one
    group. A test's own ``xdist_group`` mark wins. The groups in ``LONGEST_FIRST`` come
    first (xdist hands groups out in collection order); the others keep their order."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            module = item.module.__name__.rpartition(".")[2]
            group = "ray" if module in RAY_MODULES else module
            item.add_marker(pytest.mark.xdist_group(group))

    def rank(item) -> int:
        mark = item.get_closest_marker("xdist_group")
        group = mark.kwargs.get("name", mark.args[0] if mark.args else "")
        return LONGEST_FIRST.index(group) if group in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


def _training_text() -> list[str]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


@pytest.fixture(scope="session")
def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level BPE with a small vocabulary, so many words split into several tokens."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_training_text(), trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
    )


def _seeded(build):
    torch.manual_seed(0)
    return build().eval()


@pytest.fixture(scope="session")
def tiny_llama(tiny_tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    return _seeded(lambda: LlamaForCausalLM(config))


CHAT_TEMPLATE = (
    "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %} [assistant]{% endif %}"
)


@pytest.fixture(scope="session")
def tiny_chat_llama(tiny_llama, tiny_tokenizer):
    """The tiny Llama as a subject whose tokenizer has a chat template (for chat requests
    and the OpenAI-compatible server)."""
    from faithprobe.subjects.hf.causal import HFCausal

    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = CHAT_TEMPLATE
    return HFCausal(tiny_llama, tok, name="tiny")


@pytest.fixture(scope="module")
def tiny_chat_server(tiny_chat_llama):
    """An OpenAI-compatible test server in front of ``tiny_chat_llama``, one per test module
    (so the faults one module injects stay there)."""
    from faithprobe.serving import OpenAIServer

    with OpenAIServer(tiny_chat_llama) as server:
        yield server


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory, tiny_llama, tiny_tokenizer):
    """The tiny Llama and its tokenizer saved as a model folder, for ``--model PATH``."""
    folder = tmp_path_factory.mktemp("models") / "llama"
    tiny_llama.save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_chat_llama_dir(tmp_path_factory, tiny_chat_llama):
    """The tiny Llama with a chat template saved as a model folder (for chat generation
    requests by ``--model PATH``, e.g. the faithfulness suite's +Aug sentences)."""
    folder = tmp_path_factory.mktemp("models") / "chat-llama"
    tiny_chat_llama.model.save_pretrained(folder)
    tiny_chat_llama.tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_gpt2(tiny_tokenizer):
    """Absolute learned positions: wrong position ids under padding would show here."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=len(tiny_tokenizer),
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=256,
        bos_token_id=1,
        eos_token_id=2,
    )
    return _seeded(lambda: GPT2LMHeadModel(config))


@pytest.fixture(scope="session")
def tiny_bert_mlm(tiny_tokenizer):
    """A BERT masked LM: absolute positions from 0, so padding must go on the right.

    initializer_range=0.2 (not 0.02) so its predictions depend visibly on the context."""
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=300,
        pad_token_id=0,
        initializer_range=0.2,
    )
    return _seeded(lambda: BertForMaskedLM(config))


@pytest.fixture(scope="session")
def tiny_roberta_mlm(tiny_tokenizer):
    """A RoBERTa masked LM: positions counted from the non-pad tokens (pad_token_id=0)."""
    from transformers import RobertaConfig, RobertaForMaskedLM

    config = RobertaConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=300,
        pad_token_id=0,
        initializer_range=0.2,
        bos_token_id=1,
        eos_token_id=2,
    )
    return _seeded(lambda: RobertaForMaskedLM(config))


@pytest.fixture(scope="session")
def tiny_pair_tokenizer(tiny_tokenizer) -> PreTrainedTokenizerFast:
    """The tiny BPE with a BERT-style pair template: ``<s> A </s> B </s>``, type ids 0 | 1."""
    return pair_tokenizer(tiny_tokenizer)


def pair_tokenizer(tiny_tokenizer) -> PreTrainedTokenizerFast:
    """A new :func:`tiny_pair_tokenizer` (for a test that must not see what other tests set
    on the session's one)."""
    from tokenizers import processors

    tok = Tokenizer.from_str(tiny_tokenizer.backend_tokenizer.to_str())
    s, e = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> $B:1 </s>:1",
        special_tokens=[("<s>", s), ("</s>", e)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
        cls_token="<s>",
        sep_token="</s>",
    )


def tiny_bert_config(vocab_size: int):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=300,
        type_vocab_size=2,
        pad_token_id=0,
        initializer_range=0.2,
    )


@pytest.fixture(scope="session")
def tiny_bert_mc(tiny_pair_tokenizer):
    """A BERT multiple-choice classifier (random weights; initializer_range=0.2 so its
    scores depend visibly on the input)."""
    from transformers import BertForMultipleChoice

    config = tiny_bert_config(len(tiny_pair_tokenizer))
    return _seeded(lambda: BertForMultipleChoice(config))


class Interrupted(Exception):
    """What :func:`check_resume` raises to cut a training run short."""


def check_resume(train, module, config, tmp_path, monkeypatch, *, changed: dict) -> dict:
    """A training recipe resumes from its checkpoint after an interruption.

    ``train(cfg, **options)`` is the recipe, ``module`` the module whose ``_make_trainer``
    builds its Trainer, ``config(out, **settings)`` a config with 6 steps and a checkpoint
    every 3. The interrupted run stops at step 4 (checkpoint-3 on disk, step 4 lost); a run
    with the ``changed`` settings must refuse to resume from it; resuming must end where an
    uninterrupted run ends. Returns the resumed run's summary."""
    from safetensors.torch import load_file
    from transformers import TrainerCallback

    from faithprobe.errors import UsageError

    train(config(tmp_path / "straight"), progress=False)

    class StopAfter(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 4:
                raise Interrupted

    original = module._make_trainer

    def with_interrupt(*args, **kwargs):
        trainer, keeper = original(*args, **kwargs)
        trainer.add_callback(StopAfter())
        return trainer, keeper

    out = tmp_path / "resumed"
    monkeypatch.setattr(module, "_make_trainer", with_interrupt)
    with pytest.raises(Interrupted):
        train(config(out), progress=False)
    monkeypatch.undo()
    assert (out / "checkpoints" / "checkpoint-3").is_dir()
    assert not (out / "training.json").exists()
    with pytest.raises(UsageError, match=next(iter(changed))):
        train(config(out, **changed))

    summary = train(config(out), progress=False)
    assert summary["resumed_from_step"] == 3 and summary["steps"] == 6
    straight = load_file(tmp_path / "straight/model.safetensors")
    resumed = load_file(out / "model.safetensors")
    for name in straight:
        torch.testing.assert_close(resumed[name], straight[name], atol=1e-5, rtol=1e-4)
    return summary
