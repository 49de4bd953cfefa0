"""Inputs longer than the model takes: every backend answers them, cut by its stated rule
(see each backend's module docstring), and marks the answer ``truncated``.

The models here take 64 positions. Texts are built from words that are one token each
(" fish", " lives", ...), so cutting at any token is cutting between words and the
explicitly pre-truncated text tokenises to exactly the tokens the rule keeps. The answer to
the over-long input and the answer to the pre-truncated one are then computed from the same
token ids at the same positions in batches of the same shape, so they agree to float32
rounding on one CPU (about 1e-7 relative on log-probabilities of magnitude < 100); 1e-5 is
far above that and far below what one context token more or less changes (checked, > 1e-3,
with models initialised wide enough, initializer_range=0.2, for the context to matter).
"""

from __future__ import annotations

import copy
import random
import time
from dataclasses import replace

import pytest
import torch

from conftest import tiny_bert_config
from faithprobe.errors import UsageError
from faithprobe.requests import (
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    SpanAnswer,
    SpanAnswerRequest,
    TextPairRequest,
)
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.extractive_qa import HFQA
from faithprobe.subjects.hf.masked import HFMasked
from faithprobe.subjects.hf.mc import HFMC
from faithprobe.subjects.hf.nli import HFNLI

LIMIT = 64
WORDS = (" the", " fish", " lives", " in", " France", " and", " has", " bread", " that")
WORDS += (" visited", " meat", " flowers", " works", " Italy", " Paris", " glasses")
CANDIDATES = ("Paris", "Helsinkiborough")  # 1 and 7 tokens after the separating space
TOLERANCE = 1e-5  # see the module docstring


def words(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(WORDS) for _ in range(n)]


def text(ws: list[str]) -> str:
    return "".join(ws)


def close(a: CandidateScores, b: CandidateScores, tolerance: float = TOLERANCE) -> bool:
    return a.n_tokens == b.n_tokens and a.logprobs == pytest.approx(b.logprobs, abs=tolerance)


def _seeded(build):
    torch.manual_seed(0)
    return build().eval()


@pytest.fixture(scope="module")
def one_token_words(tiny_tokenizer):
    for w in WORDS:
        assert len(tiny_tokenizer(w, add_special_tokens=False).input_ids) == 1, w
    return WORDS


@pytest.fixture(scope="module")
def bos_tokenizer(tiny_tokenizer):
    """The tiny BPE putting ``<s>`` before every text, as Llama's tokenizer does."""
    from tokenizers import processors

    tok = copy.deepcopy(tiny_tokenizer)
    bos = tok.bos_token_id
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", bos)]
    )
    assert tok("a").input_ids[0] == bos
    return tok


@pytest.fixture(scope="module")
def short_gpt2(tiny_tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=len(tiny_tokenizer), n_embd=32, n_layer=2, n_head=4, n_positions=LIMIT,
        bos_token_id=1, eos_token_id=2, initializer_range=0.2,
    )  # fmt: skip
    return _seeded(lambda: GPT2LMHeadModel(config))


@pytest.fixture(scope="module")
def short_llama(tiny_tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tiny_tokenizer), hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=LIMIT, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        initializer_range=0.2,
    )  # fmt: skip
    return _seeded(lambda: LlamaForCausalLM(config))


def short_bert_config(vocab_size: int):
    config = tiny_bert_config(vocab_size)
    config.max_position_embeddings = LIMIT
    return config


@pytest.fixture(scope="module")
def short_mlms(tiny_pair_tokenizer):
    from transformers import BertForMaskedLM, RobertaConfig, RobertaForMaskedLM

    roberta = RobertaConfig(
        vocab_size=len(tiny_pair_tokenizer), hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, pad_token_id=0, bos_token_id=1,
        eos_token_id=2, initializer_range=0.2,
        max_position_embeddings=LIMIT + 2,  # positions count from pad_token_id + 1
    )  # fmt: skip
    return {
        "bert": _seeded(lambda: BertForMaskedLM(short_bert_config(len(tiny_pair_tokenizer)))),
        "roberta": _seeded(lambda: RobertaForMaskedLM(roberta)),
    }


