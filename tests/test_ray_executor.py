"""The Ray executor: same answers as in process, cache consulted before dispatch."""

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import faithprobe
from faithprobe.executors import RayExecutor, RaySettings, parse_executor
from faithprobe.executors.own_ray import own_ray
from faithprobe.report import run_to_folder as run
from faithprobe.runner import RunConfig
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.cached_subject import CachedSubject

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    """A Ray of the tests' own, as the executor starts one (nothing left in /tmp/ray or ~)."""
    if ray.is_initialized():
        yield
        return
    with own_ray(ray, num_cpus=2, include_dashboard=False, log_to_driver=False):
        yield


@pytest.fixture(scope="module")
def model_dir(tiny_llama_dir):
    return tiny_llama_dir


def _run(tmp_path: Path, model_dir: Path, name: str, executor: str, cache: str) -> Path:
    config = RunConfig(
        suite="distractors",
        models=[str(model_dir)],
        limit=40,
        seed=3,
        batch_size=4,
        out=tmp_path / name,
        cache_dir=tmp_path / cache,
        executor=parse_executor(executor + (",workers=2" if executor == "ray" else "")),
    )
    return run(config)


class _FailingCache(AnswerCache):
    def put_many(self, items):
        super().put_many(items)
        raise KeyboardInterrupt("simulated kill after one shard")


def _assert_same_results(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Predictions and every other column exactly; scores to float32 rounding (the actors
    run one torch thread, this process may run more, which moves the last bits)."""
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for col in a.columns:
        for u, v in zip(a[col].tolist(), b[col].tolist(), strict=True):
            u, v = np.asarray(u), np.asarray(v)
            if u.dtype.kind == v.dtype.kind == "f":  # floats, arrays of floats (NaN: none)
                np.testing.assert_allclose(u, v, rtol=1e-6, atol=1e-6, err_msg=col)
            else:
                assert u.tolist() == v.tolist(), col


def _table(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / "results.parquet").sort_values("pair_id", ignore_index=True)


def test_ray_matches_in_process_and_warm_cache_sends_nothing(tmp_path, model_dir, local_ray):
    ray_run = _run(tmp_path, model_dir, "ray", "ray", "cache-ray")
    local = _run(tmp_path, model_dir, "local", "inprocess", "cache-local")
    a, b = _table(ray_run), _table(local)
    assert len(a) >= 40  # --limit samples evenly across conditions
    _assert_same_results(a, b)
    info = json.loads((ray_run / "run.json").read_text())
    assert info["executor"] == {
        "name": "ray",
        "address": None,
        "workers": 2,
        "gpus_per_worker": float(torch.cuda.is_available()),
        "cpus_per_worker": 1.0,
        "num_cpus": None,
        "max_replacements": 3,
        "replace_timeout": 600.0,
        "max_workers": None,
    }
    assert json.loads((local / "run.json").read_text())["executor"] == {"name": "inprocess"}
    (subject,) = info["subjects"]
    assert subject["computed_requests"] > 0 and subject["workers"] == 2
    local_subject = json.loads((local / "run.json").read_text())["subjects"][0]
    assert subject["fingerprint"] == local_subject["fingerprint"]  # same cache keys

    rerun = _run(tmp_path, model_dir, "ray-again", "ray", "cache-ray")
    (again,) = json.loads((rerun / "run.json").read_text())["subjects"]
    assert again["computed_requests"] == 0
    assert again["cached_requests"] == subject["computed_requests"] + subject["cached_requests"]
    pd.testing.assert_frame_equal(_table(rerun), a)


def test_shards_come_back_in_order_and_resume(tmp_path, model_dir, local_ray):
    from faithprobe.requests import CandidateScoreRequest
    from faithprobe.subjects import load_subject

    requests = [
        CandidateScoreRequest(f"Item {i} lives in France. The capital is", ("Paris", "Rome"))
        for i in range(12)
    ]
    with RayExecutor(RaySettings(workers=2)) as executor:
        subject = executor.subject(str(model_dir), batch_size=2)
        # the actors import faithprobe from the same folder as this process
        assert Path(subject.worker_faithprobe) == Path(faithprobe.__file__)
        done = []
        out = subject.answer(requests, done.append)
        # interrupted after the first shard (of 3, 4 requests each) came back: it is cached
        cache = _FailingCache(tmp_path / "c.sqlite")
        with pytest.raises(KeyboardInterrupt):
            CachedSubject(subject, cache, chunk_size=4).answer(requests)
        resumed = CachedSubject(subject, AnswerCache(tmp_path / "c.sqlite"), chunk_size=4)
        # requests sharing packed rows with others than before: equal up to rounding
        _assert_same_scores(resumed.answer(requests), out)
        assert resumed.computed == len(requests) - 4
    local = load_subject(str(model_dir), batch_size=2)
    assert sum(done) == len(requests) and len(done) == 2  # one shard per actor
    assert subject.fingerprint == local.fingerprint and subject.accepts == local.accepts
    _assert_same_scores(out, local.answer(requests))


def _assert_same_scores(answers, expected) -> None:
    for got, want in zip(answers, expected, strict=True):
        assert got.n_tokens == want.n_tokens
        assert got.logprobs == pytest.approx(want.logprobs, abs=1e-5)
    assert ray.is_initialized()  # the executor leaves a Ray it did not start running


def test_an_unreachable_cluster_address_fails_fast():
    import socket

    from faithprobe.errors import UsageError
    from faithprobe.executors import check_reachable

    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
            with pytest.raises(UsageError, match="cannot reach the Ray cluster"):
                check_reachable(address, timeout=1.0)
    check_reachable("auto")  # left to Ray


def test_models_take_their_turn_when_ray_holds_one_models_actors(tmp_path, local_ray):
    """Two models of two 1-CPU actors on a 2-CPU Ray: each model's actors are started when
    its turn comes and killed after (all at once, the second model would wait for good).
    The reader, which is shown the example behind each request, answers as in process."""

    def config(name: str, executor: str) -> RunConfig:
        return RunConfig(suite="distractors", models=["ref:reader", "ref:constant"], limit=10,
                         out=tmp_path / name, cache_dir=tmp_path / f"cache-{name}",
                         executor=parse_executor(executor))  # fmt: skip

    on_ray = run(config("ray", "ray,workers=2"))
    pd.testing.assert_frame_equal(_table(on_ray), _table(run(config("local", "inprocess"))))
    subjects = json.loads((on_ray / "run.json").read_text())["subjects"]
    assert [(s["name"], s["workers"], s["lost_workers"]) for s in subjects] == [
        ("ref:reader", 2, []),
        ("ref:constant", 2, []),
    ]
    deadline = time.monotonic() + 30  # a killed actor's CPU comes back once it has exited
    while ray.available_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2  # every actor killed
