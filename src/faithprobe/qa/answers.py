"""Reading a model's text answer: normalisation, abstentions (*unknown*), the answer in a
generated reply and its yes/no label.

These read text; scoring it against gold answers (EM, F1, contains) is
:mod:`faithprobe.metrics.qa_scores`'s. Data loaders normalise answers too (comparison questions),
hence a module of its own below both.

:func:`normalize_answer` is that of the official SQuAD v1.1 and CoQA evaluation scripts:
lowercase, drop ASCII punctuation (``string.punctuation``), drop the articles a/an/the as
whole words, collapse whitespace.

*Unknown.* :func:`is_unknown` recognises an abstention from the phrasings in
``UNKNOWN_PHRASES`` (see there).
"""

from __future__ import annotations

import math
import re
import string

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text: str) -> str:
    """Lowercase, remove punctuation, articles and extra whitespace (SQuAD v1.1 / CoQA)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


# normalised (see ``normalize_answer``: "I don't know." -> "i dont know")
UNKNOWN_PHRASES: tuple[str, ...] = (
    "unknown",
    "i dont know",
    "i do not know",
    "dont know",
    "do not know",
    "not known",
    "no answer",
    "no idea",
    "unanswerable",
    "not answerable",
    "cannot be answered",
    "can not be answered",
    "cant be answered",
    "cannot be determined",
    "can not be determined",
    "cant be determined",
    "cannot determine",
    "cannot say",
    "cant say",
    "cannot tell",
    "cant tell",
    "not mentioned",
    "not stated",
    "not specified",
    "not given",
    "not provided",
    "not clear",
    "unclear",
    "no information",
    "not enough information",
    "insufficient information",
)
# optional words before and after a phrase: "The answer is unknown.", "It is not mentioned
# in the passage.", "Cannot be determined from the text."
_LEAD = r"(?:(?:sorry|answer|it|this|that|which)(?: is)? )?"
_TAIL = r"(?: (?:in|from|by|based on) (?:passage|text|story|context|article|paragraph))?"
_UNKNOWN = re.compile(rf"^{_LEAD}(?:{'|'.join(map(re.escape, UNKNOWN_PHRASES))}){_TAIL}$")


def is_unknown(text: str | None) -> bool:
    """Whether ``text`` says *unknown*: empty (after normalisation) or, once normalised,
    one of ``UNKNOWN_PHRASES``, optionally after "sorry"/"answer (is)"/"it (is)"/"this
    (is)"/"that (is)"/"which (is)" and before "in/from/by/based on" + "passage/text/story/
    context/article/paragraph". A bare "no" is an answer, not an abstention."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return True
    norm = normalize_answer(str(text))
    return not norm or bool(_UNKNOWN.match(norm))


# what generative models put before the answer itself: a format label ("A:", "Answer:")
# and a lead-in ("The answer is", "The answer to the question is:")
_LABEL = re.compile(r"^(?:a|answer)\s*(?::|\.(?=\s|$))\s*", re.IGNORECASE)
_LEAD_IN = re.compile(
    r"^(?:the )?(?:correct |final |short )?answer"
    r"(?: to (?:this|the|your) question)?(?: would be| is)\s*[:,]?\s*",
    re.IGNORECASE,
)
_QUOTES = ('"', "'", "\u201c\u201d", "\u2018\u2019")


def extract_answer(text: str) -> str:
    """The answer in a generated reply: the first line, without a leading format label
    ("A:", "Answer:", "A.") or lead-in ("The answer is", "The answer to the question is:"),
    without quotes around it and a final full stop. Nothing else is guessed: a whole
    sentence ("The Premier is Daniel Andrews.") stays a sentence, which F1 credits in part
    and the ``contains`` score in full. Only ever makes the text shorter."""
    answer = text.strip().split("\n", 1)[0].strip()
    while True:
        shorter = _LEAD_IN.sub("", _LABEL.sub("", answer, count=1), count=1).strip()
        if shorter == answer:
            break
        answer = shorter
    for quotes in _QUOTES:
        opening, closing = quotes[0], quotes[-1]
        body = answer.rstrip(".")
        if len(body) > 1 and body[0] == opening and body[-1] == closing:
            answer = body[1:-1].strip()
    if answer.endswith(".") and not answer.endswith(".."):
        answer = answer[:-1].rstrip()
    return answer


def yes_no_label(text: str | None) -> str | None:
    """``"yes"``/``"no"`` when the normalised answer starts with that word ("Yes, it was."),
    else ``None`` (including abstentions such as "no answer")."""
    if is_unknown(text):
        return None
    first = normalize_answer(str(text)).split()[0]
    return first if first in ("yes", "no") else None


def occurs(answer: str, text: str) -> bool:
    """Whether ``answer`` occurs in ``text`` as a whole (case-insensitive; not inside a
    longer word or number: "2" does not occur in "2015")."""
    answer = answer.strip()
    pattern = rf"(?<!\w){re.escape(answer)}(?!\w)"
    return bool(answer) and re.search(pattern, text, flags=re.IGNORECASE) is not None
