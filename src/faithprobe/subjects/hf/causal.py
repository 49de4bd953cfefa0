"""Hugging Face causal LMs: candidate log-likelihoods after a shared context, and greedy
generation.

**Packed scoring** (:mod:`~faithprobe.subjects.hf.packed_scoring`). Each request is run as
one branch of a tree in a row: its context, then ``cand_1[:-1]``, ``cand_2[:-1]``, ... each
a branch off the context's last token, under an attention mask that lets a token see only
its ancestors, with position ids that count its depth; the context's last logits give every
first token. Requests whose contexts begin alike (sorted next to each other) share the
beginning's tokens, read once (on the natural-logic suite's NLI-XY items, 28% of the
tokens). So k candidates cost one forward over the context
and their fed tokens, with no padding between candidates and no copies of the context's
key/value cache; the per-candidate path it replaced padded about 60% of its candidate
tokens. Short pieces share a row (``PACKED_ROW_TOKENS``), each seeing only its own tokens,
and the vocabulary is projected only where a candidate token is read. Rows are
left-padded; where a request sits, and what it shares a beginning with, changes nothing but
rounding (batch-size invariance is tested). Packing moves rounding only: on the embedded
model it is closer to a float64 forward than one float32 forward per candidate is
(``benchmarks/packed_scoring.py``). A model that takes no position ids, has sliding-window
attention (a custom mask would override the window) or fails a probe (one request scored
both ways must agree) keeps the per-candidate path: the context run once, left-padded, its
key/value cache copied for each candidate, and the candidates' tokens right-padded.

A candidate's score is the summed natural-log probability of its tokens, tokenized on
their own with the separating space (``" Paris"``) and appended to the context's tokens;
under a request's first-token rule its first token's alone, and a start token or text goes
before the context (:class:`~faithprobe.subjects.causal_tokens.CausalTokens`): both paths
score the tokens they are given, so neither needs to know the rule.

Generation is greedy, by a small loop over the key/value cache rather than
``model.generate`` (:meth:`HFCausal._greedy_rows`): a prompt continues from the longest
beginning of it read before, in this batch or an earlier one, whose keys and values are
kept (:attr:`HFCausal.prefixes`, a :class:`~faithprobe.subjects.hf.kv_prefix_cache.PrefixCache`
bounded by ``prefix_cache_bytes``); the rest is prefilled in groups of similar length, and a
finished row's slot in the decoding batch is taken by the next prompt, prefilled beforehand
(:mod:`~faithprobe.subjects.hf.decode_batch`), so decoding steps stay full; padding
is masked and position ids are explicit as in scoring (so a request's text does not depend
on its batch, or on what was read before it, bar rounding). The loop stops each row at its own
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
for a chat request, the whole template and a reply begun for the model (``reply_start``,
whose tokens follow the template's generation prompt): there the user's message loses its
first tokens.
"""

from __future__ import annotations

import inspect
import time
from collections import deque
from collections.abc import Callable, Iterator
from functools import cached_property

import torch

from faithprobe.errors import UsageError, excerpt
from faithprobe.requests import (
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    PromptSaliencyRequest,
)
from faithprobe.subjects import continuation
from faithprobe.subjects.bounds import CHARS_PER_TOKEN, cut_for_tokens, special_frame
from faithprobe.subjects.causal_tokens import CausalTokens
from faithprobe.subjects.hf.base import HFSubject
from faithprobe.subjects.hf.decode_batch import DecodeBatch, ReadyRow, ready_rows, stacked_rows
from faithprobe.subjects.hf.kv_cache_name import cache_argument, returned_cache
from faithprobe.subjects.hf.kv_prefix_cache import PrefixCache, common_length
from faithprobe.subjects.hf.packed_scoring import (
    Layout,
    block_mask,
    candidate_starts,
    groups,
    layout,
    packed_batches,
    packed_rows,
    per_request,
    projected_at,
    shared_pieces,
)
from faithprobe.subjects.identity import HF_CAUSAL

