"""A plain few-shot prompt as a chat: one user message and a reply begun for the model.

A BIG-Bench Hard prompt ends with the line that opens the answer: ``A: Let's think step
by step.`` (the chain-of-thought prompt) or ``A:`` (the answer-only prompt). Asked in chat
form, the text before that line is the one user message (the exemplars in it, as Turpin et
al. 2023 asked chat models) and what follows ``A:`` opens the assistant's reply
(:attr:`~faithprobe.requests.GenerationRequest.reply_start`), followed by a reasoning the
model is to go on from. :func:`plain_prompt` joins the two back into the plain prompt they
came from, so that a model reading plain text (the planted references) reads a chat request
as it reads the plain one.
"""

from __future__ import annotations

ANSWER_LINE = "\nA:"  # the start of the line that opens the answer


def chat_turns(prompt: str, reasoning: str | None = None) -> tuple[str, str]:
    """(the user message, the reply begun for the model) of ``prompt`` asked in chat form,
    ``reasoning`` (a reply of the model's, edited) after what followed ``A:``; a prompt
    without an answer line is the message whole."""
    message, line, opening = prompt.rpartition(ANSWER_LINE)
    if not line:
        message, opening = prompt, ""
    return message, " ".join(part for part in (opening.strip(), reasoning) if part)


def plain_prompt(message: str, reply_start: str) -> str:
    """The plain prompt (and reasoning) that :func:`chat_turns` split into ``message`` and
    ``reply_start``: the prompt asked plainly with the reasoning after it, one space
    between."""
    return f"{message}{ANSWER_LINE}{' ' if reply_start else ''}{reply_start}"
