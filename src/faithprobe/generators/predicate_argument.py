"""The predicate–argument probe of the ``faithfulness`` suite (Chaturvedi et al.).

One-sentence stories give two objects two different colours ("The blue car was standing in
front of a red house."); yes/no questions ask each object about its own colour (yes) and
about the other object's colour (no). A model that reads who-has-what answers all four; a
model that only checks that the words "car" and "red" occur in the story says yes to all.

Schemas (the method's five)::

    car_house     The {c1} car was standing in front of a {c2} house.
    ball_bat      They played with a {c1} ball and {c2} bat.
    shirt_jacket  The man was wearing a {c1} shirt and a {c2} jacket.
    window_door   The house had a {c1} window and a {c2} door.
    glass_table   A {c1} glass was placed on a {c2} table.

("a" becomes "an" before a vowel: "an orange house".)

Colours. The method's own colour pairs are in a data folder that is not public in a form we
can read (its repository links to a Google Drive folder), so the colours here are the eleven
basic colour terms of English (Berlin & Kay 1969): black, white, red, green, yellow, blue,
brown, purple, pink, orange, gray. They give 11 x 10 = 110 ordered pairs of distinct colours;
each schema takes ``stories_per_schema`` (default 26) of them, drawn without replacement by
a generator seeded from (seed, schema name) and kept in the order of ``COLOURS``. So

    stories            S = 5 schemas x 26 pairs = 130
    questions          4 per story (2 yes, 2 no) = 4 S = 520 per question form and story variant

**Parts.** The stories above are the ``test`` part, the one the probe evaluates. A model
taught to answer yes/no questions on such stories (``faithprobe train qa --answer-kind
--predicate-argument N``) is taught on the ``train`` part: the same schemas, questions and
variants with other colour terms (:data:`TRAIN_COLOURS`, none of them in ``COLOURS``), so
no training story is a story of the test part -- whatever either seed -- and the probe
asks about colour words the model never answered a question on.

Questions, for an object ``o`` and a colour ``c`` (the three question forms):

    original    Was the car blue?
    paraphrase  Was there a blue car?
    control     Was the a blue car?      (the method's ungrammatical control; its gold is
                                          the paraphrase's: the meaning it garbles)

Per story, in this order: (first object, own colour) yes, (second object, own colour) yes,
(first object, other colour) no, (second object, other colour) no.

Story variants:

    original   the sentence as above
    space      the sentence + " "      (formatting variant: answers must not change)
    newline    the sentence + "\\n"     (formatting variant: answers must not change)
    negated    the second object's colour negated in a relative clause:
               "The blue car was standing in front of a house that was not red."
               "They played with a blue ball and a bat that was not red."
               "The man was wearing a blue shirt and a jacket that was not red."
               "The house had a blue window and a door that was not red."
               "A blue glass was placed on a table that was not red."

What follows from a negated story (one colour per object, as in the originals): first
object + own colour yes; first object + other colour no; second object + its old colour
**no** (the contrast: this answer flips from yes); second object + the first's colour is
*not determined* (the house is not red; it may or may not be blue), so that question is not
asked. A negated story therefore has 3 questions (1 yes, 2 no): 3 S = 390 per form.

Total with every form and variant: 3 forms x (3 x 520 + 390) = 5,850 examples.

Ids are ``pa/{schema}/{c1}-{c2}/{variant}/{form}/{object}-{colour}``; ``features`` carry
``story_id`` (``pa/{schema}/{c1}-{c2}``, the cluster of the story's questions, also given
as ``base_id``) and ``item_id`` (``{story_id}/{object}-{colour}``, the same question across
variants and forms), so a results table can pair a question's answers across variants.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import permutations

import numpy as np

from faithprobe.errors import UsageError
from faithprobe.options import check_choice
from faithprobe.records import QAExample
from faithprobe.seeding import rng_for

COLOURS: tuple[str, ...] = (
    "black",
    "white",
    "red",
    "green",
    "yellow",
    "blue",
    "brown",
    "purple",
    "pink",
    "orange",
    "gray",
)
# the training part's colours: no colour of COLOURS (module docstring, "Parts")
TRAIN_COLOURS: tuple[str, ...] = (
    "silver",
    "gold",
    "beige",
    "violet",
    "maroon",
    "navy",
    "teal",
    "ivory",
    "crimson",
    "olive",
    "turquoise",
)
PART_COLOURS = {"test": COLOURS, "train": TRAIN_COLOURS}
PARTS = tuple(PART_COLOURS)
FORMS: tuple[str, ...] = ("original", "paraphrase", "control")
VARIANTS: tuple[str, ...] = ("original", "space", "newline", "negated")
FORMATTING_SUFFIX = {"original": "", "space": " ", "newline": "\n"}
STORIES_PER_SCHEMA = 26
QUESTIONS_PER_STORY = 4
NEGATED_QUESTIONS_PER_STORY = 3


def article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


@dataclass(frozen=True)
class Schema:
    """A story template: ``template`` and ``negated`` take ``{c1}``/``{c2}`` (colours) and
    ``{a1}``/``{a2}`` (the indefinite article that goes before each colour)."""

    name: str
    first: str
    second: str
    template: str
    negated: str

    def render(self, c1: str, c2: str, *, negated: bool = False) -> str:
        text = self.negated if negated else self.template
        out = text.format(c1=c1, c2=c2, a1=article(c1), a2=article(c2))
        return out[0].upper() + out[1:]


SCHEMAS: tuple[Schema, ...] = (
    Schema(
        "car_house",
        "car",
        "house",
        "The {c1} car was standing in front of {a2} {c2} house.",
        "The {c1} car was standing in front of a house that was not {c2}.",
    ),
    Schema(
        "ball_bat",
        "ball",
        "bat",
        "They played with {a1} {c1} ball and {c2} bat.",
        "They played with {a1} {c1} ball and a bat that was not {c2}.",
    ),
    Schema(
        "shirt_jacket",
        "shirt",
        "jacket",
        "The man was wearing {a1} {c1} shirt and {a2} {c2} jacket.",
        "The man was wearing {a1} {c1} shirt and a jacket that was not {c2}.",
    ),
    Schema(
        "window_door",
        "window",
        "door",
        "The house had {a1} {c1} window and {a2} {c2} door.",
        "The house had {a1} {c1} window and a door that was not {c2}.",
    ),
    Schema(
        "glass_table",
        "glass",
        "table",
        "{a1} {c1} glass was placed on {a2} {c2} table.",
        "{a1} {c1} glass was placed on a table that was not {c2}.",
    ),
)
SCHEMA_NAMES = tuple(s.name for s in SCHEMAS)
_SCHEMAS = {s.name: s for s in SCHEMAS}


def question(obj: str, colour: str, form: str) -> str:
    """The yes/no question asking whether ``obj`` had ``colour``, in one of ``FORMS``."""
    if form == "original":
        return f"Was the {obj} {colour}?"
    if form == "paraphrase":
        return f"Was there {article(colour)} {colour} {obj}?"
    if form == "control":
        return f"Was the {article(colour)} {colour} {obj}?"
    raise UsageError(f"unknown question form {form!r}; choose from {list(FORMS)}")


@dataclass(frozen=True)
class Story:
    schema: Schema
    c1: str
    c2: str

    @property
    def id(self) -> str:
        return f"pa/{self.schema.name}/{self.c1}-{self.c2}"

    def text(self, variant: str) -> str:
        if variant == "negated":
            return self.schema.render(self.c1, self.c2, negated=True)
        return self.schema.render(self.c1, self.c2) + FORMATTING_SUFFIX[variant]

    def questions(self, variant: str) -> list[tuple[int, str, str, str]]:
        """(object position 1/2, object, colour, gold) in the documented order."""
        s = self.schema
        if variant == "negated":
            return [
                (1, s.first, self.c1, "yes"),
                (1, s.first, self.c2, "no"),
                (2, s.second, self.c2, "no"),
            ]
        return [
            (1, s.first, self.c1, "yes"),
            (2, s.second, self.c2, "yes"),
            (1, s.first, self.c2, "no"),
            (2, s.second, self.c1, "no"),
        ]


def check_stories(n: int, part: str, option: str = "stories_per_schema") -> None:
    """Stories per schema (given as ``option``): at least one, at most the ordered pairs of
    the part's colours."""
    most = len(PART_COLOURS[part]) * (len(PART_COLOURS[part]) - 1)
    if not 1 <= n <= most:
        raise UsageError(f"{option} must lie in 1..{most}, got {n:,}")


