"""Requests sharded across a pool of Ray actors, one model replica per actor, on this machine
or a Ray cluster.

The Ray executor only changes *where* answers are computed. :class:`RaySubject` reports the
name, kind, accepted request kinds, request versions and fingerprint of the replicas it
wraps, so cache keys are the same under both executors; the runner wraps it in
:class:`~faithprobe.subjects.cached_subject.CachedSubject` exactly like an in-process subject,
so the cache is consulted before anything is dispatched, only misses go to Ray, and each
shard's answers are written to the cache as soon as it comes back (an interrupted run
resumes).

Faults are handled here rather than by Ray's own actor restarts and task retries: a task
retried on an actor Ray cannot place again (its node gone, the cluster full) waits for good,
and Ray's ``ActorPool`` hands a dead actor back to its idle list. A shard whose actor died
goes back to the queue and is sent to the model's other actors, a replacement actor is
started (at most ``max_replacements`` per model), and a model with no live actor waits
``replace_timeout`` seconds for one before its work fails with one line. Every replica must
report the same fingerprint: one that loaded other files on its node is refused, since its
answers would be cached under the others' key.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

from faithprobe import quiet
from faithprobe.errors import ModelError, UsageError
from faithprobe.executors.own_ray import own_ray
from faithprobe.executors.settings import RaySettings, split_address
from faithprobe.records import Example, Origin
from faithprobe.requests import Answer, Request
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.spec import ModelSpec


def import_ray():
    try:
        import ray
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise UsageError(
            "--executor ray needs Ray: pip install 'faithprobe[ray]' (or pip install ray)"
        ) from err
    return ray


def _worker_env() -> dict[str, str]:
    """PYTHONPATH for the actors: the folder this faithprobe was imported from first (a
    source checkout run with PYTHONPATH=src, an editable install), then the driver's own."""
    import faithprobe

    src = str(Path(faithprobe.__file__).resolve().parent.parent)
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join([src, *[str(Path(p).resolve()) for p in rest]])}


class _Replica:
    """One model replica inside a Ray actor. A model that fails to load is not an actor
    that dies: :meth:`meta` says why and on which node, and the driver reports it."""

    def __init__(self, spec: ModelSpec, batch_size: int):
        """The model is placed by its spec's settings, resolved in the actor: Ray shows an
        actor the GPUs it reserved (``CUDA_VISIBLE_DEVICES``), so ``device=auto`` takes
        this actor's GPU."""
        import ray

        from faithprobe.subjects import load_subject

        self.node = ray.util.get_node_ip_address()
        self.subject, self.error = None, None
        try:
            self.subject = load_subject(spec, batch_size=batch_size)
        except Exception as err:  # noqa: BLE001 - reported by the driver, traceback in the log
            traceback.print_exc(file=sys.stderr)
            self.error = f"{type(err).__name__}: {err}".splitlines()[0]

    def meta(self) -> dict[str, object]:
        import faithprobe

        if self.subject is None:
            return {"error": self.error, "node": self.node}
        s = self.subject
        return {
            "name": s.name,
            "kind": s.kind,
            "accepts": s.accepts,
            "has_chat_template": s.has_chat_template,
            "request_versions": dict(s.request_versions),
            "fingerprint": s.fingerprint,
            "cacheable": s.cacheable,
            "reads_examples": s.reads_examples,
            "describe": s.describe(),
            "faithprobe_file": faithprobe.__file__,
            "node": self.node,
        }

    def answer(
        self,
        index: int,
        requests: Sequence[Request],
        shown: Mapping[Request, Example] | None = None,
        origins: Mapping[str, Origin] | None = None,
    ) -> tuple[int, list[Answer]]:
        """``shown``/``origins``: the examples behind these requests, for a subject that
        reads them (sent with each shard, so a replacement actor needs no earlier state)."""
        if shown is not None:
            self.subject.read_examples(shown, origins)
        return index, self.subject.answer(requests)

    def usage(self) -> dict[str, int] | None:
        return self.subject.usage()


