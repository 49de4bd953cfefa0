"""The suite protocol: one published method = one suite.

A suite turns data into pairs (original, intervened, expectation), says which requests a
pair needs, turns answers into rows of the results table, and computes metrics from that
table. The runner (:mod:`faithprobe.runner`) does everything else: sampling, caching,
batching, progress, the run folder and the report.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Hashable, Sequence
from pathlib import Path

import pandas as pd

from faithprobe.examples import ChoiceExample, ClozeExample
from faithprobe.interventions import Pair
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.seeding import hash_rank


class Suite(ABC):
    name: str
    description: str
    method: str
    needs_data: bool = False  # True: no built-in generator, --data is required
    items_noun: str = "items"  # what the data must hold: a run without pairs says "no <it>"
    # option name -> (type, default, help); set with ``--option name=value``
    options: dict[str, tuple[type, object, str]] = {}

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
        """One row of the results table per pair, for one subject."""

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
        questions a selection rejected, and why). ``run.json`` keeps it and ``report
        --rebuild`` hands it back through :meth:`restore_data_record`. Most suites have
        nothing to keep."""
        return {}

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

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """At most ``limit`` pairs, drawn evenly across strata in a seeded hash order that
        does not depend on the order of ``pairs``."""
        if limit is None or limit >= len(pairs):
            return pairs

        cells: dict[Hashable, list[Pair]] = defaultdict(list)
        for p in sorted(pairs, key=lambda p: hash_rank(seed, p.id)):
            cells[self.stratum(p)].append(p)
        queues = [cells[k] for k in sorted(cells, key=repr)]
        picked: list[Pair] = []
        depth = 0
        while len(picked) < limit:
            for q in queues:
                if depth < len(q) and len(picked) < limit:
                    picked.append(q[depth])
            depth += 1
        return sorted(picked, key=lambda p: p.id)


def sample_items(pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
    """``limit`` items (original examples, in a seeded hash order) with all their pairs: for
    suites whose ``--limit`` counts items, not pairs."""
    if limit is None:
        return pairs
    items = sorted({p.original.id for p in pairs}, key=lambda i: hash_rank(seed, i))
    keep = set(items[:limit])
    return [p for p in pairs if p.original.id in keep]
