"""Rule-based coreference counterfactuals (Ray Choudhury, Rogers & Augenstein, "Machine
reading, fast and slow"): a sentence inserted into the context makes a new person the
answer while the old answer stays in the text. A model reading for the right reasons
switches to the new person; one that learned where Quoref answers tend to be may not.

``coreference_counterfactual`` (variant ``CF``) handles exactly one question shape,

    What is|was|'s the [first |last |full ]name of the <head> who|that <clause>?

with ``<head>`` a word for a person (:data:`PERSON_HEADS`), and inserts, right after the
sentence holding the (first) gold answer,

    It is|was not <old answer> but another <head>, <First Last>, who|that <clause>.

copying the copula, head noun, relative word and clause from the question, so the
sentence is as grammatical as the question. Why the new person is then *the* answer: the
question asks for the one <head> who <clause>; the inserted sentence states that this is
not the old answer but <First Last>, a cleft that corrects the text before it, so
<First Last> is the only <head> the text still says <clause> of. The old answer keeps all
its mentions (and is named once more in the inserted sentence). The new gold is the part
of the name the question asks for (first word, last word, or both) at its offset in the
inserted sentence.

The name is drawn with the example's seeded rng from :data:`FIRST_NAMES` (names given to
people of any gender, because "another woman, Robin ..." must not clash with a name
readers take for a man's: the rule infers no genders) and :data:`SURNAMES`, skipping any
that occur in the context or the question.

Not generated, with the reason counted (:data:`REASONS`): non-span and multi-span answers;
any other question shape -- plural questions ("the first names of the people who", the
answer would need several new people), "Who <clause>?" (no copula to set the tense of the
inserted sentence), questions about things ("the name of the song that") and other
nouns; and examples whose context uses every built-in name. Limits: the inserted sentence
repeats the question's clause, so it also rewards matching the question to a sentence by
its words; and it contradicts the original sentences about the old answer by design.

The changed example's id is ``<id>/cf``; ``features`` add ``variant``, ``generated``
(True), ``original_id``, ``expected`` (the new answer), ``inserted`` (the sentence),
``inserted_span`` and ``original_answer``; a ``cluster`` (from selection) is moved with
the text, and the rationale is the inserted sentence.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from faithprobe.coreference.selection import MULTI_SPAN, NOT_SPAN, span_problem
from faithprobe.expectations import ANSWER_NEW_ENTITY
from faithprobe.interventions import register
from faithprobe.interventions.deletion import sentences_of
from faithprobe.qa.answers import occurs
from faithprobe.records import Outcome, QAExample
from faithprobe.sentences import sentence_at

if TYPE_CHECKING:  # only annotations: `faithprobe list` imports this module, not numpy
    import numpy as np

NAME = "coreference_counterfactual"
QUESTION = re.compile(
    r"^What(?P<copula> is| was|'s) the (?:(?P<part>first|last|full) )?name of the "
    r"(?P<head>\w+) (?P<rel>who|that) (?P<clause>.+?)\s*\?\s*$"
)

PERSON_HEADS = ("person", "man", "woman", "boy", "girl", "character")
FIRST_NAMES = (
    "Alex", "Avery", "Casey", "Dana", "Emerson", "Jordan", "Kendall", "Morgan",
    "Quinn", "Reese", "Riley", "Robin", "Rowan", "Sasha", "Skyler", "Taylor",
)  # fmt: skip
SURNAMES = (
    "Ashdown", "Brennagh", "Castell", "Delacourt", "Ferrando", "Halloway", "Lindqvist",
    "Marchetti", "Oakhurst", "Okonkwo", "Pellow", "Ravensworth", "Stavrakis", "Vantreight",
)  # fmt: skip

UNSUPPORTED = "the question is not 'What is/was the [first/last/full] name of the ... who ...?'"
NOT_A_PERSON = "the question asks about something other than a person"
NO_FREE_NAME = "every built-in first name or surname occurs in the text"
REASONS = (NOT_SPAN, MULTI_SPAN, UNSUPPORTED, NOT_A_PERSON, NO_FREE_NAME)


def _free(names: tuple[str, ...], texts: tuple[str, ...], rng: np.random.Generator) -> str | None:
    left = [n for n in names if not any(occurs(n, t) for t in texts)]
    return left[int(rng.integers(len(left)))] if left else None


def counterfactual(example: QAExample, rng: np.random.Generator) -> Outcome:
    """``example`` with a sentence inserted that makes a new person the answer (see the
    module docstring), or the reason it is not generated."""
    if reason := span_problem(example):
        return Outcome.dropped(reason)
    match = QUESTION.match(example.question)
    if match is None:
        return Outcome.dropped(UNSUPPORTED)
    if match["head"] not in PERSON_HEADS:
        return Outcome.dropped(NOT_A_PERSON, detail=match["head"])
    texts = (example.context, example.question)
    first, last = _free(FIRST_NAMES, texts, rng), _free(SURNAMES, texts, rng)
    if first is None or last is None:
        return Outcome.dropped(NO_FREE_NAME)
    copula = "was" if match["copula"] == " was" else "is"
    old = example.answers[0]
    lead = f"It {copula} not {old} but another {match['head']}, "
    sentence = f"{lead}{first} {last}, {match['rel']} {match['clause']}."
    answer, offset = {
        "first": (first, len(lead)),
        "last": (last, len(lead) + len(first) + 1),
    }.get(match["part"], (f"{first} {last}", len(lead)))

    sentences = sentences_of(example)
    at = sentences[sentence_at(sentences, example.answer_starts[0])][1]
    insert = " " + sentence
    start = at + 1
    shift = len(insert)

    def moved(span: tuple[int, int]) -> tuple[int, int]:
        return (span[0] + shift, span[1] + shift) if span[0] >= at else tuple(span)

    features = {
        **example.features,
        "variant": "CF",
        "generated": True,
        "original_id": example.id,
        "expected": answer,
        "original_answer": old,
        "inserted": sentence,
        "inserted_span": (start, start + len(sentence)),
    }
    if "cluster" in features:
        features["cluster"] = [moved(s) for s in features["cluster"]]
    changed = QAExample(
        id=f"{example.id}/cf",
        context=example.context[:at] + insert + example.context[at:],
        question=example.question,
        answers=(answer,),
        answer_starts=(start + offset,),
        rationale=((start, start + len(sentence)),),
        features=features,
    )
    return Outcome.kept(changed)


@register(
    NAME,
    family="counterfactual",
    changes="a sentence inserted after the answer's sentence makes a new person the answer",
    holds="the question and the whole original context (the old answer stays in it)",
    expectation=ANSWER_NEW_ENTITY,
)
def coreference_counterfactual(example: QAExample, rng: np.random.Generator, **params) -> Outcome:
    return counterfactual(example, rng)
