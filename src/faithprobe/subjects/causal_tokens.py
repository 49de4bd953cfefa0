"""How a causal LM's inputs become token ids, by one convention for every backend that
computes them itself (the transformers causal LM, :mod:`~faithprobe.subjects.hf.causal`, and
llama.cpp, :mod:`~faithprobe.subjects.gguf.llamacpp`), so the same request is the same
tokens whichever runs it: a prompt with its special tokens (an empty one as the start
token), a prompt too long for its room cut from the left with its special tokens kept, and
a candidate's own tokens with the separating space, as they follow the context. A scoring
request's rule (:class:`~faithprobe.requests.CandidateScoreRequest`) is applied here too: with
``first_token`` a candidate is its first token alone, and ``start``'s tokens come before the
context's (kept when the context is cut).

:class:`CausalTokens` is mixed into those subjects; it reads their ``tokenizer`` (called as a
Hugging Face tokenizer is, returning ``input_ids``), ``_frame`` (the special tokens around a
text, :func:`~faithprobe.subjects.bounds.special_frame`), ``_start_id``, ``max_length``
(None: no bound) and ``name``.
"""

from __future__ import annotations

from faithprobe.errors import UsageError, excerpt
from faithprobe.requests import MODEL_START, CandidateScoreRequest
from faithprobe.subjects.bounds import CHARS_PER_TOKEN, cut_for_tokens


class CausalTokens:
    """The tokenization convention of the in-process causal LMs (module docstring)."""

    tokenizer: object
    _frame: tuple[list[int], list[int]]
    _start_id: int | None
    max_length: int | None
    name: str

    def _text_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def prompt_ids(self, text: str) -> list[int]:
        """The token ids a plain prompt (or a scoring context) is run as."""
        ids = self.tokenizer(text)["input_ids"] if text else []
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

    def scoring_ids(
        self, request: CandidateScoreRequest
    ) -> tuple[tuple[list[int], list[list[int]]], bool]:
        """((The context's token ids, each candidate's), whether the context was cut to fit)
        for a scoring request, under its rule (an empty context after a start is the start
        alone)."""
        candidates = [self._candidate_ids(request, c) for c in request.candidates]
        start = self._start_ids(request)
        if start and not request.context:
            return (start, candidates), False
        room = self._context_room(request, max(len(ids) for ids in candidates), len(start))
        context, truncated = self.bounded_prompt_ids(request.context, room)
        if context[: len(start)] != start:
            context = start + context
        return (context, candidates), truncated

    def _start_ids(self, request: CandidateScoreRequest) -> list[int]:
        """The tokens of the request's ``start`` (none by default)."""
        if request.start != MODEL_START:
            return self._text_ids(request.start) if request.start else []
        if self._start_id is None:
            raise UsageError(f"model {self.name} has no start-of-text token (no BOS, no EOS)")
        return [self._start_id]

    def _candidate_ids(self, request: CandidateScoreRequest, candidate: str) -> list[int]:
        """The candidate's tokens (with the separating space) as they follow the context;
        its first token alone under the first-token rule."""
        text, start = request.filled(candidate)
        ids = self._text_ids(text[len(request.context) : start + len(candidate)])
        if not ids:
            raise UsageError(f"candidate {excerpt(candidate)} encodes to no tokens")
        return ids[:1] if request.first_token else ids

    def _context_room(
        self, request: CandidateScoreRequest, longest: int, fixed: int = 0
    ) -> int | None:
        """How many context tokens fit before a candidate of ``longest`` tokens (all but its
        last token are fed) after ``fixed`` tokens (the start's); None without a limit."""
        if self.max_length is None:
            return None
        room = self.max_length + 1 - longest - fixed
        if room < len(self._frame[0]) + len(self._frame[1]) + 1:
            raise UsageError(
                f"model {self.name} takes at most {self.max_length} tokens, too few for a "
                f"candidate of {longest} tokens after a context: request "
                f"{excerpt(request.context)} with candidates "
                f"{excerpt(', '.join(request.candidates))}"
            )
        return room
