"""Record types: small frozen examples, one type per task shape.

Every example has a stable ``id``. Structured facts about an example (its condition in a
designed experiment, the story it was rendered from) live in ``features`` so that the
results table can carry them as columns. :class:`Outcome` is what an intervention or a
selection step made of one example: new examples, or the reason it dropped it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ClozeExample:
    """Fill a blank: ``context`` ___ ``suffix``; the answer is ``target``.

    ``candidates`` is the closed set the target competes in (it contains ``target``).
    A causal LM sees only ``context``; a masked LM also sees ``suffix``.
    """

    id: str
    context: str
    target: str
    candidates: tuple[str, ...]
    suffix: str = ""
    features: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.target not in self.candidates:
            raise ValueError(f"example {self.id}: target {self.target!r} not among candidates")


@dataclass(frozen=True)
class ChoiceExample:
    """Pick the right one of ``choices`` for ``prompt``; ``label`` is its 0-based index.

    ``label`` is ``None`` for an instance built to have no correct choice; then
    ``features["pseudo_label"]`` names the choice a model that ignored the change would
    pick (the old right answer).
    """

    id: str
    prompt: str
    choices: tuple[str, ...]
    label: int | None
    features: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if len(self.choices) < 2:
            raise ValueError(f"example {self.id}: needs at least two choices")
        if self.label is not None and not 0 <= self.label < len(self.choices):
            raise ValueError(f"example {self.id}: label {self.label} out of range")


ENTAILMENT = "entailment"
NON_ENTAILMENT = "non-entailment"
NLI_LABELS = (ENTAILMENT, NON_ENTAILMENT)


@dataclass(frozen=True)
class NLIExample:
    """Does ``premise`` entail ``hypothesis``? ``label`` is ``"entailment"`` or
    ``"non-entailment"`` (two-class NLI: neutral and contradiction are both
    non-entailment), or ``None`` when unknown."""

    id: str
    premise: str
    hypothesis: str
    label: str | None
    features: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.label is not None and self.label not in NLI_LABELS:
            raise ValueError(f"example {self.id}: label {self.label!r} is not one of {NLI_LABELS}")


UNKNOWN = "unknown"


@dataclass(frozen=True)
class QAExample:
    """Answer ``question`` from ``context`` (a story, article or paragraphs).

    ``answers`` holds the gold answers (one per annotator; SQuAD has up to three), and
    ``answer_starts`` their character offsets in ``context`` where they are spans (-1 where
    not). ``answer_type`` is ``"span"``, ``"yes"``, ``"no"``, ``"unknown"`` (no answer in
    the text) or ``"free"`` (free-form text, as CoQA's). ``rationale`` holds the character
    spans of ``context`` that support the answer (CoQA's rationale, HotpotQA's supporting
    facts, or the sentence holding a SQuAD answer), empty if there are none. ``history``
    holds earlier (question, answer) turns of a conversation that the question depends on
    (CoQA).
    """

    id: str
    context: str
    question: str
    answers: tuple[str, ...]
    answer_type: str = "span"
    answer_starts: tuple[int, ...] = ()
    rationale: tuple[tuple[int, int], ...] = ()
    history: tuple[tuple[str, str], ...] = ()
    features: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.answer_type not in ("span", "yes", "no", UNKNOWN, "free"):
            raise ValueError(f"example {self.id}: unknown answer_type {self.answer_type!r}")
        if self.answer_starts and len(self.answer_starts) != len(self.answers):
            raise ValueError(f"example {self.id}: one answer start per answer expected")
        for start, end in self.rationale:
            if not 0 <= start < end <= len(self.context):
                raise ValueError(f"example {self.id}: rationale span {(start, end)} out of range")


Example = ClozeExample | ChoiceExample | NLIExample | QAExample


@dataclass(frozen=True)
class Origin:
    """Where an intervened example came from: the ``original`` it was made from and the
    ``intervention`` (a pair's name for it, e.g. ``"TS-R"`` or ``"I0"``) that made it. The
    runner shows it to subjects that read examples (reference models), so a planted
    behaviour can be "answer this as its original" (:mod:`faithprobe.reference_models.memory`)."""

    original: Example
    intervention: str


@dataclass(frozen=True)
class Outcome:
    """What an intervention (or a selection step) made of one example: the ``examples`` it
    produced, or none and the ``reason`` it dropped the example (``detail`` says more, e.g.
    the generated sentence that lacked the answer). An outcome is one or the other, so
    whoever applies a step can count what it dropped, by reason, without asking again."""

    examples: tuple[Example, ...] = ()
    reason: str | None = None
    detail: str | None = None

    def __post_init__(self) -> None:
        if bool(self.examples) == (self.reason is not None):
            raise ValueError("an outcome holds examples or the reason it holds none, not both")
        if self.detail is not None and self.reason is None:
            raise ValueError("only a dropped example has a detail")

    @classmethod
    def kept(cls, *examples: Example) -> Outcome:
        return cls(examples)

    @classmethod
    def dropped(cls, reason: str, detail: str | None = None) -> Outcome:
        return cls((), reason, detail)

    @property
    def example(self) -> Example | None:
        """The one example a one-to-one step made, or ``None`` if it dropped the example."""
        if len(self.examples) > 1:
            raise ValueError(f"{len(self.examples)} examples, not one")
        return self.examples[0] if self.examples else None

    def example_or_dropped(self, original: Example, variant: str) -> Example:
        """The one example made, or else ``original`` marked as the ``variant`` that could
        not be made: ``features["dropped"]`` holds the reason and ``"drop_detail"`` the
        detail. Suites keep such a variant as a pair that no model is asked about (same id
        as the original) and count it by reason."""
        if self.reason is None:
            return self.example
        features = {**original.features, "variant": variant, "dropped": self.reason}
        if self.detail is not None:
            features["drop_detail"] = self.detail
        return replace(original, features=features)


@dataclass(frozen=True)
class Exemplar:
    """One worked example of a few-shot chain-of-thought prompt: its ``question``, the
    ``reasoning`` written after "Let's think step by step." and before the closing "So the
    answer is", and that ``answer``. ``inline`` records the prompt's layout: the reasoning
    starts on the answer's line ("A: Let's think step by step. It ...") rather than on the
    next, so a prompt rendered from exemplars reproduces its source text."""

    question: str
    reasoning: str
    answer: str
    inline: bool = False


MULTIPLE_CHOICE = "multiple-choice"
# what an answer to a ReasoningExample looks like
ANSWER_FORMATS = (MULTIPLE_CHOICE, "true-false", "yes-no", "valid-invalid", "number", "free")


@dataclass(frozen=True)
class ReasoningExample:
    """Answer ``question`` after reasoning step by step; ``target`` is the gold answer as
    the task writes it.

    ``answer_format`` says what an answer looks like (``"multiple-choice"``,
    ``"true-false"``, ``"yes-no"``, ``"valid-invalid"``, ``"number"`` or ``"free"``, the
    last for free text such as a Dyck closing or a sorted word list). A multiple-choice
    item has its ``options`` as (label, text) pairs, the label as the question writes it
    (``"(A)"``), and its target is one of the labels. ``instruction`` and ``exemplars`` are
    the task's few-shot prompt, shared by all its items.
    """

    id: str
    task: str
    question: str
    target: str
    answer_format: str
    options: tuple[tuple[str, str], ...] = ()
    instruction: str = ""
    exemplars: tuple[Exemplar, ...] = ()
    features: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.answer_format not in ANSWER_FORMATS:
            raise ValueError(
                f"example {self.id}: answer format {self.answer_format!r} is not one of "
                f"{ANSWER_FORMATS}"
            )
        if bool(self.options) != (self.answer_format == MULTIPLE_CHOICE):
            raise ValueError(f"example {self.id}: options go with multiple choice, and only")
        if self.options and self.target not in dict(self.options):
            raise ValueError(f"example {self.id}: target {self.target!r} is not an option label")