class Stopped(Exception):
    """The driver was interrupted: a model's thread ends at its next look."""


class Replicas:
    """The actors of one model: those that loaded (``live``), those still loading
    (``joining``: their ``meta`` reference -> the actor) and how many were replaced."""

    def __init__(
        self,
        spec: ModelSpec,
        settings: RaySettings,
        batch_size: int,
        gpus: float,
        stop: threading.Event | None = None,
    ):
        ray = import_ray()
        self.spec, self.settings, self.stop = spec, settings, stop
        self._actor_class = ray.remote(_Replica).options(
            num_cpus=settings.cpus_per_worker,
            num_gpus=gpus,
            runtime_env={"env_vars": _worker_env()},
        )
        self._args = (spec, batch_size)
        self.live: list = []
        self.joining: dict = {}
        self.replaced = 0
        self.grown = 0  # actors started on workers other models freed (:meth:`grow`)
        self._asked = 0  # of those, asked for and not yet started
        self._asking = threading.Lock()
        self.meta: dict = {}
        self.lost: list[str] = []  # why each lost actor was lost

    def start(self, n: int) -> None:
        for _ in range(n):
            actor = self._actor_class.remote(*self._args)
            self.joining[actor.meta.remote()] = actor

    @property
    def size(self) -> int:
        """The actors this model has or will have: live, loading, asked for."""
        return len(self.live) + len(self.joining) + self._asked

    def grow(self) -> bool:
        """Ask for one more actor, from any thread (the model's own starts it at its next
        look at Ray, :meth:`wait_one`); False where ``max_workers`` says no."""
        with self._asking:
            if self.settings.max_workers is not None and self.size >= self.settings.max_workers:
                return False
            self._asked += 1
        return True

    def _start_asked(self) -> None:
        with self._asking:
            n, self._asked = self._asked, 0
        self.grown += n
        self.start(n)

    def first(self) -> dict:
        """Start the first replica alone (a first use of ``embedded`` converts it to a
        shared folder, which concurrent loaders would race for), wait for it and start
        the others; the first replica's meta (its load error: :class:`ModelError`)."""
        self.start(1)
        while not self.live:
            if not self.joining:  # it failed to load, or died more often than allowed
                raise ModelError(self.lost[-1])
            ref = next(iter(self.joining))
            self.wait_one([ref])
            self.join(ref)
        self.start(self.settings.workers - 1)
        return self.meta

    def wait_one(self, refs: list, timeout: float | None = None) -> list:
        """``ray.wait`` for the first of ``refs`` to finish within ``timeout`` (None: for
        good), a second at a time, so that when ``stop`` is set (the driver interrupted) a
        model's thread ends at once rather than after its work (:class:`Stopped`)."""
        ray = import_ray()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._start_asked()  # they join at a later look (their loads are not in ``refs``)
            left = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            ready, _ = ray.wait(refs, num_returns=1, timeout=left)
            if ready or (deadline is not None and time.monotonic() >= deadline):
                return ready
            if self.stop is not None and self.stop.is_set():
                raise Stopped(f"model {self.spec.name}: stopped")

    def join(self, ref):
        """The actor behind ``ref`` has loaded (or failed to): live and returned, or lost
        (None)."""
        ray = import_ray()
        actor = self.joining.pop(ref)
        try:
            meta = ray.get(ref)
        except ray.exceptions.RayActorError as err:
            why = f"an actor of model {self.spec.name} died while loading ({type(err).__name__})"
            self._lose(actor, why, died=True)
            return None
        if meta.get("error"):
            where = f" on node {meta['node']}" if meta.get("node") else ""
            why = f"model {self.spec.name} failed to load{where}: {meta['error']}"
            self._lose(actor, why, died=False)
        elif self.meta and meta["fingerprint"] != self.meta["fingerprint"]:
            self._lose(
                actor,
                f"model {self.spec.name} on node {meta['node']} has fingerprint "
                f"{meta['fingerprint']}, not {self.meta['fingerprint']} as on node "
                f"{self.meta['node']}: the nodes hold different files",
                died=False,
            )
        else:
            self.meta = self.meta or meta
            self.live.append(actor)
            return actor
        return None

    def _lose(self, actor, why: str, died: bool = True) -> None:
        """Drop ``actor`` (killed, so Ray frees what it reserved) and start a replacement
        while the model's allowance lasts; a load that failed (not ``died``) is not
        retried (another node would most likely fail the same way) unless other replicas
        loaded."""
        ray = import_ray()
        self.lost.append(why)
        if actor in self.live:
            self.live.remove(actor)
        ray.kill(actor, no_restart=True)
        if (self.meta or died) and self.replaced < self.settings.max_replacements:
            self.replaced += 1
            self.start(1)

    def lose(self, actor, err: Exception) -> None:
        """``actor`` died under a task (killed, its node lost)."""
        self._lose(actor, f"an actor of model {self.spec.name} was lost ({type(err).__name__})")

    def kill(self) -> None:
        ray = import_ray()
        for actor in [*self.live, *self.joining.values()]:
            ray.kill(actor, no_restart=True)
        self.live, self.joining = [], {}


