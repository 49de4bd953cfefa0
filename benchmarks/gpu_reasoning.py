"""The reasoning suite on a CUDA GPU: the same chains of thought as on the CPU, and how far a
GPU takes the suite in minutes.

Run where there is a CUDA GPU (it stops at once, exit 2, where there is none):

    python benchmarks/gpu_reasoning.py --data ../shared/data/bbh [--model embedded]
        [--agree 12] [--agree-seconds 240] [--limits 135,270] [--seconds 420]
        [--json OUT.json] [--out DIR]

1. **Agreement.** ``faithprobe run reasoning`` on ``--agree`` items (160 reasoning tokens,
   no answer cache) with the model on the CPU and on ``cuda``, both in float32: per column
   of the results (the full reasoning, each variant's reply, the answers read from them),
   how many rows are identical. Greedy decoding of the same weights should write the same
   text; where it does not, a near tie between two tokens went the other way, and the
   answers read from the text say whether that changed anything the suite reports.
2. **Scale.** Runs on ``cuda`` at each of ``--limits`` items (256 reasoning tokens, one
   answer cache, so each larger sample reuses the smaller one's answers: samples nest), as
   long as ``--seconds`` allow: seconds, generations, and the headline numbers (accuracy
   with and without reasoning, the best constant, the share of reasonings stating no
   answer, competence, the area over the curve, the unsaid cue share).

Prints one summary; ``--json`` keeps every figure; ``--out`` keeps the run folders.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

COLUMNS = ("original_reply", "reply", "original_prediction", "prediction", "direct_prediction")
CLI = [sys.executable, "-c", "from faithprobe.cli import app; app()"]


def run(model: str, device: str, data: Path, limit: int, tokens: int, out: Path,
        cache: Path | None, timeout: float) -> dict:  # fmt: skip
    """One ``faithprobe run reasoning``: its seconds, and the run folder where it finished."""
    command = [*CLI, "run", "reasoning", "--model", f"{model},device={device}", "--data",
               str(data), "--limit", str(limit), "-o", f"max_new_tokens={tokens}", "--out",
               str(out), *(["--cache-dir", str(cache)] if cache else ["--no-cache"])]  # fmt: skip
    clock = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"limit": limit, "device": device, "timed_out": timeout}
    record = {"limit": limit, "device": device, "tokens": tokens,
              "seconds": round(time.perf_counter() - clock, 1)}  # fmt: skip
    if done.returncode:
        return record | {"returncode": done.returncode, "stderr": done.stderr[-2000:]}
    return record | {"folder": str(out)}


def agreement(a: Path, b: Path) -> dict:
    """Per column, identical rows of run folders ``a`` and ``b`` (matched by pair; two
    missing values are the same), and per item where the two full reasonings part (the
    first character that differs; None where they are the same)."""
    x = pd.read_parquet(a / "results.parquet").set_index("pair_id").sort_index()
    y = pd.read_parquet(b / "results.parquet").set_index("pair_id").sort_index()
    assert list(x.index) == list(y.index), "the two runs made different pairs"
    same = {c: (x[c].isna() & y[c].isna()) | (x[c] == y[c]) for c in COLUMNS}
    out: dict = {c: f"{int(same[c].sum())}/{len(x)}" for c in COLUMNS}
    items = x.drop_duplicates("original_id")
    out["reasoning_parts_at"] = {
        row.task: next((i for i, (p, q) in enumerate(zip(row.original_reply, other, strict=False))
                        if p != q), None if row.original_reply == other else len(other))
        for row, other in zip(items.itertuples(), y.loc[items.index, "original_reply"],
                              strict=True)
    }  # fmt: skip
    return out


def headline(folder: Path) -> dict:
    """The numbers a reader of the run looks at first, off its metrics.json and run.json."""
    metrics = json.loads((folder / "metrics.json").read_text())
    run_record = json.loads((folder / "run.json").read_text())
    (acc,), (comp,) = metrics["accuracy"], metrics["competence"]
    out = {
        "items": acc["n_items"],
        "tasks": acc["n_tasks"],
        "pairs": run_record["n_pairs"],
        "computed_requests": sum(s.get("computed_requests", 0) for s in run_record["subjects"]),
        "with_reasoning": acc["with_reasoning"],
        "without_reasoning": acc["without_reasoning"],
        "best_constant": acc["best_constant"],
        "no_answer": acc["no_answer"],
        "competent": comp["competent"],
        "competence_p": comp["p_value"],
        "effects": {
            f"{e['intervention']}@{e['fraction']}": e["changed"] for e in metrics["effects"]
        },  # fmt: skip
    }
    if metrics["early"]:
        out["aoc"] = metrics["early"][0]["aoc"]
    if metrics["unsaid"]:
        out["unsaid"] = metrics["unsaid"][0]["unsaid"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a BIG-Bench Hard folder")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--agree", type=int, default=12, help="items run on both devices")
    parser.add_argument("--agree-seconds", type=float, default=240, help="for each of those")
    parser.add_argument("--limits", default="135,270", help="items of the cuda runs")
    parser.add_argument("--seconds", type=float, default=420, help="for the cuda runs")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="keep the run folders here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU here: the reasoning GPU check needs one", file=sys.stderr)
        return 2
    root = args.out or Path(tempfile.mkdtemp(prefix="gpu-reasoning-"))
    found: dict = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "model": args.model, "agreement": {}, "runs": []}  # fmt: skip
    pair = [run(args.model, d, args.data, args.agree, 160, root / f"agree-{d}", None,
                args.agree_seconds) for d in ("cuda", "cpu")]  # fmt: skip
    found["agreement"] = {"runs": pair}
    if all("folder" in r for r in pair):
        found["agreement"]["identical"] = agreement(*(Path(r["folder"]) for r in pair))
    save(found, args.json)
    deadline = time.perf_counter() + args.seconds
    for limit in (int(x) for x in args.limits.split(",")):
        left = deadline - time.perf_counter()
        if left < 30:
            break
        record = run(args.model, "cuda", args.data, limit, 256, root / f"cuda-{limit}",
                     root / "cache", left)  # fmt: skip
        if "folder" in record:
            record["headline"] = headline(Path(record["folder"]))
        found["runs"].append(record)
        save(found, args.json)
    print(json.dumps(found, indent=1))
    return 0


def save(found: dict, path: Path | None) -> None:
    """Write what is found so far (a run stopped from outside keeps it)."""
    if path is not None:
        path.write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
