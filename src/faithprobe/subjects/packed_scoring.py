"""Packed candidate scoring: the rows, attention masks and read-out positions that let one
forward score all of a request's candidates after its context.

A request's row is ``context + cand_1[:-1] + cand_2[:-1] + ...``: a candidate sees the
context and its own earlier tokens, never another candidate's (:func:`block_mask`), at
positions that continue the context's (:func:`packed_rows`); the context's last logits give
every first token (:func:`picks`). :func:`pack_groups` splits a request's candidates over
several rows when they would feed more than the model takes. The model runs in
:meth:`faithprobe.subjects.hf_causal.HFCausalLM._score_packed`.
"""

from __future__ import annotations

import torch

from faithprobe.requests import CandidateScores


def pack_groups(cands: list[list[int]], max_length: int | None) -> list[list[int]]:
    """The candidates' indices in packed rows: in order, each row feeding at most
    ``max_length`` candidate tokens (all in one row without a limit), so a row is at most
    twice what the model takes and a context is recomputed at most once per its own length
    in candidate tokens."""
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


def fed_tokens(cands: list[list[int]], group) -> int:
    """How many tokens the candidates ``group`` feed in a packed row: all but each one's last."""
    return sum(len(cands[j]) - 1 for j in group)


def candidate_starts(batch: list[tuple[list[int], list[list[int]]]]) -> list[int]:
    """Where each request's candidates start among the batch's candidates, and their total."""
    starts = [0]
    for _, cands in batch:
        starts.append(starts[-1] + len(cands))
    return starts


def per_request(batch, scores) -> list[CandidateScores]:
    """The batch's candidate scores (in batch order) as one answer per request."""
    scores = [float(s) for s in scores]
    starts = candidate_starts(batch)
    return [
        CandidateScores(tuple(scores[start:end]), tuple(len(t) for t in cands))
        for (_, cands), start, end in zip(batch, starts, starts[1:], strict=False)
    ]


def packed_rows(rows, pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Token ids, position ids and segments of packed rows (context, [(candidate, tokens)]),
    left-padded: segment 0 is the context, ``k`` the row's ``k``-th candidate, -1 padding;
    a candidate's positions continue the context's."""
    seqs = []
    for ctx, cands in rows:
        ids, positions, segments = list(ctx), list(range(len(ctx))), [0] * len(ctx)
        for k, (_, tokens) in enumerate(cands, start=1):
            ids += tokens[:-1]
            positions += range(len(ctx), len(ctx) + len(tokens) - 1)
            segments += [k] * (len(tokens) - 1)
        seqs.append((ids, positions, segments))
    n = max(len(ids) for ids, _, _ in seqs)
    out = [torch.full((len(rows), n), fill, dtype=torch.long) for fill in (pad_id, 0, -1)]
    for r, seq in enumerate(seqs):
        for tensor, values in zip(out, seq, strict=True):
            tensor[r, n - len(values) :] = torch.tensor(values)
    return out[0], out[1], out[2]


def block_mask(segments: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The additive (rows, 1, n, n) attention mask of packed rows: a token sees the earlier
    tokens of the context and of its own segment (padding sees earlier padding only, so no
    row of the mask is empty)."""
    n = segments.shape[1]
    earlier = torch.ones(n, n, dtype=torch.bool, device=segments.device).tril()
    keys, queries = segments[:, None, :], segments[:, :, None]
    seen = earlier & ((keys == 0) | (keys == queries))
    mask = torch.zeros(seen.shape, dtype=dtype, device=seen.device)
    mask.masked_fill_(~seen, torch.finfo(dtype).min)
    return mask[:, None]


def picks(rows) -> tuple[torch.Tensor, ...]:
    """For each candidate token of packed rows: the row, the position whose logits predict
    it counted from the row's end (-1 is the last), the token and the candidate's index. The
    context's last position predicts every first token; a fed token predicts the next."""
    picks = []
    for r, (_, cands) in enumerate(rows):
        context_end = -1 - sum(len(tokens) - 1 for _, tokens in cands)
        fed = context_end + 1  # where the candidate's fed tokens start
        for c, tokens in cands:
            picks.append((r, context_end, tokens[0], c))
            picks += [(r, fed + t, token, c) for t, token in enumerate(tokens[1:])]
            fed += len(tokens) - 1
    return tuple(torch.tensor(column) for column in zip(*picks, strict=True))
