"""The audit on Ray (``faithprobe audit --executor ray,...``): every (model, step) unit is
Ray work.

Each model gets its own pool of actors (:class:`~faithprobe.executors.RayExecutor`), and
the models run at once, as many as the cluster places: Ray queues the actors of the others
until a model that has finished all its steps frees what its actors reserved. Within a model
the steps run in order and each step's requests are sharded over the model's actors. This
process (the driver) makes each step's pairs once, holds the one answer cache -- every
shard's answers are written as they come back, so a killed audit resumes with the same
command and ``--budget auto``'s next round asks only for what is missing -- and assembles
each step's run from its models' rows in the order the models were given, so the card is
the in-process audit's (:func:`faithprobe.runner.Begun.finish` does both).

Once every model has started, the workers of a model that has finished go to the models
still running: each freed worker is one more actor for the running model with the fewest
(:func:`grow_onto`; at most ``max_workers`` each), so the last models do not run on one actor
while the cluster idles. A model's shards do not change with its actors (they are cut for
the ``workers`` it asked for), nor do its answers.

A model that fails to load, or loses every actor for longer than ``replace_timeout``, is
reported in one line naming it (and the node); its steps are skipped with that reason and
the other models finish.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from faithprobe.errors import ModelError
from faithprobe.executors import ExecutorSpec, RayExecutor, RaySettings, RaySubject
from faithprobe.executors.ray_pool import Replicas
from faithprobe.runner import Begun, ProgressFactory, cannot_answer, subject_rows
from faithprobe.subjects import ModelSpec
from faithprobe.subjects.answer_cache import AnswerCache


@dataclass
class Unit:
    """One model's part of one step: its rows and run.json entry, or why it has none."""

    rows: list[dict] = field(default_factory=list)
    entry: dict = field(default_factory=dict)
    skipped: str | None = None
    seconds: float = 0.0


@dataclass
class ModelOutcome:
    """One model across the steps asked of it: its subject while its actors live, its name
    and fingerprint once loaded, why it failed (to load, or every actor lost) and a
    :class:`Unit` per step asked."""

    spec: ModelSpec
    subject: RaySubject | None = None
    identity: dict | None = None
    failed: str | None = None
    units: dict[int, Unit] = field(default_factory=dict)
    released: bool = False  # its actors killed: its work done, or every actor lost

    @property
    def started(self) -> bool:
        """Its first actor has loaded (or it failed, or is done): it waits for no worker."""
        return self.subject is not None or self.failed is not None or self.released


def grow_onto(freed: int, running: Sequence[Replicas]) -> int:
    """Each of ``freed`` workers to one more actor of the running model with the fewest (the
    first of those, in the order given), as long as one may grow; how many were asked for."""
    asked = 0
    growing = list(running)
    while asked < freed and growing:
        fewest = min(growing, key=lambda r: r.size)
        if fewest.grow():
            asked += 1
        else:
            growing.remove(fewest)
    return asked


