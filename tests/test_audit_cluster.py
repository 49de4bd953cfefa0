"""The audit on a real two-node Ray cluster (``ray.cluster_utils.Cluster``: a head and a
second node, each its own raylet) gives the in-process audit's card, and survives a killed
actor and a lost node. The longer runs (the embedded models, a killed driver) are in
``benchmarks/audit_cluster.py``."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from faithprobe.audit.execute import AuditConfig, audit
from faithprobe.audit.identical import card_differences
from faithprobe.audit.plan import declared_steps
from faithprobe.cli import app
from faithprobe.executors import parse_executor

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

STEPS = ("distractors", "faithfulness-negation", "confidence-shift")


@pytest.fixture(scope="module")
def two_nodes():
    """A head node with 1 CPU and a second node with 2 (so a model of two 1-CPU actors
    has one on the second node); the audits connect by address."""
    if ray.is_initialized():
        ray.shutdown()
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    worker = cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    yield cluster, worker
    if ray.is_initialized():
        ray.shutdown()
    cluster.shutdown()


def _audit(tmp_path: Path, name: str, models: list[str], executor: str = "inprocess",
           budget: str = "small", **kw):  # fmt: skip
    config = AuditConfig(
        models=models,
        out=tmp_path / name,
        budget=budget,
        cache_dir=tmp_path / f"cache-{name}",
        steps=[s for s in declared_steps() if s.name in STEPS],
        executor=parse_executor(executor),
        batch_size=4,
        max_items=40 if budget == "auto" else None,
    )
    return audit(config, **kw)


def _assert_same_card(local: Path, on_ray: Path) -> None:
    """The actors run one torch thread, this process may run more: floats to 1e-6."""
    assert card_differences(local, on_ray) == []


def _replica_pids(cluster) -> list[int]:
    """The processes of this cluster's model replicas (its raylets' children, named by their
    actor): not those of another cluster on this machine."""
    raylets = {n.all_processes["raylet"][0].process.pid for n in cluster.list_all_nodes()}
    return [
        p.pid
        for p in psutil.process_iter(["cmdline", "ppid"])
        if p.info["ppid"] in raylets and any("_Replica" in part for part in p.info["cmdline"] or [])
    ]


def test_the_card_on_two_nodes_is_the_in_process_card(tmp_path, two_nodes, tiny_llama_dir):
    cluster, _ = two_nodes
    models = ["ref:reader", "ref:memoriser", str(tiny_llama_dir)]
    local = _audit(tmp_path, "local", models)
    lines: list[str] = []
    executor = f"ray,address={cluster.address}"
    on_ray = _audit(tmp_path, "ray", models, f"{executor},workers=2", log=lines.append)
    _assert_same_card(local, on_ray)
    record = json.loads((on_ray / "run.json").read_text())
    assert record["executor"]["name"] == "ray" and record["executor"]["workers"] == 2
    assert record["failed_models"] == []
    step = json.loads((on_ray / "suites" / STEPS[0] / "run.json").read_text())
    assert [s["name"] for s in step["subjects"]] == models
    assert step["subjects"][2]["computed_requests"] > 0

    again = _audit(tmp_path / "again", "ray", models, f"{executor},workers=2")  # all computed
    rerun = _audit(tmp_path, "ray", models, f"{executor},workers=1")  # same cache: none
    for folder in (again, rerun):
        _assert_same_card(local, folder)
    (tiny,) = [s for s in json.loads((rerun / "suites" / STEPS[0] / "run.json").read_text())[
        "subjects"] if s["name"] == str(tiny_llama_dir)]  # fmt: skip
    assert tiny["computed_requests"] == 0


def test_a_model_that_fails_to_load_is_one_line_and_the_others_finish(tmp_path, two_nodes):
    cluster, _ = two_nodes
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(
        '{"model_type": "llama", "architectures": ["LlamaForCausalLM"]}'
    )
    folder = tmp_path / "card"
    args = ["audit", "--model", "ref:reader", "--model", str(broken), "--out", str(folder),
            "--cache-dir", str(tmp_path / "cache"),
            "--executor", f"ray,address={cluster.address},workers=1"]  # fmt: skip
    res = CliRunner().invoke(app, args, env={"COLUMNS": "500"})
    assert res.exit_code == 1, res.output  # the card is written; the gap is not silent
    said = [line for line in res.output.splitlines() if line.startswith(f"model {broken} ")]
    assert len(said) == 1 and said[0].startswith(f"model {broken} failed to load on node")
    assert f"not on the card (exit status 1): {broken}" in res.output
    record = json.loads((folder / "run.json").read_text())
    (failed,) = record["failed_models"]
    assert failed["name"] == str(broken) and failed["reason"] == said[0]
    assert [m["name"] for m in record["models"]] == ["ref:reader"]
    step = json.loads((folder / "suites" / STEPS[0] / "run.json").read_text())
    assert [s["name"] for s in step["subjects"]] == ["ref:reader"]
    assert step["executor"]["name"] == "ray"
    for page in ("index.html", "card.md"):
        assert "Not on this card:" in (folder / page).read_text()


def test_more_models_than_the_cluster_holds_wait_their_turn(tmp_path, two_nodes):
    """Four one-actor models on three CPUs: the fourth is placed when one has finished."""
    cluster, _ = two_nodes
    models = ["ref:reader", "ref:memoriser", "ref:constant", "ref:negation-blind"]
    local = _audit(tmp_path, "local", models)
    on_ray = _audit(tmp_path, "ray", models, f"ray,address={cluster.address},workers=1")
    _assert_same_card(local, on_ray)


def test_the_auto_budget_on_two_nodes_is_the_in_process_card(tmp_path, two_nodes):
    """Its rounds come one at a time, each answering only what the cache lacks."""
    cluster, _ = two_nodes
    models = ["ref:reader", "ref:memoriser"]
    local = _audit(tmp_path, "local", models, budget="auto")
    on_ray = _audit(tmp_path, "ray", models, f"ray,address={cluster.address},workers=1", "auto")
    _assert_same_card(local, on_ray)
    steps = json.loads((on_ray / "run.json").read_text())["steps"]
    assert all(s["looks"] for s in steps if s["status"] == "ran")  # rounds, each recorded


class _Killer:
    """A progress factory that does ``kill`` once, at the first answers of the model's
    second step: both its actors have loaded during the first, and shards are still out."""

    def __init__(self, model: str, kill) -> None:
        self.model, self.kill, self.steps, self.done = model, kill, 0, False

    def __call__(self, description: str, total: int):
        self.steps += description == self.model

        def advance(k: int) -> None:
            if self.steps == 2 and not self.done:
                self.done = True
                self.kill()

        return advance


def _lost(folder: Path) -> list[str]:
    """Why the actors of the audit's one model were lost, by the end of its last step."""
    record = json.loads((folder / "suites" / STEPS[-1] / "run.json").read_text())
    return record["subjects"][0]["lost_workers"]