def colour_pairs(
    schema: str, seed: int = 0, n: int = STORIES_PER_SCHEMA, part: str = "test"
) -> list[tuple[str, str]]:
    """``n`` ordered pairs of distinct colours of ``part`` for ``schema``, seeded, in the
    order of the part's colours."""
    every = list(permutations(PART_COLOURS[part], 2))
    check_stories(n, part)
    extra = () if part == "test" else (part,)  # the test part's draws as they always were
    rng = rng_for(seed, "predicate_argument.pairs", schema, *extra)
    picks = np.sort(rng.choice(len(every), size=n, replace=False))
    return [every[i] for i in picks]


@dataclass(frozen=True)
class PredicateArgumentConfig:
    forms: tuple[str, ...] = FORMS
    variants: tuple[str, ...] = VARIANTS
    schemas: tuple[str, ...] = SCHEMA_NAMES
    stories_per_schema: int = STORIES_PER_SCHEMA
    part: str = "test"

    def __post_init__(self) -> None:
        choices = {"forms": FORMS, "variants": VARIANTS, "schemas": SCHEMA_NAMES, "part": PARTS}
        for key, allowed in choices.items():
            check_choice("generator 'predicate-argument'", key, getattr(self, key), allowed)
        check_stories(self.stories_per_schema, self.part)


