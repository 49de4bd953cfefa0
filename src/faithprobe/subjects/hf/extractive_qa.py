"""Hugging Face extractive QA models (``AutoModelForQuestionAnswering``: an encoder with a
start and an end logit per token, e.g. BERT or RoBERTa fine-tuned on SQuAD 1.1 / 2.0).

It answers :class:`~faithprobe.requests.SpanAnswerRequest` with a
:class:`~faithprobe.requests.SpanAnswer`.

**Windows.** (question, context) is encoded as a tokenizer text pair (``[CLS] question
[SEP] context [SEP]`` for BERT, token type ids whenever the model has segment embeddings)
and read through overlapping windows (:mod:`faithprobe.subjects.hf.qa_windows`): only the
context is cut, a context longer than ``max_length`` tokens (default 384, capped by the
model) is split into windows that share ``doc_stride`` tokens (default 128), as the Hugging
Face ``run_qa`` recipe does, and a question longer than half of ``max_length`` keeps only
its last tokens, its answer then ``truncated``. Character offsets come from the tokenizer's
offset mapping, so a fast (Rust) tokenizer is required. However long the context, the model
never runs on more than ``max_batch_tokens`` padded tokens at once: the windows of a batch
are scored in chunks.

**Best span.** In every window, every span (start <= end, both tokens in the context,
at most ``max_answer_tokens`` tokens, default 30) is scored by start logit + end logit --
the full start x end search of the transformers question-answering pipeline, which finds
whatever the top-k search of ``run_qa`` finds and never misses a valid span. The best span
over all windows is mapped to character offsets (surrounding whitespace trimmed, for
tokenizers whose offsets include the space before a word) and ``text`` is
``context[start:end]``.

**Null answer (SQuAD 2.0).** The null score of a window is the start + end logit of its
first token (``[CLS]``); the request's ``null_score`` is the minimum over its windows (the
``run_qa`` convention). The prediction is null (``text=""``, ``start == end == -1``) when
``null_score - score > null_threshold`` (default 0.0; part of the fingerprint, with the
window settings). ``score`` and ``null_score`` are reported either way, so a model never
trained with a null answer (SQuAD 1.1) still works: give it a high ``null_threshold`` and
compare ``score`` with ``null_score`` yourself. A context with no tokens gets
``score = -inf`` and the null answer.

**Saliency.** It also answers :class:`~faithprobe.requests.SaliencyRequest` (kind
``saliency``) with a :class:`~faithprobe.requests.TokenSaliency` from
:mod:`faithprobe.subjects.hf.attribution` (imported on first use: Captum is needed only then), one
attributor per (method, n_steps), sharing ``max_length``. The request's method and
``n_steps`` are in its cache key, ``max_length`` in the fingerprint, and the attribution
code's version in ``request_versions["saliency"]``, so changing any of them computes
saliency afresh. Inputs are attributed one at a time; the subject's ``batch_size`` only
sets how many interpolated or occluded copies run together.

**Yes/no and unknown (answer-kind head).** A model folder holding an answer-kind head
(:mod:`faithprobe.subjects.hf.answer_kind_head`, as ``faithprobe train qa --answer-kind``
saves it) also answers :class:`~faithprobe.requests.AnswerKindRequest` (kind
``answer-kind``): the head's log-probabilities of span, yes, no and unknown, read off the
``[CLS]`` state of one window: the one whose *unknown* log-probability is lowest (the
window most sure it holds the answer, as the null score is the minimum over windows), the
first on a tie. A model without the head does not accept these requests (suites then ask
it for spans only). The head's files count in the fingerprint (they are files of the
folder; an in-memory head's weights are mixed in).

Batching: the windows of all requests in a batch are flattened, right-padded under an
attention mask and scored in one forward, then split back per request, so the batch size
changes nothing but rounding (tested).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from faithprobe.errors import ModelError
from faithprobe.requests import (
    ANSWER_KINDS,
    AnswerKindRequest,
    CandidateScores,
    SaliencyRequest,
    SpanAnswer,
    SpanAnswerRequest,
    TokenSaliency,
)
from faithprobe.subjects.hf.answer_kind_head import AnswerKindHead, cls_states
from faithprobe.subjects.hf.batching import length_sorted_batches
from faithprobe.subjects.hf.encoder import HFEncoderClassifier, pad_rows
from faithprobe.subjects.hf.qa_windows import (
    DEFAULT_DOC_STRIDE,
    DEFAULT_MAX_LENGTH,
    Encoded,
    Window,
    encode_windows,
)
from faithprobe.subjects.identity import HF_QA

if TYPE_CHECKING:
    from faithprobe.subjects.hf.attribution.answering import SaliencyAnswerer

DEFAULT_MAX_ANSWER_TOKENS = 30


def _trimmed(context: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) without surrounding whitespace; unchanged if the span is all space."""
    text = context[start:end]
    stripped = text.strip()
    if not stripped:
        return start, end
    start += len(text) - len(text.lstrip())
    return start, start + len(stripped)


