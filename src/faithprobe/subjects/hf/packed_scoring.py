"""Packed candidate scoring: the pieces, rows, attention masks and read-out positions that
let one forward score the candidates of many requests.

A *piece* is a request's context followed by some of its candidates, all but each one's
last token: ``context + cand_1[:-1] + cand_2[:-1] + ...``. A candidate sees its context
and its own earlier tokens, never another candidate's, at positions that continue the
context's; the context's last logits give every first token. :func:`pack_groups` splits a
request's candidates over several pieces when they would feed more than the model takes.

Pieces share rows (:func:`packed_batches`): several short requests fill one row, so a
forward carries many tokens and little padding. Each token sees only earlier tokens of its
own piece (:func:`block_mask`) and positions count from its piece's start
(:func:`packed_rows`), so a piece scores as it would alone, up to rounding. The vocabulary
is projected only at the positions a candidate token is read from (:func:`projected_at`).
The model runs in :meth:`faithprobe.subjects.hf.causal.HFCausal._packed_answers`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from faithprobe.requests import CandidateScores

# (context, [(candidate's index among all the call's candidates, its tokens)])
Piece = tuple[list[int], list[tuple[int, list[int]]]]


def pack_groups(cands: list[list[int]], max_length: int | None) -> list[list[int]]:
    """The candidates' indices in pieces: in order, each piece feeding at most
    ``max_length`` candidate tokens (all in one piece without a limit), so a piece is at
    most twice what the model takes and a context is recomputed at most once per its own
    length in candidate tokens."""
    groups: list[list[int]] = [[]]
    fed = 0
    for j, tokens in enumerate(cands):
        n = len(tokens) - 1
        if groups[-1] and max_length is not None and fed + n > max_length:
            groups.append([])
            fed = 0
        groups[-1].append(j)
        fed += n
    return groups


def candidate_starts(batch: list[tuple[list[int], list[list[int]]]]) -> list[int]:
    """Where each request's candidates start among the batch's candidates, and their total."""
    starts = [0]
    for _, cands in batch:
        starts.append(starts[-1] + len(cands))
    return starts


def pieces(
    encoded: list[tuple[list[int], list[list[int]]]], max_length: int | None
) -> list[tuple[int, Piece]]:
    """(Request's index, piece) of every piece of the encoded requests (context, candidates'
    tokens), a candidate named by its index among all of theirs (:func:`candidate_starts`)."""
    starts = candidate_starts(encoded)
    return [
        (r, (ctx, [(start + j, cands[j]) for j in group]))
        for r, ((ctx, cands), start) in enumerate(zip(encoded, starts, strict=False))
        for group in pack_groups(cands, max_length)
    ]


def piece_length(piece: Piece) -> int:
    """Tokens a piece feeds: its context and all but the last token of each candidate."""
    ctx, cands = piece
    return len(ctx) + sum(len(tokens) - 1 for _, tokens in cands)


def packed_batches(
    lengths: list[int], *, max_rows: int, max_tokens: int, row_tokens: int
) -> list[list[list[int]]]:
    """Pieces of ``lengths`` in batches of rows (lists of piece indices), first fit, longest
    first: a piece goes into the batch's first row with room for it, else opens a row. A row
    holds up to the batch's longest piece or ``row_tokens``, whichever is more (but not more
    than ``max_tokens`` for a short row); a batch closes when another row would pass
    ``max_rows`` rows or ``max_tokens`` tokens. A piece longer than ``max_tokens`` gets a
    batch of its own."""
    if max_rows < 1 or max_tokens < 1:
        raise ValueError("max_rows and max_tokens must be positive")
    batches: list[list[list[int]]] = []
    rows: list[list[int]] = []
    filled: list[int] = []
    capacity = 0
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        n = lengths[i]
        room = next((r for r, used in enumerate(filled) if used + n <= capacity), None)
        if room is not None:
            rows[room].append(i)
            filled[room] += n
            continue
        if rows and (len(rows) >= max_rows or capacity * (len(rows) + 1) > max_tokens):
            batches.append(rows)
            rows, filled = [], []
        if not rows:
            capacity = max(n, min(row_tokens, max_tokens))
        rows.append([i])
        filled.append(n)
    if rows:
        batches.append(rows)
    return batches


def packed_rows(
    rows: list[list[Piece]], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Token ids, position ids, owners and segments of rows of pieces, left-padded: a
    token's owner is its piece's place in the row (-1 for padding), its segment 0 in the
    context and ``k`` in the piece's ``k``-th candidate; positions count from the piece's
    start, a candidate's continuing the context's."""
    seqs = []
    for row in rows:
        ids: list[int] = []
        positions: list[int] = []
        owners: list[int] = []
        segments: list[int] = []
        for p, (ctx, cands) in enumerate(row):
            start = len(ids)
            ids += ctx
            segments += [0] * len(ctx)
            positions += range(len(ctx))
            for k, (_, tokens) in enumerate(cands, start=1):
                ids += tokens[:-1]
                positions += range(len(ctx), len(ctx) + len(tokens) - 1)
                segments += [k] * (len(tokens) - 1)
            owners += [p] * (len(ids) - start)
        seqs.append((ids, positions, owners, segments))
    n = max(len(ids) for ids, *_ in seqs)
    out = [torch.full((len(rows), n), fill, dtype=torch.long) for fill in (pad_id, 0, -1, -1)]
    for r, seq in enumerate(seqs):
        for tensor, values in zip(out, seq, strict=True):
            tensor[r, n - len(values) :] = torch.tensor(values, dtype=torch.long)
    return out[0], out[1], out[2], out[3]


