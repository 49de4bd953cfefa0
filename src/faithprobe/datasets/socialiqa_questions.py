"""The kind of a Social IQA question, read off its wording.

Social IQA's questions were written from ATOMIC's inference dimensions (Sap et al. 2019),
one template per dimension ("What will Kai want to do next?", "How would you describe
Kai?"), so the template names what the question asks about: a category for analyses that
compare instances by the kind of question (the ``confidence-shift`` suite's view of the
instances that keep their confidence). Agent and others ("How would Kai / others feel?") share a category: telling
them apart would need the context's names.
"""

from __future__ import annotations

import re

OTHER = "other"
# (category, pattern on the lower-cased question), the first match wins
QUESTION_KINDS = (
    ("intent", re.compile(r"^why\b")),
    ("need", re.compile(r"\bneed to\b")),
    ("want", re.compile(r"\bwant to\b")),
    ("attribute", re.compile(r"\bdescribe\b")),
    ("reaction", re.compile(r"\bfeel\b|\bemotion\b")),
    ("effect", re.compile(r"\bhappen")),
)


def question_kind(question: str) -> str:
    """The category of a Social IQA question (:data:`QUESTION_KINDS`), ``other`` for a
    question no template matches."""
    text = question.strip().lower()
    return next((kind for kind, pattern in QUESTION_KINDS if pattern.search(text)), OTHER)
