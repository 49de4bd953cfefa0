"""The suite protocol: one published method = one suite, registered once.

A suite turns data into pairs (original, intervened, expectation), says which requests a
pair needs, turns answers into its own columns of the results table, says what the model
did on a pair (:meth:`Suite.behaviour`), and computes metrics from the table. The runner
(:mod:`faithprobe.runner`) does everything else: sampling, caching, batching, progress, the
columns every suite shares (:data:`COMMON_COLUMNS`), the run folder and the report.

A suite is one package named by an entry point in the group ``faithprobe.suites`` (the
built-in ones, ``faithprobe/suites/<name>/``, in faithprobe's own ``pyproject.toml``; a
plug-in's in its package's), whose ``__init__`` holds a
:class:`SuiteEntry` called ``SUITE``: the name, a line of description, the method it
implements, its options (a frozen dataclass, :mod:`faithprobe.options`), where its suite
class, report view and card headline are (``"module:attribute"`` strings, imported only
when used), and the steps ``faithprobe audit`` runs of it (:class:`AuditStep`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from faithprobe.errors import excerpt
from faithprobe.expectations import Behaviour
from faithprobe.interventions import Pair
from faithprobe.options import parse
from faithprobe.records import ChoiceExample, ClozeExample
from faithprobe.registry import SUITE_GROUP, Registry, declared, load_target
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.seeding import hash_rank

if TYPE_CHECKING:  # the registry is read by `faithprobe list`, which needs no pandas
    import pandas as pd

T = TypeVar("T")
# The columns the runner writes first in every row of every suite's results table.
COMMON_COLUMNS = (
    "pair_id",  # the pair: original and intervened input (unique per subject)
    "original_id",  # the original example
    "intervened_id",  # the intervened example (None where the intervention dropped it)
    "subject",  # the model's name
    "subject_fingerprint",  # a hash of its weights, tokenizer and settings
    "intervention",  # what was changed (a registered intervention, with its parameters)
    "expectation",  # what a faithful model does after it
    "expectation_met",  # True / False, or None where it does not apply
    "dropped_reason",  # why the intervention could not be applied (None if it was)
)


@dataclass(frozen=True)
class NoOptions:
    """The options of a suite that has none."""


@dataclass(frozen=True)
class AuditStep:
    """A run of its suite that ``faithprobe audit`` makes, as the suite declares it: the
    question the card asks, the items (``--limit``) and suite options at each budget, and
    the data it reads. Options are the suite's own, given as ``-o KEY=VALUE`` takes them."""

    name: str  # the card's section and the run folder's name under suites/
    question: str  # what the step asks of a model, in plain words
    # budget ("small", "default", "full") -> items (--limit; None: every item)
    limits: Mapping[str, int | None]
    # the step's place on the card, lowest first. A number rather than a list of names, so
    # that a plug-in places its step among the others without an edit to the audit; the
    # built-in steps leave gaps of ten for that
    order: int = 100
    options: Mapping[str, str] = field(default_factory=dict)  # at every budget
    budget_options: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # and at one
    # the option that takes the step's size too (natural-logic's ``bases``), if any
    size_option: str | None = None
    # a catalogue path under the data folders (faithprobe.catalog.entries); None: the
    # suite generates its data
    data: str | None = None


@dataclass(frozen=True)
class SuiteEntry:
    """A suite as registered: everything ``faithprobe list`` shows without importing it,
    where its suite class, report view and headline are, and its audit steps."""

    name: str
    description: str
    method: str
    suite: str  # "package.module:Class" of the Suite subclass
    report: str  # "package.module:Class" of its report view
    options: type = NoOptions  # a frozen dataclass of options.option fields
    # "package.module:attribute" of the faithprobe.metrics.headline.Headline reading the
    # suite's metrics.json into the card's competence and effects; "" for none
    headline: str = ""
    audit: tuple[AuditStep, ...] = ()  # the steps faithprobe audit runs of it

    @classmethod
    def in_package(cls, package: str, **fields: Any) -> SuiteEntry:
        """The entry of a suite laid out as the built-in ones are, in ``package`` (its
        ``__name__``): the Suite subclass ``<Name>Suite`` in ``package.suite``, the report
        view ``<Name>Report`` in ``package.report`` and the headline ``headline`` in
        ``package.headline``, ``<Name>`` being the package's last part in CamelCase
        (``natural_logic``: ``NaturalLogic``)."""
        name = package.rpartition(".")[2].title().replace("_", "")
        return cls(
            suite=f"{package}.suite:{name}Suite",
            report=f"{package}.report:{name}Report",
            headline=f"{package}.headline:headline",
            **fields,
        )


