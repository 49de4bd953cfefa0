"""The Ray actor pool's fault handling, step by step, with a scripted stand-in for Ray (the
real two-node runs are in test_audit_cluster.py): which actor is lost, what is sent again,
what is started in its place, what a model that cannot load or holds other files says; a
pool larger than the cluster, refused before any actor starts; where a Ray of faithprobe's
own keeps its files and its token."""

from __future__ import annotations

import itertools
import os
import stat
import threading
from types import SimpleNamespace

import pytest

from faithprobe.errors import ModelError, UsageError
from faithprobe.executors import RaySettings, own_ray, ray_pool
from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects import parse_model


class ActorDied(Exception):
    """Stands in for ``ray.exceptions.RayActorError``."""


class Ref:
    """What a remote call returns: its value, or the actor's death, once asked for."""

    ids = itertools.count()

    def __init__(self, actor, value=None, died: bool = False) -> None:
        self.actor, self.value, self.died, self.id = actor, value, died, next(self.ids)


class Actor:
    """A replica: its load's outcome (``meta``) and whether it dies under its next task."""

    def __init__(self, ray: FakeRay, meta: dict) -> None:
        self.ray, self.meta_value, self.dies, self.tasks = ray, meta, False, []
        self.meta = SimpleNamespace(remote=lambda: Ref(self, self.meta_value))
        self.answer = SimpleNamespace(remote=self._answer)

    def _answer(self, index, requests, *examples):
        self.tasks.append(index)
        return Ref(self, (index, [f"answer {index}"] * len(requests)), died=self.dies)


class FakeRay:
    """``remote``, ``get``, ``wait`` and ``kill`` as the pool uses them; each new actor
    takes the next of ``metas`` (the last repeats)."""

    def __init__(self, metas: list[dict]) -> None:
        self.metas, self.actors, self.killed = metas, [], []
        self.exceptions = SimpleNamespace(RayActorError=ActorDied)

    def remote(self, cls):
        def make(*args):
            meta = self.metas[min(len(self.actors), len(self.metas) - 1)]
            self.actors.append(Actor(self, meta))
            return self.actors[-1]

        return SimpleNamespace(options=lambda **kw: SimpleNamespace(remote=make))

    def get(self, ref: Ref):
        if ref.died or ref.actor in self.killed:
            raise ActorDied("the actor died")
        return ref.value

    def wait(self, refs, num_returns=1, timeout=None):
        return [min(refs, key=lambda r: r.id)], []  # the oldest finishes first

    def kill(self, actor, no_restart=True):
        self.killed.append(actor)


def _meta(fingerprint: str = "f1", node: str = "10.0.0.1") -> dict:
    return {"name": "m", "kind": "causal", "accepts": ("candidate-scores",),
            "has_chat_template": False, "request_versions": {}, "fingerprint": fingerprint,
            "cacheable": True, "reads_examples": False, "describe": {},
            "faithprobe_file": "x", "node": node}  # fmt: skip


@pytest.fixture
def fake_ray(monkeypatch):
    def install(metas: list[dict]) -> FakeRay:
        ray = FakeRay(metas)
        monkeypatch.setattr(ray_pool, "import_ray", lambda: ray)
        return ray

    return install


def _subject(workers: int = 2, **settings) -> ray_pool.RaySubject:
    replicas = ray_pool.Replicas(
        parse_model("ref:reader"), RaySettings(workers=workers, **settings), 4, 0.0
    )
    replicas.first()
    return ray_pool.RaySubject(replicas, shard_size=2)


REQUESTS = [CandidateScoreRequest(f"item {i}", ("a", "b")) for i in range(8)]


def test_a_shard_whose_actor_died_is_sent_again_and_a_replacement_joins(fake_ray):
    ray = fake_ray([_meta()])
    subject = _subject()
    ray.actors[0].dies = True  # the first actor dies under its first shard
    answers = subject.answer(REQUESTS)
    assert answers == [f"answer {i // 2}" for i in range(8)]  # every shard, in order
    first, second, replacement = ray.actors
    assert first in ray.killed and first not in subject.replicas.live
    assert set(second.tasks + replacement.tasks) == {0, 1, 2, 3}  # shard 0 again
    assert subject.replicas.live == [second, replacement]
    assert subject.replicas.lost == ["an actor of model ref:reader was lost (ActorDied)"]


def test_with_no_replacements_left_the_others_finish_and_then_it_is_one_line(fake_ray):
    ray = fake_ray([_meta()])
    subject = _subject(max_replacements=0)
    ray.actors[0].dies = True
    assert subject.answer(REQUESTS) == [f"answer {i // 2}" for i in range(8)]
    assert len(ray.actors) == 2  # nothing started
    ray.actors[1].dies = True
    with pytest.raises(ModelError, match="every actor of model m was lost: an actor of"):
        subject.answer(REQUESTS)


