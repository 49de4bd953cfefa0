"""The audit on a Ray cluster, on paper: a discrete-event simulation of its scheduling for many
models, from costs measured here.

The policy simulated is :mod:`faithprobe.audit.cluster` over
:class:`~faithprobe.executors.RayExecutor` (issue 43):

* every model asks for ``workers_per_model`` actors, each holding one worker (a GPU) while it
  loads and lives; Ray places actor requests first come, first served as workers free. Every
  model's first actor is asked for at the start (in model order) and its others only once the
  first has loaded, so they queue behind the other models' first actors;
* a model starts when its first actor has loaded; its steps run in order, each step's
  requests cut into shards of at most ``4 x batch_size`` requests, fewer so that every actor
  the model asked for has work; the others join as they are placed and loaded;
* the driver (the ``faithprobe audit`` process, one per audit) is a single server: every
  finished shard costs it Ray's per-task overhead and the answer cache's claim, write and
  claim renewal. As in :meth:`~faithprobe.executors.RaySubject.answer_chunks`, the actor is
  sent its next shard (Ray's round trip and the next shard's claim) before the finished one
  is written, and a step ends when its last shard is written;
* when a model has finished its steps its actors are killed and their workers go to the
  actors still queued; with growing pools (issue 60, ``--pools growing``), once every model
  has started, each freed worker is also asked for by the running model with the fewest
  actors (:func:`faithprobe.audit.cluster.grow_onto`), queued like any actor and loaded
  before it takes shards.

Inputs, all measured:

* per-step requests and seconds of one audit (``--measured DIR``, any audit folder: its
  ``run.json`` ``steps[*].seconds`` over each step's ``subjects[0].computed_requests``), so
  each step's cost per request on the machine that ran it, divided by ``--speedup`` (for a
  GPU) and multiplied per model by a seeded lognormal size (median 1, ``--sigma``) so models
  are not all equal; a step's seconds include making its pairs and metrics, and the first
  step the deferred model load, so these costs are upper bounds;
* the time an actor takes from being placed to answering (process start, imports, model load:
  ``--model``'s first Ray actor, timed here; ``--load-seconds`` instead gives it), scaled by the
  model's size and not by ``--speedup``;
* the driver's costs, measured in this run: Ray's round trip per task (a local Ray, one actor,
  a method returning a shard's answer JSON, called ``--ray-calls`` times with ``ray.wait`` and
  ``ray.get`` as the executor's loop does), and the answer cache's claim, ``put_many`` and
  ``renew_claims`` on shards of 8 and 64 real answers (the measured audit's cache) into a cache
  already holding the whole simulated audit's answers, fitted as a fixed cost plus a cost per
  answer; each row's cache costs are slowed by what as many threads as models run at once,
  each with its own connection (as in the driver), measure against one.

Not simulated: the reasoning step's follow-up rounds (its requests are taken as one round),
making pairs and metrics on the driver, lost actors. Each row reports the makespan against the
ideal (total work over the workers, without and with one load per model), the driver's
utilisation and longest queue, and which lower bound binds: the workers (work and one load
per model), the driver (its busy time) or the longest single model (its load and its steps,
each over its actors); beside them the least makespan any policy could reach
(:func:`any_policy_bound`), which says how much a better scheduler could still win, and
with ``--orders largest-first`` what asking for the largest models' actors first would
win (the driver asks in the order given: it knows no model's size before loading it). A
sweep of ``--speedups`` at the largest worker count shows where the driver saturates. Usage:

    python benchmarks/audit_scheduling.py --measured AUDIT_DIR [--models 100]
        [--workers 8,32,128] [--workers-per-model 1,4] [--pools fixed,growing]
        [--orders given,largest-first] [--speedup 1] [--speedups 1,10,100,1000]
        [--sigma 0.3] [--seed 0] [--model embedded]
        [--load-seconds S] [--ray-calls 1000] [--json benchmarks/results/audit_scheduling.json]
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import math
import os
import platform
import secrets
import shlex
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from random import Random

SHARDS_PER_BATCH = 4  # RayExecutor.subject: shard_size = batch_size * 4


@dataclass(frozen=True)
class Step:
    """One audit step as one model runs it: its requests and seconds per request, as measured."""

    name: str
    requests: int
    seconds_per_request: float


@dataclass(frozen=True)
class Linear:
    """A cost of ``fixed + n * per_answer`` seconds for a shard of ``n`` answers."""

    fixed: float
    per_answer: float

    def __call__(self, n: int) -> float:
        return self.fixed + n * self.per_answer

    def scaled(self, factor: float) -> Linear:
        return Linear(self.fixed * factor, self.per_answer * factor)

    @classmethod
    def through(cls, small: tuple[int, float], large: tuple[int, float]) -> Linear:
        """The line through two measured (shard size, seconds) points, never below zero."""
        (n1, s1), (n2, s2) = small, large
        per_answer = max(0.0, (s2 - s1) / (n2 - n1))
        return cls(max(0.0, s1 - n1 * per_answer), per_answer)


@dataclass(frozen=True)
class DriverCosts:
    """What one finished shard costs the driver: Ray's round trip and the next shard's claim
    before the actor gets its next shard, then the finished shard's write (answers and claim
    renewal)."""

    ray_call: float
    claim: Linear
    write: Linear

    def release(self, n: int) -> float:
        """Seconds from the driver taking up a finished shard of ``n`` to its actor's next shard."""
        return self.ray_call + self.claim(n)

    def service(self, n: int) -> float:
        """Seconds the driver is busy with a finished shard of ``n``."""
        return self.release(n) + self.write(n)

    def with_cache_slowdown(self, factor: float) -> DriverCosts:
        """These costs with the cache's ``factor`` times slower (its writers contending)."""
        return replace(self, claim=self.claim.scaled(factor), write=self.write.scaled(factor))


