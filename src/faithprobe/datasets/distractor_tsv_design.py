"""What a row of the distractors release (Pandia & Ettinger 2021) holds, read from its text
against its base item: its filler clauses, its attractors and their class, and where they
stand relative to the critical fact. No list of the release's phrases is used, so a domain
whose filler no list names ("went to school in France"), or a folder whose variants use
other filler clauses than its no-attractor rows ("fell down on Tuesday"), is read alike.

The rules, each from the text:

* **key entity**: every row tells its story about its own entity, named in the query (the
  last sentence: "For his job , Jake sells"). It is the word at the place where the
  queries of one domain (one candidate set) differ, if it also occurs in the story; else
  the query's first word that does. It is masked before texts are compared, so rows about
  other names compare as the same story.
* **added text**: a row's tokens aligned with its base item's (``difflib``); what the base
  item lacks comes in runs, each before the critical fact (the base item's story, its
  entity aside) or after it. A run is split into clauses at commas, semicolons and "and".
* **connective**: the shortest no-attractor row with more words than the base item has one
  filler clause; whatever else it adds ("has a sister and *now* works as") is the connective
  joining filler to the fact, counted in no row's clauses.
* **attractors**: the side of the fact whose added text names another candidate (T-type:
  the target's class) or another story's background word (B-type: "optician"; a background
  word is one of the domain's stories' words the others lack, so "tower" of "the tower of
  pisa" is not "the eiffel tower"'s). Where no side names one (unrelated attractors), the
  side whose words are the least often the filler rows' words ("has a sister" is all
  filler words, "writes poetry , drives a car , and has a pet snake" mostly not). A row
  naming both classes is typed by the class it names more. Where the domain holds one story
  only (no background word can be told), a row naming no class takes its folder's.
* **filler**: the clauses on the other side, without the connective and without a clause
  that names no attractor and is mostly the base item's own words repeated ("now works as a
  works as an optician"); the row's filler level is how many there are.
* **position**: ``after`` where all attractors follow the critical fact; else ``between``
  where the key entity is named before the first attractor, ``later`` where it is named
  after one (the key entity is not the story's first).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property

TOKEN = re.compile(r"\w+|[^\w\s]")
ENTITY = "\x00entity"  # the key entity's name, masked
SEPARATORS = frozenset({",", ";", "and"})
SENTENCE_END = frozenset({".", "!", "?"})
BEFORE, AFTER = "before", "after"


@dataclass(frozen=True)
class Text:
    """A row's text as tokens: as written, and lower-cased with its key entity masked."""

    raw: tuple[str, ...]
    low: tuple[str, ...]
    query_start: int  # the first token of the last sentence (the query)

    @property
    def story(self) -> tuple[str, ...]:
        return self.low[: self.query_start]

    @property
    def entity_at(self) -> int | None:
        """Where the key entity is first named, None if nowhere."""
        return next((i for i, t in enumerate(self.low) if t == ENTITY), None)


def query_start(low: Sequence[str]) -> int:
    """Where the last sentence begins: after the last sentence end that is not the text's
    last token (0 for a text of one sentence)."""
    ends = [i for i, t in enumerate(low[:-1]) if t in SENTENCE_END]
    return ends[-1] + 1 if ends else 0


@dataclass(frozen=True)
class Frame:
    """The query of one domain's rows: its length in tokens and where the key entity's name
    stands in it (None where the queries do not differ)."""

    length: int
    slot: int | None

    @classmethod
    def of(cls, texts: Iterable[str]) -> Frame:
        queries = []
        for text in texts:
            low = [t.lower() for t in TOKEN.findall(text)]
            queries.append(tuple(low[query_start(low) :]))
        length = Counter(len(q) for q in queries).most_common(1)[0][0] if queries else 0
        same = [q for q in queries if len(q) == length]
        distinct = [len({q[i] for q in same}) for i in range(length)]
        slot = max(range(length), key=lambda i: distinct[i], default=None)
        return cls(length, slot if slot is not None and distinct[slot] > 1 else None)

    def entity(self, low: Sequence[str], start: int) -> str | None:
        """The key entity of a text whose query starts at ``start`` (module docstring)."""
        query, story = low[start:], set(low[:start])
        if self.slot is not None and len(query) == self.length and query[self.slot] in story:
            return query[self.slot]
        return next((w for w in query if w in story and w.isalpha()), None)

    def text(self, text: str) -> Text:
        raw = tuple(TOKEN.findall(text))
        low = [t.lower() for t in raw]
        start = query_start(low)
        entity = self.entity(low, start)
        masked = tuple(ENTITY if t == entity else t for t in low)
        return Text(raw, masked, start)


