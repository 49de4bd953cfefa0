"""How a QA question is put to a subject and how its answer is read, for every suite that
asks QA questions (``faithfulness``, ``right-reasons``).

An extractive QA subject (``span-answer``) is asked a
:class:`~faithprobe.requests.SpanAnswerRequest` whose question is the conversation history
before the question (:func:`~faithprobe.qa.questions.history_question`); its null answer
means *unknown*. A causal LM gets the prompt of a :class:`~faithprobe.qa.prompt.QAPrompt`:
for a question whose gold answer is yes or no it scores the candidates ``yes`` and ``no``
after it (:class:`~faithprobe.requests.CandidateScoreRequest`) and answers the likelier one;
otherwise it generates greedily (:class:`~faithprobe.requests.GenerationRequest`, at most
``max_new_tokens``, cut at the first newline) and the answer is the reply's first line
(:func:`~faithprobe.qa.answers.extract_answer`), *unknown* when
:func:`~faithprobe.qa.answers.is_unknown` recognises it.

It sits in the requests layer, beside the requests it builds, though it lives with the
rest of the QA library.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from faithprobe.errors import UsageError
from faithprobe.examples import QAExample
from faithprobe.qa.answers import extract_answer, is_unknown
from faithprobe.qa.prompt import QAPrompt, QAPromptOptions
from faithprobe.qa.questions import YES_NO, history_question, is_yes_no
from faithprobe.requests import (
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    SpanAnswer,
    SpanAnswerRequest,
)

# what a subject is assumed to answer when the suite is asked without one
LM_KINDS = frozenset({GenerationRequest.kind, CandidateScoreRequest.kind})


@dataclass(frozen=True)
class QAAsker:
    """The requests a QA question is asked as and the prediction read from the answer
    (module docstring), with the prompt options of :class:`QAPromptOptions`."""

    prompt: QAPrompt
    max_new_tokens: int
    chat: bool

    @classmethod
    def from_options(cls, options: QAPromptOptions) -> QAAsker:
        return cls(QAPrompt(options.template), options.max_new_tokens, options.chat)

    @staticmethod
    def extractive(accepts: Collection[str]) -> bool:
        """Whether a subject answering ``accepts`` is asked span-answer requests."""
        return SpanAnswerRequest.kind in accepts

    def request(self, example: QAExample, subject=None):
        """What ``subject`` (None: a language model) is asked about ``example``."""
        accepts = subject.accepts if subject is not None else LM_KINDS
        if self.extractive(accepts):
            return SpanAnswerRequest(history_question(example), example.context)
        if not set(accepts) >= LM_KINDS:
            raise UsageError(
                f"{subject.name} answers neither span-answer nor generation and "
                "candidate-score requests"
            )
        prompt = self.prompt.render(example)
        if is_yes_no(example):
            return CandidateScoreRequest(prompt, YES_NO)
        return GenerationRequest(prompt, self.max_new_tokens, ("\n",), chat=self.chat)

    @staticmethod
    def prediction(answer) -> dict:
        """The prediction (``prediction``, ``predicted_unknown``) and what it was read from
        (span and null scores; the generation and its length; the yes/no log-probs)."""
        if isinstance(answer, SpanAnswer):
            return {
                "prediction": answer.text,
                "predicted_unknown": answer.start < 0,
                "span_score": answer.score,
                "null_score": answer.null_score,
            }
        if isinstance(answer, Generation):
            text = extract_answer(answer.text)
            return {
                "generation": answer.text,
                "prediction": text,
                "predicted_unknown": bool(text) and is_unknown(text),  # "" is empty%
                "n_tokens": answer.n_tokens,
            }
        if isinstance(answer, CandidateScores):
            yes, no = answer.logprobs
            return {
                "prediction": "yes" if yes >= no else "no",
                "predicted_unknown": False,
                "yes_logprob": yes,
                "no_logprob": no,
            }
        raise TypeError(f"unexpected answer {answer!r}")
