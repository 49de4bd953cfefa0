"""A run folder written whole, and rebuilt from its results.

:func:`write_run` writes what :func:`faithprobe.runner.run` computed (:func:`run_to_folder`
does both) into a staging folder
and swaps it in only when every file, the report included, is there
(:mod:`faithprobe.runfolder`): a failed or interrupted write leaves the earlier folder as
it was. :func:`rebuild` recomputes the metrics from one or several results tables (several
runs merged to compare their models) and writes the folder again.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from faithprobe.atomic import write_json, write_parquet
from faithprobe.errors import UsageError
from faithprobe.report.build import build_report
from faithprobe.runfolder import check_target, is_run_folder, replaced_whole
from faithprobe.runner import Run, RunConfig, compute_metrics, memo_dir, run
from faithprobe.suite import get_suite
from faithprobe.urls import redact_command


def run_to_folder(config: RunConfig, **kwargs) -> Path:
    """Run ``config`` (:func:`faithprobe.runner.run`, which takes the same ``kwargs``) and
    write its folder whole: the one call a library user needs."""
    return write_run(run(config, **kwargs))


def write_run(finished: Run, kept: Path | None = None) -> Path:
    """Write the run folder whole: results, metrics, run.json, tables, plots and report go
    into a staging folder that replaces ``finished.out`` only when all of them are there.
    ``kept``: a run folder whose results.parquet and run.json are copied byte for byte
    instead."""
    with replaced_whole(finished.out) as staging:
        if kept is None:
            write_parquet(staging / "results.parquet", finished.results)
            write_json(staging / "run.json", finished.record)
        else:
            for name in ("results.parquet", "run.json"):
                shutil.copy2(kept / name, staging / name)
        write_json(staging / "metrics.json", finished.metrics)
        build_report(staging, memo_dir(finished.record))
    return finished.out


def _read_run(folder: Path) -> tuple[dict, pd.DataFrame]:
    """run.json and results.parquet of a run folder, or a plain error naming what is
    missing."""
    folder = Path(folder)
    if not is_run_folder(folder) or not (folder / "results.parquet").is_file():
        raise UsageError(f"{folder}: not a faithprobe run folder (no run.json or results.parquet)")
    record = json.loads((folder / "run.json").read_text())
    return record, pd.read_parquet(folder / "results.parquet")


def rebuild(
    run_dirs: Sequence[Path],
    out: Path | None = None,
    *,
    force: bool = False,
    command: str | None = None,
) -> Path:
    """Recompute metrics from results tables (one run, or several runs merged to compare
    their models) and rebuild the report; the target folder is replaced whole. ``command``
    is recorded in a merged folder's run.json (default: this process's arguments)."""
    if not run_dirs:
        raise UsageError("give at least one run folder")
    read = [_read_run(d) for d in run_dirs]
    runs = [r for r, _ in read]
    suites = {r["suite"] for r in runs}
    if len(suites) != 1:
        raise UsageError(f"runs of different suites cannot be merged: {', '.join(sorted(suites))}")
    options = [r.get("options") or {} for r in runs]
    if any(o != options[0] for o in options):
        raise UsageError(f"runs with different suite options cannot be merged: {options}")
    target = check_target(out or run_dirs[0], force=force)
    results = pd.concat([frame for _, frame in read])
    results = results.drop_duplicates(["subject", "pair_id"]).reset_index(drop=True)
    subjects = list({s["name"]: s for r in runs for s in r["subjects"]}.values())
    suite = get_suite(suites.pop(), options[0])
    suite.restore_data_record(runs[0].get("data_record") or {})
    seed = min(r["seed"] for r in runs)
    metrics = compute_metrics(suite, results, seed, subjects)
    if len(run_dirs) == 1 and Path(target).resolve() == Path(run_dirs[0]).resolve():
        return write_run(Run(target, results, metrics, runs[0]), kept=Path(run_dirs[0]))
    record = {
        **runs[0],
        "command": command or redact_command(sys.argv),
        "subjects": subjects,
        "merged_from": [str(d) for d in run_dirs],
        "n_pairs": int(results["pair_id"].nunique()),
    }
    return write_run(Run(target, results, metrics, record))