def test_a_killed_actor_and_a_lost_node_leave_the_card_unchanged(
    tmp_path, two_nodes, tiny_llama_dir
):
    cluster, worker = two_nodes
    models = [str(tiny_llama_dir)]
    local = _audit(tmp_path, "local", models)
    executor = f"ray,address={cluster.address},workers=2"

    def kill_an_actor() -> None:
        os.kill(_replica_pids(cluster)[0], signal.SIGKILL)

    killer = _Killer(models[0], kill_an_actor)
    killed = _audit(tmp_path, "actor", models, executor, progress=killer)
    assert killer.done and len(_lost(killed)) == 1
    _assert_same_card(local, killed)

    lost = _Killer(models[0], lambda: cluster.remove_node(worker))
    node_lost = _audit(tmp_path, "node", models, executor, progress=lost)
    assert lost.done and _lost(node_lost)  # the actor on the lost node at least
    assert all("an actor of model" in why for why in _lost(node_lost))  # live, under a task
    _assert_same_card(local, node_lost)


def test_without_an_address_the_audit_starts_a_ray_of_its_own(tmp_path, two_nodes, monkeypatch):
    """Not the cluster already running on this machine (Ray's default would join it, and
    refuse ``num_cpus`` there), and it is shut down at the end: its session folder is
    removed, and no token was written to ``~/.ray``."""
    from faithprobe.executors import own_ray

    made = []
    mkdtemp = own_ray.tempfile.mkdtemp
    monkeypatch.setattr(
        own_ray.tempfile, "mkdtemp", lambda **kw: made.append(mkdtemp(**kw)) or made[-1]
    )
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    models = ["ref:reader"]
    local = _audit(tmp_path, "local", models)
    own = _audit(tmp_path, "own", models, "ray,workers=1,num_cpus=1")
    _assert_same_card(local, own)
    assert not ray.is_initialized()
    assert len(made) == 1 and not os.path.exists(made[0])
    assert not (tmp_path / "home").exists()