@dataclass(frozen=True)
class Scenario:
    """One simulated audit: ``models`` models of ``steps`` each on ``workers`` workers, every
    model asking for ``workers_per_model`` actors; ``speedup`` divides every request's cost,
    and the models' sizes are drawn with ``sigma`` from ``seed``."""

    models: int
    workers: int
    workers_per_model: int
    steps: tuple[Step, ...]
    load_seconds: float
    driver: DriverCosts
    shard_size: int
    speedup: float = 1.0
    sigma: float = 0.3
    seed: int = 0
    growing: bool = False  # pools grow onto the workers of finished models
    largest_first: bool = False  # first actors asked for largest model first, not as given


@dataclass(frozen=True)
class Outcome:
    """What one simulated audit took; ``work`` and ``loads`` in worker-seconds (``loads``: one
    per model), ``longest_model`` a lower bound of the longest model's own time."""

    makespan: float
    work: float
    loads: float
    actor_loads: int
    driver_busy: float
    longest_queue: int
    longest_model: float
    requests: int


def model_sizes(models: int, sigma: float, seed: int) -> list[float]:
    """Each model's cost factor (compute and load): lognormal, median 1."""
    rng = Random(seed)
    return [rng.lognormvariate(0.0, sigma) for _ in range(models)]


def work_per_size(s: Scenario) -> float:
    """Seconds one model of size 1 computes in all steps (a model's work is this times its
    size)."""
    return sum(st.requests * st.seconds_per_request for st in s.steps) / s.speedup


