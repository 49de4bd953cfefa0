"""``faithprobe audit --compare OLD NEW``: what changed between two audits, the regression
view for a model update.

Effects are matched by step, effect and model name; when the two audits hold one model each
under different names (the old checkpoint and the new one), those two are matched. Each
matched effect is:

* **regressed** / **improved**: the difference is supported -- today: the two 95%
  intervals are apart (:func:`~faithprobe.metrics.verdict.intervals_differ`), a stand-in
  until the paired test over the same items exists -- and the estimate moved away from /
  towards the faithful region;
* **verdict changed, difference not supported**: the verdict moved, but the intervals
  overlap, so the data do not say the model changed (a move from "faithful" to
  "inconclusive" within overlapping intervals is what a re-run with another seed does);
* **unchanged**: neither;
* **only in old / only in new**: a step or model one audit did not run (e.g. data missing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from faithprobe.errors import UsageError
from faithprobe.metrics.verdict import Effect, intervals_differ
from faithprobe.report.card import interval_text
from faithprobe.report.tables import DASH

UNSUPPORTED_CHANGE = "verdict changed, difference not supported"


@dataclass(frozen=True)
class Change:
    step: str
    key: str
    title: str
    model: str  # "old name → new name" where the names differ
    old: Effect | None
    new: Effect | None

    @property
    def status(self) -> str:
        if self.old is None:
            return "only in new"
        if self.new is None:
            return "only in old"
        if intervals_differ(self.old, self.new):
            toward = self.new.value < self.old.value
            return "improved" if toward == (self.old.region.side == "at_most") else "regressed"
        if self.new.verdict != self.old.verdict:
            return UNSUPPORTED_CHANGE
        return "unchanged"


def read_audit(folder: Path) -> dict:
    """An audit folder's metrics.json, or a plain error naming the folder."""
    path = Path(folder) / "metrics.json"
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UsageError(f"{folder}: not an audit folder ({path.name}: {err})") from None
    if not isinstance(metrics, dict) or metrics.get("kind") != "audit":
        raise UsageError(f"{folder}: not an audit folder (its metrics.json is a suite run's)")
    return metrics


def _model_pairs(old: dict, new: dict) -> list[tuple[str, str]]:
    a = [m["name"] for m in old["models"]]
    b = [m["name"] for m in new["models"]]
    shared = [m for m in a if m in b]
    if shared:
        return [(m, m) for m in shared]
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])]
    raise UsageError(
        f"the audits share no model name ({', '.join(a)} vs {', '.join(b)}) and are not one "
        "model each: nothing to compare"
    )


def compare_audits(old_folder: Path, new_folder: Path) -> list[Change]:
    old, new = read_audit(old_folder), read_audit(new_folder)
    pairs = _model_pairs(old, new)

    def effects(metrics: dict, side: int) -> dict:
        names = {p[side]: p for p in pairs}
        return {
            (e["step"], e["key"], names[e["subject"]]): Effect.from_record(e)
            for e in metrics["effects"]
            if e["subject"] in names
        }

    before, after = effects(old, 0), effects(new, 1)
    out = []
    for key in sorted(before.keys() | after.keys()):
        step, effect_key, (a, b) = key
        found = before.get(key) or after.get(key)
        model = a if a == b else f"{a} → {b}"
        out.append(Change(step, effect_key, found.title, model, before.get(key), after.get(key)))
    return out


def _cell(e: Effect | None) -> str:
    return DASH if e is None else f"{interval_text(e.value, e.ci_low, e.ci_high)} {e.verdict}"


def compare_rows(changes: Sequence[Change]) -> tuple[list[str], list[list[str]]]:
    """The changes as a console table, regressions first."""
    order = {"regressed": 0, "improved": 1, UNSUPPORTED_CHANGE: 2, "only in old": 3,
             "only in new": 4, "unchanged": 5}  # fmt: skip
    rows = [
        [c.status, c.step, c.title, c.model, _cell(c.old), _cell(c.new)]
        for c in sorted(changes, key=lambda c: order[c.status])
    ]
    return ["change", "step", "effect", "model", "old", "new"], rows
