"""A run folder written whole, and rebuilt from its results.

:func:`write_run` writes what :func:`faithprobe.runner.run` computed (:func:`run_to_folder`
does both) into a staging folder
and swaps it in only when every file, the report included, is there
(:mod:`faithprobe.output_folders`): a failed or interrupted write leaves the earlier folder as
it was. :func:`rebuild` recomputes the metrics from one or several results tables (several
runs merged to compare their models) and writes the folder again; the run folders it reads
are untrusted input, checked before anything is written (:func:`_read_run`). An audit
folder is not rebuilt here: its card is (:func:`is_audit_folder`, ``faithprobe report``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from faithprobe.atomic import write_json, write_parquet
from faithprobe.datasets.json_doc import get, load_json
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.output_folders import check_target, is_run_folder, replaced_whole
from faithprobe.report.build import build_report
from faithprobe.runner import Run, RunConfig, compute_metrics, memo_dir, run
from faithprobe.suite_protocol import COMMON_COLUMNS, SUITES, get_suite, suite_options
from faithprobe.urls import redact_command

TOP = "top level"  # where run.json's own fields are, in error messages


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


def is_audit_folder(folder: Path) -> bool:
    """Whether ``folder`` is a folder faithprobe wrote whose run.json says it holds an audit
    (its card is rebuilt by :func:`faithprobe.audit.card_page.write_card`)."""
    return is_run_folder(folder) and load_json(Path(folder) / "run.json").get("kind") == "audit"


def _read_run(folder: Path) -> tuple[dict, pd.DataFrame]:
    """run.json and results.parquet of a run folder, checked as untrusted input: a plain
    error naming the file, record and field of anything this module could not use."""
    folder = Path(folder)
    if not is_run_folder(folder):
        raise UsageError(f"{folder}: not a faithprobe run folder (no run.json of ours)")
    if is_audit_folder(folder):
        raise UsageError(
            f"{folder}: an audit folder: `faithprobe report {folder}` alone rebuilds its card; "
            f"runs are merged from run folders such as {folder / 'suites' / 'distractors'}"
        )
    path = folder / "run.json"
    record = load_json(path)
    _check_record(path, record)
    return record, _read_results(folder / "results.parquet", record)


def _check_record(path: Path, record: dict) -> None:
    """The fields of run.json that rebuilding a report reads, each of its type."""
    suite = get(path, TOP, record, "suite", str)
    if suite not in SUITES:
        raise DataError(path, f"unknown suite {excerpt(suite)}", record=TOP, field="suite")
    get(path, TOP, record, "seed", int)
    try:
        suite_options(suite, get(path, TOP, record, "options", (dict, type(None)), None))
    except UsageError as err:
        raise DataError(path, str(err), record=TOP, field="options") from None
    get(path, TOP, record, "data_record", (dict, type(None)), None)
    get(path, TOP, record, "cache", (str, type(None)), None)
    subjects = get(path, TOP, record, "subjects", list)
    if not subjects:
        raise DataError(path, "names no models (an empty list)", record=TOP, field="subjects")
    for i, subject in enumerate(subjects):
        for name in ("name", "fingerprint"):
            get(path, f"subjects[{i}]", subject, name, str)


def _read_results(path: Path, record: dict) -> pd.DataFrame:
    """A run's results table: readable, with the columns every suite's has, at least one
    row, and only the models run.json names."""
    if not path.is_file():
        raise DataError(path, "missing: a run folder holds its results table here")
    try:
        results = pd.read_parquet(path)
    except (OSError, ValueError, pa.ArrowException) as err:
        why = str(err).strip().removeprefix(f"Could not open Parquet input source '{path}': ")
        raise DataError(path, f"not a readable results table ({excerpt(why, 160)})") from None
    missing = [c for c in COMMON_COLUMNS if c not in results.columns]
    if missing:
        raise DataError(path, "missing from the results table", field=missing[0])
    if results.empty:
        raise DataError(path, "holds no results (0 rows)")
    for column in ("pair_id", "subject"):
        if (bad := ~results[column].map(lambda v: isinstance(v, str))).any():
            row = int(bad.to_numpy().argmax())
            raise DataError(path, f"expected a string, got {excerpt(results[column].iloc[row])}",
                            record=f"row {row}", field=column)  # fmt: skip
    if (found := _first_infinite(results)) is not None:
        row, column = found
        raise DataError(path, "holds inf, which faithprobe never writes in a results table",
                        record=f"row {row}", field=column)  # fmt: skip
    names = [s["name"] for s in record["subjects"]]
    if (unknown := ~results["subject"].isin(names)).any():
        row = int(unknown.to_numpy().argmax())
        model = excerpt(results["subject"].iloc[row])
        raise DataError(path, f"model {model} is not among run.json's subjects",
                        record=f"row {row}", field="subject")  # fmt: skip
    return results


def _first_infinite(results: pd.DataFrame) -> tuple[int, str] | None:
    """The first +inf in a number column or a list of numbers of ``results`` (row,
    column): faithprobe writes a missing number as NaN and a log-probability of what cannot
    happen as -inf, never +inf, so a table holding one was changed outside it."""
    for column in results.columns:
        values = results[column]
        if values.dtype.kind == "f":
            hits = np.isposinf(values.to_numpy())
        elif values.dtype == object:
            hits = values.map(_holds_posinf).to_numpy(dtype=bool)
        else:
            continue
        if hits.any():
            return int(hits.argmax()), str(column)
    return None


def _holds_posinf(cell: object) -> bool:
    return isinstance(cell, np.ndarray) and cell.dtype.kind == "f" and bool(np.isposinf(cell).any())


@contextmanager
def _columns_read(path: Path, results: pd.DataFrame) -> Iterator[None]:
    """A column the suite reads but ``results`` (read from ``path``) lacks, as a plain
    error: the common columns are checked on reading, the suite's own only by its code."""
    try:
        yield
    except KeyError as err:
        name = err.args[0] if len(err.args) == 1 else None
        if isinstance(name, str) and name not in results.columns:
            raise DataError(path, "missing from the results table", field=name) from None
        raise


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
    first = Path(run_dirs[0]) / "results.parquet"
    for folder, (_, frame) in zip(run_dirs[1:], read[1:], strict=True):
        if set(frame.columns) != set(read[0][1].columns):
            raise DataError(Path(folder) / "results.parquet",
                            f"its columns differ from those of {first}: cannot merge")  # fmt: skip
    target = check_target(out or run_dirs[0], force=force)
    results = pd.concat([frame for _, frame in read])
    results = results.drop_duplicates(["subject", "pair_id"]).reset_index(drop=True)
    subjects = list({s["name"]: s for r in runs for s in r["subjects"]}.values())
    suite = get_suite(suites.pop(), options[0])
    suite.restore_data_record(runs[0].get("data_record") or {})
    seed = min(r["seed"] for r in runs)
    with _columns_read(first, results):
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