# Packed scoring is used only if it scores this probe within this of the per-candidate path:
# far above float32 rounding (summed log-probs move by about 2e-4 at most on 12-token
# candidates) and far below what a candidate seeing another's tokens does to a real model.
PACK_TOLERANCE = 1e-2
# A packed row takes short requests until it holds this many tokens: 16 rows of 128 feed
# about 2,000 tokens a forward, where the embedded model's throughput peaks on a 2-core CPU
# (benchmarks/roofline.py); rows of 96 to 192 scored Social IQA equally fast, rows holding
# one request each 1.3x slower.
PACKED_ROW_TOKENS = 128
# Keys and values of prompts' beginnings kept for later batches: on the embedded model
# (46 KB a token) about 11,000 distinct tokens, the shared beginnings of some 70 SQuAD
# passages' prompts.
PREFIX_CACHE_BYTES = 512 * 2**20
_PROBE = ("A probe of packed scoring: the answer is", ("one of several words", "another of them"))


class HFCausal(CausalTokens, HFSubject):
    identity = HF_CAUSAL
    auto_class = "AutoModelForCausalLM"

    def __init__(
        self, model, tokenizer, *, prefix_cache_bytes: int = PREFIX_CACHE_BYTES, **kwargs
    ) -> None:
        """``prefix_cache_bytes``: how much memory the keys and values of prompts'
        beginnings kept between generation batches and calls may take (:attr:`prefixes`;
        0 keeps none, so every batch reads its prompts whole)."""
        super().__init__(model, tokenizer, **kwargs)
        self._prefixes = PrefixCache(prefix_cache_bytes)
        self._weights_version: int | None = None
        accepted = inspect.signature(model.forward).parameters
        self._takes_positions = "position_ids" in accepted
        self._takes_logits_to_keep = "logits_to_keep" in accepted
        self._cache_argument = cache_argument(model)
        pad = tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else (tokenizer.eos_token_id or 0)
        start = tokenizer.bos_token_id
        self._start_id = start if start is not None else tokenizer.eos_token_id
        self._eos_ids = _eos_ids(model, tokenizer)
        self._frame = special_frame(tokenizer)

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def _probe(self, rows: int, length: int) -> None:
        """A forward pass as prefill runs one: keys and values kept for every position, the
        vocabulary projected at the last."""
        ids = torch.zeros((rows, length), dtype=torch.long, device=self.device)
        positions = torch.arange(length, device=self.device).expand(rows, -1)
        self._forward(ids, torch.ones_like(ids), positions, last_only=True)

    def _free_memory(self) -> None:
        self._prefixes.clear()
        super()._free_memory()

    # -- tokenization ------------------------------------------------------------------

    def chat_ids(
        self,
        messages: list[dict[str, str]],
        reply_start: str = "",
        generation_prompt: bool = True,
    ) -> list[int]:
        """The token ids of ``messages`` in the tokenizer's chat template, ready for the
        assistant's reply (the template writes its own special tokens; without its
        ``generation_prompt``, as they are), then those of ``reply_start``, the reply begun
        for the model (tokenized on its own, so a template that rewrites an assistant
        message cannot change it)."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise UsageError(
                f"{self.name} has no chat template, so it cannot answer chat requests; "
                "use an instruction-tuned model or turn chat off"
            )
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=generation_prompt
        )
        ids = self.tokenizer(text, add_special_tokens=False).input_ids
        return ids + self._text_ids(reply_start)

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

    def _encode(self, request: CandidateScoreRequest) -> tuple[tuple, bool]:
        return self.scoring_ids(request)

    def _steps(self, kind: str):
        if kind == GenerationRequest.kind:
            return self._encode_generation, self._generation_cost, self._generate_batch
        if kind == PromptSaliencyRequest.kind:  # a TokenSaliency says itself if it was cut
            return lambda request: (request, False), lambda _request: (1, 1), self._saliency
        return super()._steps(kind)

    @cached_property
    def _saliency(self):
        """Answers prompt-saliency requests (:mod:`faithprobe.subjects.hf.attribution.causal`; Captum is
        imported on first use)."""
        from faithprobe.subjects.hf.attribution.causal import causal_saliency

        return causal_saliency(self.model, self.tokenizer, batch_size=self.batch_size)

    def _encode_generation(self, request: GenerationRequest) -> tuple[tuple, bool]:
        if request.max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {request.max_new_tokens}")
        if request.chat:  # a reply begun for the model is kept whole, the message is cut
            reply = self._text_ids(request.reply_start)
            room, max_new = self._generation_room(request, self._chat_frame_size + len(reply))
            ids, cut = self._bounded_chat_ids(request.prompt, _less(room, len(reply)))
            ids = ids + reply
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
        """The per-candidate path's cost (packed scoring plans its own rows:
        :meth:`_packed_answers`)."""
        ctx, cands = encoded
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
            kwargs[self._cache_argument] = cache
        return self.model(**kwargs)

    def _score_batch(self, batch: list[tuple[list[int], list[list[int]]]]) -> list[CandidateScores]:
        """The per-candidate path: packed scoring plans rows of its own and never comes
        here (:meth:`_answer_batches`)."""
        return self._score_shared(batch)

    @cached_property
    def _packs(self) -> bool:
        """Whether candidates are scored packed: the model takes position ids, has no
        sliding window (a custom mask would override it) and, checked once on a probe
        request, scores packed within ``PACK_TOLERANCE`` of the per-candidate path -- a
        model that refuses a 4D mask, or ignores it, or whose logits do not come out of its
        output embeddings, keeps the per-candidate path."""
        if not self._takes_positions or getattr(self.model.config, "sliding_window", None):
            return False
        try:
            probe = [self._encode(CandidateScoreRequest(*_PROBE))[0]]
        except UsageError:  # a model fed too few tokens (max_length) to take the probe
            return False
        with torch.inference_mode():
            try:
                packed = self._score_packed(probe)[0].logprobs
            except (TypeError, ValueError, RuntimeError):  # see the docstring
                return False
            shared = self._score_shared(probe)[0].logprobs
        return max(abs(a - b) for a, b in zip(packed, shared, strict=True)) < PACK_TOLERANCE

    def _score_packed(
        self, batch: list[tuple[list[int], list[list[int]]]]
    ) -> list[CandidateScores]:
        """:meth:`_packed_answers` of ``batch``, in its order."""
        out: list[CandidateScores] = [None] * len(batch)  # type: ignore[list-item]
        for done, answers in self._packed_answers(batch):
            for r, answer in zip(done, answers, strict=True):
                out[r] = answer
        return out

    def _packed_answers(
        self, encoded: list[tuple[list[int], list[list[int]]]]
    ) -> Iterator[tuple[list[int], list[CandidateScores]]]:
        """(Indices into ``encoded``, their answers) as each request's last group is scored:
        the requests' groups in pieces that read a shared beginning once
        (:func:`~faithprobe.subjects.hf.packed_scoring.shared_pieces`), the pieces placed in
        rows and batches by :func:`~faithprobe.subjects.hf.packed_scoring.packed_batches`
        (``batch_size`` rows and ``max_batch_tokens`` tokens at most), a forward per batch
        (:meth:`_score_rows`)."""
        found = groups(encoded, self.max_length)
        grouped = [group for _, group in found]
        made = [
            ([found[i][0] for i in piece], layout([grouped[i] for i in piece]))
            for piece in shared_pieces(grouped, PACKED_ROW_TOKENS)
        ]
        starts = candidate_starts(encoded)
        scores = torch.zeros(starts[-1], dtype=torch.float64)
        left = [0] * len(encoded)
        for r, _ in found:
            left[r] += 1
        for batch in packed_batches(
            [len(laid.ids) for _, laid in made],
            max_rows=self.batch_size,
            max_tokens=self.max_batch_tokens,
            row_tokens=PACKED_ROW_TOKENS,
        ):
            with torch.inference_mode():
                cand, logprobs = self._score_rows([[made[i][1] for i in row] for row in batch])
            scores.index_add_(0, cand, logprobs)
            done = []
            for r in (r for row in batch for i in row for r in made[i][0]):
                left[r] -= 1
                if not left[r]:
                    done.append(r)
            done.sort()
            yield (
                done,
                [per_request([encoded[r]], scores[starts[r] : starts[r + 1]])[0] for r in done],
            )

    def _score_rows(self, rows: list[list[Layout]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(Candidate index, log-prob) of every candidate token of the rows of laid-out
        pieces (:func:`~faithprobe.subjects.hf.packed_scoring.layout`), by
        one forward (left-padded, no key/value cache) under the tree mask, the vocabulary
        projected only where a candidate token is read."""
        dev = self.device
        packed = packed_rows(rows, self._pad_id)
        token = packed.token
        with projected_at(self.model, packed.row.to(dev), packed.column.to(dev)):
            logits = self.model(
                input_ids=packed.ids.to(dev),
                attention_mask=block_mask(packed.parents.to(dev), self.model.dtype),
                position_ids=packed.positions.to(dev),
                use_cache=False,
            ).logits
        if logits.shape[:2] != (1, len(token)):
            raise RuntimeError(
                f"{self.name}: logits of shape {tuple(logits.shape)} do not come out of the "
                "output embeddings, so they cannot be projected only where they are read"
            )
        logits = logits[0].float()  # on the last layer's device, when layers are spread
        at = logits.device
        picked = logits[torch.arange(len(token), device=at), token.to(at)] - logits.logsumexp(-1)
        return packed.cand, picked.double().cpu()

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
            cache = returned_cache(result)
            # an index on the CPU selects from a cache whose layers sit on several devices
            groups = torch.tensor([row_group[r] for r in longer])
            cache.batch_select_indices(groups)
            n_feed = max(len(row_tokens[r]) for r in longer) - 1
            feed = torch.full((len(longer), n_feed), self._pad_id, dtype=torch.long, device=dev)
            feed_mask = torch.zeros((len(longer), n_feed), dtype=torch.long, device=dev)
            for j, r in enumerate(longer):
                toks = row_tokens[r][:-1]
                feed[j, : len(toks)] = torch.tensor(toks)
                feed_mask[j, : len(toks)] = 1
            ctx_len = mask.sum(-1)[groups.to(dev)]
            feed_pos = ctx_len[:, None] + torch.arange(n_feed, device=dev)[None, :]
            full_mask = torch.cat([mask[groups.to(dev)], feed_mask], dim=1)
            logits = self._forward(feed, full_mask, feed_pos, cache).logits.float()
            logp = torch.log_softmax(logits, dim=-1)
            at = logp.device
            for j, r in enumerate(longer):
                rest = torch.tensor(row_tokens[r][1:], device=at)
                picked = logp[j, torch.arange(len(rest), device=at), rest]
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
        return continuation.finished(tokens, max_new, stop, self._eos_ids, self.decode)

    def _generate_batch(self, batch: list[tuple[list[int], int, tuple]]) -> list[Generation]:
        made = self._greedy(batch)
        return [self._cut(tokens, stop) for tokens, (_, _, stop) in zip(made, batch, strict=True)]

    def _answer_batches(self, kind: str, encoded: list, batches: list[list[int]]):
        """Packed scoring places all the requests in rows of its own (:meth:`_packed_answers`,
        ``batches`` unused). Generation, where rows can join a batch (:attr:`_merges_caches`),
        runs the prompts of all ``batches`` in their order as one queue
        (:meth:`_greedy_rows`), each answer given as soon as its row is done. Everything
        else runs batch by batch."""
        if kind == CandidateScoreRequest.kind and self._packs:
            yield from self._packed_answers(encoded)  # its own rows: requests share them
            return
        if kind != GenerationRequest.kind or not self._merges_caches:
            yield from super()._answer_batches(kind, encoded, batches)
            return
        queue = [j for batch in batches for j in batch]
        for g, tokens in self._greedy_rows([encoded[j] for j in queue]):
            yield [queue[g]], [self._cut(tokens, encoded[queue[g]][2])]

    def _greedy(
        self, batch: list[tuple[list[int], int, tuple]], deadline: float | None = None
    ) -> list[list[int]]:
        """:meth:`_greedy_rows` of ``batch``, in its order."""
        made: list[list[int]] = [[] for _ in batch]
        for g, tokens in self._greedy_rows(batch, deadline):
            made[g] = tokens
        return made

    @torch.inference_mode()
    def _greedy_rows(
        self, queue: list[tuple[list[int], int, tuple]], deadline: float | None = None
    ) -> Iterator[tuple[int, list[int]]]:
        """(Index, greedy continuation) of each (prompt ids, max new tokens, stop strings) of
        ``queue`` as soon as it is done: its tokens up to and including the EOS token that
        ended it, if one did. Once ``time.monotonic()`` passes ``deadline`` every row stops
        after the step under way (a prompt that joins after that, after its first token).

        Prompts are taken in ``queue`` order, at most ``batch_size`` at a time and rows x
        their longest prompt and new tokens within ``max_batch_tokens`` (:meth:`_next_batch`),
        and prefilled together (:meth:`_prefill`); then each step feeds every row of the
        :class:`~faithprobe.subjects.hf.decode_batch.DecodeBatch` its last token over the
        shared key/value cache. Where caches can be merged (:attr:`_merges_caches`), a
        finished row's slot is taken at the next step by a prompt prefilled beforehand (the
        next ones are prefilled, as many as a batch takes, when a slot is free and none is
        ready), so every step is as full as the queue allows; once nothing is left to join,
        the free slots are dropped. Otherwise the batch runs until its rows are done,
        dropping each as it finishes, and the next one starts.

        Rows never see each other: each attends to its own tokens only (padding is masked,
        positions count its own tokens), so a row's tokens are those it gets alone, up to
        floating-point rounding, which batch shapes change."""
        waiting = deque(range(len(queue)))
        ready: deque[ReadyRow] = deque()
        batch: DecodeBatch | None = None
        made: dict[int, list[int]] = {}
        late = False
        while waiting or ready or batch is not None:
            free = batch is None or bool(batch.free_slots)
            if free and waiting and not ready and (batch is None or self._merges_caches):
                joining = self._next_batch(queue, waiting)
                yield from ((g, []) for g in joining if queue[g][1] <= 0)
                joining = [g for g in joining if queue[g][1] > 0]
                if joining:
                    order, *prefilled = self._prefill([queue[g][0] for g in joining])
                    made.update((g, []) for g in joining)
                    if batch is None:
                        batch = DecodeBatch([joining[j] for j in order], *prefilled)
                    else:
                        ready.extend(ready_rows([joining[j] for j in order], *prefilled))
            if batch is None:
                if ready:
                    batch = DecodeBatch.stacked(self._taking(queue, ready))
                continue
            self._fill(queue, batch, ready)
            if batch.free_slots and not (ready or (waiting and self._merges_caches)):
                batch.compact()
            elif self._merges_caches:
                batch.crop()
            tokens = batch.logits.argmax(-1, keepdim=True)  # greedy; ties: lowest id
            late = late or (deadline is not None and time.monotonic() >= deadline)
            for slot, token in enumerate(tokens[:, 0].tolist()):
                g = batch.rows[slot]
                if g is None:
                    continue
                made[g].append(token)
                if late or self._finished(made[g], queue[g][1], queue[g][2]):
                    yield g, made.pop(g)
                    batch.release(slot)
            if not batch.live:
                batch = None
                continue
            batch.step(tokens, lambda *a: self._forward(*a, last_only=True))

    def _taking(self, queue: list[tuple[list[int], int, tuple]], ready: deque) -> list[ReadyRow]:
        """The ready rows (taken off ``ready``) that start a new batch, by the rule of
        :meth:`_next_batch`."""
        taken = self._next_batch(queue, deque(r.index for r in ready))
        return [ready.popleft() for _ in taken]

    def _fill(
        self, queue: list[tuple[list[int], int, tuple]], batch: DecodeBatch, ready: deque
    ) -> None:
        """Put ready rows into ``batch`` 's free slots while the batch, rows x its longest
        prompt and new tokens, stays within ``max_batch_tokens``."""
        for slot in batch.free_slots:
            if not ready:
                return
            live = batch.live
            if live and not self._fit(queue, [*live, ready[0].index], len(batch.rows)):
                return
            batch.place(slot, ready.popleft())

    def _next_batch(self, queue: list[tuple[list[int], int, tuple]], waiting: deque) -> list[int]:
        """The next prompts of ``waiting`` (taken off it) for a batch: at least one, up to
        ``batch_size``, while they :meth:`_fit`."""
        taken = [waiting.popleft()] if waiting else []
        while (
            waiting
            and len(taken) < self.batch_size
            and self._fit(queue, [*taken, waiting[0]], len(taken) + 1)
        ):
            taken.append(waiting.popleft())
        return taken

    def _fit(
        self, queue: list[tuple[list[int], int, tuple]], indices: list[int], rows: int
    ) -> bool:
        """Whether ``rows`` rows of the longest prompt and new tokens of ``indices`` are
        within ``max_batch_tokens``."""
        longest = max(self._generation_cost(queue[g])[0] for g in indices)
        return longest * rows <= self.max_batch_tokens

    def _prefill(self, prompts: list[list[int]]):
        """Run ``prompts`` (token ids) through the model: (the order of the prompts in the
        rows that follow, each row's logits after its prompt, the attention mask, the
        key/value cache). When caches can be merged (:attr:`_merges_caches`), no position
        is read twice if it can be helped: the beginnings that several prompts share
        (:func:`shared_beginnings`) are run first, and every sequence run continues from
        the longest beginning of it held in :attr:`prefixes` (the beginnings of this and
        earlier batches' prompts), reading only the rest. Sequences are run in waves (a
        shared beginning before the sequences that continue it), each wave in groups of
        similar length (:func:`prefill_groups`) padded only to their own longest, and the
        prompts' rows are merged into one batch whose padding is masked out. Otherwise the
        prompts run as one left-padded batch.

        Continuing a sequence over stored keys and values is the same arithmetic as running
        it whole, bar rounding; prefill costs about the same per token at any batch shape on
        a CPU, so what this saves is the tokens it does not run (padding, and beginnings
        read once for many prompts: in a faithfulness run, the questions about one passage
        and the deletion variants that keep its first sentences)."""
        if not self._merges_caches:
            return (list(range(len(prompts))), *self._run_padded(prompts))
        prefixes = self.prefixes
        todo = [(ids, None) for ids in shared_beginnings(prompts, prefixes.match)]
        todo += list(zip(prompts, range(len(prompts)), strict=True))
        order, parts = [], []
        while todo:
            ready = [t for t in todo if not any(_continues(t[0], o[0]) for o in todo)]
            todo = [t for t in todo if any(_continues(t[0], o[0]) for o in todo)]
            # (ids, prompt index or None, how many of its positions are stored)
            rows = [(ids, index, prefixes.match(ids[:-1])) for ids, index in ready]
            for group in prefill_groups([len(ids) - start for ids, _, start in rows]):
                members = [rows[i] for i in group]
                logits, mask, cache = self._continued(members)
                for j, (ids, index, start) in enumerate(members):
                    if index is not None and not prefixes.max_bytes:
                        continue  # nothing in this batch continues a prompt: none to keep
                    new = len(ids) - start
                    prefixes.insert(
                        ids,
                        start,
                        [(la.keys[j, :, -new:], la.values[j, :, -new:]) for la in cache.layers],
                    )
                kept = [j for j, (_, index, _) in enumerate(members) if index is not None]
                if len(kept) < len(members) and kept:
                    cache.batch_select_indices(torch.tensor(kept))  # CPU: any layer's device
                    logits, mask = logits[kept], mask[kept]
                if kept:
                    parts.append((logits, mask, cache))
                    order += [members[j][1] for j in kept]
        prefixes.trim()
        return (order, *(parts[0] if len(parts) == 1 else _merged(parts)))

    @property
    def prefixes(self) -> PrefixCache:
        """The keys and values of prompts' beginnings kept across batches and calls, at most
        ``prefix_cache_bytes`` between batches; emptied when the weights have changed in
        place since it was filled (an optimizer step, ``load_state_dict``)."""
        version = sum(p._version for p in self.model.parameters())
        if version != self._weights_version:
            self._prefixes.clear()
            self._weights_version = version
        return self._prefixes

    def _continued(self, rows: list[tuple[list[int], int | None, int]]):
        """(Each row's last logits, attention mask, key/value cache) of the sequences
        ``rows`` (ids, _, n) run as one left-padded batch, each after its first ``n``
        positions, whose keys and values come from :attr:`prefixes` (left-padded to the
        longest such beginning: a row is [padding, stored beginning, padding, the rest])."""
        from faithprobe.subjects.hf.kv_growing_cache import ROOM, aligned_cache, growing_cache

        ids, mask, positions = self._left_padded([ids[n:] for ids, _, n in rows])
        starts = [n for _, _, n in rows]
        width = max(starts)
        if not width:
            result = self._forward(ids, mask, positions, growing_cache(), last_only=True)
            return result.logits[:, -1], mask, returned_cache(result)
        stored = [self._prefixes.layers(ids, n) if n else None for ids, _, n in rows]
        shapes = next(layers for layers in stored if layers)
        nothing = [(k[:, :, :0], v[:, :, :0]) for k, v in shapes]  # a row with no beginning
        room = ids.shape[1] + ROOM  # the rest is written in place, then decoding steps
        cache = aligned_cache([layers or nothing for layers in stored], width, room)
        past = torch.tensor([[0] * (width - n) + [1] * n for n in starts], device=self.device)
        mask = torch.cat([past.to(mask.dtype), mask], dim=1)
        positions = positions + torch.tensor(starts, device=self.device)[:, None]
        result = self._forward(ids, mask, positions, cache, last_only=True)
        return result.logits[:, -1], mask, returned_cache(result)

    def _run_padded(self, prompts: list[list[int]]):
        """(Each row's last logits, attention mask, key/value cache) of ``prompts`` run as
        one left-padded batch."""
        ids, mask, positions = self._left_padded(prompts)
        result = self._forward(ids, mask, positions, last_only=True)
        return result.logits[:, -1], mask, returned_cache(result)

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
        return continuation.cut(tokens, stop, self._eos_ids, self.decode)


