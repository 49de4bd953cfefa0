"""The prompt a language model answers a QA question from.

A template has the slots ``{context}`` and ``{question}`` and may have ``{history}``: the
conversation's earlier turns, one ``Q:``/``A:`` pair of lines each. A template without
``{history}`` gets the turns before the question instead, as extractive models do
(:func:`~faithprobe.qa.questions.history_question`). A literal ``\\n`` typed on the
command line is a newline. The default asks for a few words from the text or "unknown".

:class:`QAPromptOptions` declares the options that choose how a language model is asked
(template, answer length, chat, how yes/no questions are answered), once for every suite
that asks QA questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from faithprobe.errors import UsageError, excerpt
from faithprobe.multiple_choice_prompts import command_line_template
from faithprobe.numbers import TOKENS
from faithprobe.options import check_numbers, option
from faithprobe.qa.questions import history_question
from faithprobe.records import QAExample

UNKNOWN_INSTRUCTION = (
    'Answer with a few words from the text. If the text does not give the answer, answer "unknown".'
)
DEFAULT_TEMPLATE = "{context}\n\n" + UNKNOWN_INSTRUCTION + "\n\n{history}Q: {question}\nA:"
DEFAULT_MAX_NEW_TOKENS = 24
# how a language model answers a yes/no question: ``auto`` compares the log-likelihoods of
# "yes" and "no" where the model can score them and generates where it cannot (a chat-only
# endpoint); ``generate`` always generates (faithprobe.asking.qa_questions, faithprobe.qa.replies)
YES_NO_MODES = ("auto", "generate")
# whether a language model is asked in chat form (its chat template): ``auto`` when it has
# one (faithprobe.subjects.chat_template), ``true`` always, ``false`` never
CHAT_MODES = ("auto", "true", "false")
_SLOT = re.compile(r"\{(context|question|history)\}")

Span = tuple[int, int]


class QAPrompt:
    """A template (see the module docstring), checked, and the prompts it renders."""

    def __init__(self, template: str) -> None:
        template = command_line_template(template)
        for slot in ("{context}", "{question}"):
            if slot not in template:
                raise UsageError(f"template {excerpt(template)} has no {slot} slot")
        self.template = template

    def render(self, example: QAExample) -> str:
        return self.render_with_spans(example)[0]

    def render_with_spans(self, example: QAExample) -> tuple[str, Span, Span]:
        """The prompt, and where the example's question and its context are in it (the
        first ``{question}`` and ``{context}`` slot; the question's span is of the question
        alone, without the history turns a template without ``{history}`` puts before
        it): what saliency of a prompt maps back to the question's and context's words."""
        question = example.question
        if "{history}" in self.template:
            history = "".join(f"Q: {q}\nA: {a}\n" for q, a in example.history)
        else:
            history, question = "", history_question(example)
        fill = {"history": history, "question": question, "context": example.context}
        parts, spans, at = [], {}, 0
        for piece in _SLOT.split(self.template):  # text, slot name, text, slot name, ...
            text = fill[piece] if len(parts) % 2 else piece
            if len(parts) % 2 and piece not in spans:
                spans[piece] = (at, at + len(text))
            parts.append(text)
            at += len(text)
        q_start, q_end = spans["question"]
        q_start = q_end - len(example.question)  # past the history turns before it
        return "".join(parts), (q_start, q_end), spans["context"]


@dataclass(frozen=True)
class QAPromptOptions:
    """How a language model is asked a QA question: the options every QA suite shares
    (``-o KEY=VALUE``; a suite's options dataclass inherits them)."""

    template: str = option(DEFAULT_TEMPLATE, "LM prompt ({context}, {question}, {history})")
    max_new_tokens: int = option(
        DEFAULT_MAX_NEW_TOKENS, "LM answer length cap (tokens)", range=(1, TOKENS)
    )
    chat: str = option(
        "auto",
        "ask LMs as a chat message: auto (if it has a chat template), true or false",
        choices=CHAT_MODES,
    )
    yes_no: str = option(
        "auto",
        "yes/no questions: auto (log-likelihoods if scorable) or generate",
        choices=YES_NO_MODES,
    )

    def __post_init__(self) -> None:
        check_numbers(self)  # a suite's own numbers too: it inherits this
        QAPrompt(self.template)  # raises UsageError if a slot is missing