# -- causal LM ---------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["gpt2", "llama+bos"])
def causal(request, tiny_tokenizer, bos_tokenizer, one_token_words):
    """GPT-2 (learned positions: an over-long input used to index out of range) with the
    plain BPE; Llama with a tokenizer that puts ``<s>`` first (kept by a cut)."""
    if request.param == "gpt2":
        return HFCausal(request.getfixturevalue("short_gpt2"), tiny_tokenizer, name="g")
    return HFCausal(request.getfixturevalue("short_llama"), bos_tokenizer, name="l")


def n_special(subject) -> int:
    return len(subject.tokenizer("a").input_ids) - 1


def test_causal_scoring_keeps_the_context_nearest_the_blank(causal):
    ws = words(300)
    (got,) = causal.answer([CandidateScoreRequest(text(ws), CANDIDATES)])
    # the model is fed the context and all but the last token of the longest candidate
    kept = LIMIT + 1 - 7 - n_special(causal)
    (expected,) = causal.answer([CandidateScoreRequest(text(ws[-kept:]), CANDIDATES)])
    (one_fewer,) = causal.answer([CandidateScoreRequest(text(ws[-kept + 1 :]), CANDIDATES)])
    assert got.truncated and not expected.truncated
    assert close(got, replace(expected, truncated=True))
    assert max(abs(a - b) for a, b in zip(got.logprobs, one_fewer.logprobs, strict=True)) > 1e-3
    assert causal.max_length == LIMIT


def test_causal_generation_cuts_the_prompt_to_fit_the_new_tokens(causal):
    ws = words(300)
    (got,) = causal.answer([GenerationRequest(text(ws), max_new_tokens=8, stop=())])
    kept = LIMIT + 1 - 8 - n_special(causal)
    (expected,) = causal.answer([GenerationRequest(text(ws[-kept:]), max_new_tokens=8, stop=())])
    assert got == replace(expected, truncated=True) and not expected.truncated


def test_causal_generation_caps_max_new_tokens(causal):
    (got,) = causal.answer([GenerationRequest(text(words(5)), max_new_tokens=500, stop=())])
    assert got.truncated and got.n_tokens <= LIMIT


def test_chat_generation_keeps_the_template_whole(short_gpt2, tiny_tokenizer, one_token_words):
    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}{% endfor %}"
    tok.chat_template += "{% if add_generation_prompt %} [assistant]{% endif %}"
    subject = HFCausal(short_gpt2, tok, name="chat")
    request = GenerationRequest(text(words(300)), max_new_tokens=8, chat=True)
    (prompt, max_new, _), truncated = subject._encode_generation(request)
    start = tok("[user]", add_special_tokens=False).input_ids
    end = tok(" [assistant]", add_special_tokens=False).input_ids
    assert truncated and max_new == 8 and len(prompt) <= LIMIT + 1 - 8
    assert prompt[: len(start)] == start and prompt[-len(end) :] == end
    assert subject.answer([request])[0].truncated


def test_a_candidate_longer_than_the_model_is_a_usage_error(short_gpt2, tiny_tokenizer):
    subject = HFCausal(short_gpt2, tiny_tokenizer, name="g")
    huge = "x" * 1_000_000
    with pytest.raises(UsageError, match="takes at most 64 tokens") as err:
        subject.answer([CandidateScoreRequest(huge, ("Quazzlefort" * 7,))])
    assert len(str(err.value)) < 400  # the request is named by its first characters


