"""Hugging Face causal LMs: candidate log-likelihoods after a shared context, and greedy
generation.

**Packed scoring.** Each request is run as one row, ``context + cand_1[:-1] + cand_2[:-1] +
...``, under a block attention mask (a candidate sees the context and its own earlier
tokens, never another candidate's) with position ids that continue the context's for each
candidate; the context's last logits give every first token. So k candidates cost one
forward over the context and their fed tokens, with no padding between candidates and no
copies of the context's key/value cache; the per-candidate path it replaced padded about 60%
of its candidate tokens. Rows in a batch are left-padded, which changes nothing but rounding
(batch-size invariance is tested). Packing moves rounding only: on the embedded model it is
closer to a float64 forward than one float32 forward per candidate is
(``benchmarks/packed_scoring.py``). A model that takes no position ids, has sliding-window
attention (a custom mask would override the window) or fails a probe (one request scored
both ways must agree) keeps the per-candidate path: the context run once, left-padded, its
key/value cache copied for each candidate, and the candidates' tokens right-padded.

A candidate's score is the summed natural-log probability of its tokens, tokenized on
their own with the separating space (``" Paris"``) and appended to the context's tokens.

Generation is greedy, by a small loop over the key/value cache rather than
``model.generate``: prompts that begin alike run their beginning once, the rest is
prefilled in groups of similar length, and a row leaves the batch once it is done
(:meth:`HFCausalLM._greedy`); padding is masked and position ids are explicit as in scoring
(so a request's text does not depend on its batch). The loop stops each row at its own
``max_new_tokens`` and stop strings, and ignores whatever sampling settings a checkpoint's
``generation_config`` carries. The answer's text is the continuation decoded (special tokens
skipped), cut before the first stop string that begins after the answer has begun (a
model that opens with a newline is not cut off before it says anything; leading white space
is kept) and stripped of trailing whitespace; its
``n_tokens`` counts the generated tokens needed to produce the text before the cut (an EOS
token or the tokens of the stop string itself are not counted).

**Bounded inputs.** The model is fed at most ``max_length`` positions (the last candidate
token and the last generated token are predicted, never fed; a packed row may hold more
tokens, each candidate's at the positions after the context, but at most ``max_length``
candidate tokens: more are split over several rows). Scoring keeps the context tokens
nearest the blank (the lm-evaluation-harness rule): the context is cut from the left so that
it and the longest candidate fit, the same context for every candidate; a candidate too long
to fit after even one context token is a :class:`~faithprobe.errors.UsageError` naming the
request. Generation caps ``max_new_tokens`` to what fits beside the prompt's special tokens
(or chat template) and one prompt token, then cuts the prompt from the left to fit beside
them. A cut keeps the special tokens the tokenizer puts around a text (Llama's ``<s>``) and,
for a chat request, the whole template: there the user's message loses its first tokens.
"""

from __future__ import annotations

import inspect
import time
from functools import cached_property

import torch

from faithprobe.errors import UsageError, excerpt
from faithprobe.requests import (
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    PromptSaliencyRequest,
    stop_index,
)
from faithprobe.subjects.bounds import CHARS_PER_TOKEN, cut_for_tokens, special_frame
from faithprobe.subjects.hf_base import HFSubject
from faithprobe.subjects.identity import HF_CAUSAL
from faithprobe.subjects.packed_scoring import (
    block_mask,
    candidate_starts,
    fed_tokens,
    pack_groups,
    packed_rows,
    per_request,
    picks,
)

# Packed scoring is used only if it scores this probe within this of the per-candidate path:
# far above float32 rounding (summed log-probs move by about 2e-4 at most on 12-token
# candidates) and far below what a candidate seeing another's tokens does to a real model.
PACK_TOLERANCE = 1e-2
_PROBE = ("A probe of packed scoring: the answer is", ("one of several words", "another of them"))


