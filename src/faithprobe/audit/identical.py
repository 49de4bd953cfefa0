"""Whether two audits gave the same card: every number of ``metrics.json`` and every column
of each step's results, floats to a tolerance (answers computed on other processes or
machines may differ in the last bits: another thread count, another batch), times left
out. Used to check that where an audit ran (in process, on a Ray cluster, resumed) does
not change what it says."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

TIMES = frozenset({"seconds", "cpu_seconds", "minutes", "started", "finished"})


def json_differences(a: object, b: object, where: str = "", tolerance: float = 1e-6) -> list[str]:
    """Where two JSON values differ (``where``: the path shown), floats to ``tolerance``
    (relative and absolute; NaN equals NaN), keys in :data:`TIMES` left out."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(a.keys() ^ b.keys())}"]
        return [
            d
            for k in a
            if k not in TIMES
            for d in json_differences(a[k], b[k], f"{where}.{k}", tolerance)
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in json_differences(x, y, f"{where}[{i}]", tolerance)
        ]
    if isinstance(a, float) and isinstance(b, float):
        same = math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
        return [] if same or (math.isnan(a) and math.isnan(b)) else [f"{where}: {a} != {b}"]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def card_differences(x: Path, y: Path, tolerance: float = 1e-6) -> list[str]:
    """Every difference between the cards of audit folders ``x`` and ``y`` and between
    their steps' results tables (floats to ``tolerance`` there too, times left out)."""
    read = lambda f: json.loads(f.read_text())  # noqa: E731
    out = json_differences(read(x / "metrics.json"), read(y / "metrics.json"), "metrics", tolerance)
    steps = sorted(p.name for p in (x / "suites").iterdir()) if (x / "suites").exists() else []
    for step in steps:
        a, b = (pd.read_parquet(f / "suites" / step / "results.parquet") for f in (x, y))
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=tolerance * 10,
                                          atol=tolerance * 10)  # fmt: skip
        except AssertionError as err:
            out.append(f"suites/{step}/results.parquet: {' '.join(str(err).split())}")
    return out
