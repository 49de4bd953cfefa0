"""Hugging Face multiple-choice classifiers (``AutoModelForMultipleChoice``: an encoder with
one linear score per (context, choice) pair, e.g. BERT, RoBERTa, DeBERTa fine-tuned on
Social IQA or SWAG).

It answers the same :class:`~faithprobe.requests.CandidateScoreRequest` as the language-
model backends: ``request.context`` is the rendered prompt (the caller has already put it
through :class:`~faithprobe.prompts.ChoicePrompt`) and ``request.candidates`` are the
choices; ``request.suffix`` is ignored, since a classifier has no blank to fill.

Each (context, choice) is encoded as a tokenizer text pair (``[CLS] context [SEP] choice
[SEP]`` for BERT), the same encoding the training recipe uses
(:func:`encode_choice`). Only the context is truncated (``truncation="only_first"``) to
``max_length`` tokens, so the choice always survives whole; an empty context (a probe that
removed the question) is allowed. Only when the choice alone is too long for the model is
it truncated as well. Token type ids (segment A / B) are asked of the tokenizer whenever
the model has segment embeddings (``type_vocab_size > 1``: BERT yes, RoBERTa no), so a
tokenizer that leaves them out by default still marks where the choice starts.

The score of a choice is the log-softmax of the model's per-choice logits over *that
request's* choices, so ``exp`` of the scores sums to one per request. A classifier scores
each choice as one unit, not token by token, so ``n_tokens`` is 1 for every choice and
length normalisation (dividing by ``n_tokens``) is a no-op.

Batching: the rows of all requests in a batch are flattened, right-padded to the batch's
longest row and sent as one input of shape ``[1, rows, length]``; the ``*ForMultipleChoice``
models reshape to ``[rows, length]`` and score every row independently, so requests with
different numbers of choices share a forward. The logits are then split back per request.
Right padding under an attention mask leaves the positions of real tokens unchanged, so
padding changes nothing but rounding (batch-size invariance is tested).

**Bounded inputs.** The rule above: a pair longer than ``max_length`` keeps the *start* of
the context (the tokenizer's right truncation) and the whole choice, each choice's row on
its own, so choices of different lengths keep different amounts of context. The answer is
``truncated`` when any row was cut.
"""

from __future__ import annotations

import hashlib
import inspect

import torch

from faithprobe.errors import UsageError
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.subjects.hf_base import HFSubject, cut_for_tokens, position_limit

DEFAULT_MAX_LENGTH = 256

# One encoded (context, choice) row: token ids and token type ids (None if the model
# takes none, as RoBERTa).
Row = tuple[tuple[int, ...], tuple[int, ...] | None]


def uses_token_types(model) -> bool:
    """Whether the model has segment embeddings to tell the context from the choice
    (BERT: yes; RoBERTa: a single type, so no)."""
    accepted = inspect.signature(model.forward).parameters
    return "token_type_ids" in accepted and getattr(model.config, "type_vocab_size", 0) > 1


def encode_choice(
    tokenizer,
    context: str,
    choice: str,
    max_length: int,
    token_types: bool = True,
    truncation: str = "only_first",
) -> tuple[Row, bool]:
    """The token ids (and, if ``token_types``, token type ids) of one (context, choice)
    pair, truncating only the context to ``max_length`` tokens (the choice too if it is too
    long on its own), and whether anything was cut. ``truncation="longest_first"`` cuts the
    longer segment first instead (the NLI convention for (premise, hypothesis)). Both texts
    are truncated from the right, so each is first cut to the characters that hold its first
    ``max_length`` tokens (:func:`~faithprobe.subjects.hf_base.cut_for_tokens`)."""
    heads = [cut_for_tokens(tokenizer, t, max_length, keep_end=False) for t in (context, choice)]

    def encode(strategy: str):
        return tokenizer(
            *heads,
            truncation=strategy,
            max_length=max_length,
            return_token_type_ids=token_types,
        )

    try:
        enc = encode(truncation)
    except Exception:  # the tokenizers library raises a bare Exception for this case
        enc = encode("longest_first")
    if len(enc["input_ids"]) > max_length:  # slow tokenizers warn instead of raising
        enc = encode("longest_first")
    types = tuple(enc["token_type_ids"]) if token_types else None
    # a text cut to characters holds more tokens than fit, so the tokenizer truncates it too
    return (tuple(enc["input_ids"]), types), _overflowed(tokenizer, enc, heads, max_length)


