"""Hugging Face masked LMs (BERT, RoBERTa, ...): candidate log-likelihoods given both sides.

Each candidate is put in the blank (``request.filled``) and the filled text is tokenized
with offsets and the model's special tokens. The candidate's tokens are those whose
character offsets overlap the candidate's span, which works for WordPiece (``Paris``,
``##borough``) and byte-level BPE (RoBERTa's ``ĠParis``, whose offsets include the space)
alike. Those k tokens are replaced by the mask token; the rest of the text, the context
*and* the suffix, stays visible.

A multi-token candidate is scored left to right by iterative unmasking (chain rule)::

    log P(t1 | all k masked) + log P(t2 | t1 revealed, t2..tk masked) + ...

one forward per step, always revealing the candidate's own tokens. This is a proper
factorisation of the candidate's probability given both sides, unlike summing
independent per-mask log-probs (which scores each token as if the others were unknown
and double-counts what they share). As in every multi-mask scheme, the number of masks
reveals the candidate's token length to the model.

Under a request's first-token rule the blank is one mask token whatever the candidate's
length, and a candidate's score is its first token's log-probability there (so every
candidate of a request is read off the same input, and no mask count tells its length). A masked
LM always reads its own start token (``[CLS]``, ``<s>``), so ``start`` naming it changes
nothing; a start text is refused.

All steps' inputs are known in advance, so every (candidate, step) input is an ordinary
row of a batch. Identical masked inputs are computed once: the single-token candidates of
one request share one row (the same text with the same single mask), as do the first
steps of candidates of equal token length. Rows are right-padded with an attention mask,
so positions never shift and padding changes nothing but rounding (batch-size invariance
is tested). The score is the summed natural-log probability of the candidate's tokens.

**Bounded inputs.** When a filled text is longer than ``max_length`` tokens, every
candidate's text is cut to a window around the blank, sized for the longest candidate so
that all candidates see the same context: the candidate's tokens, the special tokens around
the text, and of the room left the tokens nearest the blank on each side -- half each
(the odd token to the left), a side too short for its half giving the rest to the other.
A candidate too long to fit with the special tokens is a
:class:`~faithprobe.errors.UsageError` naming the request.
"""

from __future__ import annotations

import torch

from faithprobe.errors import ModelError, UsageError, excerpt
from faithprobe.requests import MODEL_START, CandidateScoreRequest, CandidateScores
from faithprobe.subjects.bounds import CHARS_PER_TOKEN, cut_for_tokens, special_frame
from faithprobe.subjects.hf.base import HFSubject
from faithprobe.subjects.identity import HF_MASKED

# A read is (row index, token position, token id): the log-probability of that token at
# that position of that masked input.
_Read = tuple[int, int, int]
# An encoded request: its distinct masked inputs, and per candidate its reads in order.
_Encoded = tuple[list[tuple[int, ...]], list[list[_Read]]]
# A filled text's token ids and the positions of the candidate's tokens among them.
_Tokens = tuple[list[int], list[int]]


def _filled(request: CandidateScoreRequest, candidate: str) -> tuple[str, int, int]:
    """The text with ``candidate`` in the blank and the candidate's character span in it."""
    text, start = request.filled(candidate)
    return text, start, start + len(candidate)


def _first_only(ids: list[int], span: list[int]) -> _Tokens:
    """A filled text's tokens with the candidate's cut to its first (the first-token rule:
    one mask in the blank)."""
    return ids[: span[0] + 1] + ids[span[-1] + 1 :], span[:1]


