"""What a user waits for at the command line: start-up and re-running a finished run.

Each command runs as a user runs it, ``python -m faithprobe.cli``-style in a fresh
interpreter (``faithprobe`` of the tree ``--src`` points at), ``--repeats`` times; the
timings are reported as min / median / max of wall-clock seconds. With ``--baseline SRC``
the same commands also run on another source tree (e.g. a checkout of the commit before a
change), the two trees taking turns command by command so that both see the same machine
load, and the ratio of medians is reported.

Commands:

* ``--help`` and ``list``;
* the cached demo re-run: ``run distractors --model embedded --limit 300`` after the same
  command has run once (every answer in the cache, which is warmed first and shared by
  both trees -- the cache keys do not depend on the tree);
* with ``--large N``: a finished N-item distractors run re-run, against its first run
  (timed once, on a cold answer cache) -- the issue's target is under 2% of it.

The answer cache (and the remembered outputs beside it) is a temporary folder
(``--cache-dir``), so the user's is not touched; the embedded model's converted copy is the
user's (converted once). Usage:

    python benchmarks/cli_latency.py [--repeats 5] [--baseline OLD/src] [--large 2000]
        [--json benchmarks/results/cli_latency.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENTRY = "import sys; from faithprobe.cli import app; app(sys.argv[1:], prog_name='faithprobe')"


def _run(src: Path, args: list[str]) -> float:
    """Seconds ``faithprobe ARGS`` takes with the package imported from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *args], env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"faithprobe {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return elapsed


def _stats(times: list[float]) -> dict:
    return {
        "min": round(min(times), 3),
        "median": round(statistics.median(times), 3),
        "max": round(max(times), 3),
        "runs": len(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=HERE.parent / "src")
    parser.add_argument("--baseline", type=Path, default=None, help="another tree's src/")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--large", type=int, default=None, help="items of the large re-run")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    trees = {"after": args.src.resolve()}
    if args.baseline:
        trees = {"before": args.baseline.resolve(), **trees}
    work = Path(tempfile.mkdtemp(prefix="faithprobe-latency-"))
    cache = work / "cache"
    demo = ["run", "distractors", "--model", "embedded", "--limit", "300", "--seed", "0"]
    commands = {
        "--help": ["--help"],
        "list": ["list"],
        "cached demo re-run": [*demo, "--cache-dir", str(cache)],
    }
    for tree, src in trees.items():  # warm: answers, remembered outputs, byte-compiled code
        _run(src, [*commands["cached demo re-run"], "--out", str(work / f"warm-{tree}")])
        _run(src, ["--help"])

    times: dict[str, dict[str, list[float]]] = {c: {t: [] for t in trees} for c in commands}
    for i in range(args.repeats):
        for name, command in commands.items():
            for tree, src in trees.items():
                out = ["--out", str(work / f"{tree}-{i}")] if command[0] == "run" else []
                times[name][tree].append(_run(src, [*command, *out]))
                print(f"{name} [{tree}] {times[name][tree][-1]:.2f} s", file=sys.stderr)

    report: dict = {"repeats": args.repeats, "python": sys.version.split()[0], "commands": {}}
    for name, by_tree in times.items():
        entry = {tree: _stats(t) for tree, t in by_tree.items()}
        if "before" in entry:
            entry["speed-up (median before / after)"] = round(
                entry["before"]["median"] / entry["after"]["median"], 1
            )
        report["commands"][name] = entry

    if args.large:
        large = ["run", "distractors", "--model", "embedded", "--limit", str(args.large)]
        large += ["--cache-dir", str(work / "large-cache")]
        first = _run(trees["after"], [*large, "--out", str(work / "large-first")])
        again = [
            _run(trees["after"], [*large, "--out", str(work / f"large-again-{i}")])
            for i in range(args.repeats)
        ]
        report["large re-run"] = {
            "items": args.large,
            "first run (cold answer cache) s": round(first, 1),
            "re-run": _stats(again),
            "re-run / first run": round(statistics.median(again) / first, 4),
        }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
