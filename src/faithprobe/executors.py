"""Where a subject's requests are computed: in this process (the default) or sharded across a
pool of Ray actors, one model replica per actor, on this machine or a Ray cluster.

The Ray executor only changes *where* answers are computed. :class:`RaySubject` reports the
name, kind, accepted request kinds, request versions and fingerprint of the replica it wraps,
so cache keys are the same under both executors; the runner wraps it in
:class:`~faithprobe.subjects.cached_subject.CachedSubject` exactly like an in-process subject, so the
cache is consulted before anything is dispatched, only misses go to Ray, and each shard's
answers are written to the cache as soon as it comes back (an interrupted run resumes).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from faithprobe.errors import UsageError
from faithprobe.requests import Answer, Request
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.endpoint.settings import EndpointConfig
from faithprobe.subjects.spec import ModelSpec

EXECUTORS = ("inprocess", "ray")


@dataclass(frozen=True)
class RayConfig:
    """``address``: a running cluster (``HOST:6379``, ``auto``); None starts a local Ray with
    ``num_cpus`` CPUs (None: all). ``gpus_per_worker`` None: 1 when the driver sees CUDA."""

    address: str | None = None
    workers: int = 2
    gpus_per_worker: float | None = None
    num_cpus: int | None = None


def _import_ray():
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
    """One model replica inside a Ray actor."""

    def __init__(self, spec: str | ModelSpec, batch_size: int, endpoint: EndpointConfig):
        """The model is placed by its spec's settings, resolved in the actor: Ray shows an
        actor the GPUs it reserved (``CUDA_VISIBLE_DEVICES``), so ``device=auto`` takes
        this actor's GPU."""
        from faithprobe.subjects import load_subject

        self.subject = load_subject(spec, batch_size=batch_size, endpoint=endpoint)

    def meta(self) -> dict[str, object]:
        import faithprobe

        s = self.subject
        return {
            "name": s.name,
            "kind": s.kind,
            "accepts": s.accepts,
            "has_chat_template": s.has_chat_template,
            "request_versions": dict(s.request_versions),
            "fingerprint": s.fingerprint,
            "describe": s.describe(),
            "faithprobe_file": faithprobe.__file__,
        }

    def answer(self, index: int, requests: Sequence[Request]) -> tuple[int, list[Answer]]:
        return index, self.subject.answer(requests)

    def usage(self) -> dict[str, int] | None:
        return self.subject.usage()