MIN_SAVED = 32  # the fewest prompt tokens a beginning run on its own must save


def shared_beginnings(
    prompts: list[list[int]], known: Callable[[list[int]], int] = lambda ids: 0
) -> list[list[int]]:
    """The beginnings at which prompts that begin alike part (the branching points of their
    prefix tree: in sorted order, the common beginning of each two neighbours, leaving each
    prompt a token of its own) that are worth running once before the prompts that continue
    them: those that save at least :data:`MIN_SAVED` tokens, (prompts continuing it - 1) x
    the tokens it adds to what is read anyway -- the longest such beginning it continues, or
    the ``known`` (stored) part of it. A beginning that saves less costs more as a pass of
    its own than it saves."""
    ordered = sorted(prompts)
    found: dict[tuple[int, ...], None] = {}
    for a, b in zip(ordered, ordered[1:], strict=False):
        shared = min(common_length(a, b), len(a) - 1, len(b) - 1)
        if shared:
            found.setdefault(tuple(a[:shared]))
    kept: list[list[int]] = []
    for ids in sorted(map(list, found), key=len):
        base = max([known(ids), *(len(k) for k in kept if _continues(ids, k))])
        users = sum(_continues(p, ids) for p in prompts)
        if (users - 1) * (len(ids) - base) >= MIN_SAVED:
            kept.append(ids)
    return kept


