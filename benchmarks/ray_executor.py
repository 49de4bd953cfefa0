"""The Ray executor vs the in-process one: throughput on the same requests, cold cache each.

Both sides answer the requests of the same distractors pairs through the runner's path
(:func:`faithprobe.runner.answer_all` over a
:class:`~faithprobe.subjects.cached_subject.CachedSubject` with an empty in-memory cache, so every
unique request is computed):

* in-process: the model loaded here, torch with its default threads, and again with one
  thread (on a machine whose cores are shared with other jobs, several busy-waiting torch
  threads can be much slower than one);
* Ray: a local Ray with ``--num-cpus`` CPUs and ``--workers`` actors, one model replica
  and one CPU (so one torch thread) each, shards dispatched as actors free up.

Reports requests/s of each side and the ratio to the faster in-process setting (answering only, after a warm-up on a few
pairs; model and actor start-up are reported apart), and checks that both sides' answers agree. On one machine both sides
share the same cores, so the ratio mostly shows Ray's overhead; the executor pays off when
``--address`` points at a cluster with more machines or GPUs. Usage:

    python benchmarks/ray_executor.py [--model embedded] [--limit 100] [--workers 2]
        [--num-cpus 2] [--batch-size 16] [--json benchmarks/results/ray_executor.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from faithprobe.executors import RayExecutor, RaySettings
from faithprobe.runner import answer_all
from faithprobe.subjects import load_subject
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.cached_subject import CachedSubject
from faithprobe.suite_protocol import get_suite


def timed_answers(suite, pairs, subject) -> tuple[dict, float, int]:
    answer_all(suite, pairs[:8], CachedSubject(subject, AnswerCache(None)), None)  # warm-up
    cached = CachedSubject(subject, AnswerCache(None))  # cold: nothing on disk
    start = time.perf_counter()
    answers = answer_all(suite, pairs, cached, None)
    return answers, time.perf_counter() - start, cached.computed


def max_difference(a: dict, b: dict) -> float:
    worst = 0.0
    for key, x in a.items():
        y = b[key]
        assert x.n_tokens == y.n_tokens, key
        worst = max([worst, *(abs(p - q) for p, q in zip(x.logprobs, y.logprobs, strict=True))])
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--limit", type=int, default=100, help="distractors pairs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args()

    suite = get_suite("distractors", {})
    pairs = suite.sample(suite.pairs(None, args.seed), args.limit, args.seed)

    start = time.perf_counter()
    local = load_subject(args.model, batch_size=args.batch_size)
    local_load = time.perf_counter() - start
    inprocess = {}
    for threads in dict.fromkeys([torch.get_num_threads(), 1]):
        torch.set_num_threads(threads)
        local_answers, local_s, n = timed_answers(suite, pairs, local)
        inprocess[f"{threads}_threads"] = {
            "torch_threads": threads,
            "seconds": round(local_s, 2),
            "requests_per_second": round(n / local_s, 2),
        }
    best = min(v["seconds"] for v in inprocess.values())
    del local

    start = time.perf_counter()
    config = RaySettings(workers=args.workers, num_cpus=args.num_cpus)
    with RayExecutor(config) as executor:
        remote = executor.subject(args.model, batch_size=args.batch_size)
        ray_start = time.perf_counter() - start
        ray_answers, ray_s, ray_n = timed_answers(suite, pairs, remote)
    assert ray_n == n

    result = {
        "model": args.model,
        "suite": "distractors",
        "pairs": len(pairs),
        "requests": n,
        "batch_size": args.batch_size,
        "inprocess_load_seconds": round(local_load, 2),
        "inprocess": inprocess,
        "ray": {
            "workers": args.workers,
            "num_cpus": args.num_cpus,
            "startup_seconds": round(ray_start, 2),
            "seconds": round(ray_s, 2),
            "requests_per_second": round(n / ray_s, 2),
        },
        "ray_over_best_inprocess_throughput": round(best / ray_s, 3),
        "ray_over_each_inprocess_throughput": {
            k: round(v["seconds"] / ray_s, 3) for k, v in inprocess.items()
        },
        "max_abs_logprob_difference": max_difference(local_answers, ray_answers),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg()[0],
            "python": platform.python_version(),
        },
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