def fact_words(base: Text) -> list[str]:
    """The words of a base item's story, its entity aside (its critical fact)."""
    return [t for t in base.story if t != ENTITY and t[0].isalnum()]


@dataclass(frozen=True)
class Classes:
    """The words that name an attractor of each class in one domain: the other candidates
    (T) and the background words of the other stories (B), by the target they belong to."""

    targets: dict[str, tuple[str, ...]]  # candidate (case-folded) -> its tokens
    backgrounds: dict[str, frozenset[str]]  # target -> its story's distinctive words

    @classmethod
    def of(cls, candidates: Iterable[str], bases: dict[str, list[Text]]) -> Classes:
        """``bases``: the domain's base items by their target (case-folded)."""
        targets = {c: tuple(t.lower() for t in TOKEN.findall(c)) for c in candidates}
        words = {t: set().union(*(fact_words(b) for b in texts)) for t, texts in bases.items()}
        common = set.intersection(*words.values()) if len(words) > 1 else set()
        backgrounds = {}
        for target, own in words.items():
            others = set().union(*(w for t, w in words.items() if t != target))
            backgrounds[target] = frozenset(own - common - others)
        return cls(targets, backgrounds)

    @property
    def knows_backgrounds(self) -> bool:
        """Whether the domain holds two stories or more (one story's words cannot be told
        from the sentence frame's)."""
        return len(self.backgrounds) > 1

    @cached_property
    def _starting(self) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
        """First token -> (class, what it names, the tokens naming it)."""
        out: dict[str, list[tuple[str, str, tuple[str, ...]]]] = defaultdict(list)
        for c, words in self.targets.items():
            out[words[0]].append(("T", c, words))
        for other, words in self.backgrounds.items():
            for w in words:
                out[w].append(("B", other, (w,)))
        return out

    def named(self, low: Sequence[str], positions: Sequence[int], target: str
              ) -> tuple[dict[str, int], dict[str, int]]:  # fmt: skip
        """Where the tokens of ``low`` at ``positions`` first name each other candidate (T)
        and each other story's background (B, by that story's target)."""
        found: dict[str, dict[str, int]] = {"T": {}, "B": {}}
        for k, j in enumerate(positions):
            for kind, what, words in self._starting.get(low[j], ()):
                if what == target or what in found[kind]:
                    continue
                if len(words) == 1 or tuple(low[i] for i in positions[k : k + len(words)]) == words:
                    found[kind][what] = j
        return found["T"], found["B"]


@dataclass(frozen=True)
class Story:
    """A base item and the no-attractor rows that add filler to it, shortest first."""

    base: Text
    fillers: tuple[Text, ...]

    @cached_property
    def connective(self) -> frozenset[str]:
        """What the one-clause filler row adds besides its clause (module docstring)."""
        if not self.fillers:
            return frozenset()
        clauses = [run for _, run in _runs(self.base, self.fillers[0])]
        return frozenset(t for run in clauses[1:] for t in run)

    @cached_property
    def filler_words(self) -> Counter:
        """The words the filler rows add, the connective aside."""
        glue = self.connective
        return Counter(
            t for f in self.fillers for _, run in _runs(self.base, f) for t in run if t not in glue
        )


@dataclass(frozen=True)
class Design:
    """What a row holds, read from its text (module docstring)."""

    filler: tuple[str, ...]  # its filler clauses, as written
    attractor_type: str | None  # T, B, "unrelated"; None where nothing was added
    position: str | None  # after, between, later; None where nothing was added
    named: tuple[str, ...]  # the attractors of a class it names, as written