def block_mask(owners: torch.Tensor, segments: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The additive (rows, 1, n, n) attention mask of packed rows: a token sees the earlier
    tokens of its own piece's context and of its own segment (padding sees earlier padding
    only, so no row of the mask is empty)."""
    n = segments.shape[1]
    earlier = torch.ones(n, n, dtype=torch.bool, device=segments.device).tril()
    same_piece = owners[:, None, :] == owners[:, :, None]
    keys, queries = segments[:, None, :], segments[:, :, None]
    seen = earlier & same_piece & ((keys == 0) | (keys == queries))
    mask = torch.zeros(seen.shape, dtype=dtype, device=seen.device)
    mask.masked_fill_(~seen, torch.finfo(dtype).min)
    return mask[:, None]


def picks(rows: list[list[Piece]]) -> tuple[torch.Tensor, ...]:
    """For each candidate token of packed rows: the row, the position whose logits predict
    it counted from the row's end (-1 is the last), the token and the candidate's index. A
    piece's last context position predicts each of its candidates' first tokens; a fed
    token predicts the next."""
    found = []
    for r, row in enumerate(rows):
        end = sum(piece_length(piece) for piece in row)
        at = -end  # where the piece starts, counted from the row's end
        for ctx, cands in row:
            context_end = at + len(ctx) - 1
            fed = context_end + 1  # where the candidate's fed tokens start
            for c, tokens in cands:
                found.append((r, context_end, tokens[0], c))
                found += [(r, fed + t, token, c) for t, token in enumerate(tokens[1:])]
                fed += len(tokens) - 1
            at = fed
    return tuple(torch.tensor(column) for column in zip(*found, strict=True))


@contextmanager
def projected_at(model, rows: torch.Tensor, columns: torch.Tensor) -> Iterator[None]:
    """While open, ``model``'s output layer projects only the hidden states at (``rows``,
    ``columns``), as a batch of one: the logits come out (1, picks, vocabulary).

    Hugging Face's ``logits_to_keep`` keeps the same last columns of every row, which in
    packed rows are mostly positions nobody reads; the projection to a vocabulary of tens
    of thousands is a large part of a small model's forward. What the model does to the
    logits after the layer (a soft cap, a scale) still applies. A model whose logits do not
    come out of :meth:`get_output_embeddings` is caught by the caller's shape check."""

    def gather(_module, args):
        return (args[0][rows, columns][None], *args[1:])

    handle = model.get_output_embeddings().register_forward_pre_hook(gather)
    try:
        yield
    finally:
        handle.remove()


def per_request(batch, scores) -> list[CandidateScores]:
    """The batch's candidate scores (in batch order) as one answer per request."""
    scores = [float(s) for s in scores]
    starts = candidate_starts(batch)
    return [
        CandidateScores(tuple(scores[start:end]), tuple(len(t) for t in cands))
        for (_, cands), start, end in zip(batch, starts, starts[1:], strict=False)
    ]