class HFMasked(HFSubject):
    identity = HF_MASKED
    auto_class = "AutoModelForMaskedLM"

    def __init__(self, model, tokenizer, **kwargs) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelError(
                f"{type(tokenizer).__name__} is not a fast tokenizer; HFMasked needs "
                "character offsets (return_offsets_mapping) to locate the candidate's tokens"
            )
        if tokenizer.mask_token_id is None:
            raise ModelError(
                f"{type(tokenizer).__name__} has no mask token; HFMasked needs a "
                "masked-LM tokenizer (BERT's [MASK], RoBERTa's <mask>)"
            )
        super().__init__(model, tokenizer, **kwargs)
        self._mask_id = tokenizer.mask_token_id
        pad = tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else 0
        self._frame = special_frame(tokenizer)

    # -- tokenization ------------------------------------------------------------------

    def _encode(self, request: CandidateScoreRequest) -> tuple[_Encoded, bool]:
        if request.start not in ("", MODEL_START):
            raise UsageError(
                f"model {self.name} is a masked LM: it reads its own start token and takes "
                f"no start text ({excerpt(request.start)})"
            )
        tokens, truncated = self._candidate_tokens(request)
        if request.first_token:
            tokens = [_first_only(ids, span) for ids, span in tokens]
        rows: dict[tuple[int, ...], int] = {}
        reads: list[list[_Read]] = []
        for ids, span in tokens:
            masked = list(ids)
            for p in span:
                masked[p] = self._mask_id
            steps = []
            for p in span:  # reveal left to right: step j sees t1..t(j-1), masks the rest
                row = rows.setdefault(tuple(masked), len(rows))
                steps.append((row, p, ids[p]))
                masked[p] = ids[p]
            reads.append(steps)
        return (list(rows), reads), truncated

    def _candidate_tokens(self, request: CandidateScoreRequest) -> tuple[list[_Tokens], bool]:
        """Per candidate the tokens of the filled text, and whether they were cut to windows
        around the blank (all or none are: see the module docstring)."""
        filled = [_filled(request, c) for c in request.candidates]
        limit = self.max_length
        if limit is None or all(len(text) <= 2 * limit * CHARS_PER_TOKEN for text, _, _ in filled):
            whole = [self._tokens(*f, special_tokens=True) for f in filled]
            if limit is None or all(len(ids) <= limit for ids, _ in whole):
                return whole, False
        around = [self._tokens(*self._near_blank(*f), special_tokens=False) for f in filled]
        lead, trail = self._frame
        room = limit - len(lead) - len(trail) - max(len(span) for _, span in around)
        if room < 0:
            raise UsageError(
                f"model {self.name} takes at most {limit} tokens, too few for the longest "
                f"candidate of request {excerpt(request.context)} with candidates "
                f"{excerpt(', '.join(request.candidates))}"
            )
        windows = [self._window(ids, span, room) for ids, span in around]
        # a side cut to characters holds more tokens than the window keeps, so checking the
        # windows is enough
        n_frame = len(lead) + len(trail)
        pairs = zip(windows, around, strict=True)
        return windows, any(len(w) < len(ids) + n_frame for (w, _), (ids, _) in pairs)

    def _tokens(self, text: str, start: int, end: int, *, special_tokens: bool) -> _Tokens:
        """The token ids of ``text`` and the positions of the tokens overlapping the
        candidate at characters ``start:end``."""
        enc = self.tokenizer(text, add_special_tokens=special_tokens, return_offsets_mapping=True)
        # Special tokens have (0, 0) offsets and never overlap a span.
        span = [i for i, (a, b) in enumerate(enc["offset_mapping"]) if a < end and b > start]
        if not span:
            raise UsageError(
                f"candidate {excerpt(text[start:end])} covers no tokens of {excerpt(text)}"
            )
        return list(enc["input_ids"]), span

    def _near_blank(self, text: str, start: int, end: int) -> tuple[str, int, int]:
        """The filled text without what lies too far from the candidate to be kept
        (:func:`~faithprobe.subjects.hf.base.cut_for_tokens` on each side), and the
        candidate's character span in it."""
        left = cut_for_tokens(self.tokenizer, text[:start], self.max_length, keep_end=True)
        right = cut_for_tokens(self.tokenizer, text[end:], self.max_length, keep_end=False)
        return left + text[start:end] + right, len(left), len(left) + end - start

    def _window(self, ids: list[int], span: list[int], room: int) -> _Tokens:
        """The candidate's tokens with up to ``room`` tokens nearest them (half each side,
        what one side lacks going to the other), framed by the special tokens."""
        n_left, n_right = span[0], len(ids) - span[-1] - 1
        left = min(n_left, max(room - room // 2, room - n_right))
        right = min(n_right, room - left)
        first = span[0] - left
        lead, trail = self._frame
        window = lead + ids[first : span[-1] + 1 + right] + trail
        return window, [len(lead) + p - first for p in span]

    # -- scoring -----------------------------------------------------------------------

    def _cost(self, encoded: _Encoded) -> tuple[int, int]:
        rows, _ = encoded
        return max(len(row) for row in rows), len(rows)

    def _score_batch(self, batch: list[_Encoded]) -> list[CandidateScores]:
        # Distinct masked inputs across the batch, and each request's reads remapped to them.
        index: dict[tuple[int, ...], int] = {}
        remapped: list[list[list[_Read]]] = []
        for rows, reads in batch:
            local = [index.setdefault(row, len(index)) for row in rows]
            remapped.append([[(local[r], p, t) for r, p, t in steps] for steps in reads])
        rows = list(index)
        wanted: list[list[tuple[int, int]]] = [[] for _ in rows]  # (position, token) per row
        for cands in remapped:
            for steps in cands:
                for r, p, t in steps:
                    wanted[r].append((p, t))

        values: dict[_Read, float] = {}
        for chunk in self._chunks(rows):
            values.update(self._forward_chunk(chunk, rows, wanted))

        out = []
        for cands in remapped:
            logprobs = tuple(sum(values[read] for read in steps) for steps in cands)
            out.append(CandidateScores(logprobs, tuple(len(steps) for steps in cands)))
        return out

    def _chunks(self, rows: list[tuple[int, ...]]) -> list[list[int]]:
        """Row indices in forwards of at most ``max_batch_tokens`` padded tokens (a request
        with many long candidates can exceed the budget on its own)."""
        order = sorted(range(len(rows)), key=lambda i: (-len(rows[i]), i))
        chunks: list[list[int]] = []
        current: list[int] = []
        for i in order:
            longest = len(rows[current[0]]) if current else len(rows[i])
            if current and longest * (len(current) + 1) > self.max_batch_tokens:
                chunks.append(current)
                current = []
            current.append(i)
        if current:
            chunks.append(current)
        return chunks

    def _forward_chunk(
        self,
        chunk: list[int],
        rows: list[tuple[int, ...]],
        wanted: list[list[tuple[int, int]]],
    ) -> dict[_Read, float]:
        dev = self.device
        n = max(len(rows[r]) for r in chunk)
        ids = torch.full((len(chunk), n), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(chunk), n), dtype=torch.long)
        for j, r in enumerate(chunk):
            ids[j, : len(rows[r])] = torch.tensor(rows[r])
            mask[j, : len(rows[r])] = 1
        logits = self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev)).logits

        keys, at_row, at_pos, tokens = [], [], [], []
        for j, r in enumerate(chunk):
            for p, t in dict.fromkeys(wanted[r]):
                keys.append((r, p, t))
                at_row.append(j)
                at_pos.append(p)
                tokens.append(t)
        at = logits.device  # the last layer's, when layers are spread over devices
        picked = logits[torch.tensor(at_row, device=at), torch.tensor(at_pos, device=at)]
        logp = torch.log_softmax(picked.float(), dim=-1)
        chosen = logp[torch.arange(len(keys), device=at), torch.tensor(tokens, device=at)]
        return dict(zip(keys, chosen.tolist(), strict=True))