def shards(requests: int, actors: int, shard_size: int) -> list[int]:
    """A step's shard sizes, as :meth:`~faithprobe.executors.RaySubject.answer` cuts them."""
    size = max(1, min(shard_size, -(-requests // actors)))
    return [min(size, requests - i) for i in range(0, requests, size)]


class _Model:
    """One model's state in the simulation: its actors (loading, idle, busy), its step and the
    shards of that step not yet sent or not yet written."""

    def __init__(self, size: float) -> None:
        self.size = size
        self.loading = self.live = self.idle = self.queued = 0
        self.step = -1  # not started: its first actor has not loaded
        self.unsent: deque[int] = deque()
        self.unwritten = 0
        self.finished = False


def simulate(s: Scenario) -> Outcome:
    """Run the scheduling policy (module docstring) on ``s``; events in a heap, ties in the
    order they were made."""
    sizes = model_sizes(s.models, s.sigma, s.seed)
    models = [_Model(size) for size in sizes]
    events: list[tuple[float, int, Callable[[], None]]] = []
    order = itertools.count()
    clock = 0.0
    free_workers = s.workers
    first = sorted(range(s.models), key=lambda m: -sizes[m]) if s.largest_first else range(s.models)
    actor_queue: deque[int] = deque(first)  # every model's first actor
    driver_queue: deque[tuple[int, int]] = deque()  # finished shards: (model, size)
    totals = {"driver_busy": 0.0, "longest_queue": 0, "actor_loads": 0, "requests": 0}
    driver_busy = False
    finished_at = 0.0

    def at(when: float, action: Callable[[], None]) -> None:
        heapq.heappush(events, (when, next(order), action))

    def place() -> None:
        nonlocal free_workers
        while free_workers and actor_queue:
            m = actor_queue.popleft()
            models[m].queued -= 1
            if models[m].finished:  # its actors were killed, queued ones included
                continue
            free_workers -= 1
            models[m].loading += 1
            totals["actor_loads"] += 1
            at(clock + s.load_seconds * models[m].size, lambda m=m: loaded(m))

    def loaded(m: int) -> None:
        model = models[m]
        if model.finished:  # killed while loading: its worker was freed then
            return
        model.loading -= 1
        model.live += 1
        model.idle += 1
        if model.step < 0:
            actor_queue.extend([m] * (s.workers_per_model - 1))
            model.queued += s.workers_per_model - 1
            place()
            next_step(m)
        send(m)

    def next_step(m: int) -> None:
        """Start the model's next step with requests, or finish the model."""
        nonlocal free_workers, finished_at
        model = models[m]
        model.step += 1
        while model.step < len(s.steps) and s.steps[model.step].requests == 0:
            model.step += 1
        if model.step == len(s.steps):
            model.finished = True
            freed = model.live + model.loading
            free_workers += freed
            model.live = model.idle = model.loading = 0
            finished_at = clock
            if s.growing and all(other.step >= 0 or other.finished for other in models):
                grow(freed)
            place()
            return
        step = s.steps[model.step]
        model.unsent = deque(shards(step.requests, s.workers_per_model, s.shard_size))
        model.unwritten = len(model.unsent)

    def grow(freed: int) -> None:
        """Each freed worker asked for by the running model with the fewest actors."""
        running = [m for m, model in enumerate(models) if not model.finished]
        for _ in range(freed if running else 0):
            m = min(running, key=lambda m: models[m].live + models[m].loading + models[m].queued)
            models[m].queued += 1
            actor_queue.append(m)

    def send(m: int) -> None:
        model = models[m]
        if model.finished:
            return
        cost = s.steps[model.step].seconds_per_request * model.size / s.speedup
        while model.idle and model.unsent:
            n = model.unsent.popleft()
            model.idle -= 1
            at(clock + n * cost, lambda m=m, n=n: computed(m, n))

    def computed(m: int, n: int) -> None:
        totals["requests"] += n
        driver_queue.append((m, n))
        if driver_busy:
            totals["longest_queue"] = max(totals["longest_queue"], len(driver_queue))
        else:
            serve()

    def serve() -> None:
        nonlocal driver_busy
        m, n = driver_queue.popleft()
        busy = s.driver.service(n)
        driver_busy = True
        totals["driver_busy"] += busy
        at(clock + s.driver.release(n), lambda: released(m))
        at(clock + busy, lambda: written(m))

    def released(m: int) -> None:
        models[m].idle += 1
        send(m)

    def written(m: int) -> None:
        nonlocal driver_busy
        driver_busy = False
        model = models[m]
        model.unwritten -= 1
        if model.unwritten == 0:
            next_step(m)
            send(m)
        if driver_queue:
            serve()

    place()
    while events:
        clock, _, action = heapq.heappop(events)
        action()
    assert free_workers == s.workers, f"{s.workers - free_workers} workers never freed"

    work = work_per_size(s)
    return Outcome(
        makespan=finished_at,
        work=work * sum(sizes),
        loads=s.load_seconds * sum(sizes),
        actor_loads=totals["actor_loads"],
        driver_busy=totals["driver_busy"],
        longest_queue=totals["longest_queue"],
        longest_model=max(_model_bound(s, size) for size in sizes),
        requests=totals["requests"],
    )


def _model_bound(s: Scenario, size: float) -> float:
    """A model's own least time: its first load, then each step over its actors (never less
    than its largest shard); a growing pool may have every worker."""
    total = s.load_seconds * size
    actors = s.workers if s.growing else min(s.workers_per_model, s.workers)
    for step in s.steps:
        if step.requests:
            cost = step.seconds_per_request * size / s.speedup
            largest = max(shards(step.requests, s.workers_per_model, s.shard_size))
            total += max(step.requests * cost / actors, largest * cost)
    return total


def any_policy_bound(s: Scenario) -> float:
    """The least makespan any scheduler could reach with these models on these workers,
    the driver free and work divisible at will: the least ``T`` such that every model gets
    enough actors to finish by ``T`` (each loads for its load time, then computes until
    ``T``: ``ceil(work / (T - load))`` of them) and all their loads and work fit in the
    workers' time ``workers * T``. A policy cannot beat it however it orders models, sizes
    pools or cuts shards; it is above the ideal with loads where the largest model's own
    load and work, spread over many actors that each load it, do not fit in that ideal."""
    sizes = model_sizes(s.models, s.sigma, s.seed)
    work = work_per_size(s)
    models = [(work * size, s.load_seconds * size) for size in sizes]

    def fits(makespan: float) -> bool:
        needed = sum(w + load * math.ceil(w / (makespan - load)) for w, load in models)
        return needed <= s.workers * makespan

    low = max(load for _, load in models)  # no model finishes before its first actor loads
    high = low + sum(w + load for w, load in models)  # one actor each, one after another
    while high - low > 1e-6 * high:  # fits() is false at low, true at high, monotone between
        middle = (low + high) / 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def row(s: Scenario, o: Outcome) -> dict:
    """One table row: the outcome against the ideal and the binding lower bound."""
    ideal = o.work / s.workers
    ideal_loaded = (o.work + o.loads) / s.workers
    bounds = {"workers": ideal_loaded, "driver": o.driver_busy, "longest model": o.longest_model}
    binds = max(bounds, key=bounds.get)
    full = s.driver.service(s.shard_size)
    best = any_policy_bound(s)
    return {
        "workers": s.workers,
        "workers_per_model": s.workers_per_model,
        "pools": "growing" if s.growing else "fixed",
        "order": "largest first" if s.largest_first else "given",
        "speedup": s.speedup,
        "makespan_s": round(o.makespan, 1),
        "ideal_s": round(ideal, 1),
        "ideal_with_loads_s": round(ideal_loaded, 1),
        "makespan_over_ideal": round(o.makespan / ideal, 3),
        "makespan_over_ideal_with_loads": round(o.makespan / ideal_loaded, 3),
        "driver_utilisation": round(o.driver_busy / o.makespan, 3),
        "driver_longest_queue": o.longest_queue,
        "requests_per_s": round(o.requests / o.makespan, 1),
        "driver_ms_per_full_shard": round(1000 * full, 3),
        "driver_saturation_requests_per_s": round(s.shard_size / full, 1),
        "actor_loads": o.actor_loads,
        "binds": binds,
        "makespan_over_binding_bound": round(o.makespan / bounds[binds], 3),
        "any_policy_bound_s": round(best, 1),
        "any_policy_bound_over_ideal_with_loads": round(best / ideal_loaded, 3),
        "makespan_over_any_policy_bound": round(o.makespan / best, 3),
        "lower_bounds_s": {k: round(v, 1) for k, v in bounds.items()},
    }


# --- measured inputs ---------------------------------------------------------------------


def measured_audit(folder: Path) -> tuple[list[Step], dict]:
    """The steps of the audit in ``folder`` (those that ran and computed requests) and its
    run.json."""
    record = json.loads((folder / "run.json").read_text())
    steps = []
    for entry in record["steps"]:
        if entry["status"] != "ran":
            continue
        suite_run = json.loads((folder / entry["folder"] / "run.json").read_text())
        computed = suite_run["subjects"][0]["computed_requests"]
        if computed:
            steps.append(Step(entry["step"], computed, entry["seconds"] / computed))
    return steps, record


def real_answers(cache: Path) -> list[str]:
    """The answer JSON texts of the measured audit's cache."""
    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as conn:
        return [value for (value,) in conn.execute("SELECT value FROM answers")]


def _shard(values: Iterator[str], n: int) -> dict[str, str]:
    """``n`` answers under fresh keys (64 hex digits, like the cache's)."""
    return {secrets.token_hex(32): next(values) for _ in range(n)}


def prefilled_cache(path: Path, answers: Sequence[str], count: int) -> None:
    """An answer cache at ``path`` already holding ``count`` answers."""
    from faithprobe.subjects.answer_cache import AnswerCache

    values = itertools.cycle(answers)
    cache = AnswerCache(path)
    for start in range(0, count, 50_000):
        cache.put_many(_shard(values, min(50_000, count - start)))
    cache.close()


def open_seconds(path: Path) -> float:
    """Seconds to open the answer cache at ``path`` (each model's thread opens its own)."""
    from faithprobe.subjects.answer_cache import AnswerCache

    start = time.perf_counter()
    AnswerCache(path).close()
    return time.perf_counter() - start


def cache_costs(path: Path, answers: Sequence[str], repeats: int) -> tuple[Linear, Linear]:
    """The answer cache's claim and write (``put_many`` + ``renew_claims``) per shard, at 8
    and 64 answers, means over ``repeats`` shards (not medians: the WAL checkpoints that
    every few shards pay for all are a heavy tail); fitted as :class:`Linear`."""
    from faithprobe.subjects.answer_cache import AnswerCache
    from faithprobe.subjects.cached_subject import DEFAULT_LEASE

    values = itertools.cycle(answers)
    cache = AnswerCache(path)
    points: dict[str, list[tuple[int, float]]] = {"claim": [], "write": []}
    for n in (8, 64):
        claims, writes = [], []
        for _ in range(repeats):
            shard = _shard(values, n)
            start = time.perf_counter()
            cache.claim(list(shard), DEFAULT_LEASE)
            claimed = time.perf_counter()
            cache.put_many(shard)
            cache.renew_claims(DEFAULT_LEASE)
            claims.append(claimed - start)
            writes.append(time.perf_counter() - claimed)
        points["claim"].append((n, statistics.fmean(claims)))
        points["write"].append((n, statistics.fmean(writes)))
    cache.close()
    return Linear.through(*points["claim"]), Linear.through(*points["write"])


def contended_cycle(path: Path, answers: Sequence[str], threads: int, shards: int, n: int) -> float:
    """Seconds per shard of ``n`` answers (claim, write, renewal), all ``threads`` threads at
    once, each through its own connection as each model's thread in
    :mod:`faithprobe.audit.cluster` has: the time until the last thread has written its share
    of the ``shards``, over the shards written."""
    from faithprobe.subjects.answer_cache import AnswerCache
    from faithprobe.subjects.cached_subject import DEFAULT_LEASE

    each = max(1, shards // threads)
    ready = threading.Barrier(threads + 1)
    done: list[float] = []

    def work(offset: int) -> None:
        values = itertools.islice(itertools.cycle(answers), offset, None)
        cache = AnswerCache(path)  # opened (and checked) before the clock starts
        ready.wait()
        for _ in range(each):
            shard = _shard(values, n)
            cache.claim(list(shard), DEFAULT_LEASE)
            cache.put_many(shard)
            cache.renew_claims(DEFAULT_LEASE)
        done.append(time.perf_counter())
        cache.close()

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    ready.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    return (max(done) - start) / (each * threads)


def ray_costs(model: str, batch_size: int, answers: Sequence[str], calls: int) -> dict:
    """On a local Ray: ``model``'s first actor from request to loaded, and the round trip of
    a task returning one shard of answers (wall and driver CPU seconds per call)."""
    import ray

    from faithprobe.executors import RayExecutor, RaySettings

    # no address: a Ray of its own (faithprobe.executors.own_ray), even where another one runs
    with RayExecutor(RaySettings(workers=1)) as executor:
        start = time.perf_counter()
        subject = executor.subject(model, batch_size=batch_size)
        load = time.perf_counter() - start
        subject.close()

        @ray.remote(num_cpus=0)
        class Shard:
            def __init__(self, answers: list[str]) -> None:
                self.answers = answers

            def answer(self, index: int, keys: list[str]) -> tuple[int, list[str]]:
                return index, self.answers

        shard = batch_size * SHARDS_PER_BATCH
        actor = Shard.remote(list(answers[:shard]))
        keys = [secrets.token_hex(32) for _ in range(shard)]

        def call(i: int) -> None:
            ref = actor.answer.remote(i, keys)
            ray.wait([ref], num_returns=1)
            ray.get(ref)

        for i in range(20):  # warm-up
            call(i)
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(calls):
            call(i)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "load_seconds": load,
        "ray_call_seconds": wall / calls,
        "ray_call_driver_cpu_seconds": cpu / calls,
    }


# --- the benchmark -----------------------------------------------------------------------


def table(rows: Sequence[dict]) -> str:
    columns = [
        ("workers", "workers"),
        ("actors/model", "workers_per_model"),
        ("pools", "pools"),
        ("order", "order"),
        ("speedup", "speedup"),
        ("makespan s", "makespan_s"),
        ("ideal s", "ideal_s"),
        ("ideal+loads s", "ideal_with_loads_s"),
        ("/ideal", "makespan_over_ideal"),
        ("/ideal+loads", "makespan_over_ideal_with_loads"),
        ("any-policy bound s", "any_policy_bound_s"),
        ("driver util.", "driver_utilisation"),
        ("longest queue", "driver_longest_queue"),
        ("requests/s", "requests_per_s"),
        ("binds", "binds"),
    ]
    lines = ["| " + " | ".join(h for h, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r[k]) for _, k in columns) + " |" for r in rows]
    return "\n".join(lines)


def _numbers(kind: type) -> Callable[[str], list]:
    return lambda text: [kind(x) for x in text.split(",")]


def _names(*allowed: str) -> Callable[[str], list[str]]:
    """A comma-separated list of some of ``allowed`` (anything else refused)."""

    def names(text: str) -> list[str]:
        given = text.split(",")
        if unknown := [n for n in given if n not in allowed]:
            raise argparse.ArgumentTypeError(f"{unknown[0]!r} is none of {', '.join(allowed)}")
        return given

    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", type=Path, required=True, help="an audit's output folder")
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--workers", type=_numbers(int), default=[8, 32, 128])
    parser.add_argument("--workers-per-model", type=_numbers(int), default=[1, 4])
    parser.add_argument("--speedup", type=float, default=1.0, help="divides each request's cost")
    parser.add_argument("--speedups", type=_numbers(float), default=[1, 10, 100, 1000])
    parser.add_argument(
        "--pools",
        type=_names("fixed", "growing"),
        default=["fixed", "growing"],
        help="fixed (issue 43's policy), growing (onto freed workers), or both",
    )
    parser.add_argument(
        "--orders",
        type=_names("given", "largest-first"),
        default=["given"],
        help="given (the models' first actors asked for in the order given, as the driver "
        "does), largest-first (by size, which the driver does not know before loading), or both",
    )
    parser.add_argument("--sigma", type=float, default=0.3, help="of the models' lognormal size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="embedded", help="whose actor load is timed")
    parser.add_argument("--load-seconds", type=float, help="an actor's load, instead of timing it")
    parser.add_argument("--ray-calls", type=int, default=1000)
    parser.add_argument("--cache-repeats", type=int, default=200, help="shards per cache timing")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args()

    load_at_start = os.getloadavg()[0]
    steps, audit = measured_audit(args.measured)
    if not audit.get("cache") or not Path(audit["cache"]).is_file():
        sys.exit(f"{args.measured}/run.json: its answer cache {audit.get('cache')} is not there")
    answers = real_answers(Path(audit["cache"]))
    shard_size = audit["batch_size"] * SHARDS_PER_BATCH
    total_answers = args.models * sum(st.requests for st in steps)
    writers = sorted({1, *(min(args.models, w) for w in args.workers)})  # models at once

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "answers.sqlite"
        prefilled_cache(path, answers, total_answers)
        opening = open_seconds(path)
        claim, write = cache_costs(path, answers, args.cache_repeats)
        cycles = {t: contended_cycle(path, answers, t, args.cache_repeats, shard_size)
                  for t in writers}  # fmt: skip
    slowdown = {t: max(1.0, cycles[t] / cycles[1]) for t in writers}
    measured_ray = ray_costs(args.model, audit["batch_size"], answers, args.ray_calls)
    load = args.load_seconds if args.load_seconds is not None else measured_ray["load_seconds"]
    driver = DriverCosts(measured_ray["ray_call_seconds"], claim, write)

    def scenario(workers: int, per_model: int, pools: str, order: str, speedup: float) -> Scenario:
        contended = driver.with_cache_slowdown(slowdown[min(args.models, workers)])
        return Scenario(args.models, workers, per_model, tuple(steps), load, contended,
                        shard_size, speedup, args.sigma, args.seed,
                        growing=pools == "growing",
                        largest_first=order == "largest-first")  # fmt: skip

    def rows(cases) -> list[dict]:
        return [row(sc, simulate(sc)) for sc in itertools.starmap(scenario, cases)]

    clock = time.perf_counter()
    main_rows = rows(
        itertools.product(
            args.workers, args.workers_per_model, args.pools, args.orders, [args.speedup]
        )
    )
    sweep = rows(
        itertools.product(
            [max(args.workers)], args.workers_per_model, args.pools, args.orders, args.speedups
        )
    )
    simulated_s = time.perf_counter() - clock

    result = {
        "command": shlex.join(["python", *sys.argv]),
        "measured_audit": {
            "folder": str(args.measured),
            "command": audit["command"],
            "batch_size": audit["batch_size"],
            "steps": [asdict(st) for st in steps],
            "note": f"{len(steps)} steps (the issue's 6 and reasoning, added since); seconds "
            "per request: the step's seconds over its computed requests",
        },
        "models": args.models,
        "model_sizes": {
            "distribution": "lognormal, median 1",
            "sigma": args.sigma,
            "seed": args.seed,
        },
        "shard_size": shard_size,
        "actor_load_seconds": round(load, 2),
        "actor_load_source": "given (--load-seconds)"
        if args.load_seconds is not None
        else f"timed: the first Ray actor of --model {args.model}, asked for to loaded",
        "driver_costs": {
            "ray_call_seconds": measured_ray["ray_call_seconds"],
            "ray_call_driver_cpu_seconds": measured_ray["ray_call_driver_cpu_seconds"],
            "ray_calls": args.ray_calls,
            "cache_claim": asdict(claim),
            "cache_write": asdict(write),
            "cache_put_many_and_renew_per_answer_at_full_shard": write(shard_size) / shard_size,
            "cache_prefilled_answers": total_answers,
            "cache_open_seconds_when_prefilled": opening,
            "answer_json_mean_chars": round(statistics.fmean(map(len, answers)), 1),
            "cache_cycle_seconds_per_shard_by_concurrent_writers": cycles,
            "cache_slowdown_by_concurrent_writers": {t: round(f, 2) for t, f in slowdown.items()},
            "note": "rows use the slowdown of as many writers as models run at once "
            "(min(models, workers)); Ray's round trip is not slowed",
        },
        "rows": main_rows,
        "speedup_sweep": sweep,
        "simulation_seconds": round(simulated_s, 2),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_start": load_at_start,
            "load_average_at_end": os.getloadavg()[0],
            "python": platform.python_version(),
        },
    }
    print(table(main_rows))
    print()
    print(table(sweep))
    print(json.dumps({k: result[k] for k in ("actor_load_seconds", "driver_costs")}, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