def test_a_model_that_fails_to_load_names_its_node_and_is_not_retried(fake_ray):
    ray = fake_ray([{"error": "OSError: no weights here", "node": "10.0.0.7"}])
    with pytest.raises(ModelError) as err:
        _subject()
    assert str(err.value) == (
        "model ref:reader failed to load on node 10.0.0.7: OSError: no weights here"
    )
    assert len(ray.actors) == 1 and ray.killed == ray.actors


def test_a_replica_that_holds_other_files_is_refused(fake_ray):
    ray = fake_ray([_meta("f1", "10.0.0.1"), _meta("f2", "10.0.0.2"), _meta("f1", "10.0.0.3")])
    subject = _subject()
    assert subject.answer(REQUESTS) == [f"answer {i // 2}" for i in range(8)]
    first, other_files, replacement = ray.actors
    assert subject.replicas.live == [first, replacement] and other_files in ray.killed
    assert subject.replicas.lost == [
        "model ref:reader on node 10.0.0.2 has fingerprint f2, not f1 as on node 10.0.0.1: "
        "the nodes hold different files"
    ]


def test_an_interrupted_driver_ends_a_models_wait_at_its_next_look(fake_ray):
    ray = fake_ray([_meta()])
    subject = _subject()
    ray.wait = lambda refs, num_returns=1, timeout=None: ([], refs)  # nothing finishes
    subject.replicas.stop = threading.Event()
    subject.replicas.stop.set()
    with pytest.raises(ray_pool.Stopped, match="model ref:reader: stopped"):
        subject.answer(REQUESTS)


# -- a pool the cluster cannot hold, checked before any actor starts ----------------------


def _cluster(monkeypatch, *nodes: dict) -> None:
    listed = [{"Alive": True, "Resources": n} for n in nodes] + [
        {"Alive": False, "Resources": {"CPU": 512.0, "GPU": 64.0}}  # a lost node: not counted
    ]
    monkeypatch.setattr(ray_pool, "import_ray", lambda: SimpleNamespace(nodes=lambda: listed))


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (RaySettings(workers=5), "workers=5 actors of 1 CPUs and 0 GPUs each, and the Ray "
         "cluster holds 4 at once (2 nodes, 4 CPUs, 2 GPUs)"),
        (RaySettings(workers=3, gpus_per_worker=1), "workers=3 actors of 1 CPUs and 1 GPUs "
         "each, and the Ray cluster holds 2 at once"),
        (RaySettings(workers=1, cpus_per_worker=3), "an actor needs 3 CPUs and 0 GPUs, and no "
         "node of the Ray cluster has them (the largest: 2 CPUs, 2 GPUs)"),
        (RaySettings(workers=1, gpus_per_worker=4), "no node of the Ray cluster has them"),
    ],
)  # fmt: skip
def test_a_pool_the_cluster_cannot_hold_is_one_line(monkeypatch, settings, said):
    _cluster(monkeypatch, {"CPU": 2.0, "GPU": 2.0}, {"CPU": 2.0})
    with pytest.raises(UsageError) as err:
        ray_pool.RayExecutor(RaySettings()).check_fits({"ckpt": settings})
    assert str(err.value).startswith("model ckpt: ") and said in str(err.value)


def test_a_pool_the_cluster_holds_is_taken(monkeypatch):
    _cluster(monkeypatch, {"CPU": 2.0, "GPU": 2.0}, {"CPU": 2.0})
    ray_pool.RayExecutor(RaySettings()).check_fits(
        {
            "a": RaySettings(workers=4),
            "b": RaySettings(workers=2, gpus_per_worker=1),
            "c": RaySettings(workers=4096, cpus_per_worker=0, gpus_per_worker=0),  # no need
            "d": RaySettings(workers=8, cpus_per_worker=0.5),
        }
    )


# -- a Ray of faithprobe's own: its files and its token -----------------------------------


class InitRecorder:
    """``init``/``shutdown``/``is_initialized`` of Ray: what ``init`` was given, the token
    and the session folder as Ray would see them."""

    def __init__(self) -> None:
        self.initialized, self.seen = False, {}

    def init(self, **kwargs) -> None:
        folder = os.path.dirname(kwargs["_temp_dir"])
        self.seen = {**kwargs, "token": os.environ.get(own_ray.TOKEN),
                     "mode": stat.S_IMODE(os.stat(folder).st_mode), "folder": folder}  # fmt: skip
        os.makedirs(kwargs["_temp_dir"])  # Ray writes its session there
        os.environ[own_ray.MODE] = "token"  # as ray.init does
        self.initialized = True

    def shutdown(self) -> None:
        self.initialized = False

    def is_initialized(self) -> bool:
        return self.initialized


