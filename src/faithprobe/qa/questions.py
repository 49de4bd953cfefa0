"""What the QA code asks about a question: the passage it is about (the bootstrap's
cluster), the question with its conversation history before it, and its kind."""

from __future__ import annotations

import hashlib

from faithprobe.records import QAExample

YES_NO = ("yes", "no")


def history_question(example: QAExample) -> str:
    """The question with the conversation history before it (extractive models)."""
    turns = [f"{q} {a}" for q, a in example.history]
    return " ".join([*turns, example.question])


def is_yes_no(example: QAExample) -> bool:
    return example.answer_type in YES_NO


def is_hotpot(example: QAExample) -> bool:
    return example.features.get("source") == "hotpotqa"


def passage_id(example: QAExample) -> str:
    """A short stable id of the example's story: the questions about one passage are
    resampled together."""
    return hashlib.sha256(example.context.encode()).hexdigest()[:16]
