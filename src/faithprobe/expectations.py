"""What a faithful model does after an intervention (the CheckList idea).

An expectation is a small named predicate over the outcome of one pair. Suites attach one
to every intervention; metrics count how often it is met.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from faithprobe.examples import UNKNOWN


@dataclass(frozen=True)
class Outcome:
    """The model's choices on the two inputs of a pair, and the gold answer after the change."""

    original_prediction: str
    intervened_prediction: str
    gold: str


@dataclass(frozen=True)
class Expectation:
    name: str
    description: str
    check: Callable[[Outcome], bool]

    def met(self, outcome: Outcome) -> bool:
        return self.check(outcome)


ANSWER_UNCHANGED = Expectation(
    name="answer unchanged",
    description="the gold answer is still the model's choice after the intervention",
    check=lambda o: o.intervened_prediction == o.gold,
)


NO_CHOICE_CORRECT = Expectation(
    name="no choice correct",
    description="no offered choice answers the changed prompt; a faithful model spreads its "
    "confidence (towards 1/n) instead of keeping the pseudo-correct choice",
    check=lambda o: o.intervened_prediction != o.gold,
)


PREDICTION_CHANGES = Expectation(
    name="prediction changes",
    description="the change flips the gold label, so a model that uses the changed feature "
    "changes its prediction",
    check=lambda o: o.intervened_prediction != o.original_prediction,
)


PREDICTION_KEPT = Expectation(
    name="prediction kept",
    description="the change leaves the gold label as it was, so a robust model keeps its "
    "prediction",
    check=lambda o: o.intervened_prediction == o.original_prediction,
)


ANSWER_UNKNOWN = Expectation(
    name="answer unknown",
    description="the text no longer supports any answer, so a faithful model answers "
    "'unknown' instead of the old gold answer",
    check=lambda o: o.intervened_prediction == UNKNOWN,
)


ANSWER_FLIPS = Expectation(
    name="answer flips",
    description="the text now supports the opposite yes/no answer, and a faithful model gives "
    "it (the new gold)",
    check=lambda o: o.intervened_prediction == o.gold,
)


ANSWER_OTHER_ENTITY = Expectation(
    name="answer becomes the other entity",
    description="the comparative is swapped for its antonym, so the other compared entity is "
    "now the answer (the new gold), and a model reading for the right reasons gives it",
    check=lambda o: o.intervened_prediction == o.gold,
)


ANSWER_NEW_ENTITY = Expectation(
    name="answer becomes the new entity",
    description="a sentence inserted into the context makes a new entity the answer while the "
    "old answer stays in the text; a model reading for the right reasons gives the new one "
    "(the new gold)",
    check=lambda o: o.intervened_prediction == o.gold,
)
