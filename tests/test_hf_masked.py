"""HFMasked against tiny random BERT / RoBERTa masked LMs (no downloads)."""

from __future__ import annotations

import pytest
import torch
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import PreTrainedTokenizerFast

from faithprobe.errors import ModelError
from faithprobe.generators.distractors import DistractorConfig, generate
from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects.hf.masked import HFMasked

LONG_WORDS = ("Helsinkiborough", "Ouagadougouville")


@pytest.fixture(scope="module")
def items():
    return generate(DistractorConfig(), 0)


@pytest.fixture(scope="module")
def requests_(items):
    """~40 varied requests; every other one also gets made-up long (multi-token) words."""
    picked = items[:: max(1, len(items) // 40)][:40]
    out = []
    for n, item in enumerate(picked):
        cands = item.candidates + (LONG_WORDS if n % 2 else ())
        out.append(CandidateScoreRequest(item.context, cands, item.suffix))
    return out


@pytest.fixture(params=["bert", "roberta"])
def model(request, tiny_bert_mlm, tiny_roberta_mlm):
    return {"bert": tiny_bert_mlm, "roberta": tiny_roberta_mlm}[request.param]


@pytest.fixture(scope="module")
def wordpiece_tokenizer(items):
    """A BERT-style WordPiece tokenizer with [CLS] ... [SEP] added around the text."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=specials, show_progress=False
    )
    tok.train_from_iterator(
        [i.context + " " + " ".join(i.candidates) + "." for i in items[::7]], trainer
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )


def _reference(model, prefix, cand, rest, mask_id) -> float:
    """Chain rule by hand: reveal the candidate's tokens left to right, one forward each."""
    total = 0.0
    with torch.no_grad():
        for j, token in enumerate(cand):
            x = prefix + cand[:j] + [mask_id] * (len(cand) - j) + rest
            logits = model(input_ids=torch.tensor([x])).logits[0, len(prefix) + j]
            total += float(torch.log_softmax(logits, dim=-1)[token])
    return total


def _ids(tokenizer, text):
    return tokenizer(text, add_special_tokens=False).input_ids


def test_batch_size_invariance(model, tiny_tokenizer, requests_):
    small = HFMasked(model, tiny_tokenizer, name="m", batch_size=1)
    large = HFMasked(model, tiny_tokenizer, name="m", batch_size=32)
    a = small.answer(requests_)
    b = large.answer(requests_)
    assert len(a) == len(b) == len(requests_)
    assert any(n > 1 for s in a for n in s.n_tokens), "multi-token path not exercised"
    assert any(n == 1 for s in a for n in s.n_tokens), "single-token path not exercised"
    for x, y, r in zip(a, b, requests_, strict=True):
        assert len(x.logprobs) == len(r.candidates)
        assert x.n_tokens == y.n_tokens
        for u, v in zip(x.logprobs, y.logprobs, strict=True):
            assert u < 0
            assert abs(u - v) < 1e-4

    # A token budget below one request's rows splits its rows over several forwards.
    chunked = HFMasked(model, tiny_tokenizer, name="m", batch_size=32, max_batch_tokens=150)
    few = requests_[:6]
    for x, z in zip(a, chunked.answer(few), strict=False):
        assert x.n_tokens == z.n_tokens
        assert max(abs(u - w) for u, w in zip(x.logprobs, z.logprobs, strict=True)) < 1e-4


def test_matches_hand_built_reference(model, tiny_tokenizer, items):
    item = items[0]
    single = next(c for c in item.candidates if len(_ids(tiny_tokenizer, " " + c)) == 1)
    multi = "Helsinkiborough"
    request = CandidateScoreRequest(item.context, (single, multi), item.suffix)
    got = HFMasked(model, tiny_tokenizer, name="m").answer([request])[0]

    prefix = _ids(tiny_tokenizer, item.context)
    rest = _ids(tiny_tokenizer, item.suffix)
    mask_id = tiny_tokenizer.mask_token_id
    for cand, logprob, n in zip((single, multi), got.logprobs, got.n_tokens, strict=True):
        cand_ids = _ids(tiny_tokenizer, " " + cand)
        filled, _ = request.filled(cand)
        assert prefix + cand_ids + rest == _ids(tiny_tokenizer, filled)  # sanity of the build
        assert n == len(cand_ids)
        assert abs(logprob - _reference(model, prefix, cand_ids, rest, mask_id)) < 1e-5
    assert got.n_tokens[1] > 1


def test_wordpiece_with_special_tokens(wordpiece_tokenizer, items):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(wordpiece_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=300,
        pad_token_id=wordpiece_tokenizer.pad_token_id,
        initializer_range=0.2,
    )
    model = BertForMaskedLM(config).eval()
    tok = wordpiece_tokenizer
    item = items[0]
    request = CandidateScoreRequest(item.context, (item.candidates[0], "Helsinkiborough"), ".")
    got = HFMasked(model, tok, name="m").answer([request])[0]

    prefix = [tok.cls_token_id] + _ids(tok, item.context)
    rest = _ids(tok, ".") + [tok.sep_token_id]
    for cand, logprob, n in zip(request.candidates, got.logprobs, got.n_tokens, strict=True):
        cand_ids = _ids(tok, cand)
        assert prefix + cand_ids + rest == tok(request.filled(cand)[0]).input_ids
        assert n == len(cand_ids)
        assert abs(logprob - _reference(model, prefix, cand_ids, rest, tok.mask_token_id)) < 1e-5
    assert got.n_tokens[1] > 1


def test_suffix_is_visible(model, tiny_tokenizer, items):
    item = items[0]
    cands = item.candidates + LONG_WORDS
    subject = HFMasked(model, tiny_tokenizer, name="m")
    a, b = subject.answer(
        [
            CandidateScoreRequest(item.context, cands, "."),
            CandidateScoreRequest(item.context, cands, ", a city far to the north."),
        ]
    )
    assert a.n_tokens == b.n_tokens
    assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) > 1e-3


def test_identical_masked_inputs_share_one_row(tiny_bert_mlm, tiny_tokenizer, items):
    item = items[0]
    singles = tuple(c for c in item.candidates if len(_ids(tiny_tokenizer, " " + c)) == 1)
    assert len(singles) >= 2
    k = len(_ids(tiny_tokenizer, " Helsinkiborough"))
    rows = []

    def count(module, args, kwargs):
        rows.append(kwargs["input_ids"].shape[0])

    handle = tiny_bert_mlm.register_forward_pre_hook(count, with_kwargs=True)
    try:
        subject = HFMasked(tiny_bert_mlm, tiny_tokenizer, name="m")
        subject.answer([CandidateScoreRequest(item.context, singles, item.suffix)])
        assert rows == [1]
        rows.clear()
        subject.answer([CandidateScoreRequest(item.context, ("Helsinkiborough",))])
        assert rows == [k]
    finally:
        handle.remove()


def test_progress_counts_requests(tiny_roberta_mlm, tiny_tokenizer, requests_):
    seen = []
    subject = HFMasked(tiny_roberta_mlm, tiny_tokenizer, name="m", batch_size=7)
    subject.answer(requests_[:20], progress=seen.append)
    assert sum(seen) == 20
    assert len(seen) == 3


def test_fingerprint_is_stable_and_kind_specific(tiny_bert_mlm, tiny_tokenizer):
    a = HFMasked(tiny_bert_mlm, tiny_tokenizer, name="m").fingerprint
    b = HFMasked(tiny_bert_mlm, tiny_tokenizer, name="other").fingerprint
    assert a == b
    assert HFMasked(tiny_bert_mlm, tiny_tokenizer, name="m", fingerprint="x").fingerprint == "x"


def test_tokenizer_without_mask_token_raises(tiny_bert_mlm, tiny_tokenizer):
    no_mask = PreTrainedTokenizerFast(
        tokenizer_object=tiny_tokenizer.backend_tokenizer, pad_token="<pad>"
    )
    assert no_mask.mask_token_id is None
    with pytest.raises(ModelError, match="no mask token"):
        HFMasked(tiny_bert_mlm, no_mask, name="m")


def test_slow_tokenizer_raises(tiny_bert_mlm):
    class Slow:
        is_fast = False
        mask_token_id = 4

    with pytest.raises(ModelError, match="not a fast tokenizer"):
        HFMasked(tiny_bert_mlm, Slow(), name="m")
