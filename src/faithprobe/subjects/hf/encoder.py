"""What the Hugging Face encoder backends (multiple choice, pair classification,
extractive QA) share: how a text pair becomes one encoded row (:func:`encode_choice`),
whether the model takes segment ids (:func:`uses_token_types`), how rows are padded into one
input (:func:`pad_rows`), and their common base class (:class:`HFEncoderClassifier`).

The training recipes and the representation analysis encode and pad through the same
functions, so a model is trained and probed on exactly the inputs the backend feeds it.
"""

from __future__ import annotations

import hashlib
import inspect

import torch

from faithprobe.subjects.bounds import cut_for_tokens, model_max_length
from faithprobe.subjects.hf.base import HFSubject

DEFAULT_MAX_LENGTH = 256

# One encoded text pair, a row of the model's input: token ids and token type ids (None if
# the model takes none, as RoBERTa).
Row = tuple[tuple[int, ...], tuple[int, ...] | None]


def uses_token_types(model) -> bool:
    """Whether the model has segment embeddings to tell the two texts of a pair apart
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
    ``max_length`` tokens (:func:`~faithprobe.subjects.hf.base.cut_for_tokens`)."""
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


class HFEncoderClassifier(HFSubject):
    """What the encoder backends share (multiple choice, pair classification, extractive
    QA): a capped ``max_length``, segment ids when the model has them, the pad id, and a
    fingerprint that includes the truncation length (it changes the answers for long
    inputs, hence every cache key) plus :meth:`_fingerprint_extras`."""

    def __init__(self, model, tokenizer, *, max_length: int = DEFAULT_MAX_LENGTH, **kwargs) -> None:
        """``max_length``: the window; the settings' ``max_length``, where set, takes its
        place."""
        settings = kwargs.get("settings")
        if settings is not None and settings.max_length is not None:
            max_length = settings.max_length
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
