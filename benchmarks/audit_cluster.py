"""The audit on a real two-node Ray cluster against the in-process audit: the same card, the
wall times, and the faults survived.

A ``ray.cluster_utils.Cluster`` on this machine: a head node and a second node, each its own
raylet with ``--cpus-per-node`` CPUs, joined by address like machines of a cluster. Parts:

* ``same``: ``faithprobe audit`` of ``--model`` (default the embedded SmolLM2-135M and
  Gemma 3 270M) at ``--budget``, in process and on the cluster (one actor per model, so the
  models run at once, one per node), each with a fresh answer cache; the cards compared
  (every number of metrics.json and every column of each step's results, floats to 1e-6,
  times left out) and both wall times.
* ``faults``: the audit of ``--fault-model`` on the steps in ``--fault-steps`` on the cluster
  (two actors), fresh cache each: an actor's process killed (SIGKILL) mid-step; the second
  node removed mid-step; the driver (the ``faithprobe audit`` process) killed (SIGKILL) once
  the cache holds some answers, and the same command run again. Each card compared with the
  in-process audit of the same steps; the re-run's computed and cached requests reported.

Usage::

    python benchmarks/audit_cluster.py --part same --part faults --out /tmp/audit-cluster \\
        [--model embedded --model embedded:gemma3-270m] [--budget small] \\
        [--json benchmarks/results/audit_cluster.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
from ray import cluster_utils

from faithprobe.audit.execute import AuditConfig, audit
from faithprobe.audit.identical import card_differences
from faithprobe.audit.plan import declared_steps
from faithprobe.executors import parse_executor


def run_audit(out: Path, models: list[str], budget: str, executor: str = "inprocess",
              steps: tuple[str, ...] = (), progress=None) -> tuple[Path, float]:  # fmt: skip
    config = AuditConfig(
        models=models,
        out=out,
        budget=budget,
        cache_dir=out.with_name(out.name + "-cache"),
        steps=[s for s in declared_steps() if not steps or s.name in steps],
        executor=parse_executor(executor),
    )
    clock = time.perf_counter()
    folder = audit(config, progress=progress)
    return folder, time.perf_counter() - clock


def lost_workers(folder: Path) -> list[str]:
    """Why actors were lost, by the end of the audit (each step's record holds the losses
    of its model so far: the longest list holds them all)."""
    lists = [[why for s in json.loads((step / "run.json").read_text())["subjects"]
              for why in s.get("lost_workers", [])]
             for step in (folder / "suites").iterdir()]  # fmt: skip
    return max(lists, key=len)


class AtStep:
    """A progress factory that calls ``act`` once, at the first answers of the ``step``-th
    step (its model's actors have all loaded by then, and shards are still out)."""

    def __init__(self, act, step: int) -> None:
        self.act, self.step, self.steps, self.when = act, step, 0, None

    def __call__(self, description: str, total: int):
        self.steps += "(" not in description  # a step's own answers, not its follow-ups

        def advance(k: int) -> None:
            if self.when is None and self.steps == self.step:
                self.when = self.steps
                self.act()

        return advance


def replica_pids(cluster) -> list[int]:
    raylets = {n.all_processes["raylet"][0].process.pid for n in cluster.list_all_nodes()}
    return [
        p.pid
        for p in psutil.process_iter(["cmdline", "ppid"])
        if p.info["ppid"] in raylets and any("_Replica" in part for part in p.info["cmdline"] or [])
    ]


def cached_answers(cache: Path) -> int:
    if not cache.exists():
        return 0
    with sqlite3.connect(cache, timeout=60) as conn:
        return conn.execute("SELECT count(*) FROM answers").fetchone()[0]


def same_part(args, cluster) -> dict:
    models = args.model or ["embedded", "embedded:gemma3-270m"]
    local, local_s = run_audit(args.out / "same-local", models, args.budget)
    executor = f"ray,address={cluster.address},workers=1"
    on_ray, ray_s = run_audit(args.out / "same-ray", models, args.budget, executor)
    refs = ["ref:reader", "ref:memoriser", "ref:constant"]
    ref_local, ref_local_s = run_audit(args.out / "refs-local", refs, args.budget)
    ref_ray, ref_ray_s = run_audit(args.out / "refs-ray", refs, args.budget, executor)
    return {
        "models": models,
        "in_process_seconds": round(local_s, 1),
        "cluster_seconds": round(ray_s, 1),
        "differences": card_differences(local, on_ray),
        "refs": refs,
        "refs_in_process_seconds": round(ref_local_s, 1),
        "refs_cluster_seconds": round(ref_ray_s, 1),
        "refs_differences": card_differences(ref_local, ref_ray),
    }


def faults_part(args, cluster, worker) -> dict:
    models, steps = [args.fault_model], tuple(args.fault_steps.split(","))
    executor = f"ray,address={cluster.address},workers=2"
    local, local_s = run_audit(args.out / "faults-local", models, args.budget, steps=steps)
    result: dict = {
        "model": args.fault_model,
        "steps": steps,
        "in_process_seconds": round(local_s, 1),
    }

    killer = AtStep(lambda: os.kill(replica_pids(cluster)[0], signal.SIGKILL), 2)
    folder, seconds = run_audit(args.out / "actor", models, args.budget, executor, steps, killer)
    result["actor_killed"] = {"at_step": killer.when, "seconds": round(seconds, 1),
                              "lost": lost_workers(folder),
                              "differences": card_differences(local, folder)}  # fmt: skip

    remover = AtStep(lambda: cluster.remove_node(worker), 2)
    folder, seconds = run_audit(args.out / "node", models, args.budget, executor, steps, remover)
    result["node_lost"] = {"at_step": remover.when, "seconds": round(seconds, 1),
                           "lost": lost_workers(folder),
                           "differences": card_differences(local, folder)}  # fmt: skip
    cluster.add_node(num_cpus=args.cpus_per_node)
    cluster.wait_for_nodes()
    result["driver_killed"] = driver_killed(args, executor, models, steps, local)
    return result


def driver_killed(
    args, executor: str, models: list[str], steps: tuple[str, ...], local: Path
) -> dict:
    """``faithprobe audit`` killed once its cache holds ``--after`` answers, then run again."""
    out, cache_dir = args.out / "driver", args.out / "driver-cache"
    child = {"out": str(out), "models": models, "budget": args.budget, "executor": executor,
             "steps": list(steps)}  # fmt: skip
    command = [sys.executable, __file__, "--child", json.dumps(child)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cache = cache_dir / "answers.sqlite"
    while process.poll() is None and cached_answers(cache) < args.after:
        time.sleep(0.5)
    killed_at = cached_answers(cache)
    process.send_signal(signal.SIGKILL)
    process.wait()
    clock = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - clock
    subjects = [s for step in sorted((out / "suites").iterdir())
                for s in json.loads((step / "run.json").read_text())["subjects"]]  # fmt: skip
    return {
        "killed_with_cached_answers": killed_at,
        "rerun_seconds": round(seconds, 1),
        "rerun_computed": sum(s["computed_requests"] for s in subjects),
        "rerun_cached": sum(s["cached_requests"] for s in subjects),
        "differences": card_differences(local, out),
    }


def child(spec: str) -> None:
    """The driver of the driver-killed run: one audit, in its own process."""
    given = json.loads(spec)
    run_audit(Path(given["out"]), given["models"], given["budget"], given["executor"],
              tuple(given["steps"]))  # fmt: skip


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", action="append", choices=["same", "faults"], required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", action="append")
    parser.add_argument("--budget", default="small")
    parser.add_argument("--fault-model", default="embedded")
    parser.add_argument("--fault-steps", default="distractors,faithfulness-negation,right-reasons")
    parser.add_argument(
        "--after", type=int, default=40, help="answers in the cache before the driver is killed"
    )
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={
        "num_cpus": args.cpus_per_node, "include_dashboard": False})  # fmt: skip
    worker = cluster.add_node(num_cpus=args.cpus_per_node)
    cluster.wait_for_nodes()
    result = {"command": " ".join(sys.argv), "machine": platform.platform(),
              "cpus": os.cpu_count(), "cpus_per_node": args.cpus_per_node, "budget": args.budget}  # fmt: skip
    try:
        if "same" in args.part:
            result["same"] = same_part(args, cluster)
            print(json.dumps(result["same"], indent=1), flush=True)
        if "faults" in args.part:
            result["faults"] = faults_part(args, cluster, worker)
            print(json.dumps(result["faults"], indent=1), flush=True)
    finally:
        cluster.shutdown()
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