def test_a_one_megabyte_cloze_context_is_answered(short_gpt2, tiny_tokenizer):
    subject = HFCausal(short_gpt2, tiny_tokenizer, name="g")
    ws = words(180_000)
    assert len(text(ws)) > 1_000_000
    start = time.perf_counter()
    (got,) = subject.answer([CandidateScoreRequest(text(ws), CANDIDATES)])
    elapsed = time.perf_counter() - start
    kept = LIMIT + 1 - 7
    (expected,) = subject.answer([CandidateScoreRequest(text(ws[-kept:]), CANDIDATES)])
    assert got.truncated and close(got, replace(expected, truncated=True))
    print(f"1 MB cloze context answered in {elapsed:.3f} s")


# -- masked LM ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bert", "roberta"])
@pytest.mark.parametrize("n_suffix", [300, 0])
def test_masked_lm_keeps_a_window_around_the_blank(
    name, n_suffix, short_mlms, tiny_pair_tokenizer, one_token_words
):
    subject = HFMasked(short_mlms[name], tiny_pair_tokenizer, name=name)
    left, right = words(300, seed=1), words(n_suffix, seed=2)
    suffix = text(right) + "."
    (got,) = subject.answer([CandidateScoreRequest(text(left), CANDIDATES, suffix)])
    room = LIMIT - 2 - 7  # <s> and </s>, the longest candidate
    if n_suffix:  # half the room each side, the odd token to the left
        n_left, kept_suffix = room - room // 2, text(right[: room // 2])
    else:  # the suffix is one token: the left side gets the rest
        n_left, kept_suffix = room - 1, "."
    pre_truncated = CandidateScoreRequest(text(left[-n_left:]), CANDIDATES, kept_suffix)
    (expected,) = subject.answer([pre_truncated])
    assert got.truncated and not expected.truncated
    assert close(got, replace(expected, truncated=True))
    assert subject.max_length == LIMIT


def test_masked_lm_refuses_a_candidate_longer_than_the_model(short_mlms, tiny_pair_tokenizer):
    subject = HFMasked(short_mlms["bert"], tiny_pair_tokenizer, name="bert")
    with pytest.raises(UsageError, match="takes at most 64 tokens"):
        subject.answer([CandidateScoreRequest(text(words(300)), ("Quazzlefort" * 7, "Paris"))])


# -- encoder classifiers -----------------------------------------------------------------


def test_multiple_choice_keeps_the_start_of_the_context(tiny_pair_tokenizer, one_token_words):
    from transformers import BertForMultipleChoice

    model = _seeded(lambda: BertForMultipleChoice(short_bert_config(len(tiny_pair_tokenizer))))
    subject = HFMC(model, tiny_pair_tokenizer, name="mc")
    assert subject.max_length == LIMIT
    ws, choices = words(300), (" Paris", " Italy")  # one token each
    (got,) = subject.answer([CandidateScoreRequest(text(ws), choices)])
    kept = LIMIT - 3 - 1  # <s> context </s> choice </s>
    (expected,) = subject.answer([CandidateScoreRequest(text(ws[:kept]), choices)])
    assert got.truncated and not expected.truncated
    assert close(got, replace(expected, truncated=True))


def test_pair_classifier_cuts_the_longer_text(tiny_pair_tokenizer, one_token_words):
    from transformers import BertForSequenceClassification

    config = short_bert_config(len(tiny_pair_tokenizer))
    config.id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}
    config.label2id = {v: k for k, v in config.id2label.items()}
    model = _seeded(lambda: BertForSequenceClassification(config))
    subject = HFNLI(model, tiny_pair_tokenizer, name="nli")
    assert subject.max_length == LIMIT
    ws, hypothesis = words(300), " Paris lives in France"  # four tokens
    (got,) = subject.answer([TextPairRequest(text(ws), hypothesis)])
    kept = LIMIT - 3 - 4
    (expected,) = subject.answer([TextPairRequest(text(ws[:kept]), hypothesis)])
    assert got.truncated and not expected.truncated
    assert close(got, replace(expected, truncated=True))


