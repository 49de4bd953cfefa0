"""Packed candidate scoring: the pieces, rows, attention masks and read-out positions that
let one forward score the candidates of many requests, each beginning they share read once.

A *group* is a request's context and some of its candidates (:func:`pack_groups` splits a
request's candidates over several groups when they would feed more than the model takes).
A *piece* is groups laid out as a tree: their contexts sorted, each context's tokens stored
from where it leaves the one before (its beginning shared with that one is not stored
again), and after each context the candidates of its group, all but each one's last token.
Every token sees its ancestors only: the context tokens it continues and, in a candidate,
that candidate's earlier tokens, never another candidate's or another context's; its
position is its depth in the tree. A context's last logits give every first token of its
candidates. So requests beginning alike (NLI items about one sentence frame, questions about
one passage, a cloze sentence with and without a distractor) read their common beginning
once, and k candidates cost one pass over their context.

A piece is laid out once (:func:`layout`: its token count is what
:func:`packed_batches` packs, its tokens what :func:`packed_rows` places). Pieces share rows: several short pieces
fill one row, so a forward carries many tokens and little padding. Each token's ancestors are its tree's
(:func:`block_mask`), so a request scores as it would alone, up to rounding. The vocabulary
is projected only at the positions a candidate token is read from (:func:`projected_at`).
The model runs in :meth:`faithprobe.subjects.hf.causal.HFCausal._packed_answers`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import torch

from faithprobe.requests import CandidateScores
from faithprobe.subjects.hf.kv_prefix_cache import common_length

# (context, [(candidate's index among all the call's candidates, its tokens)])
Group = tuple[list[int], list[tuple[int, list[int]]]]
Piece = list[Group]  # contexts in sorted order (see shared_pieces)


def pack_groups(cands: list[list[int]], max_length: int | None) -> list[list[int]]:
    """The candidates' indices in groups: in order, each group feeding at most
    ``max_length`` candidate tokens (all in one group without a limit), so a group is at
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


def groups(
    encoded: list[tuple[list[int], list[list[int]]]], max_length: int | None
) -> list[tuple[int, Group]]:
    """(Request's index, group) of every group of the encoded requests (context, candidates'
    tokens), a candidate named by its index among all of theirs (:func:`candidate_starts`)."""
    starts = candidate_starts(encoded)
    return [
        (r, (ctx, [(start + j, cands[j]) for j in group]))
        for r, ((ctx, cands), start) in enumerate(zip(encoded, starts, strict=False))
        for group in pack_groups(cands, max_length)
    ]


def fed(group: Group) -> int:
    """Candidate tokens a group feeds: all but the last of each candidate."""
    return sum(len(tokens) - 1 for _, tokens in group[1])


def shared_pieces(found: list[Group], row_tokens: int) -> list[list[int]]:
    """The groups (indices into ``found``) in pieces: sorted by context, so that contexts
    beginning alike are neighbours, and cut where a piece would feed more than its longest
    group alone plus ``row_tokens`` (a bound on how far a piece's attention grows beyond
    what its longest request costs anyway)."""
    order = sorted(range(len(found)), key=lambda i: (found[i][0], i))
    out: list[list[int]] = []
    size = longest = 0
    previous: list[int] = []
    for i in order:
        ctx = found[i][0]
        alone = len(ctx) + fed(found[i])
        grown = alone - common_length(previous, ctx)
        if not out or size + grown > max(longest, alone) + row_tokens:
            out.append([])
            size = longest = 0
            grown = alone
        out[-1].append(i)
        size += grown
        longest = max(longest, alone)
        previous = ctx
    return out


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


class Layout(NamedTuple):
    """A piece's tokens as laid out in a row: ids, each one's parent (its place in the
    piece, -1 for a root), position (depth), and the read-outs: (place whose logits predict
    the token, the token, the candidate's index)."""

    ids: list[int]
    parents: list[int]
    positions: list[int]
    reads: list[tuple[int, int, int]]


def layout(piece: Piece) -> Layout:
    """:class:`Layout` of ``piece``: each context stored from where it leaves the one
    before, then its candidates' fed tokens, each candidate a branch off its context's last
    token."""
    out = Layout([], [], [], [])
    previous: list[int] = []
    places: list[int] = []  # where the previous context's tokens lie

    def add(token: int, parent: int, position: int) -> int:
        out.ids.append(token)
        out.parents.append(parent)
        out.positions.append(position)
        return len(out.ids) - 1

    for ctx, cands in piece:
        places = places[: common_length(previous, ctx)]
        for k in range(len(places), len(ctx)):
            places.append(add(ctx[k], places[-1] if places else -1, k))
        previous = ctx
        for c, tokens in cands:
            at = places[-1]
            out.reads.append((at, tokens[0], c))
            for k, token in enumerate(tokens[:-1]):
                at = add(token, at, len(ctx) + k)
                out.reads.append((at, tokens[k + 1], c))
    return out


class PackedRows(NamedTuple):
    """Rows of pieces as tensors, left-padded (``parents`` -1 and ``positions`` 0 in the
    padding, ``parents`` counted in the row), and the read-outs: for each candidate token,
    the row and column whose logits predict it, the token and the candidate's index."""

    ids: torch.Tensor
    positions: torch.Tensor
    parents: torch.Tensor
    row: torch.Tensor
    column: torch.Tensor
    token: torch.Tensor
    cand: torch.Tensor


def packed_rows(rows: list[list[Layout]], pad_id: int) -> PackedRows:
    """:class:`PackedRows` of rows of laid-out pieces, each after the one before it in the
    row."""
    n = max(sum(len(p.ids) for p in row) for row in rows)
    ids = torch.full((len(rows), n), pad_id, dtype=torch.long)
    positions = torch.zeros((len(rows), n), dtype=torch.long)
    parents = torch.full((len(rows), n), -1, dtype=torch.long)
    reads: list[tuple[int, int, int, int]] = []
    for r, row in enumerate(rows):
        at = n - sum(len(p.ids) for p in row)
        for p in row:
            span = slice(at, at + len(p.ids))
            ids[r, span] = torch.tensor(p.ids, dtype=torch.long)
            positions[r, span] = torch.tensor(p.positions, dtype=torch.long)
            parents[r, span] = torch.tensor([q + at if q >= 0 else -1 for q in p.parents])
            reads += [(r, at + place, token, c) for place, token, c in p.reads]
            at = span.stop
    row, column, token, cand = (
        torch.tensor(col, dtype=torch.long) for col in zip(*reads, strict=True)
    )
    return PackedRows(ids, positions, parents, row, column, token, cand)


def block_mask(parents: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The additive (rows, 1, n, n) attention mask of packed rows: a token sees itself and
    its ancestors (padding only itself, so no row of the mask is empty). Built on
    ``parents``' device by following every token's parents at once, one step per level of
    the deepest tree."""
    rows, n = parents.shape
    dev = parents.device
    seen = torch.zeros((rows, n, n), dtype=torch.bool, device=dev)
    row = torch.arange(rows, device=dev)[:, None].expand(rows, n)
    query = torch.arange(n, device=dev)[None, :].expand(rows, n)
    at = query.clone()
    while (live := at >= 0).any():
        seen[row[live], query[live], at[live]] = True
        at = torch.where(live, parents.gather(1, at.clamp(min=0)), -1)
    mask = torch.zeros(seen.shape, dtype=dtype, device=dev)
    mask.masked_fill_(~seen, torch.finfo(dtype).min)
    return mask[:, None]


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
