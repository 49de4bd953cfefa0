"""``faithprobe audit --compare OLD NEW``: what changed between two audits, the regression
view for a model update.

Effects are matched by step, effect and model name; when the two audits hold one model each
under different names (the old checkpoint and the new one), those two are matched. Each
matched effect's change new - old is tested as the card tests two models
(:mod:`faithprobe.audit.differences`): paired over the items both audits drew (their unit
ids; same data, seed and budget give the same items), unpaired where they drew different
ones (the comparison says which), adjusted over every matched effect. Each is:

* **regressed** / **improved**: the change is supported (adjusted p < 0.05) and the estimate
  moved away from / towards the faithful region;
* **verdict changed, difference not supported**: the verdict moved, but the data do not say
  the model changed (a move from "faithful" to "inconclusive" is what a re-run with another
  seed can do);
* **unchanged**: neither;
* **only in old / only in new**: a step or model one audit did not run (e.g. data missing).

The per-unit numbers come from each audit's step folders (``suites/<step>/metrics.json``);
an audit without them is compared unpaired, from its intervals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from faithprobe.audit.differences import adjustment_text, settle, tested
from faithprobe.errors import UsageError
from faithprobe.metrics.verdict import Effect
from faithprobe.report.card import interval_text
from faithprobe.report.tables import DASH, fmt_general

UNSUPPORTED_CHANGE = "verdict changed, difference not supported"
FAIL_ON = ("regressed",)
ORDER = ("regressed", "improved", UNSUPPORTED_CHANGE, "only in old", "only in new", "unchanged")


@dataclass(frozen=True)
class Change:
    step: str
    key: str
    title: str
    model: str  # "old name → new name" where the names differ
    old: Effect | None
    new: Effect | None
    difference: Mapping[str, Any] | None = None  # new - old, settled (differences.settle)

    @property
    def status(self) -> str:
        if self.old is None:
            return "only in new"
        if self.new is None:
            return "only in old"
        if self.difference is not None and self.difference["supported"]:
            toward = self.new.value < self.old.value
            return "improved" if toward == (self.old.region.side == "at_most") else "regressed"
        if self.new.verdict != self.old.verdict:
            return UNSUPPORTED_CHANGE
        return "unchanged"


@dataclass(frozen=True)
class Comparison:
    old: Path
    new: Path
    changes: list[Change]
    adjustment: str

    @property
    def regressed(self) -> bool:
        return any(c.status == "regressed" for c in self.changes)

    def pairing(self) -> str:
        """Whether the matched effects were tested over the same items, in words."""
        tested = [c.difference for c in self.changes if c.difference is not None]
        paired = sum(bool(d["paired"]) for d in tested)
        if paired == len(tested):
            return f"all {paired} matched effects paired over the same items"
        return (
            f"{paired} of {len(tested)} matched effects paired over the same items; the rest "
            "unpaired: the audits drew different items (another seed, budget or data) or an "
            "audit keeps no per-unit numbers"
        )


def read_audit(folder: Path) -> dict:
    """An audit folder's metrics.json, or a plain error naming the folder."""
    path = Path(folder) / "metrics.json"
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UsageError(f"{folder}: not an audit folder ({path.name}: {err})") from None
    if not isinstance(metrics, dict) or metrics.get("kind") != "audit":
        raise UsageError(f"{folder}: not an audit folder (its metrics.json is a suite run's)")
    for name in ("models", "effects", "steps"):
        if not isinstance(metrics.get(name), list):
            raise UsageError(f"{path}: field '{name}' is missing or not a list")
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


