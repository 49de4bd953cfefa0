"""Yes/no questions put to an extractive QA model with an answer-kind head, for every client
that asks them (the ``faithfulness`` suite, ``faithprobe train qa``'s evaluation).

A subject accepting :class:`~faithprobe.requests.AnswerKindRequest` (an extractive model
whose folder holds the head: :mod:`faithprobe.subjects.hf.answer_kind_head`) is asked a
question whose gold answer is yes or no as such a request (the question with its
conversation history before it, and the context). Its answer is the likeliest of *yes*,
*no* and *unknown* under the head (the *span* kind is not a possible answer to a yes/no
question, as a language model's yes/no decision leaves out any other reply); unlike a
language model it can abstain. The order ``yes``, ``no``, ``unknown`` breaks ties.

It sits in the requests layer, beside :mod:`faithprobe.asking.qa_questions`, whose span and
language-model requests it completes for these subjects.
"""

from __future__ import annotations

from collections.abc import Collection

from faithprobe.qa.questions import history_question, is_yes_no
from faithprobe.qa.replies import ABSTENTION
from faithprobe.records import UNKNOWN, QAExample
from faithprobe.requests import ANSWER_KINDS, AnswerKindRequest, CandidateScores

YES_NO_UNKNOWN = ("yes", "no", UNKNOWN)
ANSWER_KIND_HEAD = "answer-kind head"  # how the prediction was obtained (``answer_mode``)


def asks_answer_kind(example: QAExample, accepts: Collection[str]) -> bool:
    """Whether a subject answering ``accepts`` is asked ``example`` through its
    answer-kind head: a yes/no question, and a subject that has one."""
    return is_yes_no(example) and AnswerKindRequest.kind in accepts


def answer_kind_request(example: QAExample) -> AnswerKindRequest:
    return AnswerKindRequest(history_question(example), example.context)


def yes_no_prediction(answer: CandidateScores) -> dict:
    """The prediction read off the head's kinds (module docstring): ``prediction`` (yes,
    no or unknown), ``predicted_unknown``, how it was obtained and read (``answer_mode``,
    ``reply_kind``: yes, no or abstention, as :mod:`faithprobe.asking.qa_questions` names them), and
    the three log-probabilities."""
    logprobs = dict(zip(ANSWER_KINDS, answer.logprobs, strict=True))
    choice = max(YES_NO_UNKNOWN, key=lambda kind: logprobs[kind])  # first of equals
    return {
        "prediction": choice,
        "predicted_unknown": choice == UNKNOWN,
        "answer_mode": ANSWER_KIND_HEAD,
        "reply_kind": ABSTENTION if choice == UNKNOWN else choice,
        "yes_logprob": logprobs["yes"],
        "no_logprob": logprobs["no"],
        "unknown_logprob": logprobs[UNKNOWN],
    }
