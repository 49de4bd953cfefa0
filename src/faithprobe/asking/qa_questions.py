"""How a QA question is put to a subject and how its answer is read, for every suite that
asks QA questions (``faithfulness``, ``right-reasons``).

An extractive QA subject (``span-answer``) is asked a
:class:`~faithprobe.requests.SpanAnswerRequest` whose question is the conversation history
before the question (:func:`~faithprobe.qa.questions.history_question`); its null answer
means *unknown*. A language model gets the prompt of a :class:`~faithprobe.qa.prompt.QAPrompt`.
For a question whose gold answer is yes or no, a model that can score candidates (a local
causal LM, an endpoint serving completions with logprobs) scores ``yes`` and ``no`` after
it (:class:`~faithprobe.requests.CandidateScoreRequest`) and answers the likelier one, so it
cannot abstain; with ``yes_no=generate``, or when the model can only generate (a chat-only
endpoint), it is asked like any other question. Every other question is generated greedily
(:class:`~faithprobe.requests.GenerationRequest`, at most ``max_new_tokens``, cut at the
first newline; in chat form, through the model's chat template, when :meth:`QAAsker.chat_for`
says so: with ``chat=auto`` (the default) for a model that has a template, and always for a
model that can only generate, since such a model is a chat endpoint) and the reply is read by
:func:`~faithprobe.qa.replies.read_reply` (generate-then-parse): its kind (yes, no, answer,
abstention, hedge, refusal, other, empty) and the answer it gives.

Every prediction says how it was obtained (``answer_mode``: ``log-likelihood``,
``generation``, ``chat`` (generated in chat form) or ``span``) and how the reply was read (``reply_kind``: the kinds above;
``yes``/``no`` for a scored yes/no question, ``answer``/``abstention`` for a span answer).

It sits in the requests layer, beside the requests it builds; the QA library it reads
questions and answers with (:mod:`faithprobe.qa`) is data, below it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from faithprobe.errors import UsageError
from faithprobe.qa.prompt import QAPrompt, QAPromptOptions
from faithprobe.qa.questions import YES_NO, history_question, is_yes_no
from faithprobe.qa.replies import ABSTENTION, ANSWER, read_reply
from faithprobe.records import QAExample
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
# how a prediction was obtained (the ``answer_mode`` column)
LOG_LIKELIHOOD, GENERATION, CHAT, SPAN = "log-likelihood", "generation", "chat", "span"


def chat_form(chat: str, subject=None) -> bool:
    """Whether ``subject`` (None: a language model) generates in chat form under the option
    ``chat`` (:data:`~faithprobe.qa.prompt.CHAT_MODES`): always if it can only generate (a
    chat endpoint), else as ``chat`` says, ``auto`` meaning when it has a chat template (an
    instruction-tuned model prompted plainly often replies with nothing). Every suite that
    generates asks by this rule."""
    if subject is None:
        return chat == "true"
    if CandidateScoreRequest.kind not in subject.accepts:
        return True
    return {"true": True, "false": False}.get(chat, subject.has_chat_template)


@dataclass(frozen=True)
class QAAsker:
    """The requests a QA question is asked as and the prediction read from the answer
    (module docstring), with the prompt options of :class:`QAPromptOptions`."""

    prompt: QAPrompt
    max_new_tokens: int
    chat: str  # QAPromptOptions.chat: auto, true or false
    yes_no: str = "auto"

    @classmethod
    def from_options(cls, options: QAPromptOptions) -> QAAsker:
        return cls(QAPrompt(options.template), options.max_new_tokens, options.chat, options.yes_no)

    @staticmethod
    def extractive(accepts: Collection[str]) -> bool:
        """Whether a subject answering ``accepts`` is asked span-answer requests."""
        return SpanAnswerRequest.kind in accepts

    def request(self, example: QAExample, subject=None):
        """What ``subject`` (None: a language model) is asked about ``example``."""
        accepts = subject.accepts if subject is not None else LM_KINDS
        if self.extractive(accepts):
            return SpanAnswerRequest(history_question(example), example.context)
        if GenerationRequest.kind not in accepts:
            raise UsageError(f"{subject.name} answers neither span-answer nor generation requests")
        prompt = self.prompt.render(example)
        scores = CandidateScoreRequest.kind in accepts
        if is_yes_no(example) and scores and self.yes_no == "auto":
            return CandidateScoreRequest(prompt, YES_NO)
        return GenerationRequest(prompt, self.max_new_tokens, ("\n",), chat=self.chat_for(subject))

    def chat_for(self, subject=None) -> bool:
        """Whether ``subject`` (None: a language model) generates in chat form
        (:func:`chat_form` under this asker's ``chat``)."""
        return chat_form(self.chat, subject)

    @staticmethod
    def prediction(answer, yes_no: bool = False, chat: bool = False) -> dict:
        """The prediction (``prediction``, ``predicted_unknown``), how it was obtained and
        read (``answer_mode``, ``reply_kind``) and what it was read from (span and null
        scores; the generation and its length; the yes/no log-probs). ``yes_no``: the
        question is a yes/no question (how a generated reply is read); ``chat``: it was
        generated in chat form (:meth:`chat_for`)."""
        if isinstance(answer, SpanAnswer):
            unknown = answer.start < 0
            return {
                "prediction": answer.text,
                "predicted_unknown": unknown,
                "answer_mode": SPAN,
                "reply_kind": ABSTENTION if unknown else ANSWER,
                "span_score": answer.score,
                "null_score": answer.null_score,
            }
        if isinstance(answer, Generation):
            reply = read_reply(answer.text, yes_no=yes_no)
            return {
                "generation": answer.text,
                "prediction": reply.answer,
                "predicted_unknown": reply.abstained,  # an empty reply is empty%, not unknown
                "answer_mode": CHAT if chat else GENERATION,
                "reply_kind": reply.kind,
                "n_tokens": answer.n_tokens,
            }
        if isinstance(answer, CandidateScores):
            yes, no = answer.logprobs
            label = "yes" if yes >= no else "no"
            return {
                "prediction": label,
                "predicted_unknown": False,
                "answer_mode": LOG_LIKELIHOOD,
                "reply_kind": label,
                "yes_logprob": yes,
                "no_logprob": no,
            }
        raise TypeError(f"unexpected answer {answer!r}")
