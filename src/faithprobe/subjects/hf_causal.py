"""Hugging Face causal LMs: candidate log-likelihoods after a shared context.

For each request the context is run once; its key/value cache is then shared by all the
candidates, so k candidates cost one context forward plus one short forward over the
candidates' tokens, not k full forwards. Contexts in a batch are left-padded with explicit
position ids, so padding changes nothing but rounding (batch-size invariance is tested).

A candidate's score is the summed natural-log probability of its tokens, tokenized on
their own with the separating space (``" Paris"``) and appended to the context's tokens.
"""

from __future__ import annotations

import inspect

import torch

from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.subjects.hf_base import HFSubject


class HFCausalLM(HFSubject):
    kind = "hf-causal"
    scoring_version = "causal-v1"
    auto_class = "AutoModelForCausalLM"

    def __init__(self, model, tokenizer, **kwargs) -> None:
        super().__init__(model, tokenizer, **kwargs)
        accepted = inspect.signature(model.forward).parameters
        self._takes_positions = "position_ids" in accepted
        self._takes_logits_to_keep = "logits_to_keep" in accepted
        pad = tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else (tokenizer.eos_token_id or 0)
        start = tokenizer.bos_token_id
        self._start_id = start if start is not None else tokenizer.eos_token_id

    # -- tokenization ------------------------------------------------------------------

    def _encode(self, request: CandidateScoreRequest) -> tuple[list[int], list[list[int]]]:
        context = self.tokenizer(request.context).input_ids if request.context else []
        if not context:  # an empty prompt still needs one token to predict from
            context = [self._start_id]
        candidates = []
        for c in request.candidates:
            text, start = request.filled(c)
            ids = self.tokenizer(
                text[len(request.context) : start + len(c)], add_special_tokens=False
            ).input_ids
            if not ids:
                raise ValueError(f"candidate {c!r} encodes to no tokens")
            candidates.append(ids)
        return context, candidates

    # -- scoring -----------------------------------------------------------------------

    def _cost(self, encoded) -> tuple[int, int]:
        ctx, cands = encoded
        return len(ctx) + max(len(c) for c in cands), len(cands)

    def _forward(self, ids, mask, positions, cache=None, last_only=False):
        kwargs = {"input_ids": ids, "attention_mask": mask, "use_cache": True}
        if self._takes_positions:
            kwargs["position_ids"] = positions
        if last_only and self._takes_logits_to_keep:
            kwargs["logits_to_keep"] = 1  # the vocabulary projection only where it is read
        if cache is not None:
            kwargs["past_key_values"] = cache
        return self.model(**kwargs)

    def _score_batch(self, batch: list[tuple[list[int], list[list[int]]]]) -> list[CandidateScores]:
        dev = self.device
        n_ctx = max(len(ctx) for ctx, _ in batch)
        ids = torch.full((len(batch), n_ctx), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), n_ctx), dtype=torch.long)
        for g, (ctx, _) in enumerate(batch):
            ids[g, n_ctx - len(ctx) :] = torch.tensor(ctx)
            mask[g, n_ctx - len(ctx) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        ids, mask, positions = ids.to(dev), mask.to(dev), positions.to(dev)
        result = self._forward(ids, mask, positions, last_only=True)
        first = torch.log_softmax(result.logits[:, -1].float(), dim=-1)

        # One row per (request, candidate); first tokens are read off the context's logits.
        row_group, row_tokens = [], []
        for g, (_, cands) in enumerate(batch):
            for tokens in cands:
                row_group.append(g)
                row_tokens.append(tokens)
        scores = [float(first[g, toks[0]]) for g, toks in zip(row_group, row_tokens, strict=True)]

        longer = [r for r, toks in enumerate(row_tokens) if len(toks) > 1]
        if longer:
            cache = result.past_key_values
            groups = torch.tensor([row_group[r] for r in longer], device=dev)
            cache.batch_select_indices(groups)
            n_feed = max(len(row_tokens[r]) for r in longer) - 1
            feed = torch.full((len(longer), n_feed), self._pad_id, dtype=torch.long, device=dev)
            feed_mask = torch.zeros((len(longer), n_feed), dtype=torch.long, device=dev)
            for j, r in enumerate(longer):
                toks = row_tokens[r][:-1]
                feed[j, : len(toks)] = torch.tensor(toks)
                feed_mask[j, : len(toks)] = 1
            ctx_len = mask.sum(-1)[groups]
            feed_pos = ctx_len[:, None] + torch.arange(n_feed, device=dev)[None, :]
            full_mask = torch.cat([mask[groups], feed_mask], dim=1)
            logits = self._forward(feed, full_mask, feed_pos, cache).logits.float()
            logp = torch.log_softmax(logits, dim=-1)
            for j, r in enumerate(longer):
                rest = torch.tensor(row_tokens[r][1:], device=dev)
                picked = logp[j, torch.arange(len(rest), device=dev), rest]
                scores[r] += float(picked.sum())

        out, r = [], 0
        for _, cands in batch:
            k = len(cands)
            out.append(CandidateScores(tuple(scores[r : r + k]), tuple(len(t) for t in cands)))
            r += k
        return out
