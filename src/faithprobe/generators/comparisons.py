"""Comparison items the project authors itself, for the right-reasons suite: two entities
with a year (or an age), and a question that compares them ("Which film came out earlier,
Red Harbor or Blue Field?").

Real datasets hold few such questions (SQuAD v1.1 dev: 2 of 10,570), too few for stable
statistics, so they are generated: five domains (films, people, buildings, companies,
books), each with two ways to state the facts (one sentence per entity, or one sentence
for both) and several question templates, over names combined from small lists. For every
domain ``pairs_per_domain`` entity pairs with distinct values are drawn; each pair is told
in every (fact form, question) combination. Which entity is stated first and which the
question names first are drawn per item, so the answer is not tied to a position.

Each item comes in two conditions (``features["condition"]``): ``supporting`` (the fact
sentences alone) and ``paragraph`` (2-4 filler sentences about the entities added; a
filler comes only after its entity's fact, so an entity's first mention is its fact and the
spans :func:`faithprobe.datasets.comparisons.comparison` finds are the facts'). The
rationale is the fact sentence(s). The comparison features come from that function too, so
items written to SQuAD JSON and read back get the same ones.

**Parts.** A model trained on comparison items must be tested on others. Every unordered
pair of names belongs to one ``part`` (:func:`part_of`, a fixed hash: about a quarter of the
pairs are ``train``), and a part's items only use its own name pairs, so the ``train`` items
(``faithprobe generate comparisons -o part=train``) never compare two entities the ``test``
items (the default, and what the suite runs on) compare. An entity pair with its values is
one document (``features["title"]``), which keeps its items on one side of a document split.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from itertools import product
from typing import TYPE_CHECKING

from faithprobe.datasets.comparisons import comparison
from faithprobe.options import check_numbers, option
from faithprobe.records import QAExample
from faithprobe.seeding import rng_for

if TYPE_CHECKING:  # `faithprobe list` imports this module; numpy is imported where used
    import numpy as np


@dataclass(frozen=True)
class Domain:
    """Entity names, fact forms (``{e}``/``{v}``: one entity; ``{a}``, ``{b}``, ``{va}``,
    ``{vb}``: both), questions ``(key, comparative, template with {a} {b}, fact forms it
    fits, "min" or "max": which value wins)``, fillers (``{e}``) and the value range."""

    names: tuple[str, ...]
    facts: dict[str, str]
    questions: tuple[tuple[str, str, str, tuple[str, ...], str], ...]
    fillers: tuple[str, ...]
    values: tuple[int, int] = (1900, 2020)


def _combine(first: str, second: str) -> tuple[str, ...]:
    return tuple(f"{a} {b}" for a, b in product(first.split(), second.split()))


_YEAR = ("separate", "joint")
_AGE = ("age-separate", "age-joint")
AGES = (20, 90)


def _dated(noun: str, verb: str, phrasing: str) -> tuple[tuple[str, str, str, tuple, str], ...]:
    """The four questions of a dated domain: earlier, first, more recently, later."""
    return (
        ("earlier", "earlier", f"Which {noun} {phrasing} earlier, {{a}} or {{b}}?", _YEAR, "min"),
        ("first", "first", f"Which {noun} was {verb} first, {{a}} or {{b}}?", _YEAR, "min"),
        ("recent", "more recently", f"Which {noun} was {verb} more recently, {{a}} or {{b}}?",
         _YEAR, "max"),
        ("later", "later", f"Which {noun} {phrasing} later, {{a}} or {{b}}?", _YEAR, "max"),
    )  # fmt: skip


def _dated_facts(verb: str, noun: str = "") -> dict[str, str]:
    """The fact forms of a dated domain: one entity's year, both entities' years in one
    sentence; a ``noun`` names the entities before their names (the film {e}, the films {a}
    and {b})."""
    one, both = (f"The {noun} ", f"The {noun}s ") if noun else ("", "")
    return {
        "separate": f"{one}{{e}} was {verb} in {{v}}.",
        "joint": f"{both}{{a}} and {{b}} were {verb} in {{va}} and {{vb}} respectively.",
    }


DOMAINS: dict[str, Domain] = {
    "films": Domain(
        names=_combine("Red Blue Silent Golden Broken Distant Hidden Wild",
                       "Harbor Field River Mountain Garden Winter Road Island"),
        facts=_dated_facts("released", "film"),
        questions=_dated("film", "released", "came out"),
        fillers=("{e} was shot on location in the north.", "Critics praised the score of {e}.",
                 "{e} runs for almost two hours.", "The poster for {e} was painted by hand."),
    ),
    "people": Domain(
        names=("Ann", "Tom", "Maria", "David", "Ines", "Paul", "Grace", "Omar", "Lena", "Victor",
               "Nora", "Felix", "Clara", "Hugo", "Ruth", "Simon"),
        facts={"separate": "{e} was born in {v}.", "joint": "{a} was born in {va} and {b} in {vb}.",
               "age-separate": "{e} is {v} years old.", "age-joint": "{a} is {va} and {b} is {vb}."},
        questions=(
            ("older", "older", "Who is older, {a} or {b}?", _YEAR, "min"),
            ("younger", "younger", "Who is younger, {a} or {b}?", _YEAR, "max"),
            ("earlier", "earlier", "Who was born earlier, {a} or {b}?", _YEAR, "min"),
            ("later", "later", "Who was born later, {a} or {b}?", _YEAR, "max"),
            ("age-older", "older", "Who is older, {a} or {b}?", _AGE, "max"),
            ("age-younger", "younger", "Who is younger, {a} or {b}?", _AGE,
             "min"),
        ),
        fillers=("{e} grew up near the coast.", "{e} plays the violin.",
                 "{e} once worked in a bakery.", "Friends describe {e} as patient."),
    ),
    "buildings": Domain(
        names=_combine("Harlow Kestrel Marlin Ashford Brennan Calder Dunmore Everly",
                       "Tower Hall Library Museum"),
        facts=_dated_facts("completed"),
        questions=_dated("building", "completed", "was finished"),
        fillers=("{e} has a copper roof.", "Tourists often photograph {e}.",
                 "{e} stands near the old market.", "The architect of {e} studied in Vienna."),
        values=(1850, 2015),
    ),
    "companies": Domain(
        names=_combine("Northwind Bluepeak Silverline Redstone Brightwater Ironbark Greenfield",
                       "Systems Foods Motors Media"),
        facts=_dated_facts("founded"),
        questions=(*_dated("company", "founded", "started"),
                   ("older", "older", "Which company is older, {a} or {b}?", _YEAR, "min")),
        fillers=("{e} employs several hundred people.", "{e} has offices in three countries.",
                 "The logo of {e} is green.", "{e} sponsors a local football club."),
    ),
    "books": Domain(
        names=_combine("Quiet Bitter Paper Glass Iron Lost Summer Midnight",
                       "Letters Houses Promises Orchards Voices Tides Maps Bridges"),
        facts=_dated_facts("published", "novel"),
        questions=_dated("novel", "published", "appeared"),
        fillers=("{e} has been translated into French.", "{e} is set in a small village.",
                 "Readers still discuss the ending of {e}.", "{e} was adapted for radio."),
    ),
}  # fmt: skip
CONDITIONS = ("supporting", "paragraph")
PARTS = ("test", "train")
# the largest pairs_per_domain (the suite takes 50): 92,000 items, 29 MB, about 12 s; without a
# bound a mistyped size generates until memory runs out
MAX_PAIRS_PER_DOMAIN = 1000


def part_of(first: str, second: str) -> str:
    """The part an unordered pair of names belongs to: ``train`` for a quarter of them."""
    key = "\n".join(sorted((first, second))).encode()
    return "train" if hashlib.sha256(key).digest()[0] % 4 == 0 else "test"


@dataclass(frozen=True)
class ComparisonConfig:
    """What ``faithprobe generate comparisons`` builds (``-o KEY=VALUE``; lists
    comma-separated)."""

    pairs_per_domain: int = option(50, "entity pairs per domain", range=(1, MAX_PAIRS_PER_DOMAIN))
    domains: tuple[str, ...] = option(tuple(DOMAINS), "domains to include", choices=DOMAINS)
    conditions: tuple[str, ...] = option(
        CONDITIONS,
        "conditions: supporting (the facts alone), paragraph (with fillers)",
        choices=CONDITIONS,
    )
    part: str = option(
        "test", "test (what the suite runs on) or train (the other pairs)", choices=PARTS
    )

    def __post_init__(self) -> None:
        check_numbers(self)


def _facts(domain: Domain, form: str, ordered: list[tuple[str, int]]) -> list[str]:
    """The fact sentence(s) for the entities in the order stated."""
    (a, va), (b, vb) = ordered
    template = domain.facts[form]
    if "{e}" in template:
        return [template.format(e=a, v=va), template.format(e=b, v=vb)]
    return [template.format(a=a, b=b, va=va, vb=vb)]


def _with_fillers(
    domain: Domain, facts: list[str], ordered: list[str], rng: np.random.Generator
) -> list[str]:
    """``facts`` with 2-4 fillers, each after the fact of the entity it is about."""
    after: list[list[str]] = [[] for _ in facts]
    for k in rng.choice(len(domain.fillers), size=int(rng.integers(2, 5)), replace=False):
        slot = int(rng.integers(len(facts)))
        known = ordered[: slot + 1] if len(facts) == 2 else ordered
        after[slot].append(domain.fillers[k].format(e=known[int(rng.integers(len(known)))]))
    return [s for fact, rest in zip(facts, after, strict=True) for s in (fact, *rest)]


def _item(
    name: str, domain: Domain, pair: str, form: str, question, condition: str, seed: int, ents
) -> QAExample:
    key, _, q_template, _, pick = question
    item_id = f"cmp-{name}-{pair}-{form}-{key}-{condition}"
    rng = rng_for(seed, "comparisons", item_id.rsplit("-", 1)[0])
    stated = [ents[i] for i in rng.permutation(2)]
    asked = [ents[i][0] for i in rng.permutation(2)]
    facts = _facts(domain, form, stated)
    sentences = facts
    if condition == "paragraph":
        sentences = _with_fillers(domain, facts, [e for e, _ in stated], rng_for(seed, item_id))
    context = " ".join(sentences)
    rationale = tuple(
        (context.index(f), context.index(f) + len(f)) for f in facts
    )  # facts are unique sentences of the context
    winner = (min if pick == "min" else max)(ents, key=lambda e: e[1])[0]
    example = QAExample(
        id=item_id,
        context=context,
        question=q_template.format(a=asked[0], b=asked[1]),
        answers=(winner,),
        answer_starts=(context.index(winner),),
        rationale=rationale,
    )
    found = comparison(example).example
    if found is None:  # a template bug, not a data problem
        raise AssertionError(f"generated item {item_id} is not a comparison question")
    features = {
        **found.features,
        "values": dict(ents),
        "domain": name,
        "template": f"{form}/{key}",
        "condition": condition,
        "source": "generated-comparison",
        "title": f"{name} {pair}",
    }
    return replace(found, features=features)


def _names_in_part(domain: Domain, part: str, rng: np.random.Generator) -> np.ndarray:
    """Two distinct name indices whose pair belongs to ``part`` (rejection sampling)."""
    while True:
        names = rng.choice(len(domain.names), size=2, replace=False)
        if part_of(*(domain.names[n] for n in names)) == part:
            return names


def generate(config: ComparisonConfig, seed: int) -> list[QAExample]:
    """Every (domain, pair, fact form, fitting question, condition) item of ``config.part``,
    in that order."""
    import numpy as np

    items = []
    for name in config.domains:
        domain = DOMAINS[name]
        rng = rng_for(seed, "comparisons.pairs", name, config.part)
        for k in range(config.pairs_per_domain):
            pair = f"{k:03d}" if config.part == "test" else f"train{k:03d}"
            names = _names_in_part(domain, config.part, rng)
            years = rng.choice(np.arange(domain.values[0], domain.values[1] + 1), 2, replace=False)
            ages = rng.choice(np.arange(AGES[0], AGES[1] + 1), size=2, replace=False)
            for form in domain.facts:
                values = ages if form in _AGE else years
                ents = [(domain.names[n], int(v)) for n, v in zip(names, values, strict=True)]
                for question in domain.questions:
                    if form not in question[3]:
                        continue
                    for condition in config.conditions:
                        items.append(
                            _item(name, domain, pair, form, question, condition, seed, ents)
                        )
    return items
