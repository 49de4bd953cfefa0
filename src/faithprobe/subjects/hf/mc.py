"""Hugging Face multiple-choice classifiers (``AutoModelForMultipleChoice``: an encoder with
one linear score per (context, choice) pair, e.g. BERT, RoBERTa, DeBERTa fine-tuned on
Social IQA or SWAG).

It answers the same :class:`~faithprobe.requests.CandidateScoreRequest` as the language-
model backends: ``request.context`` is the rendered prompt (the caller has already put it
through :class:`~faithprobe.multiple_choice_prompts.ChoicePrompt`) and ``request.candidates`` are the
choices; ``request.suffix`` is ignored, since a classifier has no blank to fill.

Each (context, choice) is encoded as a tokenizer text pair (``[CLS] context [SEP] choice
[SEP]`` for BERT), the same encoding the training recipe uses
(:func:`~faithprobe.subjects.hf.encoder.encode_choice`). Only the context is truncated
(``truncation="only_first"``) to ``max_length`` tokens, so the choice always survives
whole; an empty context (a probe that removed the question) is allowed. Only when the
choice alone is too long for the model is it truncated as well. Token type ids
(segment A / B) are asked of the tokenizer whenever the model has segment embeddings
(``type_vocab_size > 1``: BERT yes, RoBERTa no), so a tokenizer that leaves them out by
default still marks where the choice starts.

The score of a choice is the log-softmax of the model's per-choice logits over *that
request's* choices, so ``exp`` of the scores sums to one per request. A classifier scores
each choice as one unit, not token by token, so ``n_tokens`` is 1 for every choice and
length normalisation (dividing by ``n_tokens``) is a no-op.

Batching: the rows of all requests in a batch are flattened, right-padded to the batch's
longest row and sent as one input of shape ``[1, rows, length]``; the ``*ForMultipleChoice``
models reshape to ``[rows, length]`` and score every row independently, so requests with
different numbers of choices share a forward. The logits are then split back per request.
Right padding under an attention mask leaves the positions of real tokens unchanged, so
padding changes nothing but rounding (batch-size invariance is tested).

**Bounded inputs.** The rule above: a pair longer than ``max_length`` keeps the *start* of
the context (the tokenizer's right truncation) and the whole choice, each choice's row on
its own, so choices of different lengths keep different amounts of context. The answer is
``truncated`` when any row was cut.
"""

from __future__ import annotations

import torch

from faithprobe.errors import UsageError
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.subjects.hf.encoder import HFEncoderClassifier, Row, encode_choice, pad_rows
from faithprobe.subjects.identity import HF_MC


class HFMC(HFEncoderClassifier):
    identity = HF_MC
    auto_class = "AutoModelForMultipleChoice"

    # -- tokenization ------------------------------------------------------------------

    def _encode(self, request: CandidateScoreRequest) -> tuple[list[Row], bool]:
        if not request.candidates:
            raise UsageError("a multiple-choice request needs at least one choice")
        if not request.default_rule:
            raise UsageError(
                f"model {self.name} scores whole choices with a multiple-choice head: the "
                "first-token and start-of-text scoring rules have no meaning for it"
            )
        encoded = [
            encode_choice(self.tokenizer, request.context, c, self.max_length, self._token_types)
            for c in request.candidates
        ]
        return [row for row, _ in encoded], any(cut for _, cut in encoded)

    # -- scoring -----------------------------------------------------------------------

    def _cost(self, encoded: list[Row]) -> tuple[int, int]:
        return max(len(ids) for ids, _ in encoded), len(encoded)

    def _probe(self, rows: int, length: int) -> None:
        """A batch's rows go to the model as the choices of one question."""
        ids = torch.zeros((1, rows, length), dtype=torch.long, device=self.device)
        self.model(input_ids=ids, attention_mask=torch.ones_like(ids))

    def _score_batch(self, batch: list[list[Row]]) -> list[CandidateScores]:
        rows = [row for rows in batch for row in rows]
        inputs = {k: v[None].to(self.device) for k, v in pad_rows(rows, self._pad_id).items()}
        logits = self.model(**inputs).logits.reshape(-1).float()

        out, r = [], 0
        for request_rows in batch:
            k = len(request_rows)
            logp = torch.log_softmax(logits[r : r + k], dim=-1)
            out.append(CandidateScores(tuple(logp.tolist()), (1,) * k))
            r += k
        return out
