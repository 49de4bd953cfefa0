"""The card's validity table: every step's verdict for each reference model
(:mod:`faithprobe.references`: a reader faithful by construction and degenerate
models that ignore their input), over budgets and seeds, and the rules a trustworthy card
keeps on it:

* ``ref:reader`` is faithful on every step it answers;
* no degenerate reference is ever called faithful (unfaithful or not assessable only);
* ``ref:nearest`` (the attractor shortcut) is unfaithful on distractors;
* ``ref:overlap`` is unfaithful or not assessable on natural-logic and right-reasons.

``python -m faithprobe.audit.validity --data-dir ../shared/data`` runs the audits (one per
budget and seed, all references side by side), prints the table as Markdown (docs/audit.md
holds it) and exits 1 if a rule is broken; the test suite checks the rules at the small
budget.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from faithprobe.metrics.verdict import FAITHFUL, NOT_ASSESSABLE, UNFAITHFUL

READER = "ref:reader"
DEGENERATE = ("ref:constant", "ref:random", "ref:unknown", "ref:first", "ref:nearest",
              "ref:overlap")  # fmt: skip
REFERENCES = (READER, *DEGENERATE)
# step -> reference -> the verdicts it must get there (besides "never faithful")
REQUIRED = {
    "distractors": {"ref:nearest": {UNFAITHFUL}},
    "natural-logic": {"ref:overlap": {UNFAITHFUL, NOT_ASSESSABLE}},
    "right-reasons": {"ref:overlap": {UNFAITHFUL, NOT_ASSESSABLE}},
}


def verdicts(metrics: Mapping) -> dict[tuple[str, str], str]:
    """(step, model) -> the step verdict, off an audit's metrics.json (steps that ran)."""
    return {
        (s["step"], model): v
        for s in metrics["steps"]
        if s["status"] == "ran"
        for model, v in s["verdicts"].items()
    }


def violations(found: Mapping[tuple[str, str], str], where: str = "") -> list[str]:
    """Every rule of the module docstring that the verdicts ``found`` break, in words."""
    out = []
    at = f" ({where})" if where else ""
    for (step, model), v in sorted(found.items()):
        if model == READER and v != FAITHFUL:
            out.append(f"{step}: {READER} is {v}, not faithful{at}")
        if model in DEGENERATE and v == FAITHFUL:
            out.append(f"{step}: {model} is called faithful{at}")
        allowed = REQUIRED.get(step, {}).get(model)
        if allowed and v not in allowed:
            out.append(f"{step}: {model} is {v}, must be {' or '.join(sorted(allowed))}{at}")
    return out


def run_validity(
    budgets: Sequence[str], seeds: Sequence[int], data_dir: Path | None, out: Path
) -> dict[tuple[str, int], dict]:
    """One audit of every reference per budget and seed, into ``out/<budget>-seed<seed>``;
    returns each audit's metrics.json."""
    from faithprobe.audit.run import AuditConfig, audit

    found = {}
    for budget in budgets:
        for seed in seeds:
            folder = audit(
                AuditConfig(
                    models=list(REFERENCES), out=out / f"{budget}-seed{seed}", budget=budget,
                    data_dir=data_dir, seed=seed, force=True, cache=False,
                    command=f"validity {budget} seed {seed}",
                )
            )  # fmt: skip
            found[budget, seed] = json.loads((folder / "metrics.json").read_text())
    return found


def _cell(seen: Iterable[str]) -> str:
    counts = Counter(seen)
    return ", ".join(f"{v} ×{n}" for v, n in sorted(counts.items())) or "–"


def markdown(found: Mapping[tuple[str, int], Mapping]) -> str:
    """The table: a row per budget and step, a column per reference, each cell the verdicts
    over the seeds (e.g. "not assessable ×3")."""
    lines = ["| budget | step | " + " | ".join(f"`{r}`" for r in REFERENCES) + " |",
             "|---|---|" + "---|" * len(REFERENCES)]  # fmt: skip
    budgets = list(dict.fromkeys(b for b, _ in found))
    for budget in budgets:
        runs = [verdicts(m) for (b, _), m in found.items() if b == budget]
        steps = list(dict.fromkeys(step for run in runs for step, _ in run))
        for step in steps:
            cells = [_cell(run[step, r] for run in runs if (step, r) in run) for r in REFERENCES]
            lines.append(f"| {budget} | {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m faithprobe.audit.validity",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--budget", action="append", help="small, default (repeatable)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("runs/validity"))
    args = parser.parse_args(argv)
    budgets = args.budget or ["small", "default"]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    found = run_validity(budgets, seeds, args.data_dir, args.out)
    print(markdown(found))
    broken = [v for (b, s), m in found.items() for v in violations(verdicts(m), f"{b}, seed {s}")]
    for line in broken:
        print("rule broken:", line, file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