class RaySubject(Subject):
    """A model ``spec`` answered by ``actors`` (Ray actor handles of :class:`_Replica`)."""

    def __init__(
        self, spec: str | ModelSpec, actors: list, meta: dict, shard_size: int = 64
    ) -> None:
        self.spec, self.actors, self.shard_size = spec, actors, shard_size
        self.name = meta["name"]
        self.kind = meta["kind"]
        self.accepts = meta["accepts"]
        self.has_chat_template = meta["has_chat_template"]
        self.request_versions = meta["request_versions"]
        self._fingerprint = meta["fingerprint"]
        self._describe = meta["describe"]
        self.worker_faithprobe = meta["faithprobe_file"]

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, object]:
        return {**self._describe, "workers": len(self.actors)}

    def usage(self) -> dict[str, int] | None:
        ray = _import_ray()
        counts = ray.get([a.usage.remote() for a in self.actors])
        if all(c is None for c in counts):
            return None
        total: dict[str, int] = {}
        for c in counts:
            for k, v in (c or {}).items():
                total[k] = total.get(k, 0) + v
        return total

    @property
    def parallel_chunks(self) -> int:
        return len(self.actors)

    def answer_chunks(
        self, chunks: Iterable[Sequence[Request]]
    ) -> Iterator[tuple[int, list[Answer]]]:
        """Each actor works on one chunk at a time; the next chunk is drawn from ``chunks``
        only when an actor is free, and chunks are yielded as they finish (any order)."""
        from ray.util import ActorPool

        pool = ActorPool(self.actors)
        numbered = enumerate(chunks)

        def submit_while_an_actor_is_free() -> None:
            while pool.has_free() and (item := next(numbered, None)) is not None:
                index, chunk = item
                pool.submit(lambda actor, job: actor.answer.remote(*job), (index, list(chunk)))

        submit_while_an_actor_is_free()
        while pool.has_next():
            done = pool.get_next_unordered()
            submit_while_an_actor_is_free()  # before the caller handles ``done``: no idle actor
            yield done

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Contiguous shards of at most ``shard_size`` requests, fewer when that keeps every
        actor busy."""
        size = max(1, min(self.shard_size, -(-len(requests) // len(self.actors))))
        shards = [requests[i : i + size] for i in range(0, len(requests), size)]
        answers: list[list[Answer]] = [[] for _ in shards]
        for index, shard_answers in self.answer_chunks(shards):
            answers[index] = shard_answers
            if progress:
                progress(len(shard_answers))
        return [a for shard in answers for a in shard]


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` (or ``ray://HOST:PORT``) nobody answers at: ``ray.init``
    itself keeps retrying an unreachable head for minutes. ``auto`` and other forms are left
    to Ray."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as err:
        raise UsageError(
            f"cannot reach the Ray cluster at {address}: nothing answers there ({err}); "
            "is the head started (`ray start --head`) and the port open?"
        ) from err


class RayExecutor:
    """Connects to (or starts) Ray and builds :class:`RaySubject` s; on exit kills their
    actors and shuts Ray down if it started it. Use as a context manager."""

    def __init__(self, config: RayConfig) -> None:
        if config.workers < 1:
            raise UsageError(f"--workers must be at least 1, not {config.workers}")
        self.config = config
        self._actors: list = []
        self._started = False

    def __enter__(self) -> RayExecutor:
        ray = _import_ray()
        if not ray.is_initialized():
            kwargs: dict[str, object] = {"include_dashboard": False, "log_to_driver": True}
            if self.config.address is None and self.config.num_cpus is not None:
                kwargs["num_cpus"] = self.config.num_cpus
            if self.config.address is not None:
                check_reachable(self.config.address)
            try:
                ray.init(address=self.config.address, **kwargs)
            except ConnectionError as err:
                where = self.config.address
                raise UsageError(f"cannot reach the Ray cluster at {where}: {err}") from err
            self._started = True
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def describe(self) -> dict[str, object]:
        """For run.json: where the actors run and what each reserves."""
        return {
            "name": "ray",
            "address": self.config.address,
            "workers": self.config.workers,
            "gpus_per_worker": self.gpus_per_worker(),
        }

    def gpus_per_worker(self) -> float:
        if self.config.gpus_per_worker is not None:
            return self.config.gpus_per_worker
        import torch

        return 1.0 if torch.cuda.is_available() else 0.0

    def subject(
        self, spec: str | ModelSpec, *, batch_size: int = 16, endpoint: EndpointConfig | None = None
    ) -> RaySubject:
        ray = _import_ray()
        gpus = self.gpus_per_worker()
        actor_class = ray.remote(_Replica).options(
            num_cpus=1, num_gpus=gpus, runtime_env={"env_vars": _worker_env()}
        )
        args = (spec, batch_size, endpoint or EndpointConfig())
        # the first replica loads alone (a first use of `embedded` converts it to a shared
        # folder, which concurrent loaders would race for) and tells what the model is
        first = actor_class.remote(*args)
        self._actors.append(first)
        meta = ray.get(first.meta.remote())
        rest = [actor_class.remote(*args) for _ in range(self.config.workers - 1)]
        self._actors += rest
        ray.get([a.meta.remote() for a in rest])  # load errors surface here, not mid-run
        return RaySubject(spec, [first, *rest], meta, shard_size=batch_size * 4)

    def close(self) -> None:
        ray = _import_ray()
        if ray.is_initialized():
            for actor in self._actors:
                ray.kill(actor)
            if self._started:
                ray.shutdown()
        self._actors, self._started = [], False
