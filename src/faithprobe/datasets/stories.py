"""Short stories behind the distractor cloze items, and how they are rendered to text.

A story has a key entity with one critical fact ("Sebastian lives in France"), a query
about the entity whose answer follows from the fact ("The capital of Sebastian's country
is ___" -> Paris), and optionally attractors and filler. The four item sets follow
Pandia & Ettinger (2021), "Sorting through the noise". Items are kept as structured
:class:`Story` records so that interventions edit the story and re-render it, rather than
editing strings.

Attractor types:

* ``B``: another word of the critical *background* word's class (another country).
* ``T``: another word of the *target*'s class (another capital).
* ``unrelated``: a property unrelated to the query ("drives a car").

Settings: ``single`` (attractors are further properties of the key entity) and ``multi``
(each attractor is the property of another entity). Positions: ``after`` (attractors
follow the critical fact), ``between`` (attractors stand between the key entity's first
mention and the critical fact) and, in the multi setting, ``later`` (the queried entity is
mentioned last, after the attractor entities).

Padding: neutral sentences about nothing in the story, between the first sentence and the
query, lengthen a no-attractor item the way attractors after the fact would, so that the
n = 0 point is measured at a comparable distance (the method's filler control).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

ATTRACTOR_TYPES = ("B", "T", "unrelated")
SETTINGS = ("single", "multi")
NO_ATTRACTOR = "none"  # the attractor type of an item without attractors
POSITIONS = {"single": ("after", "between"), "multi": ("after", "between", "later")}

NAMES: tuple[tuple[str, str], ...] = (
    ("Sebastian", "m"),
    ("Emma", "f"),
    ("Jake", "m"),
    ("Sophia", "f"),
    ("Daniel", "m"),
    ("Olivia", "f"),
    ("Jack", "m"),
    ("Grace", "f"),
    ("Rowan", "m"),
    ("Hannah", "f"),
    ("Thomas", "m"),
    ("Chloe", "f"),
    ("Oliver", "m"),
    ("Lily", "f"),
    ("Henry", "m"),
    ("Maya", "f"),
    ("Samuel", "m"),
    ("Ella", "f"),
    ("Lucas", "m"),
    ("Zoe", "f"),
)
GENDER = dict(NAMES)

# no phrase may name a word of any candidate set ("wears glasses" named the optician's
# "glasses", so a nearest-word shortcut was pulled by an "unrelated" attractor)
UNRELATED = (
    "drives a car",
    "writes poetry",
    "owns a dog",
    "plays the piano",
    "likes jazz",
    "collects stamps",
    "grows tomatoes",
    "flies kites",
    "bakes cakes",
    "runs marathons",
)
# neutral sentences about nothing in the story: padding that lengthens a no-attractor item
# as attractors would, without adding a competitor (the method's n = 0 control)
NEUTRAL_SENTENCES = (
    "The weather was mild that week.",
    "The town had a small library.",
    "It was a quiet afternoon.",
    "The road out of town was long and straight.",
    "A bus stopped at the corner.",
    "The shops closed early on Sundays.",
)
FILLERS = (
    "sang in a choir",
    "has a sister",
    "likes to read",
    "wakes up early",
    "has two cats",
    "once broke an arm",
)


def pronoun(gender: str) -> str:
    return "he" if gender == "m" else "she"


def possessive(gender: str) -> str:
    return "his" if gender == "m" else "her"


def reflexive(gender: str) -> str:
    return "himself" if gender == "m" else "herself"


def join_list(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


@dataclass(frozen=True)
class ItemSet:
    """One family of items: background -> target pairs and the phrases that carry them.

    Phrases are verb phrases with ``{x}`` for the word; ``{list}`` when a single-entity
    attractor phrase takes several words at once. ``query`` takes ``{e}`` (the entity),
    ``{pos}`` (his/her). In the multi setting a ``B`` attractor is the critical ``fact`` said
    of another entity ("Rowan lives in Chile"); ``t_multi`` says a ``T`` one.
    """

    name: str
    pairs: tuple[tuple[str, str], ...]
    fact: str
    query: str
    b_single: str
    t_single: str
    t_multi: str
    b_article: bool = False
    t_article: bool = False

    @property
    def backgrounds(self) -> tuple[str, ...]:
        return tuple(b for b, _ in self.pairs)

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.pairs)


def _a(word: str) -> str:
    return f"{'an' if word[0].lower() in 'aeiou' else 'a'} {word}"


ITEM_SETS: dict[str, ItemSet] = {
    s.name: s
    for s in (
        ItemSet(
            name="capitals",
            pairs=(
                ("France", "Paris"),
                ("Chile", "Santiago"),
                ("China", "Beijing"),
                ("Finland", "Helsinki"),
                ("Indonesia", "Jakarta"),
                ("Poland", "Warsaw"),
            ),
            fact="lives in {x}",
            query="The capital of {e}'s country is",
            b_single="has visited {list}",
            t_single="has been to {list}",
            t_multi="lives in {x}",
        ),
        ItemSet(
            name="professions",
            pairs=(
                ("florist", "flowers"),
                ("optician", "glasses"),
                ("baker", "bread"),
                ("butcher", "meat"),
                ("fisherman", "fish"),
                ("painter", "paintings"),
            ),
            fact="works as {x}",
            query="For {pos} job, {e} sells",
            b_single="is friends with {list}",
            t_single="likes to buy {list}",
            t_multi="buys {x}",
            b_article=True,
        ),
        ItemSet(
            name="monuments",
            pairs=(
                ("the Taj Mahal", "India"),
                ("the Pyramid of Giza", "Egypt"),
                ("the Eiffel Tower", "France"),
                ("the Tower of Pisa", "Italy"),
                ("Machu Picchu", "Peru"),
                ("the Kremlin", "Russia"),
            ),
            fact="has visited {x}",
            query="The monument that {e} has visited is in",
            b_single="has read about {list}",
            t_single="has friends in {list}",
            t_multi="lives in {x}",
        ),
        ItemSet(
            name="sports",
            pairs=(
                ("football", "touchdown"),
                ("baseball", "run"),
                ("soccer", "goal"),
                ("cricket", "century"),
            ),
            fact="plays {x}",
            query="In the sport that {e} plays, the aim is to score a",
            b_single="watches {list}",
            t_single="has seen {list}",
            t_multi="scored {x}",
            t_article=True,
        ),
    )
}


@dataclass(frozen=True)
class Story:
    """Everything needed to render one distractor item."""

    item_set: str
    entity: str
    background: str
    target: str
    setting: str = "single"
    attractor_type: str = NO_ATTRACTOR
    attractors: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    position: str = "after"
    filler: tuple[str, ...] = ()
    padding: tuple[str, ...] = ()  # neutral sentences after the first (no-attractor items)

    @property
    def spec(self) -> ItemSet:
        return ITEM_SETS[self.item_set]

    @property
    def gender(self) -> str:
        return GENDER.get(self.entity, "m")

    def with_(self, **changes: Any) -> Story:
        return replace(self, **changes)

    def to_features(self) -> dict[str, Any]:
        # the fields are strings and tuples of strings: no deep copy (asdict) is needed
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["attractors"] = list(self.attractors)
        d["others"] = list(self.others)
        d["filler"] = list(self.filler)
        d["n_attractors"] = len(self.attractors)
        padding = d.pop("padding")  # only padded items carry it: other items stay as they were
        if padding:
            d["padding"] = list(padding)
        return d

    @classmethod
    def from_features(cls, features: dict[str, Any]) -> Story:
        names = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in features.items() if k in names}
        for k in ("attractors", "others", "filler", "padding"):
            kwargs[k] = tuple(kwargs.get(k, ()))
        return cls(**kwargs)

    # -- rendering -------------------------------------------------------------------

    def _word(self, word: str, article: bool) -> str:
        return _a(word) if article else word

    def _attractor_phrases(self) -> list[str]:
        """Verb phrases of the single-entity setting (one per unrelated attractor)."""
        if not self.attractors:
            return []
        if self.attractor_type == "unrelated":
            return list(self.attractors)
        spec = self.spec
        if self.attractor_type == "B":
            phrase, article = spec.b_single, spec.b_article
        else:
            phrase, article = spec.t_single, spec.t_article
        words = [self._word(w, article) for w in self.attractors]
        return [phrase.format(list=join_list(words))]

    def _attractor_clauses(self) -> list[str]:
        """'Rowan lives in Indonesia': one clause per attractor, multi-entity setting."""
        spec = self.spec
        clauses = []
        for name, word in zip(self.others, self.attractors, strict=True):
            if self.attractor_type == "unrelated":
                vp = word
            elif self.attractor_type == "B":
                vp = spec.fact.format(x=self._word(word, spec.b_article))  # another's fact
            else:
                vp = spec.t_multi.format(x=self._word(word, spec.t_article))
            clauses.append(f"{name} {vp}")
        return clauses

    def _fact_vp(self) -> str:
        return self.spec.fact.format(x=self._word(self.background, self.spec.b_article))

    def _subject(self) -> str:
        """The key entity, with any filler as a relative clause between it and the fact."""
        if not self.filler:
            return self.entity
        return f"{self.entity}, who {join_list(list(self.filler))},"

    def render_context(self) -> str:
        e, fact = self._subject(), self._fact_vp()
        if self.setting == "single" or not self.attractors:
            phrases = self._attractor_phrases()
            vps = phrases + [fact] if self.position == "between" else [fact] + phrases
            first = f"{e} {join_list(vps)}."
        else:
            clauses = self._attractor_clauses()
            if self.position == "after":
                first = f"{', '.join([f'{e} {fact}'] + clauses[:-1])}, and {clauses[-1]}."
            elif self.position == "between":
                body = join_list(clauses)
                first = (
                    f"{e} knows that {body}, and {pronoun(self.gender)} "
                    f"{reflexive(self.gender)} {fact}."
                )
            else:  # later: the queried entity is mentioned last
                first = f"{', '.join(clauses)}, and {e} {fact}."
        query = self.spec.query.format(e=self.entity, pos=possessive(self.gender))
        return " ".join([first, *self.padding, query])


def base_story(item_set: str, pair_index: int, entity: str) -> Story:
    background, target = ITEM_SETS[item_set].pairs[pair_index]
    return Story(item_set=item_set, entity=entity, background=background, target=target)
