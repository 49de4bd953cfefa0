"""The prompt a language model answers a QA question from.

A template has the slots ``{context}`` and ``{question}`` and may have ``{history}``: the
conversation's earlier turns, one ``Q:``/``A:`` pair of lines each. A template without
``{history}`` gets the turns before the question instead, as extractive models do
(:func:`~faithprobe.qa.questions.history_question`). A literal ``\\n`` typed on the
command line is a newline. The default asks for a few words from the text or "unknown".
"""

from __future__ import annotations

from faithprobe.errors import UsageError, excerpt
from faithprobe.examples import QAExample
from faithprobe.prompts import command_line_template
from faithprobe.qa.questions import history_question

UNKNOWN_INSTRUCTION = (
    'Answer with a few words from the text. If the text does not give the answer, answer "unknown".'
)
DEFAULT_TEMPLATE = "{context}\n\n" + UNKNOWN_INSTRUCTION + "\n\n{history}Q: {question}\nA:"


class QAPrompt:
    """A template (see the module docstring), checked, and the prompts it renders."""

    def __init__(self, template: str) -> None:
        template = command_line_template(template)
        for slot in ("{context}", "{question}"):
            if slot not in template:
                raise UsageError(f"template {excerpt(template)} has no {slot} slot")
        self.template = template

    def render(self, example: QAExample) -> str:
        question = example.question
        if "{history}" in self.template:
            history = "".join(f"Q: {q}\nA: {a}\n" for q, a in example.history)
        else:
            history, question = "", history_question(example)
        return (
            self.template.replace("{history}", history)
            .replace("{question}", question)
            .replace("{context}", example.context)
        )