def _discover(registry: Registry) -> None:
    """The suites named in the entry-point group ``faithprobe.suites`` (a value is
    ``"package"`` or ``"package:ENTRY"``), faithprobe's own first (:func:`declared`): the
    built-in suites are declared in its ``pyproject.toml`` as a plug-in declares its own,
    not looked for under ``faithprobe/suites/``, which would be an import from this layer
    up to theirs."""
    for point in declared(SUITE_GROUP):
        target = point.value if ":" in point.value else f"{point.value}:SUITE"
        entry: SuiteEntry = load_target(target)
        registry.add(entry.name, entry, description=f"{entry.description} — {entry.method}")


SUITES: Registry[SuiteEntry] = Registry("suite", discover=_discover)


def suite_options(name: str, options: Mapping[str, object] | None = None) -> Any:
    """The options of suite ``name`` parsed from ``options`` (strings from the command line
    are converted to the option's type), read off its entry: the suite's code, and what it
    imports, is not loaded, so a mistyped suite or option is told at once."""
    return parse(SUITES.get(name).options, options, f"suite {excerpt(name)}")


def get_suite(name: str, options: Mapping[str, object] | None = None) -> Suite:
    """The suite ``name``, configured by ``options`` (:func:`suite_options`)."""
    return load_target(SUITES.get(name).suite)(suite_options(name, options))


class Suite(ABC):
    """Subclasses set :attr:`name` (the registered :class:`SuiteEntry`'s) and implement the
    abstract methods; the entry holds everything else about the suite."""

    name: str
    items_noun: str = "items"  # what the data must hold: a run without pairs says "no <it>"

    def __init__(self, options: Any = None) -> None:
        self.options = self.entry().options() if options is None else options

    @classmethod
    def entry(cls) -> SuiteEntry:
        return SUITES.get(cls.name)

    @abstractmethod
    def pairs(self, data: Path | None, seed: int) -> list[Pair]:
        """All pairs of the suite, from ``data`` or from the suite's generator."""

    @abstractmethod
    def stratum(self, pair: Pair) -> Hashable:
        """The design cell of a pair; sampling draws evenly across cells."""

    @abstractmethod
    def rows(
        self, pairs: Sequence[Pair], subject, answers: dict[str, CandidateScores]
    ) -> list[dict]:
        """The suite's own columns of the results table for one subject: one row per pair,
        each with the ``pair_id`` it belongs to (the runner adds :data:`COMMON_COLUMNS`)."""

    def behaviour(self, pair: Pair, row: Mapping[str, Any]) -> Behaviour | None:
        """What the model did on ``pair`` (its choice on the original and on the intervened
        input, and the gold answer after the change), read from the suite's ``row``, for
        the runner to judge ``pair.expectation`` by; None where nothing can be judged (a
        dropped pair, no prediction). By default the row's ``original_prediction``,
        ``prediction`` and ``gold``."""
        if pair.dropped:
            return None
        return Behaviour(row["original_prediction"], row["prediction"], row["gold"])

    @abstractmethod
    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        """Every number the report shows, each with its interval and n."""

    def complete(self, pairs: list[Pair], models) -> list[Pair]:
        """The sampled ``pairs`` with whatever needs a model to be made (e.g. generated
        sentences) made now, after sampling, so only the sampled items cost model calls.
        ``models.get(spec)`` gives a subject behind the run's answer cache
        (:class:`faithprobe.runner.ModelPool`). Most suites need nothing."""
        return pairs

    def data_record(self) -> dict:
        """What reading the data found that the results table cannot show (e.g. how many
        questions a selection rejected, and why). ``run.json`` keeps it and ``faithprobe
        report`` hands it back through :meth:`restore_data_record`. Most suites have
        nothing to keep."""
        return {}

    def pairs_note(self, pairs: Sequence[Pair]) -> str:
        """How many pairs the run made, as the line a run prints says it: by default their
        number (a suite whose ``--limit`` counts some of its pairs only says which)."""
        return f"{len(pairs)} pairs"

    def drop_summary(self) -> str:
        """What reading the data dropped and why, in a few words, for the error of a run
        left with no pairs; nothing by default."""
        return ""

    def restore_data_record(self, record: dict) -> None:
        """Take back what :meth:`data_record` gave (when metrics are recomputed from a run
        folder instead of the data); nothing to take back by default."""
        del record

    def request(self, example: ClozeExample | ChoiceExample, subject=None) -> CandidateScoreRequest:
        """What ``subject`` is asked about ``example`` (a suite whose subjects differ in the
        requests they answer picks by ``subject.accepts``)."""
        return CandidateScoreRequest(example.context, example.candidates, example.suffix)

    def extra_requests(self, example, subject=None) -> dict[str, object]:
        """Requests besides :meth:`request` that ``subject`` is asked about ``example``, by
        name (e.g. saliency of an original input); their answers reach :meth:`rows` under
        the key ``(example.id, name)``. Most suites ask nothing more."""
        return {}

    def follow_ups(self, pairs: Sequence[Pair], subject, answers: Mapping) -> dict[tuple, object]:
        """Requests made from ``subject``'s own answers so far (``answers``, keyed as the
        runner keys them: an example's request by its id, an extra or follow-up request by
        (example id, name)), by such a key: e.g. the model's own chain of thought cut short
        and asked for an answer. The runner asks those whose key it has no answer for,
        then calls again with their answers, until none is new; the answers reach
        :meth:`rows` like the others. A follow-up is cached by its request like every
        request, so a resumed run recomputes none. Most suites ask nothing more."""
        del pairs, subject, answers
        return {}

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """At most ``limit`` pairs, drawn evenly across strata (:func:`stratified_sample`)."""
        return stratified_sample(pairs, limit, seed, key=lambda p: p.id, stratum=self.stratum)

    def sampled_pairs(self, data: Path | None, limit: int | None, seed: int) -> list[Pair]:
        """The pairs a run uses: :meth:`sample` of :meth:`pairs`. A suite whose generator can
        draw the sample before it builds the items overrides this, with the same result."""
        return self.sample(self.pairs(data, seed), limit, seed)