def test_its_session_folder_is_private_and_removed_and_its_token_not_written(monkeypatch):
    for name in (own_ray.TOKEN, own_ray.TOKEN_PATH, own_ray.MODE):
        monkeypatch.delenv(name, raising=False)
    ray = InitRecorder()
    with own_ray.own_ray(ray, num_cpus=1) as folder:
        assert ray.initialized and os.path.isdir(folder)
    seen = ray.seen
    assert seen["address"] == "local" and seen["num_cpus"] == 1 and seen["folder"] == folder
    assert seen["_temp_dir"].startswith(folder + os.sep) and seen["mode"] == 0o700
    assert len(seen["token"]) == 64 and seen["token"] == own_ray._token()  # one per process
    assert not os.path.exists(folder) and not ray.initialized
    assert own_ray.TOKEN not in os.environ and own_ray.MODE not in os.environ  # restored


def test_a_token_the_user_gives_ray_is_left_as_it_is(monkeypatch, tmp_path):
    monkeypatch.delenv(own_ray.TOKEN, raising=False)
    monkeypatch.setenv(own_ray.TOKEN_PATH, str(tmp_path / "mine"))
    ray = InitRecorder()
    with own_ray.own_ray(ray):
        pass
    assert ray.seen["token"] is None and os.environ[own_ray.TOKEN_PATH] == str(tmp_path / "mine")


def test_a_failed_start_leaves_nothing(monkeypatch):
    made = []

    def init(**kwargs):
        made.append(os.path.dirname(kwargs["_temp_dir"]))
        raise ConnectionError("raylet did not start")

    ray = SimpleNamespace(init=init, is_initialized=lambda: False)
    with pytest.raises(ConnectionError), own_ray.own_ray(ray):
        pass
    assert made and not os.path.exists(made[0])


def test_a_ray_of_our_own_starts_quiet_unless_verbose(monkeypatch):
    """Its start-up lines (a local instance started, token authentication on) are Ray's
    INFO and WARNING: hidden as the other libraries' are, shown with --verbose."""
    import logging

    from faithprobe import quiet

    for name in (own_ray.TOKEN, own_ray.TOKEN_PATH, own_ray.MODE):
        monkeypatch.delenv(name, raising=False)
    ray = InitRecorder()
    monkeypatch.setattr(ray_pool, "import_ray", lambda: ray)
    quiet.hush()
    try:
        with ray_pool.RayExecutor(RaySettings(num_cpus=1)):
            assert ray.seen["logging_level"] == logging.ERROR and ray.seen["num_cpus"] == 1
    finally:
        quiet.restore()
    with ray_pool.RayExecutor(RaySettings()):
        assert "logging_level" not in ray.seen
    assert not ray.initialized


def test_an_actor_asked_for_from_another_thread_joins_and_takes_shards(fake_ray):
    ray = fake_ray([_meta()])
    subject = _subject(workers=1)
    assert subject.replicas.grow()  # as another model's thread does when it frees a worker
    assert len(ray.actors) == 1  # started by the model's own thread, at its next look
    assert subject.answer(REQUESTS) == [f"answer {i // 2}" for i in range(8)]
    first, grown = ray.actors
    assert subject.replicas.live == [first, grown] and grown.tasks
    assert sorted(first.tasks + grown.tasks) == [0, 1, 2, 3]  # the shards of one actor
    assert subject.describe()["grown_workers"] == 1


def test_a_model_grows_no_further_than_max_workers(fake_ray):
    fake_ray([_meta()])
    subject = _subject(workers=1, max_workers=2)
    assert subject.replicas.grow() and not subject.replicas.grow()
    subject.answer(REQUESTS)
    assert subject.replicas.size == 2 and not subject.replicas.grow()


def test_freed_workers_go_to_the_running_models_with_the_fewest_actors():
    from faithprobe.audit.cluster import grow_onto

    class Pool:
        def __init__(self, size: int, most: int = 100) -> None:
            self.size, self.most = size, most

        def grow(self) -> bool:
            if self.size >= self.most:
                return False
            self.size += 1
            return True

    a, b, c = Pool(1), Pool(3), Pool(1, most=2)
    assert grow_onto(4, [a, b, c]) == 4
    assert (a.size, b.size, c.size) == (4, 3, 2)  # a, c, a, then c is full: a
    assert grow_onto(5, [Pool(1, most=1)]) == 0