class HFCausalLM(HFSubject):
    identity = HF_CAUSAL
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
        self._eos_ids = _eos_ids(model, tokenizer)
        self._frame = special_frame(tokenizer)

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    # -- tokenization ------------------------------------------------------------------

    def prompt_ids(self, text: str) -> list[int]:
        """The token ids a plain prompt (or a scoring context) is run as."""
        ids = self.tokenizer(text).input_ids if text else []
        return ids or [self._start_id]  # an empty prompt still needs one token to predict from

    def bounded_prompt_ids(self, text: str, room: int | None) -> tuple[list[int], bool]:
        """:meth:`prompt_ids` of ``text`` if they are at most ``room`` tokens (None: no
        bound), else the special tokens around them with only the last text tokens, ``room``
        in all; and whether tokens were dropped. ``room`` leaves at least one text token."""
        if room is None or len(text) <= room * CHARS_PER_TOKEN:  # cheap to tokenise whole
            ids = self.prompt_ids(text)
            if room is None or len(ids) <= room:
                return ids, False
        lead, trail = self._frame
        keep = room - len(lead) - len(trail)
        tokens = self._text_ids(cut_for_tokens(self.tokenizer, text, keep, keep_end=True))
        return lead + tokens[-keep:] + trail, len(tokens) > keep

    def chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The token ids of ``messages`` in the tokenizer's chat template, ready for the
        assistant's reply (the template writes its own special tokens)."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise UsageError(
                f"{self.name} has no chat template, so it cannot answer chat requests; "
                "use an instruction-tuned model or turn chat off"
            )
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        return self.tokenizer(text, add_special_tokens=False).input_ids

    def _bounded_chat_ids(self, prompt: str, room: int | None) -> tuple[list[int], bool]:
        """:meth:`chat_ids` of ``prompt`` as the user's message if they are at most ``room``
        tokens, else of the message's last tokens (decoded back to text) -- as many as fit
        in the template -- and whether the message was cut."""
        if room is None or len(prompt) <= room * CHARS_PER_TOKEN:
            ids = self.chat_ids(_user(prompt))
            if room is None or len(ids) <= room:
                return ids, False
        tokens = self._text_ids(cut_for_tokens(self.tokenizer, prompt, room, keep_end=True))
        keep = room - self._chat_frame_size
        while keep > 0:  # re-encoding at the template's seams may add a token or two
            message = self.tokenizer.decode(tokens[-keep:], clean_up_tokenization_spaces=False)
            ids = self.chat_ids(_user(message))
            if len(ids) <= room:
                return ids, True
            keep -= len(ids) - room
        return self.chat_ids(_user("")), True

    @cached_property
    def _chat_frame_size(self) -> int:
        """Tokens of the chat template around an empty user message."""
        return len(self.chat_ids(_user("")))

    def _text_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False).input_ids

    def _candidate_ids(self, request: CandidateScoreRequest, candidate: str) -> list[int]:
        """The candidate's tokens (with the separating space) as they follow the context."""
        text, start = request.filled(candidate)
        ids = self._text_ids(text[len(request.context) : start + len(candidate)])
        if not ids:
            raise UsageError(f"candidate {excerpt(candidate)} encodes to no tokens")
        return ids

    def _encode(self, request: CandidateScoreRequest) -> tuple[tuple, bool]:
        candidates = [self._candidate_ids(request, c) for c in request.candidates]
        room = self._context_room(request, max(len(ids) for ids in candidates))
        context, truncated = self.bounded_prompt_ids(request.context, room)
        return (context, candidates), truncated

    def _context_room(self, request: CandidateScoreRequest, longest: int) -> int | None:
        """How many context tokens fit before a candidate of ``longest`` tokens (all but its
        last token are fed); None without a limit."""
        if self.max_length is None:
            return None
        room = self.max_length + 1 - longest
        if room < len(self._frame[0]) + len(self._frame[1]) + 1:
            raise UsageError(
                f"model {self.name} takes at most {self.max_length} tokens, too few for a "
                f"candidate of {longest} tokens after a context: request "
                f"{excerpt(request.context)} with candidates "
                f"{excerpt(', '.join(request.candidates))}"
            )
        return room

    def _steps(self, kind: str):
        if kind == GenerationRequest.kind:
            return self._encode_generation, self._generation_cost, self._generate_batch
        if kind == PromptSaliencyRequest.kind:  # a TokenSaliency says itself if it was cut
            return lambda request: (request, False), lambda _request: (1, 1), self._saliency
        return super()._steps(kind)

    @cached_property
    def _saliency(self):
        """Answers prompt-saliency requests (:mod:`faithprobe.attribution.causal`; Captum is
        imported on first use)."""
        from faithprobe.attribution.causal import causal_saliency

        return causal_saliency(self.model, self.tokenizer, batch_size=self.batch_size)

    def _encode_generation(self, request: GenerationRequest) -> tuple[tuple, bool]:
        if request.max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {request.max_new_tokens}")
        if request.chat:
            room, max_new = self._generation_room(request, self._chat_frame_size)
            ids, cut = self._bounded_chat_ids(request.prompt, room)
        else:
            room, max_new = self._generation_room(request, sum(map(len, self._frame)))
            ids, cut = self.bounded_prompt_ids(request.prompt, room)
        return (ids, max_new, request.stop), cut or max_new < request.max_new_tokens

    def _generation_room(self, request: GenerationRequest, fixed: int) -> tuple[int | None, int]:
        """(How many prompt tokens fit, the capped ``max_new_tokens``): the new tokens leave
        room for the ``fixed`` tokens around the prompt (special tokens or chat template)
        and one prompt token, and the prompt gets the rest (all but the last new token are
        fed); (None, ``max_new_tokens``) without a limit."""
        if self.max_length is None:
            return None, request.max_new_tokens
        if fixed >= self.max_length:
            raise UsageError(
                f"model {self.name} takes at most {self.max_length} tokens, but the tokens "
                f"around a prompt alone are {fixed}: cannot answer {excerpt(request.prompt)}"
            )
        max_new = min(request.max_new_tokens, self.max_length - fixed)
        return self.max_length + 1 - max(max_new, 1), max_new

    # -- scoring -----------------------------------------------------------------------

    def _cost(self, encoded) -> tuple[int, int]:
        ctx, cands = encoded
        if self._packs:
            groups = pack_groups(cands, self.max_length)
            return len(ctx) + max(fed_tokens(cands, group) for group in groups), len(groups)
        return len(ctx) + max(len(c) for c in cands), len(cands)

    def _left_padded(self, contexts: list[list[int]]):
        """Token ids, attention mask and position ids of left-padded contexts."""
        n_ctx = max(len(ctx) for ctx in contexts)
        ids = torch.full((len(contexts), n_ctx), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(contexts), n_ctx), dtype=torch.long)
        for g, ctx in enumerate(contexts):
            ids[g, n_ctx - len(ctx) :] = torch.tensor(ctx)
            mask[g, n_ctx - len(ctx) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        return ids.to(self.device), mask.to(self.device), positions.to(self.device)

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
        if self._packs:
            return self._score_packed(batch)
        return self._score_shared(batch)

    @cached_property
    def _packs(self) -> bool:
        """Whether candidates are scored packed: the model takes position ids, has no
        sliding window (a custom mask would override it) and, checked once on a probe
        request, scores packed within ``PACK_TOLERANCE`` of the per-candidate path -- a
        model that refuses a 4D mask, or ignores it, keeps the per-candidate path."""
        if not self._takes_positions or getattr(self.model.config, "sliding_window", None):
            return False
        probe = [self._encode(CandidateScoreRequest(*_PROBE))[0]]
        with torch.inference_mode():
            try:
                packed = self._score_packed(probe)[0].logprobs
            except (TypeError, ValueError, RuntimeError):  # the model refuses a 4D mask
                return False
            shared = self._score_shared(probe)[0].logprobs
        return max(abs(a - b) for a, b in zip(packed, shared, strict=True)) < PACK_TOLERANCE

    def _score_packed(
        self, batch: list[tuple[list[int], list[list[int]]]]
    ) -> list[CandidateScores]:
        """One forward over rows ``context + cand_1[:-1] + cand_2[:-1] + ...`` (left-padded,
        no key/value cache): each candidate sees the context and its own earlier tokens
        (block mask) at the positions it would have right after the context."""
        starts = candidate_starts(batch)
        rows = [  # (context, [(candidate's index in the batch, its tokens)])
            (ctx, [(start + j, cands[j]) for j in group])
            for (ctx, cands), start in zip(batch, starts, strict=False)
            for group in pack_groups(cands, self.max_length)
        ]
        ids, positions, segments = packed_rows(rows, self._pad_id)
        row, back, token, cand = picks(rows)
        n_keep = -int(back.min())
        kwargs = {
            "input_ids": ids.to(self.device),
            "attention_mask": block_mask(segments.to(self.device), self.model.dtype),
            "position_ids": positions.to(self.device),
            "use_cache": False,
        }
        if self._takes_logits_to_keep:
            kwargs["logits_to_keep"] = n_keep  # the vocabulary projection only where it is read
        logits = self.model(**kwargs).logits[:, -n_keep:].float()
        at = (row.to(self.device), (back + n_keep).to(self.device))
        picked = logits[(*at, token.to(self.device))] - logits.logsumexp(-1)[at]
        scores = torch.zeros(starts[-1], dtype=torch.float64, device=self.device)
        return per_request(batch, scores.index_add_(0, cand.to(self.device), picked.double()))

    def _score_shared(
        self, batch: list[tuple[list[int], list[list[int]]]]
    ) -> list[CandidateScores]:
        """The context once (left-padded), then its key/value cache copied for each
        candidate and the candidates' tokens right-padded to the longest."""
        dev = self.device
        ids, mask, positions = self._left_padded([ctx for ctx, _ in batch])
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

        return per_request(batch, scores)

    # -- generation --------------------------------------------------------------------

    def _generation_cost(self, encoded) -> tuple[int, int]:
        prompt, max_new, _ = encoded
        return len(prompt) + max_new, 1

    def decode(self, tokens: list[int]) -> str:
        """The text of ``tokens`` as generations are decoded (special tokens skipped)."""
        return self.tokenizer.decode(
            tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False
        )

    def _finished(self, tokens: list[int], max_new: int, stop: tuple[str, ...]) -> bool:
        if len(tokens) >= max_new or (tokens and tokens[-1] in self._eos_ids):
            return True
        return stop_index(self.decode(tokens), stop) is not None

    def _generate_batch(self, batch: list[tuple[list[int], int, tuple]]) -> list[Generation]:
        made = self._greedy(batch)
        return [self._cut(tokens, stop) for tokens, (_, _, stop) in zip(made, batch, strict=True)]

    def _greedy(
        self, batch: list[tuple[list[int], int, tuple]], deadline: float | None = None
    ) -> list[list[int]]:
        """The greedy continuation of each (prompt ids, max new tokens, stop strings), up to
        and including the EOS token that ended it, if one did. Once ``time.monotonic()``
        passes ``deadline`` every row stops after the step under way.

        The prompts are run by :meth:`_prefill`; then each step feeds every unfinished row
        its last token over the shared key/value cache, and a row leaves the batch (with its
        cache rows) as soon as it is finished, so a step costs what its live rows cost and
        the batch runs until its last row stops. Rows never see each other: each attends to
        its own tokens only (left padding is masked, positions count its own tokens), so a
        row's tokens are those it gets alone, up to floating-point rounding, which batch
        shapes change."""
        made: list[list[int]] = [[] for _ in batch]
        live = [g for g, (_, max_new, _) in enumerate(batch) if max_new > 0]
        if not live:
            return made
        order, logits, mask, cache = self._prefill([batch[g][0] for g in live])
        live = [live[j] for j in order]
        positions = mask.sum(-1, keepdim=True)  # each row's next token follows its own tokens
        while True:
            tokens = logits.argmax(-1, keepdim=True)  # greedy; ties: lowest id
            going = []
            for j, token in enumerate(tokens[:, 0].tolist()):
                g = live[j]
                made[g].append(token)
                if not self._finished(made[g], batch[g][1], batch[g][2]):
                    going.append(j)
            if not going or (deadline is not None and time.monotonic() >= deadline):
                return made
            if len(going) < len(live):
                live = [live[j] for j in going]
                rows = torch.tensor(going, device=self.device)
                tokens, mask, positions = tokens[rows], mask[rows], positions[rows]
                if cache is not None:
                    cache.batch_select_indices(rows)
            mask = torch.cat([mask, mask.new_ones((len(live), 1))], dim=1)
            result = self._forward(tokens, mask, positions, cache, last_only=True)
            cache, logits = result.past_key_values, result.logits[:, -1]
            positions = positions + 1

    def _prefill(self, prompts: list[list[int]]):
        """Run ``prompts`` (token ids) through the model: (the order of the prompts in the
        rows that follow, each row's logits after its prompt, the attention mask, the
        key/value cache). When caches can be merged (:attr:`_merges_caches`), prompts
        that begin alike (:func:`shared_prefixes`) run their common beginning once, as
        one row whose cache each of them then continues from, and the rest of every
        prompt runs in groups of similar length (:func:`prefill_groups`), each padded
        only to its own longest; the parts are merged into one batch whose padding is
        masked out. Otherwise the prompts run as one left-padded batch.

        Computing a prompt in parts, over a cache, is the same arithmetic as computing it
        at once, bar rounding; prefill costs about the same per token at any batch shape
        on a CPU, so what it saves is the tokens it does not run (padding, and beginnings
        run once for many prompts: in a faithfulness run, the questions about one
        passage and the deletion variants that keep its first sentences)."""
        if not self._merges_caches:
            return (list(range(len(prompts))), *self._run_padded(prompts))
        order, parts = [], []
        for shared, rows in shared_prefixes(prompts):
            prefix = self._run_padded([prompts[rows[0]][:shared]])[2] if shared else None
            for group in prefill_groups([len(prompts[r]) - shared for r in rows]):
                members = [rows[i] for i in group]
                rests = [prompts[r][shared:] for r in members]
                parts.append(self._run_padded(rests, prefix, shared))
                order += members
        return (order, *(parts[0] if len(parts) == 1 else _merged(parts)))

    def _run_padded(self, prompts: list[list[int]], prefix=None, shared: int = 0):
        """(Each row's last logits, attention mask, key/value cache) of ``prompts`` run as
        one left-padded batch, each after the ``shared`` tokens whose one-row cache is
        ``prefix`` (if any): their padding then sits between that beginning and them."""
        ids, mask, positions = self._left_padded(prompts)
        if prefix is not None:
            prefix = _repeated(prefix, len(prompts))
            mask = torch.cat([mask.new_ones((len(prompts), shared)), mask], dim=1)
            positions = positions + shared
        result = self._forward(ids, mask, positions, prefix, last_only=True)
        return result.logits[:, -1], mask, result.past_key_values

    @cached_property
    def _merges_caches(self) -> bool:
        """Whether the model keeps a ``DynamicCache`` of plain ``DynamicLayer`` s (keys and
        values of every position, ``[batch, heads, positions, head dim]``), which
        :func:`_merged` can pad and stack: a transformers model that takes the default
        cache, whose config makes no other kind of layer (sliding windows, linear attention
        or recurrent states are run as one padded batch instead)."""
        from transformers import PreTrainedModel
        from transformers.cache_utils import DynamicCache, DynamicLayer

        if not isinstance(self.model, PreTrainedModel):
            return False
        if not self.model._supports_default_dynamic_cache():
            return False
        layers = DynamicCache(config=self.model.config).layers
        return all(type(layer) is DynamicLayer for layer in layers)

    def greedy(
        self, ids: list[int], max_new_tokens: int, deadline: float | None = None
    ) -> tuple[list[int], bool]:
        """The greedy continuation of the token ids ``ids`` as :meth:`answer` generates it,
        but uncut by stop strings: its tokens (without the EOS token) and whether an EOS
        token ended it. Past ``deadline`` (a ``time.monotonic()`` value) it stops early,
        after at least one token."""
        with torch.inference_mode():
            tokens = self._greedy([(ids, max_new_tokens, ())], deadline)[0]
        if tokens and tokens[-1] in self._eos_ids:
            return tokens[:-1], True
        return tokens, False

    def token_logprobs(self, ids: list[int]) -> list[float | None]:
        """The natural-log probability of each token given the tokens before it, from one
        forward pass (None for the first token, which has nothing to be predicted from)."""
        if not ids:
            return []
        tokens = torch.tensor([ids], dtype=torch.long, device=self.device)
        mask = torch.ones_like(tokens)
        positions = torch.arange(len(ids), device=self.device)[None, :]
        with torch.inference_mode():
            logits = self._forward(tokens, mask, positions).logits[0, :-1].float()
            picked = torch.log_softmax(logits, dim=-1).gather(-1, tokens[0, 1:, None])[:, 0]
        return [None, *picked.tolist()]

    def _cut(self, tokens: list[int], stop: tuple[str, ...]) -> Generation:
        if tokens and tokens[-1] in self._eos_ids:
            tokens = tokens[:-1]
        text = self.decode(tokens)
        cut = stop_index(text, stop)
        kept = text if cut is None else text[:cut]
        n_tokens = next(
            (k for k in range(len(tokens)) if self.decode(tokens[:k]).startswith(kept)),
            len(tokens),
        )
        answer = kept.rstrip()
        return Generation(answer, n_tokens if answer else 0)


MIN_SHARED = 32  # the fewest tokens a shared beginning must have to be run once for all


def shared_prefixes(prompts: list[list[int]]) -> list[tuple[int, list[int]]]:
    """(Tokens shared, indices) of groups of ``prompts`` whose shared beginning is run
    once, then (0, the indices of the rest). In sorted order prompts that begin alike are
    adjacent; the groups are the runs of that order that save the most tokens in all (a
    run of n prompts sharing s >= :data:`MIN_SHARED` tokens saves (n - 1) * s), found by
    dynamic programming over where runs end. Every prompt keeps a token of its own."""
    order = sorted(range(len(prompts)), key=lambda i: prompts[i])
    best = [(0, 0)]  # per prefix of ``order``: (most tokens saved, where its last run starts)
    for end in range(1, len(order) + 1):
        choice, shared = (best[end - 1][0], end - 1), len(prompts[order[end - 1]]) - 1
        for start in range(end - 2, -1, -1):
            a, b = prompts[order[start]], prompts[order[start + 1]]
            shared = min(shared, _common_length(a, b), len(a) - 1)
            if shared < MIN_SHARED:
                break
            choice = max(choice, (best[start][0] + (end - start - 1) * shared, start))
        best.append(choice)
    runs, end = [], len(order)
    while end:
        start = best[end][1]
        runs.append(order[start:end])
        end = start
    runs.reverse()
    alone = [rows[0] for rows in runs if len(rows) == 1]
    groups = [(_shared_length([prompts[i] for i in rows]), rows) for rows in runs if len(rows) > 1]
    return groups + ([(0, alone)] if alone else [])


def _shared_length(prompts: list[list[int]]) -> int:
    """The tokens sorted ``prompts`` all begin with, leaving each at least one of its own."""
    first, last = prompts[0], prompts[-1]
    return min(_common_length(first, last), *(len(p) - 1 for p in prompts))


def _common_length(a: list[int], b: list[int]) -> int:
    return next(
        (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def _repeated(cache, n: int):
    """A new ``DynamicCache`` holding one-row ``cache`` ``n`` times."""
    from transformers.cache_utils import DynamicCache

    out = DynamicCache()
    for k, layer in enumerate(cache.layers):
        out.update(layer.keys.expand(n, -1, -1, -1), layer.values.expand(n, -1, -1, -1), k)
    return out


PAD_SLACK = 1 / 8  # the most left padding a prefill group holds, as a share of its tokens


def prefill_groups(lengths: list[int]) -> list[list[int]]:
    """The indices of prompts of ``lengths`` in groups to prefill together, longest first:
    a prompt joins the group before it unless padding it to that group's longest prompt
    would make padding more than :data:`PAD_SLACK` of the group's tokens. One padded batch
    of prompts of very different lengths computes mostly padding (and attention over it);
    groups of similar lengths keep nearly all of a batch's speed-up over one prompt at a
    time."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    groups: list[list[int]] = []
    tokens = 0
    for i in order:
        if groups and lengths[groups[-1][0]] * (len(groups[-1]) + 1) <= (1 + PAD_SLACK) * (
            tokens + lengths[i]
        ):
            groups[-1].append(i)
            tokens += lengths[i]
        else:
            groups.append([i])
            tokens = lengths[i]
    return groups


def _merged(parts: list[tuple]) -> tuple:
    """One left-padded batch from the (last logits, attention mask, key/value cache) of
    prefill groups: masks, keys and values padded on the left to the widest group (the
    padding is masked out) and stacked, in the first group's cache."""
    from transformers.cache_utils import DynamicCache, DynamicLayer

    for _, _, c in parts:
        if type(c) is not DynamicCache or any(type(la) is not DynamicLayer for la in c.layers):
            raise TypeError(f"cannot merge prefill groups' caches of type {type(c).__name__}")
    width = max(mask.shape[1] for _, mask, _ in parts)

    def stacked(tensors, dim):
        pad = [0, 0] * (tensors[0].dim() - 1 - dim)
        return torch.cat(
            [torch.nn.functional.pad(t, [*pad, width - t.shape[dim], 0]) for t in tensors]
        )

    logits = torch.cat([logits for logits, _, _ in parts])
    mask = stacked([mask for _, mask, _ in parts], 1)
    cache = parts[0][2]
    for k, layer in enumerate(cache.layers):
        layer.keys = stacked([c.layers[k].keys for _, _, c in parts], 2)
        layer.values = stacked([c.layers[k].values for _, _, c in parts], 2)
    return logits, mask, cache


def _user(message: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": message}]


def _eos_ids(model, tokenizer) -> frozenset[int]:
    """End-of-sequence ids: the tokenizer's and those of the model's (generation) config."""
    found = [tokenizer.eos_token_id]
    for config in (getattr(model, "generation_config", None), model.config):
        found.append(getattr(config, "eos_token_id", None))
    ids = set()
    for value in found:
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(v for v in value if isinstance(v, int))
    return frozenset(ids)