def stratified_sample(
    items: list[T],
    limit: int | None,
    seed: int,
    *,
    key: Callable[[T], str],
    stratum: Callable[[T], Hashable],
) -> list[T]:
    """At most ``limit`` of ``items``, drawn evenly across their strata in a seeded hash
    order of their ``key`` (so it does not depend on the order of ``items``), sorted by key;
    all of them, in their order, if there are no more than ``limit``."""
    if limit is None or limit >= len(items):
        return items
    cells: dict[Hashable, list[T]] = defaultdict(list)
    for item in sorted(items, key=lambda x: hash_rank(seed, key(x))):
        cells[stratum(item)].append(item)
    queues = [cells[k] for k in sorted(cells, key=repr)]
    picked: list[T] = []
    depth = 0
    while len(picked) < limit:
        for q in queues:
            if depth < len(q) and len(picked) < limit:
                picked.append(q[depth])
        depth += 1
    return sorted(picked, key=key)


def drawn_pairs(
    items: Sequence[T], limit: int | None, seed: int, pairs_of: Callable[[T], list[Pair]]
) -> list[Pair]:
    """What :func:`sample_items` keeps of every item's pairs (``pairs_of(item)``), with only
    the drawn items' pairs made: ``limit`` of the ``items`` that make a pair, the first in a
    seeded hash order of their ``id``, their pairs in the items' order. For a suite whose
    items are many and cheap but whose pairs cost (a reasoning task file of 200,000
    examples: 1.4 million pairs to keep two items)."""
    if limit is None:
        return [p for item in items for p in pairs_of(item)]
    made: dict[str, list[Pair]] = {}
    for item in sorted(items, key=lambda i: hash_rank(seed, i.id)):
        if len(made) == limit:
            break
        if pairs := pairs_of(item):
            made[item.id] = pairs
    return [p for item in items if item.id in made for p in made[item.id]]


def sample_items(pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
    """``limit`` items (original examples, in a seeded hash order) with all their pairs: for
    suites whose ``--limit`` counts items, not pairs."""
    if limit is None:
        return pairs
    items = sorted({p.original.id for p in pairs}, key=lambda i: hash_rank(seed, i))
    keep = set(items[:limit])
    return [p for p in pairs if p.original.id in keep]
