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

import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from faithprobe import json_values
from faithprobe.audit.card_page import interval_text
from faithprobe.audit.differences import adjustment_text, settle, tested
from faithprobe.datasets.json_doc import get
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.markdown import table, text
from faithprobe.metrics.verdict import Effect, Region
from faithprobe.options import check_among
from faithprobe.report.tables import DASH, fmt_general
from faithprobe.suite_protocol import SUITES

UNSUPPORTED_CHANGE = "verdict changed, difference not supported"
FAIL_ON = ("regressed",)
SIDES = ("at_most", "at_least")
TOP = "top level"  # where metrics.json's own fields are, in error messages
ORDER = ("regressed", "improved", UNSUPPORTED_CHANGE, "only in old", "only in new", "unchanged")
MARKDOWN_HEADING = "### faithprobe: "  # the first line of every --markdown comparison


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
    """An audit folder's metrics.json, or a plain error naming the folder; its models and
    steps checked as untrusted input (each effect is checked where it is read,
    :func:`_effect`)."""
    path = Path(folder) / "metrics.json"
    try:
        metrics = json_values.loads(path.read_text(encoding="utf-8"))
    except json_values.Unfit as err:  # a number faithprobe never writes: changed since
        raise err.in_file(path) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        raise UsageError(f"{folder}: not an audit folder ({path.name}: {err})") from None
    if not isinstance(metrics, dict) or metrics.get("kind") != "audit":
        raise UsageError(f"{folder}: not an audit folder (its metrics.json is a suite run's)")
    for name in ("models", "effects", "steps"):
        get(path, TOP, metrics, name, list)
    get(path, TOP, metrics, "seed", int, 0)
    names: set[str] = set()
    for i, model in enumerate(metrics["models"]):
        name = get(path, f"models[{i}]", model, "name", str)
        if name in names:
            raise DataError(path, f"model {excerpt(name)} is listed twice", record=f"models[{i}]",
                            field="name")  # fmt: skip
        names.add(name)
    for i, step in enumerate(metrics["steps"]):
        name = get(path, f"steps[{i}]", step, "step", str)
        if not name or name in (".", "..") or Path(name).name != name:
            raise DataError(path, f"{excerpt(name)} is not a step's name", record=f"steps[{i}]",
                            field="step")  # fmt: skip
        get(path, f"steps[{i}]", step, "suite", str)
        get(path, f"steps[{i}]", step, "status", str)
    return metrics


def check_audit(folder: Path) -> dict:
    """An audit folder's metrics.json with its models, steps and every effect checked as
    :func:`compare_audits` checks them (``faithprobe report AUDIT_FOLDER`` reads it so)."""
    metrics = read_audit(folder)
    path = Path(folder) / "metrics.json"
    for i, record in enumerate(metrics["effects"]):
        _effect(path, i, record)
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


def _units(folder: Path, metrics: dict) -> tuple[dict[tuple[str, str, str], Any], dict]:
    """(step, key, subject) -> the effect's units, read off the audit's step folders by the
    suites' headline functions, and step -> the metrics.json read. A step without its
    folder's metrics.json (or of a suite not installed here) gives none: its effects are
    compared unpaired."""
    out, read = {}, {}
    for step in metrics["steps"]:
        path = Path(folder) / "suites" / step["step"] / "metrics.json"
        if step["status"] != "ran" or step["suite"] not in SUITES or not path.exists():
            continue
        found = _step_effects(path, step["suite"])
        out.update(
            {(step["step"], e.key, e.subject): e.units for e in found if e.units is not None}
        )
        read[step["step"]] = path
    return out, read


def _step_effects(path: Path, suite: str) -> list[Effect]:
    """The headline effects (with their units) a step's metrics.json holds, or a plain
    error naming it."""
    from faithprobe.audit.card_metrics import headline

    try:
        metrics = json_values.loads(path.read_text(encoding="utf-8"))
    except json_values.Unfit as err:
        raise err.in_file(path) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        raise DataError(path, f"not readable as JSON ({excerpt(str(err), 160)})") from None
    if not isinstance(metrics, dict):
        raise DataError(path, f"expected a JSON object, got {type(metrics).__name__}")
    try:
        return headline(suite, metrics)[0]
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        why = f"{type(err).__name__}: {excerpt(str(err))}"
        raise DataError(path, f"not the metrics of a {suite} run ({why})") from None


