"""Token log-probabilities of a prompt and its reply, a chunk of positions at a time.

The sequence is fed in chunks of at most ``chunk`` positions, each continuing the
key/value cache of those before it (the same arithmetic as one forward over the whole
sequence, bar rounding), so the logits held at once are ``chunk`` x vocabulary whatever
the sequence's length: one forward over 8,000 tokens of SmolLM2 would hold 1.6 GB of
them, twice over for their log-softmax. Chunks whose logits predict no token asked for
project the vocabulary at their last position only. The memory a request takes beyond
that is its key/value cache, bounded by the model's context."""

from __future__ import annotations

import torch

from faithprobe.subjects.hf.kv_cache_name import returned_cache

CHUNK_TOKENS = 256  # positions per forward: logits of 50 MB on SmolLM2's 49,152 tokens


def scored_tokens(
    subject, ids: list[int], first: int, top: int = 0, chunk: int = CHUNK_TOKENS
) -> tuple[list[float], list[list[tuple[str, float]]]]:
    """For each token of ``ids`` from position ``first`` (at least 1) on: its natural-log
    probability given the tokens before it, and the ``top`` most likely tokens at its
    position (text decoded alone, log-probability; most likely first; empty lists for
    ``top=0``). ``subject`` is an :class:`~faithprobe.subjects.hf.causal.HFCausal`."""
    values: list[float] = []
    alternatives: list[list[tuple[str, float]]] = []
    tokens = torch.tensor([ids], dtype=torch.long, device=subject.device)
    cache = None
    with torch.inference_mode():
        for start in range(0, len(ids) - 1, chunk):  # the last token is predicted, never fed
            end = min(start + chunk, len(ids) - 1)
            wanted = end >= first  # this chunk's logits predict tokens start+1 .. end
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
            skip = max(first - 1 - start, 0)
            logprobs = torch.log_softmax(result.logits[0, skip:].float(), dim=-1)
            targets = tokens[0, start + 1 + skip : end + 1]
            values += logprobs.gather(-1, targets[:, None])[:, 0].tolist()
            if top:
                best, indices = logprobs.topk(top, dim=-1)
                alternatives += [
                    [(subject.decode([i]), v) for i, v in zip(row_ids, row, strict=True)]
                    for row_ids, row in zip(indices.tolist(), best.tolist(), strict=True)
                ]
    if not top:
        alternatives = [[] for _ in values]
    return values, alternatives