def _units(folder: Path, metrics: dict) -> dict[tuple[str, str, str], Any]:
    """(step, key, subject) -> the effect's units, read off the audit's step folders by the
    suites' headline functions; steps whose folder cannot be read give none."""
    from faithprobe.audit.card import headline

    out = {}
    for step in metrics["steps"]:
        if step.get("status") != "ran":
            continue
        path = Path(folder) / "suites" / str(step.get("step")) / "metrics.json"
        try:
            found, _ = headline(step["suite"], json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        out.update({(step["step"], e.key, e.subject): e.units for e in found})
    return out


def _effects(folder: Path, metrics: dict, names: Mapping[str, tuple[str, str]]) -> dict:
    units = _units(folder, metrics)
    out = {}
    for i, record in enumerate(metrics["effects"]):
        try:
            if record["subject"] not in names:
                continue
            effect = Effect.from_record(record)
            key = (record["step"], effect.key, names[effect.subject])
        except (KeyError, TypeError, ValueError) as err:
            raise UsageError(f"{folder}/metrics.json: effect {i}: bad or missing {err}") from None
        out[key] = replace(effect, units=units.get((record["step"], effect.key, effect.subject)))
    return out


def compare_audits(old_folder: Path, new_folder: Path, *, adjustment: str = "holm") -> Comparison:
    old, new = read_audit(old_folder), read_audit(new_folder)
    pairs = _model_pairs(old, new)
    before = _effects(old_folder, old, {p[0]: p for p in pairs})
    after = _effects(new_folder, new, {p[1]: p for p in pairs})
    matched = sorted(before.keys() & after.keys())
    seed = int(old.get("seed") or 0)
    settled = settle(
        [{"step": k[0], "key": k[1], **tested(before[k], after[k], seed=seed)} for k in matched],
        adjustment=adjustment,
    )
    differences = dict(zip(matched, settled, strict=True))
    changes = []
    for key in sorted(before.keys() | after.keys()):
        step, effect_key, (a, b) = key
        found = before.get(key) or after.get(key)
        model = a if a == b else f"{a} → {b}"
        changes.append(Change(step, effect_key, found.title, model, before.get(key),
                              after.get(key), differences.get(key)))  # fmt: skip
    return Comparison(Path(old_folder), Path(new_folder), changes, adjustment)


def _cell(e: Effect | None) -> str:
    return DASH if e is None else f"{interval_text(e.value, e.ci_low, e.ci_high)} {e.verdict}"


def _difference(d: Mapping[str, Any] | None) -> tuple[str, str]:
    if d is None:
        return DASH, DASH
    paired = "paired" if d["paired"] else "unpaired"
    return f"{interval_text(d['difference'], d['ci_low'], d['ci_high'])} {paired}", fmt_general(
        d["p_adjusted"]
    )


def compare_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """The changes as a console table, regressions first."""
    rows = [
        [c.status, c.step, c.title, c.model, _cell(c.old), _cell(c.new), *_difference(c.difference)]
        for c in sorted(comparison.changes, key=lambda c: ORDER.index(c.status))
    ]
    header = ["change", "step", "effect", "model", "old", "new", "new − old [95% CI]", "adj. p"]
    return header, rows


def compare_markdown(comparison: Comparison) -> str:
    """The comparison as Markdown, for a pull-request comment: a summary line, the rule, and
    the table of :func:`compare_rows` (regressions first)."""
    header, rows = compare_rows(comparison)
    counts = {s: sum(c.status == s for c in comparison.changes) for s in ORDER}
    said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    lines = [
        f"### faithprobe: `{comparison.old}` → `{comparison.new}`",
        "",
        f"**{said}.** {comparison.pairing()}; {adjustment_text(comparison.adjustment)}.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(_markdown_cell(x) for x in row) + " |" for row in rows),
        "",
    ]
    return "\n".join(lines)


def _markdown_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def check_fail_on(value: str | None) -> None:
    if value is not None and value not in FAIL_ON:
        raise UsageError(f"--fail-on {value!r}: choose from {', '.join(FAIL_ON)}")


def failed(comparison: Comparison, fail_on: str | None) -> bool:
    """Whether ``--fail-on`` asks the command to exit 1 for this comparison."""
    return fail_on == "regressed" and comparison.regressed