class RaySubject(Subject):
    """A model answered by its :class:`Replicas`."""

    def __init__(self, replicas: Replicas, shard_size: int = 64) -> None:
        self.replicas, self.shard_size = replicas, shard_size
        meta = replicas.meta
        self.name = meta["name"]
        self.kind = meta["kind"]
        self.accepts = meta["accepts"]
        self.has_chat_template = meta["has_chat_template"]
        self.request_versions = meta["request_versions"]
        self.cacheable = meta["cacheable"]
        self.reads_examples = meta["reads_examples"]
        self._fingerprint = meta["fingerprint"]
        self._describe = meta["describe"]
        self.worker_faithprobe = meta["faithprobe_file"]
        self._shown: Mapping[Request, Example] = {}
        self._origins: Mapping[str, Origin] = {}

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, object]:
        """The replica's own, with the actors asked for, those started since on workers
        other models freed, and those lost so far (killed, their node gone, a replacement that
        failed to load) and why."""
        replicas = self.replicas
        return {
            **self._describe,
            "workers": replicas.settings.workers,
            "grown_workers": replicas.grown,
            "lost_workers": replicas.lost,
        }

    def read_examples(
        self, by_request: Mapping[Request, Example], origins: Mapping[str, Origin] | None = None
    ) -> None:
        self._shown, self._origins = dict(by_request), dict(origins or {})

    def usage(self) -> dict[str, int] | None:
        ray = import_ray()
        counts = []
        for actor in list(self.replicas.live):  # one at a time: a lost one is let go
            try:
                counts.append(ray.get(actor.usage.remote()))
            except ray.exceptions.RayActorError as err:
                self.replicas.lose(actor, err)
        if all(c is None for c in counts):
            return None
        total: dict[str, int] = {}
        for c in counts:
            for k, v in (c or {}).items():
                total[k] = total.get(k, 0) + v
        return total

    @property
    def parallel_chunks(self) -> int:
        """The actors the model is meant to have (not those live now: the shards must not
        depend on when the others joined)."""
        return self.replicas.settings.workers

    def _examples_of(self, chunk: Sequence[Request]) -> tuple:
        """What a subject that reads examples is shown with ``chunk``."""
        if not self.reads_examples:
            return ()
        shown = {r: self._shown[r] for r in chunk if r in self._shown}
        ids = {e.id for e in shown.values()}
        return shown, {i: o for i, o in self._origins.items() if i in ids}

    def answer_chunks(
        self, chunks: Iterable[Sequence[Request]]
    ) -> Iterator[tuple[int, list[Answer]]]:
        """Each live actor works on one chunk at a time; the next chunk is drawn from
        ``chunks`` only when an actor is free, and chunks are yielded as they finish (any
        order). A chunk whose actor died is sent again; replacements join as they load."""
        ray = import_ray()
        replicas = self.replicas
        retry: deque = deque()
        numbered = enumerate(chunks)
        idle = deque(replicas.live)
        running: dict = {}
        exhausted = False

        def next_job():
            nonlocal exhausted
            if retry:
                return retry.popleft()
            if not exhausted and (job := next(numbered, None)) is not None:
                return job
            exhausted = True
            return None

        def submit_while_an_actor_is_free() -> None:
            while idle and (job := next_job()) is not None:
                actor = idle.popleft()
                index, chunk = job
                ref = actor.answer.remote(index, list(chunk), *self._examples_of(chunk))
                running[ref] = (actor, job)

        submit_while_an_actor_is_free()
        while running or not exhausted or retry:
            waits = [*running, *replicas.joining]
            if not waits:
                raise ModelError(f"every actor of model {self.name} was lost: {replicas.lost[-1]}")
            timeout = None if running else replicas.settings.replace_timeout
            ready = replicas.wait_one(waits, timeout)
            if not ready:
                raise ModelError(
                    f"every actor of model {self.name} was lost and none came back within "
                    f"{timeout:g} s: {replicas.lost[-1]}"
                )
            (ref,) = ready
            if ref in replicas.joining:
                if (actor := replicas.join(ref)) is not None:
                    idle.append(actor)
                    submit_while_an_actor_is_free()
                continue
            actor, job = running.pop(ref)
            try:
                done = ray.get(ref)
            except ray.exceptions.RayActorError as err:
                retry.append(job)
                replicas.lose(actor, err)
                submit_while_an_actor_is_free()
                continue
            idle.append(actor)
            submit_while_an_actor_is_free()  # before the caller handles ``done``: no idle actor
            yield done

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Contiguous shards of at most ``shard_size`` requests, fewer when that keeps every
        actor busy."""
        size = max(1, min(self.shard_size, -(-len(requests) // self.parallel_chunks)))
        shards = [requests[i : i + size] for i in range(0, len(requests), size)]
        answers: list[list[Answer]] = [[] for _ in shards]
        for index, shard_answers in self.answer_chunks(shards):
            answers[index] = shard_answers
            if progress:
                progress(len(shard_answers))
        return [a for shard in answers for a in shard]

    def close(self) -> None:
        """Kill the actors: what they reserved goes to the next model."""
        self.replicas.kill()


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` (or ``ray://HOST:PORT``) nobody answers at: ``ray.init``
    itself keeps retrying an unreachable head for minutes. ``auto`` and other forms are left
    to Ray."""
    import socket

    if (split := split_address(address)) is None:
        return
    try:
        socket.create_connection(split, timeout=timeout).close()
    except OSError as err:
        raise UsageError(
            f"cannot reach the Ray cluster at {address}: nothing answers there ({err}); "
            "is the head started (`ray start --head`) and the port open?"
        ) from err


