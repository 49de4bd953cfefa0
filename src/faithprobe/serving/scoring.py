"""Token log-probabilities of a prompt and its reply, a chunk of positions at a time.

The sequence is fed in chunks of at most ``chunk`` positions, each continuing the
key/value cache of those before it (the same arithmetic as one forward over the whole
sequence, bar rounding), so the logits held at once are ``chunk`` x vocabulary whatever
the sequence's length: one forward over 8,000 tokens of SmolLM2 would hold 1.6 GB of
them, twice over for their log-softmax. Chunks whose logits predict no token asked for
project the vocabulary at their last position only. The memory a request takes beyond
that is its key/value cache, bounded by the model's context."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from faithprobe.subjects.hf.kv_cache_name import returned_cache

CHUNK_TOKENS = 256  # positions per forward: logits of 50 MB on SmolLM2's 49,152 tokens


Alternatives = list[tuple[str, float]]  # (text decoded alone, log-probability), likeliest first


@dataclass(frozen=True)
class Following:
    """The model's most likely token after a whole sequence (its greedy next token), with
    its log-probability and the most likely tokens at that position."""

    token: int
    logprob: float
    alternatives: Alternatives


def scored_tokens(
    subject,
    ids: list[int],
    first: int,
    top: int = 0,
    chunk: int = CHUNK_TOKENS,
    *,
    following: bool = False,
) -> tuple[list[float], list[Alternatives], Following | None]:
    """For each token of ``ids`` from position ``first`` (at least 1) on: its natural-log
    probability given the tokens before it, and the ``top`` most likely tokens at its
    position (text decoded alone, log-probability; most likely first; empty lists for
    ``top=0``). With ``following``, the last token is fed too, and the distribution after
    it gives the greedy next token (:class:`Following`; ties go to the lowest id, as greedy
    decoding breaks them): one pass scores a prompt and makes a one-token reply.
    ``subject`` is an :class:`~faithprobe.subjects.hf.causal.HFCausal`."""
    values: list[float] = []
    alternatives: list[Alternatives] = []
    after: Following | None = None
    tokens = torch.tensor([ids], dtype=torch.long, device=subject.device)
    fed = len(ids) if following else len(ids) - 1  # a last token is predicted, not fed
    cache = None
    with torch.inference_mode():
        for start in range(0, fed, chunk):
            end = min(start + chunk, fed)
            # this chunk's logits predict tokens start+1 .. end (and the next one, last)
            wanted = end >= first or end == len(ids)
            result = subject._forward(
                tokens[:, start:end],
                torch.ones((1, end), dtype=torch.long, device=subject.device),
                torch.arange(start, end, device=subject.device)[None, :],
                cache,
                last_only=not wanted,
            )
            cache = returned_cache(result)
            if not wanted:
                continue
            skip = min(max(first - 1 - start, 0), end - start - 1)
            logits = result.logits[0, skip:].float()
            targets = tokens[0, start + 1 + skip : end + 1]
            logprobs = torch.log_softmax(logits, dim=-1)
            if end == len(ids):  # the last row predicts the token after the sequence
                best = int(logits[-1].argmax())
                after = Following(
                    best, float(logprobs[-1, best]), _most_likely(subject, logprobs[-1:], top)[0]
                )
                logprobs = logprobs[:-1]
            if start + 1 + skip >= first:
                values += logprobs.gather(-1, targets[:, None])[:, 0].tolist()
                alternatives += _most_likely(subject, logprobs, top)
    return values, alternatives, after


def _most_likely(subject, logprobs: torch.Tensor, top: int) -> list[Alternatives]:
    """The ``top`` most likely tokens of each row of ``logprobs`` (empty lists for 0)."""
    if not top:
        return [[] for _ in range(logprobs.shape[0])]
    best, indices = logprobs.topk(top, dim=-1)
    return [
        [(subject.decode([i]), v) for i, v in zip(row_ids, row, strict=True)]
        for row_ids, row in zip(indices.tolist(), best.tolist(), strict=True)
    ]