def _continues(ids: list[int], other: list[int]) -> bool:
    """Whether ``ids`` continue ``other`` (which is shorter and begins them)."""
    return len(other) < len(ids) and ids[: len(other)] == other


PAD_SLACK = 1 / 8  # the most left padding a prefill group holds, as a share of its tokens,
PAD_FREE = 32  # plus this many tokens: about what one more pass costs on a CPU


def prefill_groups(lengths: list[int]) -> list[list[int]]:
    """The indices of prompts of ``lengths`` in groups to prefill together, longest first:
    a prompt joins the group before it unless padding it to that group's longest prompt
    would make padding more than :data:`PAD_SLACK` of the group's tokens plus
    :data:`PAD_FREE`. One padded batch
    of prompts of very different lengths computes mostly padding (and attention over it);
    groups of similar lengths keep nearly all of a batch's speed-up over one prompt at a
    time."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    groups: list[list[int]] = []
    tokens = 0
    for i in order:
        padded = lengths[groups[-1][0]] * (len(groups[-1]) + 1) if groups else 0
        if groups and padded <= (1 + PAD_SLACK) * (tokens + lengths[i]) + PAD_FREE:
            groups[-1].append(i)
            tokens += lengths[i]
        else:
            groups.append([i])
            tokens = lengths[i]
    return groups


def _merged(parts: list[tuple]) -> tuple:
    """One left-padded batch from the (last logits, attention mask, key/value cache) of
    prefill groups: masks, keys and values padded on the left to the widest group (the
    padding is masked out) and stacked, in a new cache that grows in place."""
    from transformers.cache_utils import DynamicCache, DynamicLayer

    from faithprobe.subjects.hf.kv_growing_cache import GrowingLayer

    for _, _, c in parts:
        if type(c) is not DynamicCache or any(
            type(la) not in (DynamicLayer, GrowingLayer) for la in c.layers
        ):
            raise TypeError(f"cannot merge prefill groups' caches of type {type(c).__name__}")
    return stacked_rows(
        [(logits, mask, [(la.keys, la.values) for la in c.layers]) for logits, mask, c in parts]
    )


def _less(room: int | None, taken: int) -> int | None:
    """What is left of ``room`` (None: no bound) once ``taken`` tokens are placed."""
    return None if room is None else room - taken


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