def _actors_held(node: Mapping[str, float], need: Mapping[str, float]) -> float:
    """How many actors needing ``need`` (resource -> amount) the node ``node`` (resource ->
    its total) holds at once; infinite for an actor that needs nothing."""
    counts = [node.get(k, 0) // v for k, v in need.items() if v > 0]
    return min(counts) if counts else math.inf


def _totals(nodes: Sequence[Mapping[str, float]]) -> str:
    n = len(nodes)
    cpus, gpus = (sum(node.get(k, 0) for node in nodes) for k in ("CPU", "GPU"))
    return f"{n} node{'s' if n != 1 else ''}, {cpus:g} CPUs, {gpus:g} GPUs"


class RayExecutor:
    """Connects to (or starts) Ray and builds :class:`RaySubject` s; on exit kills their
    actors and shuts Ray down if it started it. Use as a context manager."""

    def __init__(self, settings: RaySettings) -> None:
        self.settings = settings
        self.stop = threading.Event()  # set: every model's waits end (see Replicas.wait_one)
        self._subjects: list[RaySubject] = []
        self._started = ExitStack()  # shuts down the Ray this executor started, if any

    def __enter__(self) -> RayExecutor:
        ray = import_ray()
        if ray.is_initialized():
            return self
        kwargs: dict[str, object] = {"include_dashboard": False, "log_to_driver": True}
        if quiet.hushed():  # its start-up lines (a local instance, token authentication)
            kwargs["logging_level"] = logging.ERROR
        if self.settings.address is None:
            # a Ray of our own ("local"), never one another job started on this machine
            # (ray.init's default joins that one, and refuses num_cpus there); its files in
            # a folder removed at the end, its token readable by its owner only (own_ray)
            if self.settings.num_cpus is not None:
                kwargs["num_cpus"] = self.settings.num_cpus
            self._started.enter_context(own_ray(ray, **kwargs))
            return self
        check_reachable(self.settings.address)
        try:
            ray.init(address=self.settings.address, **kwargs)
        except ConnectionError as err:
            where = self.settings.address
            raise UsageError(f"cannot reach the Ray cluster at {where}: {err}") from err
        self._started.callback(ray.shutdown)  # the driver's connection, not the cluster
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def describe(self, settings: RaySettings | None = None) -> dict[str, object]:
        """For run.json: where the actors run and what each reserves."""
        s = settings or self.settings
        return {
            "name": "ray",
            "address": s.address,
            "workers": s.workers,
            "gpus_per_worker": self.gpus_per_worker(s),
            "cpus_per_worker": s.cpus_per_worker,
        }

    def check_fits(self, placed: Mapping[str, RaySettings]) -> None:
        """Refuse, before any actor starts, a model (name -> its settings) whose pool of
        actors the cluster can never hold at once: an actor that needs more CPUs or GPUs
        than any node has, or more actors than its nodes hold together (Ray would keep them
        waiting for good; a model's pool is waited for whole only by --budget auto, but a
        pool larger than the cluster is a typo either way)."""
        ray = import_ray()
        nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
        for name, settings in placed.items():
            need = {"CPU": settings.cpus_per_worker, "GPU": self.gpus_per_worker(settings)}
            each = " and ".join(f"{v:g} {k}s" for k, v in need.items())
            held = sum(_actors_held(node, need) for node in nodes)
            if held == 0:
                largest = max(((n.get("CPU", 0), n.get("GPU", 0)) for n in nodes), default=(0, 0))
                raise UsageError(
                    f"model {name}: an actor needs {each}, and no node of the Ray cluster has "
                    f"them (the largest: {largest[0]:g} CPUs, {largest[1]:g} GPUs): lower "
                    "cpus_per_worker or gpus_per_worker, or add a larger node"
                )
            if settings.workers > held:
                raise UsageError(
                    f"model {name}: workers={settings.workers} actors of {each} each, and the "
                    f"Ray cluster holds {held:g} at once ({_totals(nodes)}): lower workers "
                    "(or cpus_per_worker, gpus_per_worker), or add nodes"
                )

    @staticmethod
    def gpus_per_worker(settings: RaySettings) -> float:
        if settings.gpus_per_worker is not None:
            return settings.gpus_per_worker
        import torch

        return 1.0 if torch.cuda.is_available() else 0.0

    def subject(
        self, spec: str | ModelSpec, *, batch_size: int = 16, settings: RaySettings | None = None
    ) -> RaySubject:
        """``spec``'s model on ``settings.workers`` actors (default: the executor's
        settings), once its first replica has loaded (a load error: :class:`ModelError`
        naming the model and the node)."""
        from faithprobe.subjects import model_spec

        settings = settings or self.settings
        gpus = self.gpus_per_worker(settings)
        replicas = Replicas(model_spec(spec), settings, batch_size, gpus, self.stop)
        try:
            replicas.first()
        except ModelError:
            replicas.kill()
            raise
        subject = RaySubject(replicas, shard_size=batch_size * 4)
        self._subjects.append(subject)
        return subject

    def close(self) -> None:
        ray = import_ray()
        if ray.is_initialized():
            for subject in self._subjects:
                subject.close()
        self._subjects = []
        self._started.close()
