"""The GPU check: does a model on a CUDA GPU give the card the answers the CPU gives?

Run where there is a CUDA GPU (it stops at once, exit 2, where there is none):

    python benchmarks/gpu_check.py [--model embedded] [--data-dir ../shared/data]
        [--max-requests 200] [--json OUT.json] [--audit-out DIR]

1. **Answers, request by request.** The small audit's requests of every step (the card's
   items, :mod:`audit_requests`), at most ``--max-requests`` per step, are answered by the
   model on the CPU in float32 (the reference: what every earlier card was made with) and
   on ``cuda`` in float32 and in bfloat16, each with no answer cache. Per step and
   placement: requests per second, top-1 agreement with the CPU (candidate scores: the
   same best candidate; generation: the same text) and the largest and median |difference
   of log-probability| of a candidate. A constant answerer's agreement is the control
   (the share of requests whose best candidate is the first one).
2. **Batches fitted to memory on a real card** (:mod:`faithprobe.subjects.hf.memory_fit`):
   the process is limited to a small share of the card's memory, the token budget is found
   by trying, and answers under it are compared with the unconstrained ones; ``device_map
   =auto`` loads and agrees too.
3. **The whole card on the GPU**: ``faithprobe audit --model MODEL,device=cuda --budget
   small --no-cache`` end to end, its time and its verdicts.

Prints one table; ``--json`` keeps every figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from audit_requests import step_requests

from faithprobe.requests import CandidateScores, Generation
from faithprobe.subjects import load_subject
from faithprobe.subjects.hf.memory_fit import FitStore

SHARE = 0.03  # of the card's memory the fitted-batch check may use


def answered(subject, requests) -> tuple[list, float]:
    """The answers and the seconds they took (the GPU synchronised before the clock stops)."""
    clock = time.perf_counter()
    answers = subject.answer(requests)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return answers, time.perf_counter() - clock


def compare(reference: list, other: list) -> dict:
    """Top-1 agreement and log-probability differences of ``other`` against ``reference``."""
    same, deltas, firsts = 0, [], 0
    for a, b in zip(reference, other, strict=True):
        if isinstance(a, CandidateScores):
            best_a = max(range(len(a.logprobs)), key=a.logprobs.__getitem__)
            best_b = max(range(len(b.logprobs)), key=b.logprobs.__getitem__)
            same += best_a == best_b
            firsts += best_a == 0
            deltas += [abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)]
        elif isinstance(a, Generation):
            same += a.text == b.text
    n = len(reference)
    return {
        "n": n,
        "agreement": same / n if n else None,
        "constant_agreement": firsts / n if deltas else None,
        "max_abs_delta": max(deltas) if deltas else None,
        "median_abs_delta": statistics.median(deltas) if deltas else None,
    }


def answers_by_placement(model: str, device: str, by_step: dict[str, list]) -> dict:
    """Per step and placement (the CPU in float32, ``device`` in float32 and bfloat16):
    answers, seconds, and the comparison with the CPU's."""
    figures: dict = {}
    reference: dict[str, list] = {}
    placements = (("cpu", "float32"), (device, "float32"), (device, "bfloat16"))
    for n, (device, dtype) in enumerate(placements):
        subject = load_subject(f"{model},device={device},dtype={dtype}")
        name = f"{device}/{dtype}"
        # untimed: the first batch's one-time costs (kernels, the memory probe on a GPU)
        subject.answer(next(iter(by_step.values()))[:4])
        for step, requests in by_step.items():
            answers, seconds = answered(subject, requests)
            row = {"requests_per_second": len(requests) / seconds, "seconds": seconds}
            if n == 0:
                reference[step] = answers
            else:
                row |= compare(reference[step], answers)
            figures.setdefault(step, {})[name] = row
        if device == "cuda":
            figures.setdefault("_peak_gpu_bytes", {})[name] = torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            torch.cuda.empty_cache()
        del subject
    return figures