def _number(path: Path, where: str, record: dict, name: str, *, missing: bool) -> float | None:
    """A finite number (or, where ``missing``, null: nothing estimated) of an effect."""
    kinds = (int, float, type(None)) if missing else (int, float)
    value = get(path, where, record, name, kinds)
    if value is None or (missing and value != value):  # null or NaN: nothing estimated
        return value
    if not abs(value) <= sys.float_info.max:  # also NaN, and integers too large for a float
        raise DataError(path, f"{excerpt(value)} is not a finite number", record=where,
                        field=name)  # fmt: skip
    return float(value)


def _effect(path: Path, i: int, record: Any) -> tuple[str, Effect, bool]:
    """Effect ``i`` of an audit's metrics.json with its step and whether the card says it
    has per-unit numbers, every field checked (the numbers are not in it: :func:`_units`
    reads them)."""
    where = f"effects[{i}]"
    fields = {k: get(path, where, record, k, str) for k in ("step", "suite", "key", "title",
                                                            "subject")}  # fmt: skip
    fields |= {k: get(path, where, record, k, str, "") for k in ("reading", "edge", "control")}
    value, low, high = (_number(path, where, record, k, missing=True)
                        for k in ("value", "ci_low", "ci_high"))  # fmt: skip
    if low is not None and high is not None and low > high:
        raise DataError(path, f"ci_low {low} is above ci_high {high}", record=where,
                        field="ci_low")  # fmt: skip
    n = get(path, where, record, "n", int)
    if n < 0:
        raise DataError(path, f"{n} units: a count cannot be negative", record=where, field="n")
    region = get(path, where, record, "region", dict)
    side = get(path, f"{where}.region", region, "side", str)
    if side not in SIDES:
        raise DataError(path, f"{excerpt(side)}: one of {', '.join(SIDES)}",
                        record=f"{where}.region", field="side")  # fmt: skip
    bound = _number(path, f"{where}.region", region, "bound", missing=False)
    step = fields.pop("step")
    effect = Effect(**fields, value=value, ci_low=low, ci_high=high, n=n,
                    region=Region(side, float(bound)))  # fmt: skip
    return step, effect, get(path, where, record, "paired", bool, False)


def _effects(folder: Path, metrics: dict, names: Mapping[str, tuple[str, str]]) -> dict:
    """(step, key, model pair) -> the effect, for the effects of the models in ``names``."""
    path = Path(folder) / "metrics.json"
    units, read = _units(folder, metrics)
    out = {}
    for i, record in enumerate(metrics["effects"]):
        step, effect, paired = _effect(path, i, record)
        found = units.get((step, effect.key, effect.subject))
        if paired and found is None and step in read:
            raise DataError(read[step], f"no per-unit numbers for {excerpt(effect.key)} of "
                            f"{excerpt(effect.subject)}, which {path} says it has")  # fmt: skip
        if effect.subject not in names:
            continue
        key = (step, effect.key, names[effect.subject])
        if key in out:
            raise DataError(path, "repeats the step, key and subject of an earlier effect",
                            record=f"effects[{i}]", field="key")  # fmt: skip
        out[key] = replace(effect, units=found)
    return out


def compare_audits(old_folder: Path, new_folder: Path, *, adjustment: str = "holm") -> Comparison:
    old, new = read_audit(old_folder), read_audit(new_folder)
    pairs = _model_pairs(old, new)
    before = _effects(old_folder, old, {p[0]: p for p in pairs})
    after = _effects(new_folder, new, {p[1]: p for p in pairs})
    matched = sorted(before.keys() & after.keys())
    seed = old.get("seed", 0)
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
        f"{MARKDOWN_HEADING}{text(comparison.old)} → {text(comparison.new)}",
        "",
        f"**{said}.** {text(comparison.pairing())}; {text(adjustment_text(comparison.adjustment))}.",
        "",
        *table([text(h) for h in header], ([text(x) for x in row] for row in rows)),
        "",
    ]
    return "\n".join(lines)


def written_by_compare(path: Path) -> bool:
    """Whether the file at ``path`` is a comparison :func:`compare_markdown` wrote (its
    first line is the summary heading), which ``--markdown`` may replace."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().startswith(MARKDOWN_HEADING)
    except (OSError, UnicodeDecodeError):
        return False


def check_fail_on(value: str | None) -> None:
    if value is not None:
        check_among(value, FAIL_ON, f"--fail-on {value!r}")


def failed(comparison: Comparison, fail_on: str | None) -> bool:
    """Whether ``--fail-on`` asks the command to exit 1 for this comparison."""
    return fail_on == "regressed" and comparison.regressed
