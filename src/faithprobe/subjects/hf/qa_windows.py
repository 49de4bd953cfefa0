"""How an extractive QA encoder reads (question, context): overlapping windows of one
tokenizer text pair. The one encoding of the backend
(:class:`~faithprobe.subjects.hf.extractive_qa.HFQA`), its training recipe
(``faithprobe train qa``), token saliency (:mod:`faithprobe.subjects.hf.attribution`, on the first
window) and the representation analysis.

(question, context) is encoded as a tokenizer text pair (``[CLS] question [SEP] context
[SEP]`` for BERT, token type ids when asked for). Only the context is cut
(``truncation="only_second"``): a context longer than ``max_length`` tokens is split into
overlapping windows that share ``doc_stride`` tokens, as the Hugging Face ``run_qa`` recipe
does. A question longer than half of ``max_length`` keeps only its last tokens (the question
proper comes after any conversation history), and the overlap shrinks to at most half of the
room a window leaves for the context. Character offsets come from the tokenizer's offset
mapping, so the tokenizer must be a fast (Rust) one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from faithprobe.subjects.bounds import cut_for_tokens

if TYPE_CHECKING:  # the encoders import torch; the windows are plain token lists
    from faithprobe.subjects.hf.encoder import Row

DEFAULT_MAX_LENGTH = 384
DEFAULT_DOC_STRIDE = 128


@dataclass(frozen=True)
class Window:
    """One encoded window: its row, the first token's index (the null answer), and per
    token its character span in the context (None outside the context)."""

    row: Row
    cls_index: int
    offsets: tuple[tuple[int, int] | None, ...]


@dataclass(frozen=True)
class Encoded:
    """(question, context) as windows, and whether the question was cut to fit."""

    context: str
    windows: tuple[Window, ...]
    question_cut: bool = False


def cut_question(tokenizer, question: str, keep: int) -> str:
    """The question, cut from the left to at most ``keep`` tokens (a window keeps half of
    ``max_length``)."""
    tail = cut_for_tokens(tokenizer, question, keep, keep_end=True)
    enc = tokenizer(tail, add_special_tokens=False, return_offsets_mapping=True)
    offsets = enc["offset_mapping"]
    if len(offsets) <= keep:
        return question
    return tail[offsets[-keep][0] :]


def encode_windows(
    tokenizer, question: str, context: str, *, max_length: int, doc_stride: int, token_types: bool
) -> Encoded:
    """(question, context) as overlapping windows of at most ``max_length`` tokens (see the
    module docstring)."""
    whole_question, question = question, cut_question(tokenizer, question, max_length // 2)
    n_question = len(tokenizer(question, add_special_tokens=False)["input_ids"])
    room = max_length - tokenizer.num_special_tokens_to_add(pair=True) - n_question
    enc = tokenizer(
        question,
        context,
        truncation="only_second",
        max_length=max_length,
        stride=min(doc_stride, max(room // 2, 0)),
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        return_token_type_ids=token_types,
    )
    cls_id = (
        tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    )
    windows = []
    for w, ids in enumerate(enc["input_ids"]):
        segments = enc.sequence_ids(w)
        offsets = tuple(
            tuple(span) if seg == 1 else None
            for seg, span in zip(segments, enc["offset_mapping"][w], strict=True)
        )
        types = tuple(enc["token_type_ids"][w]) if token_types else None
        cls_index = ids.index(cls_id) if cls_id in ids else 0
        windows.append(Window((tuple(ids), types), cls_index, offsets))
    return Encoded(context, tuple(windows), question != whole_question)