def _runs(base: Text, text: Text) -> list[tuple[str, tuple[str, ...]]]:
    """The runs of ``text`` the base item lacks, split into clauses: (side of the critical
    fact, the clause's lower-cased tokens)."""
    return [(side, tuple(text.low[i] for i in clause)) for side, clause in _clauses(base, text)]


def _clauses(base: Text, text: Text) -> list[tuple[str, list[int]]]:
    """(side, token positions in ``text``) of each clause ``text`` adds to ``base``."""
    matcher = SequenceMatcher(None, base.low, text.low, autojunk=False)
    fact = {
        i for i in range(base.query_start) if base.low[i] != ENTITY and base.low[i][0].isalnum()
    }
    placed = [j + k for i, j, size in matcher.get_matching_blocks() for k in range(size)
              if i + k in fact]  # fmt: skip
    last_fact = max(placed, default=-1)
    out: list[tuple[str, list[int]]] = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag not in ("insert", "replace"):
            continue
        side = AFTER if j1 > last_fact else BEFORE
        clause: list[int] = []
        for j in range(j1, j2):
            if text.low[j] in SEPARATORS:
                out += [(side, clause)] if clause else []
                clause = []
            else:
                clause.append(j)
        out += [(side, clause)] if clause else []
    return out


def derive(text: Text, story: Story, classes: Classes, target: str, folder_type: str | None,
           has_attractors: bool) -> Design:  # fmt: skip
    """The design of ``text``, a row of ``story`` whose target is ``target`` (case-folded);
    ``folder_type``: the attractor class its folder names (None: either related class), read
    where the text names no class and the domain's stories cannot tell them (one story)."""
    clauses = _kept_clauses(text, story, classes, target)
    if not has_attractors:
        return Design(tuple(_written(text, c) for _, c in clauses), None, None, ())
    on = {s: [j for side, c in clauses if side == s for j in c] for s in (BEFORE, AFTER)}
    named = {s: classes.named(text.low, on[s], target) for s in (BEFORE, AFTER)}
    sides = [s for s in (BEFORE, AFTER) if any(named[s])]
    if not sides:  # no class named: the side whose words are least the filler rows' words
        filler = story.filler_words
        present = [s for s in (BEFORE, AFTER) if on[s]]
        share = {s: sum((Counter(text.low[j] for j in on[s]) & filler).values()) / len(on[s])
                 for s in present}  # fmt: skip
        sides = [min(present, key=lambda s: share[s])] if present else []
    t_named = {c: j for s in sides for c, j in named[s][0].items()}
    b_named = {c: j for s in sides for c, j in named[s][1].items()}
    if t_named or b_named:
        kind = "T" if len(t_named) >= len(b_named) else "B"
    elif folder_type in ("B", "T") and not classes.knows_backgrounds:
        kind = folder_type
    else:
        kind = "unrelated"
    first = min((j for s in sides for j in on[s]), default=None)
    entity = text.entity_at
    if first is None or sides == [AFTER]:
        position = AFTER
    else:
        position = "between" if entity is not None and entity < first else "later"
    filler = tuple(_written(text, c) for side, c in clauses if side not in sides)
    shown = sorted((t_named if kind == "T" else b_named if kind == "B" else {}).values())
    return Design(filler, kind, position, tuple(text.raw[j] for j in shown))


def _kept_clauses(text: Text, story: Story, classes: Classes, target: str
                  ) -> list[tuple[str, list[int]]]:  # fmt: skip
    """The clauses ``text`` adds to its base item, the connective left out, and none that
    mostly repeats the base item's words without naming an attractor ("now works as a works
    as an optician")."""
    glue, base_words = story.connective, set(story.base.low)
    out = []
    for side, positions in _clauses(story.base, text):
        kept = [j for j in positions if text.low[j] not in glue]
        words = [text.low[j] for j in kept if text.low[j][0].isalnum()]
        repeated = sum(w in base_words for w in words) * 2 > len(words)
        if words and not (repeated and not any(classes.named(text.low, kept, target))):
            out.append((side, kept))
    return out


def _written(text: Text, positions: list[int]) -> str:
    return " ".join(text.raw[j] for j in positions)