def _overflowed(tokenizer, enc, texts: list[str], max_length: int) -> bool:
    """Whether the tokenizer truncated the pair ``texts`` it encoded as ``enc``: a fast
    tokenizer keeps what it cut, a slow one is asked for the untruncated length."""
    if enc.encodings:
        return bool(enc.encodings[0].overflowing)
    return len(tokenizer(*texts)["input_ids"]) > max_length


def pad_rows(rows: list[Row], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad encoded rows to the longest: ``input_ids``, ``attention_mask`` and, if the
    rows carry them, ``token_type_ids``, each of shape [rows, length]. Right padding under
    an attention mask leaves the positions of real tokens unchanged."""
    n = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), n), dtype=torch.long)
    with_types = rows[0][1] is not None
    types = torch.zeros((len(rows), n), dtype=torch.long)
    for r, (row_ids, row_types) in enumerate(rows):
        ids[r, : len(row_ids)] = torch.tensor(row_ids)
        mask[r, : len(row_ids)] = 1
        if with_types:
            types[r, : len(row_types)] = torch.tensor(row_types)
    out = {"input_ids": ids, "attention_mask": mask}
    if with_types:
        out["token_type_ids"] = types
    return out


def model_max_length(model, tokenizer, cap: int) -> int:
    """The longest input the model and tokenizer accept (:func:`position_limit`), at most
    ``cap``."""
    limit = position_limit(model, tokenizer)
    return cap if limit is None else min(cap, limit)


class HFEncoderClassifier(HFSubject):
    """What the encoder-classifier backends share (multiple choice, pair classification):
    a capped ``max_length``, segment ids when the model has them, the pad id, and a
    fingerprint that includes the truncation length (it changes the answers for long
    inputs, hence every cache key) plus :meth:`_fingerprint_extras`."""

    def __init__(self, model, tokenizer, *, max_length: int = DEFAULT_MAX_LENGTH, **kwargs) -> None:
        if max_length < 8:
            raise ValueError(f"max_length must be at least 8, got {max_length}")
        super().__init__(model, tokenizer, **kwargs)
        self.max_length = model_max_length(model, tokenizer, max_length)
        self._token_types = uses_token_types(model)
        pad = tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else 0

    def _fingerprint_extras(self) -> str:
        return ""

    @property
    def fingerprint(self) -> str:
        extra = f"\x1fmax_length={self.max_length}{self._fingerprint_extras()}"
        return hashlib.sha256(f"{super().fingerprint}{extra}".encode()).hexdigest()[:24]


class HFMultipleChoice(HFEncoderClassifier):
    kind = "multiple-choice"
    scoring_version = "mc-v1"
    auto_class = "AutoModelForMultipleChoice"

    # -- tokenization ------------------------------------------------------------------

    def _encode(self, request: CandidateScoreRequest) -> tuple[list[Row], bool]:
        if not request.candidates:
            raise UsageError("a multiple-choice request needs at least one choice")
        encoded = [
            encode_choice(
                self.tokenizer, request.context, c, self.max_length, self._token_types
            )
            for c in request.candidates
        ]
        return [row for row, _ in encoded], any(cut for _, cut in encoded)

    # -- scoring -----------------------------------------------------------------------

    def _cost(self, encoded: list[Row]) -> tuple[int, int]:
        return max(len(ids) for ids, _ in encoded), len(encoded)

    def _score_batch(self, batch: list[list[Row]]) -> list[CandidateScores]:
        rows = [row for rows in batch for row in rows]
        inputs = {k: v[None].to(self.device) for k, v in pad_rows(rows, self._pad_id).items()}
        logits = self.model(**inputs).logits.reshape(-1).float()

        out, r = [], 0
        for request_rows in batch:
            k = len(request_rows)
            logp = torch.log_softmax(logits[r : r + k], dim=-1)
            out.append(CandidateScores(tuple(logp.tolist()), (1,) * k))
            r += k
        return out
