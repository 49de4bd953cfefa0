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

from faithprobe.audit.identical import card_differences
from faithprobe.audit.plan import declared_steps
from faithprobe.audit.run import AuditConfig, audit
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


def _audit(tmp_path: Path, name: str, models: list[str], executor: str = "inprocess", **kw):
    config = AuditConfig(
        models=models,
        out=tmp_path / name,
        budget="small",
        cache_dir=tmp_path / f"cache-{name}",
        steps=[s for s in declared_steps() if s.name in STEPS],
        executor=parse_executor(executor),
        batch_size=4,
    )
    return audit(config, **kw)


def _assert_same_card(local: Path, on_ray: Path) -> None:
    """The actors run one torch thread, this process may run more: floats to 1e-6."""
    assert card_differences(local, on_ray) == []


def _replica_pids() -> list[int]:
    """The processes of this machine's model replicas (Ray names a worker by its actor)."""
    return [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if any("_Replica" in part for part in (p.info["cmdline"] or []))
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
    lines: list[str] = []
    executor = f"ray,address={cluster.address},workers=1"
    folder = _audit(tmp_path, "ray", ["ref:reader", str(broken)], executor, log=lines.append)
    record = json.loads((folder / "run.json").read_text())
    (failed,) = record["failed_models"]
    assert failed["name"] == str(broken) and "failed to load on node" in failed["reason"]
    assert "\n" not in failed["reason"]
    assert [m["name"] for m in record["models"]] == ["ref:reader"]
    assert any(
        line.startswith(f"model {broken} failed to load on node") for line in lines
    )
    step = json.loads((folder / "suites" / STEPS[0] / "run.json").read_text())
    assert [s["name"] for s in step["subjects"]] == ["ref:reader"]
    assert step["executor"]["name"] == "ray"
    for page in ("index.html", "card.md"):
        assert "Not on this card:" in (folder / page).read_text()


class _Killer:
    """A progress factory that does ``kill`` once, when ``after`` answers of the model have
    come back (so mid-step, with shards still out)."""

    def __init__(self, model: str, kill, after: int = 8) -> None:
        self.model, self.kill, self.after = model, kill, after
        self.seen, self.done = 0, False

    def __call__(self, description: str, total: int):
        def advance(k: int) -> None:
            self.seen += k
            if description == self.model and not self.done and self.seen >= self.after:
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
        os.kill(_replica_pids()[0], signal.SIGKILL)

    killer = _Killer(models[0], kill_an_actor)
    killed = _audit(tmp_path, "actor", models, executor, progress=killer)
    assert killer.done and len(_lost(killed)) == 1
    _assert_same_card(local, killed)

    lost = _Killer(models[0], lambda: cluster.remove_node(worker))
    node_lost = _audit(tmp_path, "node", models, executor, progress=lost)
    assert lost.done and len(_lost(node_lost)) >= 1  # the actor on the lost node at least
    _assert_same_card(local, node_lost)