def stories(config: PredicateArgumentConfig | None = None, seed: int = 0) -> list[Story]:
    """``stories_per_schema`` stories per schema (130 by default)."""
    config = config or PredicateArgumentConfig()
    return [
        Story(_SCHEMAS[name], c1, c2)
        for name in config.schemas
        for c1, c2 in colour_pairs(name, seed, config.stories_per_schema, config.part)
    ]


def story_examples(story: Story, variant: str, form: str) -> Iterator[QAExample]:
    """The questions of one story variant in one question form."""
    context = story.text(variant)
    end = len(context.rstrip())
    for position, obj, colour, gold in story.questions(variant):
        item_id = f"{story.id}/{obj}-{colour}"
        own = colour == (story.c1 if position == 1 else story.c2)
        yield QAExample(
            id=f"{story.id}/{variant}/{form}/{obj}-{colour}",
            context=context,
            question=question(obj, colour, form),
            answers=(gold,),
            answer_type=gold,
            rationale=((0, end),),
            features={
                "schema": story.schema.name,
                "story_id": story.id,
                "base_id": story.id,
                "item_id": item_id,
                "c1": story.c1,
                "c2": story.c2,
                "object": obj,
                "other_object": story.schema.second if position == 1 else story.schema.first,
                "object_position": position,
                "colour": colour,
                "own_colour": own,
                "form": form,
                "grammatical": form != "control",
                "variant": variant,
                "gold": gold,
                # the contrast: the only answer the negation changes
                "flipped": variant == "negated" and own and position == 2,
            },
        )


def generate(config: PredicateArgumentConfig | None = None, seed: int = 0) -> list[QAExample]:
    """Every (story, variant, form, question) of ``config``: 5,850 examples by default
    (see the module docstring for the count); ordered by story, variant, form, question."""
    config = config or PredicateArgumentConfig()
    return [
        ex
        for story in stories(config, seed)
        for variant in config.variants
        for form in config.forms
        for ex in story_examples(story, variant, form)
    ]
