"""The audit's wall time before and after a change, and whether the card stayed the same.

``run`` runs ``faithprobe audit --model embedded`` at each chosen budget (``--commands``, from
:data:`COMMANDS`) with the source tree ``--tree`` first on ``PYTHONPATH`` (so an older
checkout's ``src`` can be timed by this environment), each with ``--seed 0`` and a fresh
answer cache of its own, into a pass folder, and records the wall time, the load average at
start and end and each step's seconds and CPU seconds. ``compare A B`` compares two passes (or two audit folders run by hand, timed from their
run.json):

* the cards: every number and verdict of ``metrics.json`` (floats to 1e-6 relative and
  absolute, :func:`faithprobe.audit.identical.json_differences`; times left out), and in
  each step's results every column that is not a float cell for cell (predictions,
  replies, expectations met); the float columns' largest differences are listed (a change
  that only moves float32 rounding, such as reading a shared beginning once, moves a
  summed log-probability by up to a few 1e-5);
* ``card.md`` (the card as a model card shows it, numbers rounded), text for text but for
  the lines naming the command and when it finished;
* the per-step seconds side by side, and their ratio.

A command whose card differs is listed with its first differences and ``compare`` exits 1.
Usage (``../shared/data`` beside the checkout for the full-data commands)::

    git worktree add /tmp/before <commit>
    python benchmarks/audit_speed.py run --tree /tmp/before/src --out /tmp/pass-before
    python benchmarks/audit_speed.py run --tree src --out /tmp/pass-after
    python benchmarks/audit_speed.py compare /tmp/pass-before /tmp/pass-after \\
        [--json benchmarks/results/audit_speed.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from faithprobe.audit.identical import json_differences

SHARED = "../shared/data"  # as the README gives it: run from the checkout's root
# name -> the audit's arguments after `faithprobe`; --out, --cache-dir and --seed are added
COMMANDS: dict[str, list[str]] = {
    "small": ["audit", "--model", "embedded", "--budget", "small"],
    "small-full-data": ["audit", "--model", "embedded", "--budget", "small",
                        "--data-dir", SHARED],
    "default": ["audit", "--model", "embedded", "--budget", "default", "--data-dir", SHARED],
}  # fmt: skip


def run(tree: Path, out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    faithprobe = Path(sys.executable).with_name("faithprobe")
    record = {"tree": str(tree.resolve()), "commands": {}}
    for name in names:
        folder, cache = out / name, out / f"{name}.cache"
        args = [*COMMANDS[name], "--seed", "0", "--out", str(folder), "--cache-dir", str(cache)]
        print(f"{name}: faithprobe {shlex.join(args)}", flush=True)
        load = os.getloadavg()[0]
        clock = time.perf_counter()
        done = subprocess.run([str(faithprobe), *args], env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - clock
        (out / f"{name}.log").write_text(done.stdout + done.stderr)
        entry = {"exit": done.returncode, "seconds": round(seconds, 1),
                 "load_average": [round(load, 2), round(os.getloadavg()[0], 2)]}  # fmt: skip
        if (folder / "run.json").is_file():
            steps = json.loads((folder / "run.json").read_text()).get("steps", [])
            entry["steps"] = {s["step"]: [s.get("seconds"), s.get("cpu_seconds")] for s in steps}
        record["commands"][name] = entry
        print(f"  exit {done.returncode}, {seconds:.0f} s", flush=True)
        (out / "pass.json").write_text(json.dumps(record, indent=2) + "\n")


def _card_text(folder: Path) -> str:
    """``card.md`` but for the lines that name the command and when it finished."""
    lines = (folder / "card.md").read_text().splitlines()
    return "\n".join(
        line for line in lines if not line.startswith(("faithprobe audit ", "- **finished**"))
    )


def _float_gap(x: pd.Series, y: pd.Series) -> float | None:
    """The largest |difference| between two columns of floats (or of arrays of floats, the
    same shapes, missing in the same cells), inf where they do not line up; None for other
    columns."""
    if x.dtype.kind == "f" and y.dtype.kind == "f":
        if not x.isna().equals(y.isna()):
            return math.inf
        return float(np.nan_to_num((x - y).abs().max()))
    if x.dtype != object or not all(isinstance(v, np.ndarray) for v in (*x, *y)):
        return None
    if any(v.dtype.kind != "f" for v in (*x, *y)):
        return None
    gaps = [np.abs(p - q).max(initial=0.0) if p.shape == q.shape else math.inf
            for p, q in zip(x, y, strict=True)]  # fmt: skip
    return float(max(gaps, default=0.0))


def result_differences(a: Path, b: Path) -> tuple[list[str], dict[str, float]]:
    """Between two audits' step results: the columns that are not floats, cell for cell
    (predictions, verdict inputs, texts), and per float column its largest |difference|."""
    exact: list[str] = []
    largest: dict[str, float] = {}
    for folder in sorted((a / "suites").iterdir()):
        x = pd.read_parquet(folder / "results.parquet")
        y = pd.read_parquet(b / "suites" / folder.name / "results.parquet")
        if list(x.columns) != list(y.columns) or len(x) != len(y):
            exact.append(f"{folder.name}: other columns or rows")
            continue
        for column in x.columns:
            gap = _float_gap(x[column], y[column])
            if gap is None:
                if not x[column].astype(str).equals(y[column].astype(str)):
                    exact.append(f"{folder.name}.{column}: differs")
            elif gap > 0:
                largest[f"{folder.name}.{column}"] = gap
    return exact, largest


def timed_from_run_json(folder: Path) -> dict:
    """A pass entry for an audit folder run by hand: its wall time from run.json."""
    record = json.loads((folder / "run.json").read_text())
    started, finished = (datetime.fromisoformat(record[k]) for k in ("started", "finished"))
    return {"exit": 0, "seconds": (finished - started).total_seconds(), "load_average": None,
            "steps": {s["step"]: [s.get("seconds"), s.get("cpu_seconds")]
                      for s in record["steps"]}}  # fmt: skip


def compare_audits(x: Path, y: Path, ex: dict, ey: dict) -> dict:
    """Two audit folders (``ex``, ``ey``: their pass entries) compared."""
    metrics = json_differences(
        *(json.loads((f / "metrics.json").read_text()) for f in (x, y)), "metrics"
    )
    exact, largest = result_differences(x, y)
    steps = {
        step: {
            "seconds": [seconds, ey["steps"].get(step, [None])[0]],
            "cpu_seconds": [cpu, ey["steps"].get(step, [None, None])[1]],
        }
        for step, (seconds, cpu) in ex.get("steps", {}).items()
    }
    return {
        "same_card": not metrics and not exact and ex["exit"] == ey["exit"] == 0,
        "metrics_differences": metrics[:10],
        "results_differences": exact[:10],
        "largest_float_differences": dict(sorted(largest.items(), key=lambda kv: -kv[1])[:10]),
        "card_md_same_text": _card_text(x) == _card_text(y),
        "seconds": [ex["seconds"], ey["seconds"]],
        "load_average": [ex["load_average"], ey["load_average"]],
        "steps": steps,
    }


def compare(a: Path, b: Path) -> dict:
    """Two passes, command by command; or two audit folders (each with its run.json)."""
    if not (a / "pass.json").is_file():
        return {"audit": compare_audits(a, b, timed_from_run_json(a), timed_from_run_json(b))}
    pass_a, pass_b = (json.loads((p / "pass.json").read_text()) for p in (a, b))
    return {
        name: compare_audits(a / name, b / name, pass_a["commands"][name], pass_b["commands"][name])
        for name in sorted(set(pass_a["commands"]) & set(pass_b["commands"]))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    running = sub.add_parser("run")
    running.add_argument("--tree", type=Path, required=True, help="a source tree's src folder")
    running.add_argument("--out", type=Path, required=True)
    running.add_argument("--commands", default="small-full-data,default")
    comparing = sub.add_parser("compare")
    comparing.add_argument("a", type=Path)
    comparing.add_argument("b", type=Path)
    comparing.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.what == "run":
        run(args.tree, args.out, args.commands.split(","))
        return
    result = compare(args.a, args.b)
    for name, got in result.items():
        state = "same card" if got["same_card"] else "DIFFERENT CARD"
        before, after = got["seconds"]
        print(f"{name}: {state}, card.md text {'same' if got['card_md_same_text'] else 'differs'};"
              f" {before} s -> {after} s ({before / after:.2f}x)")  # fmt: skip
        for step, times in got["steps"].items():
            (s0, s1), (c0, c1) = times["seconds"], times["cpu_seconds"]
            print(f"  {step:24} {s0:>7} s -> {s1:>7} s   (CPU {c0} -> {c1})")
        for line in got["metrics_differences"] + got["results_differences"]:
            print(f"  {line[:300]}")
        for column, gap in got["largest_float_differences"].items():
            print(f"  largest |difference| {column}: {gap:.3g}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    sys.exit(0 if all(g["same_card"] for g in result.values()) else 1)


if __name__ == "__main__":
    main()