class HFQA(HFEncoderClassifier):
    identity = HF_QA
    auto_class = "AutoModelForQuestionAnswering"

    def __init__(
        self,
        model,
        tokenizer,
        *,
        max_length: int = DEFAULT_MAX_LENGTH,
        doc_stride: int = DEFAULT_DOC_STRIDE,
        max_answer_tokens: int = DEFAULT_MAX_ANSWER_TOKENS,
        null_threshold: float = 0.0,
        answer_kind_head: AnswerKindHead | None = None,
        **kwargs,
    ) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelError(
                f"model {kwargs.get('name')}: extractive QA needs a fast (Rust) tokenizer for "
                f"character offsets, but {type(tokenizer).__name__} is a slow one; install "
                "`tokenizers` or save the model with its tokenizer.json"
            )
        super().__init__(model, tokenizer, max_length=max_length, **kwargs)
        if doc_stride < 0 or max_answer_tokens < 1:
            raise ValueError(
                f"doc_stride must be >= 0 and max_answer_tokens >= 1, got {doc_stride} and "
                f"{max_answer_tokens}"
            )
        if doc_stride >= self.max_length:
            raise ValueError(
                f"doc_stride ({doc_stride}) must be smaller than max_length ({self.max_length})"
            )
        self.doc_stride = doc_stride
        self.max_answer_tokens = max_answer_tokens
        self.null_threshold = float(null_threshold)
        self._saliency: SaliencyAnswerer | None = None
        self.answer_kind_head = answer_kind_head
        if answer_kind_head is not None:
            self.answer_kind_head = answer_kind_head.to(self.device).eval()
            self.accepts = self.accepts | {AnswerKindRequest.kind}

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        """The model in ``path`` with its answer-kind head when the folder holds one."""
        head = AnswerKindHead.load(path) if Path(path).is_dir() else None
        return super().from_pretrained(path, answer_kind_head=head, **kwargs)

    def _fingerprint_extras(self) -> str:
        settings = {
            "doc_stride": self.doc_stride,
            "max_answer_tokens": self.max_answer_tokens,
            "null_threshold": self.null_threshold,
        }
        head = self.answer_kind_head
        kinds = f"\x1fanswer_kind={head.digest()}" if head is not None else ""
        return f"\x1fqa={json.dumps(settings, sort_keys=True)}{kinds}"

    # -- tokenization ------------------------------------------------------------------

    def _encode(self, request: SpanAnswerRequest) -> tuple[Encoded, bool]:
        encoded = encode_windows(
            self.tokenizer,
            request.question,
            request.context,
            max_length=self.max_length,
            doc_stride=self.doc_stride,
            token_types=self._token_types,
        )
        return encoded, encoded.question_cut

    # -- saliency ----------------------------------------------------------------------

    def _steps(self, kind: str):
        if kind == SaliencyRequest.kind:
            # a TokenSaliency says itself whether it was truncated
            return lambda request: (request, False), lambda _request: (1, 1), self._saliency_batch
        if kind == AnswerKindRequest.kind:
            return self._encode, self._cost, self._kind_batch
        return super()._steps(kind)

    def _saliency_batch(self, batch: list[SaliencyRequest]) -> list[TokenSaliency]:
        if self._saliency is None:
            # imported on first use: faithprobe.subjects.hf.attribution loads Captum
            from faithprobe.subjects.hf.attribution import IntegratedGradients, Occlusion
            from faithprobe.subjects.hf.attribution.answering import SaliencyAnswerer

            self._saliency = SaliencyAnswerer(
                self.model, self.tokenizer, ig=IntegratedGradients, occlusion=Occlusion,
                batch_size=self.batch_size, max_length=self.max_length,
            )  # fmt: skip
        return self._saliency(batch)

    # -- scoring -----------------------------------------------------------------------

    def _cost(self, encoded: Encoded) -> tuple[int, int]:
        return max(len(w.row[0]) for w in encoded.windows), len(encoded.windows)

    def _best_in_window(
        self, window: Window, start: torch.Tensor, end: torch.Tensor
    ) -> tuple[float, int, int] | None:
        """(score, start token, end token) of the window's best valid span, or None."""
        n = len(window.offsets)
        in_context = torch.tensor([o is not None for o in window.offsets])
        if not in_context.any():
            return None
        i = torch.arange(n)
        gap = i[None, :] - i[:, None]  # end - start
        valid = (gap >= 0) & (gap < self.max_answer_tokens)
        valid &= in_context[:, None] & in_context[None, :]
        scores = (start[:n, None] + end[None, :n]).masked_fill(~valid, -math.inf)
        flat = int(torch.argmax(scores))
        s, e = divmod(flat, n)
        return float(scores[s, e]), s, e

    def _logits(self, windows: list[Window]) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits of every window (right-padded to the longest), computed in
        chunks of at most ``max_batch_tokens`` padded tokens: a long context is thousands of
        windows."""
        lengths = [len(w.row[0]) for w in windows]
        starts = torch.zeros((len(windows), max(lengths)))
        ends = torch.zeros((len(windows), max(lengths)))
        for chunk in length_sorted_batches(
            lengths, max_batch=len(windows), max_tokens=self.max_batch_tokens
        ):
            inputs = pad_rows([windows[i].row for i in chunk], self._pad_id)
            out = self.model(**{k: v.to(self.device) for k, v in inputs.items()})
            width = out.start_logits.shape[1]
            starts[chunk, :width] = out.start_logits.float().cpu()
            ends[chunk, :width] = out.end_logits.float().cpu()
        return starts, ends

    def _kind_logprobs(self, windows: list[Window]) -> torch.Tensor:
        """The answer-kind head's log-probabilities [windows, kinds], computed in chunks of
        at most ``max_batch_tokens`` padded tokens."""
        out = torch.zeros((len(windows), len(ANSWER_KINDS)))
        lengths = [len(w.row[0]) for w in windows]
        for chunk in length_sorted_batches(
            lengths, max_batch=len(windows), max_tokens=self.max_batch_tokens
        ):
            inputs = pad_rows([windows[i].row for i in chunk], self._pad_id)
            states = self.model(
                **{k: v.to(self.device) for k, v in inputs.items()}, output_hidden_states=True
            )
            first = torch.tensor([windows[i].cls_index for i in chunk])
            logits = self.answer_kind_head(cls_states(states, first))
            out[chunk] = torch.log_softmax(logits.float(), dim=-1).cpu()
        return out

    def _kind_batch(self, batch: list[Encoded]) -> list[CandidateScores]:
        """Per request the kinds' log-probabilities of its window least likely *unknown*."""
        logprobs = self._kind_logprobs([w for enc in batch for w in enc.windows])
        unknown = ANSWER_KINDS.index("unknown")
        answers, r = [], 0
        for enc in batch:
            rows = logprobs[r : r + len(enc.windows)]
            best = rows[int(torch.argmin(rows[:, unknown]))]
            answers.append(CandidateScores(tuple(best.tolist()), (1,) * len(ANSWER_KINDS)))
            r += len(enc.windows)
        return answers

    def _score_batch(self, batch: list[Encoded]) -> list[SpanAnswer]:
        windows = [w for enc in batch for w in enc.windows]
        starts, ends = self._logits(windows)

        answers, r = [], 0
        for enc in batch:
            best, null_score = None, math.inf
            for w in enc.windows:
                start, end = starts[r], ends[r]
                null_score = min(null_score, float(start[w.cls_index] + end[w.cls_index]))
                found = self._best_in_window(w, start, end)
                if found and (best is None or found[0] > best[0]):
                    best = (found[0], w.offsets[found[1]][0], w.offsets[found[2]][1])
                r += 1
            score = best[0] if best else -math.inf
            if best is None or null_score - score > self.null_threshold:
                answers.append(SpanAnswer("", -1, -1, score, null_score))
            else:
                s, e = _trimmed(enc.context, best[1], best[2])
                answers.append(SpanAnswer(enc.context[s:e], s, e, score, null_score))
        return answers