# -- extractive QA -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def short_qa_model(tiny_pair_tokenizer):
    from transformers import BertForQuestionAnswering

    return _seeded(lambda: BertForQuestionAnswering(short_bert_config(len(tiny_pair_tokenizer))))


def qa_subject(model, tokenizer, **kwargs) -> HFQA:
    return HFQA(model, tokenizer, name="qa", doc_stride=16, **kwargs)


def span_close(a: SpanAnswer, b: SpanAnswer, tolerance: float = TOLERANCE) -> bool:
    same_span = (a.text, a.start, a.end, a.truncated) == (b.text, b.start, b.end, b.truncated)
    scores = (a.score, a.null_score)
    return same_span and scores == pytest.approx((b.score, b.null_score), abs=tolerance)


def test_extractive_qa_keeps_the_end_of_a_long_question(
    short_qa_model, tiny_pair_tokenizer, one_token_words
):
    short_qa = qa_subject(short_qa_model, tiny_pair_tokenizer)
    assert short_qa.max_length == LIMIT
    context = "Henry lives in France. The capital of Henry's country is Paris."
    ws = words(5_000)
    (got,) = short_qa.answer([SpanAnswerRequest(text(ws), context)])
    kept = LIMIT // 2
    (expected,) = short_qa.answer([SpanAnswerRequest(text(ws[-kept:]), context)])
    assert got.truncated and not expected.truncated
    assert span_close(got, replace(expected, truncated=True))


def test_extractive_qa_windows_a_long_context_in_bounded_forwards(
    short_qa_model, tiny_pair_tokenizer, one_token_words
):
    """A long context is windowed, not truncated, and its windows are run at most
    ``max_batch_tokens`` padded tokens at a time (chunks differ from one forward of all
    windows only by rounding: 1e-4 as in the batch-size tests)."""
    request = SpanAnswerRequest("Where does Henry live?", text(words(3_000)) + " Paris.")
    (whole,) = qa_subject(short_qa_model, tiny_pair_tokenizer).answer([request])
    shapes = []
    hook = short_qa_model.register_forward_pre_hook(
        lambda _m, _args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True,
    )
    chunking = qa_subject(short_qa_model, tiny_pair_tokenizer, max_batch_tokens=4 * LIMIT)
    try:
        (chunked,) = chunking.answer([request])
    finally:
        hook.remove()
    assert len(shapes) > 1 and all(rows * length <= 4 * LIMIT for rows, length in shapes)
    assert span_close(chunked, whole, tolerance=1e-4) and not chunked.truncated


# -- answers' JSON -----------------------------------------------------------------------

OLD_JSON = {
    CandidateScores((-1.5, -0.25), (1, 2)): '{"logprobs": [-1.5, -0.25], "n_tokens": [1, 2]}',
    Generation(" Paris", 1): '{"text": " Paris", "n_tokens": 1}',
    SpanAnswer("Paris", 3, 8, 1.5, 0.5): (
        '{"text": "Paris", "start": 3, "end": 8, "score": 1.5, "null_score": 0.5}'
    ),
}


@pytest.mark.parametrize("answer", list(OLD_JSON), ids=lambda a: type(a).__name__)
def test_json_of_answers_that_were_not_truncated_is_unchanged(answer):
    old = OLD_JSON[answer]
    assert answer.to_json() == old and type(answer).from_json(old) == answer
    cut = replace(answer, truncated=True)
    assert cut.to_json() == old[:-1] + ', "truncated": true}'
    assert type(answer).from_json(cut.to_json()) == cut


def test_a_real_answer_that_fits_has_no_truncated_key(short_gpt2, tiny_tokenizer):
    subject = HFCausal(short_gpt2, tiny_tokenizer, name="g")
    (answer,) = subject.answer([CandidateScoreRequest("Alice lives in", CANDIDATES)])
    assert not answer.truncated and "truncated" not in answer.to_json()
