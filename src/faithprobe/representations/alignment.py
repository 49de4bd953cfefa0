"""Which tokens two encoded inputs share, found by character offsets, not by position.

An intervened QA input (TS, TS-R) is the original question with a context made of pieces
copied unchanged from the original context (``features["copied"]``: one ``(start in the
new context, start in the original context, length)`` per piece, see
:mod:`faithprobe.interventions.deletion`), perhaps with an answer appended. After a
deletion the same word sits at another *position*, so tokens are paired through the text
they cover:

* a **context** token of the intervened input whose character span lies inside one copied
  piece is moved to the original context (shifted by ``start in the original - start in
  the new``) and paired with the original's context token that has exactly that span *and*
  the same token id. A token that straddles a cut (part of it copied from one piece, part
  from another or from appended text), whose span is empty, or whose id differs (the text
  around it tokenised differently) is not paired;
* a **question** token is paired with the original's question token with the same span in
  the question and the same id (both inputs ask the same question);
* special tokens (``[CLS]``, ``[SEP]``, padding) are never paired.

Each token is described by an *offset*: ``None`` for a special token, else ``(sequence,
start, end)`` with ``sequence`` 0 for the question and 1 for the context (the tokenizer's
``sequence_ids``) and ``start``/``end`` character offsets in that text. Several tokens with
the same span and id (a character split into bytes) are paired in order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from faithprobe.requests import CONTEXT, QUESTION, Offset

Piece = tuple[int, int, int]  # (start in the new context, start in the original, length)


def _in_original(offset: tuple[int, int, int], copied: Sequence[Piece]) -> tuple | None:
    """The (sequence, start, end) of a token of the intervened input in the original input,
    or None when its text is not copied whole from one piece of the original context."""
    sequence, start, end = offset
    if start >= end:
        return None
    if sequence == QUESTION:
        return offset
    if sequence != CONTEXT:
        return None
    for new, old, length in copied:
        if new <= start and end <= new + length:
            return (CONTEXT, start - new + old, end - new + old)
    return None


def shared_tokens(
    original_offsets: Sequence[Offset],
    original_ids: Sequence[int],
    intervened_offsets: Sequence[Offset],
    intervened_ids: Sequence[int],
    copied: Sequence[Piece],
) -> list[tuple[int, int]]:
    """``(index in the original, index in the intervened input)`` of every token the two
    inputs share (see the module docstring), in the intervened input's order. For the
    identity pair pass ``copied=[(0, 0, len(context))]``."""
    if len(original_offsets) != len(original_ids) or len(intervened_offsets) != len(intervened_ids):
        raise ValueError("every token needs one offset and one id")
    waiting: dict[tuple, list[int]] = defaultdict(list)
    for i in reversed(range(len(original_offsets))):
        offset = original_offsets[i]
        if offset is not None and offset[1] < offset[2]:
            waiting[(*offset, original_ids[i])].append(i)  # popped from the end: in order
    pairs = []
    for j, offset in enumerate(intervened_offsets):
        if offset is None:
            continue
        moved = _in_original(offset, copied)
        if moved is None:
            continue
        candidates = waiting.get((*moved, intervened_ids[j]))
        if candidates:
            pairs.append((candidates.pop(), j))
    return pairs