class RayAudit:
    """The models of an audit on Ray; :meth:`answer` runs steps' (model, step) units.

    ``keep``: the actors live until the audit ends (``--budget auto``, whose rounds come
    one at a time); otherwise a model's actors are killed as soon as its units are done."""

    def __init__(
        self,
        executor: ExecutorSpec,
        specs: Sequence[ModelSpec],
        *,
        batch_size: int,
        cache_path: Path | None,
        progress: ProgressFactory | None = None,
        log: Callable[[str], None] = lambda msg: None,
        keep: bool = False,
    ) -> None:
        self.executor = executor
        self.outcomes = [ModelOutcome(spec) for spec in specs]
        self.batch_size, self.cache_path = batch_size, cache_path
        self.progress, self.log, self.keep = progress, log, keep
        self._ray = RayExecutor(executor.settings)
        self._freeing = threading.Lock()  # one model's workers handed on at a time

    def __enter__(self) -> RayAudit:
        self._ray.__enter__()
        try:
            self._ray.check_fits({o.spec.name: self._placed(o.spec) for o in self.outcomes})
        except BaseException:
            self._ray.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._ray.close()

    def record(self) -> dict:
        """run.json's executor record."""
        return {**self.executor.record(), **self._ray.describe()}

    def _each_model(self, work: Callable[[ModelOutcome], None]) -> None:
        """``work`` on every model at once (a thread each: they wait on Ray). Interrupted
        (Ctrl-C), the threads are stopped at their next look at Ray, not left to finish
        their models; what they answered is in the cache."""
        pool = ThreadPoolExecutor(len(self.outcomes), thread_name_prefix="model")
        try:
            list(pool.map(work, self.outcomes))
        except BaseException:
            self._ray.stop.set()
            raise
        finally:
            pool.shutdown(wait=True)

    def load_all(self) -> list[RaySubject]:
        """Every model loaded at once; those that loaded."""
        self._each_model(self._load)
        return [o.subject for o in self.outcomes if o.subject is not None]

    def answer(self, steps: Sequence[Begun]) -> list[list[tuple[ModelSpec, Unit]]]:
        """Every model's unit of each of ``steps``, the models at once; per step, the
        models in the order given."""
        self._each_model(lambda o: self._units(o, steps))
        return [[(o.spec, o.units.pop(id(step))) for o in self.outcomes] for step in steps]

    def _units(self, outcome: ModelOutcome, steps: Sequence[Begun]) -> None:
        """One model's units of ``steps``, in order, through its own cache connection."""
        if outcome.subject is None and outcome.failed is None:
            self._load(outcome)
        cache = AnswerCache(self.cache_path)
        try:
            for step in steps:
                outcome.units[id(step)] = self._unit(outcome, step, cache)
        finally:
            cache.close()
            if not self.keep:
                self._release(outcome)

    def _load(self, outcome: ModelOutcome) -> None:
        spec = outcome.spec
        settings = self._placed(spec)
        try:
            subject = self._ray.subject(spec, batch_size=self.batch_size, settings=settings)
        except ModelError as err:
            outcome.failed = str(err)
            self.log(str(err))  # names the model (and the node)
            return
        outcome.subject = subject
        outcome.identity = {"name": subject.name, "fingerprint": subject.fingerprint}

    def _placed(self, spec: ModelSpec) -> RaySettings:
        """The Ray settings of model ``spec``: the executor's, with its placement over them."""
        return self.executor.placed(spec.name, spec.text)

    def _release(self, outcome: ModelOutcome) -> None:
        """Kill the model's actors: what they reserved goes to the models still waiting for
        their first actor, or, once every model has started, to those still running."""
        if outcome.subject is None:
            return
        with self._freeing:
            replicas = outcome.subject.replicas
            freed = len(replicas.live) + len(replicas.joining)
            outcome.subject.close()
            outcome.subject, outcome.released = None, True
            if all(o.started for o in self.outcomes):
                running = [o.subject.replicas for o in self.outcomes if o.subject is not None]
                grow_onto(freed, running)

    def _unit(self, outcome: ModelOutcome, step: Begun, cache: AnswerCache) -> Unit:
        subject, suite = outcome.subject, step.prepared.suite
        if subject is None:
            return Unit(skipped=outcome.failed)
        if (why := cannot_answer(suite, step.pairs, subject)) is not None:
            return Unit(skipped=why)
        clock = time.perf_counter()
        try:
            rows, entry = subject_rows(suite, step.pairs, subject, cache, self.progress)
        except ModelError as err:  # every actor lost: this model's later steps are skipped
            outcome.failed = str(err)
            self.log(str(err))
            self._release(outcome)
            return Unit(skipped=outcome.failed)
        return Unit(rows, entry, seconds=time.perf_counter() - clock)

    def models(self) -> list[dict]:
        """The card's models (those that loaded), in the order given."""
        return [
            {"spec": str(o.spec), **o.identity} for o in self.outcomes if o.identity is not None
        ]

    def failed_models(self) -> list[dict]:
        """The models that failed (to load, or every actor lost), for run.json."""
        return [
            {"spec": str(o.spec), "name": o.spec.name, "reason": o.failed}
            for o in self.outcomes
            if o.failed is not None
        ]