def fitted_batches(model: str, requests: list) -> dict:
    """Answers under a budget found by trying within :data:`SHARE` of the card, against
    the same model unconstrained; and ``device_map=auto`` against the plain load."""
    plain = load_subject(f"{model},device=cuda,dtype=bfloat16")
    want, _ = answered(plain, requests)
    mapped = load_subject(f"{model},device=cuda,dtype=bfloat16,device_map=auto")
    mapped_answers, _ = answered(mapped, requests)
    del plain, mapped
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(SHARE)
    with tempfile.TemporaryDirectory() as tmp:
        limited = load_subject(f"{model},device=cuda,dtype=bfloat16")
        limited._fit_store = FitStore(Path(tmp) / "fit.json")
        got, seconds = answered(limited, requests)
        budget = limited.max_batch_tokens
    torch.cuda.set_per_process_memory_fraction(1.0)
    return {
        "memory_share": SHARE,
        "token_budget_found": budget,
        "seconds": seconds,
        "limited_vs_unlimited": compare(want, got),
        "device_map_auto_vs_plain": compare(want, mapped_answers),
    }


def whole_card(model: str, device: str, data_dir: Path | None, out: Path) -> dict:
    """``faithprobe audit`` on ``device``, end to end, with no cache."""
    command = [sys.executable, "-c", "from faithprobe.cli import app; app()", "audit",
               "--model", f"{model},device={device}", "--budget", "small", "--no-cache",
               "--force", "--out", str(out)]  # fmt: skip
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    clock = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - clock
    if done.returncode:
        return {"returncode": done.returncode, "stderr": done.stderr[-2000:]}
    metrics = json.loads((out / "metrics.json").read_text())
    verdicts = {step["step"]: step.get("verdicts", step.get("status")) for step in metrics["steps"]}
    return {"returncode": 0, "seconds": seconds, "verdicts": verdicts}


def _cell(row: dict, key: str, fmt: str) -> str:
    value = row.get(key)
    return format(value, fmt) if value is not None else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument(
        "--device", default="cuda", help="cuda (the check); cpu tries the script out here"
    )
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--max-requests", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--audit-out", type=Path, default=Path("runs/gpu-check"))
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu_check: no CUDA GPU is visible here; run it on a machine with one")
        return 2
    found = step_requests(load_subject(args.model, defer=True), "small", args.data_dir)
    by_step = {step: requests[: args.max_requests] for step, requests in found.items()}
    report = {
        "device": torch.cuda.get_device_name(0) if args.device == "cuda" else args.device,
        "torch": torch.__version__,
        "model": args.model,
        "requests_per_step": {step: len(r) for step, r in by_step.items()},
        "answers": answers_by_placement(args.model, args.device, by_step),
    }
    if args.device == "cuda":  # scoring and generation, under a budget found by trying
        mixed = [*by_step.get("distractors", []), *by_step.get("faithfulness-deletion", [])]
        report["fitted_batches"] = fitted_batches(args.model, mixed)
    report["card"] = whole_card(args.model, args.device, args.data_dir, args.audit_out)
    print(f"{report['device']}, torch {report['torch']}, {args.model}")
    print(f"{'step':24} {'placement':16} {'req/s':>8} {'x CPU':>6} {'agree':>6} "
          f"{'const':>6} {'max|Δ|':>9} {'med|Δ|':>9}")  # fmt: skip
    for step, rows in report["answers"].items():
        if step.startswith("_"):
            continue
        cpu = rows["cpu/float32"]["requests_per_second"]
        for name, row in rows.items():
            speed = row["requests_per_second"]
            print(f"{step:24} {name:16} {speed:8.1f} {speed / cpu:6.1f} "
                  f"{_cell(row, 'agreement', '6.3f')} {_cell(row, 'constant_agreement', '6.3f')} "
                  f"{_cell(row, 'max_abs_delta', '9.2e')} {_cell(row, 'median_abs_delta', '9.2e')}")  # fmt: skip
    print(json.dumps({k: report.get(k) for k in ("fitted_batches", "card")}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
