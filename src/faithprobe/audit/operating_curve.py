"""The card's operating curve: how often it calls a model faithful, unfaithful or
inconclusive, as a function of how faithful the model is.

The validity table (:mod:`faithprobe.audit.validity`) checks the card at the two ends: a
reader faithful on every item, shortcuts faithful on none. A user's model lies between.
``ref:mix:P`` (:class:`~faithprobe.reference_models.memory.Mix`) is the reader on a share P of the
base items and the memoriser (every intervened item answered as its original) on the rest,
drawn per base item by its seed; so for each step, budget and P the share of seeds in which
the card reaches each verdict is the card's operating curve: where on P its *faithful* call
starts (the step's edge, read through its items), and how many items a budget needs to
tell P = 0.9 from P = 0.5.

Each seed is one audit as a user would run it (the seed draws both the items and which of
them the mix memorises), one model at a time (so no paired differences are computed, and
each model's verdict is the one its own audit would give), without the reports: only the
step records and the card's metrics are computed. ``python -m faithprobe.audit.operating_
curve --data-dir ../shared/data --seeds 0-19`` prints the table (docs/audit.md holds it)
and writes the records as JSON; ``--figure`` draws the curves.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from faithprobe.audit.plan import AUTO, parse_duration
from faithprobe.audit.verdicts_only import auto_verdicts, seed_list, step_verdicts
from faithprobe.metrics.verdict import FAITHFUL, INCONCLUSIVE, NOT_ASSESSABLE, UNFAITHFUL

SHARES = (0.0, 0.5, 0.75, 0.9, 1.0)
VERDICT_ORDER = (FAITHFUL, INCONCLUSIVE, UNFAITHFUL, NOT_ASSESSABLE)


def mix_model(share: float, seed: int) -> str:
    """The ``--model`` of the planted model at ``share`` for ``seed``."""
    return f"ref:mix:{share:g},seed={seed}"


def seed_verdicts(
    budget: str,
    shares: Sequence[float],
    seed: int,
    data_dir: Path | None,
    steps: Sequence[str] | None = None,
    time_limit: float | None = None,
) -> list[dict]:
    """One record per step (of ``steps``, default all) and share: the verdict the card
    gives ``ref:mix:P`` at ``budget`` (``auto``: with ``time_limit`` seconds, each model
    audited alone) and ``seed`` (:mod:`~faithprobe.audit.verdicts_only`)."""
    models = [mix_model(p, seed) for p in shares]
    if budget == AUTO:
        found = {}
        for model in models:
            found |= auto_verdicts(model, seed, data_dir, time_limit, steps)
    else:
        found = step_verdicts(models, budget, seed, data_dir, steps)
    by_name = {f"ref:mix:{p:g}": p for p in shares}
    return [{"budget": budget, "step": step, "share": by_name[name], "seed": seed,
             "verdict": verdict} for (step, name), verdict in found.items()]  # fmt: skip


def table(records: Sequence[Mapping]) -> list[dict]:
    """Per budget, step and share: how many seeds and the share of them with each
    verdict."""
    cells: dict[tuple, Counter] = {}
    for r in records:
        cells.setdefault((r["budget"], r["step"], r["share"]), Counter())[r["verdict"]] += 1
    rows = []
    for (budget, step, share), counts in cells.items():
        n = sum(counts.values())
        rows.append({"budget": budget, "step": step, "share": share, "seeds": n,
                     **{v: counts[v] / n for v in VERDICT_ORDER}})  # fmt: skip
    order = {"small": 0, "default": 1, AUTO: 2}  # budgets by size, then any other by name
    return sorted(rows, key=lambda r: (order.get(r["budget"], 3), r["budget"], r["step"],
                                       r["share"]))  # fmt: skip


def problems(rows: Sequence[Mapping], *, top: float = 0.95) -> list[str]:
    """What breaks the curve's rules, in words: faithful in at least ``top`` of the seeds
    at P = 1, in none at P = 0, and never less often at a larger P (monotone)."""
    out = []
    by_curve: dict[tuple, list[Mapping]] = {}
    for r in rows:
        by_curve.setdefault((r["budget"], r["step"]), []).append(r)
    for (budget, step), points in sorted(by_curve.items()):
        points = sorted(points, key=lambda r: r["share"])
        where = f"{step} at {budget}"
        if points[-1]["share"] == 1 and points[-1][FAITHFUL] < top:
            out.append(f"{where}: faithful in {points[-1][FAITHFUL]:.0%} of seeds at P = 1")
        if points[0]["share"] == 0 and points[0][FAITHFUL] > 0:
            out.append(f"{where}: faithful in {points[0][FAITHFUL]:.0%} of seeds at P = 0")
        for a, b in zip(points, points[1:], strict=False):
            if b[FAITHFUL] < a[FAITHFUL] or b[UNFAITHFUL] > a[UNFAITHFUL]:
                out.append(f"{where}: not monotone between P = {a['share']:g} and "
                           f"{b['share']:g}")  # fmt: skip
    return out


def markdown(rows: Sequence[Mapping]) -> str:
    """The table: a row per budget, step and share; faithful / inconclusive / unfaithful /
    not assessable as shares of the seeds."""
    lines = ["| budget | step | P | seeds | faithful | inconclusive | unfaithful | not assessable |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        shares = " | ".join(f"{r[v]:.0%}" for v in VERDICT_ORDER)
        lines.append(f"| {r['budget']} | {r['step']} | {r['share']:g} | {r['seeds']} | {shares} |")
    return "\n".join(lines)


def figure(rows: Sequence[Mapping], path: Path) -> None:
    """The curves: per step, the share of seeds called faithful (solid) and unfaithful
    (dashed) against P, one colour per budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = list(dict.fromkeys(r["step"] for r in rows))
    budgets = list(dict.fromkeys(r["budget"] for r in rows))
    fig, axes = plt.subplots(2, (len(steps) + 1) // 2, figsize=(12, 6.5), sharex=True,
                             sharey=True, squeeze=False)  # fmt: skip
    for ax, step in zip(axes.flat, steps, strict=False):
        for i, budget in enumerate(budgets):
            points = sorted((r for r in rows if r["step"] == step and r["budget"] == budget),
                            key=lambda r: r["share"])  # fmt: skip
            x = [r["share"] for r in points]
            ax.plot(x, [r[FAITHFUL] for r in points], marker="o", color=f"C{i}",
                    label=f"{budget}: faithful")  # fmt: skip
            ax.plot(x, [r[UNFAITHFUL] for r in points], marker="x", linestyle="--",
                    color=f"C{i}", label=f"{budget}: unfaithful")  # fmt: skip
        ax.set_title(step)
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("P: share of base items read faithfully")
    for ax in axes[:, 0]:
        ax.set_ylabel("share of seeds")
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m faithprobe.audit.operating_curve",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--budget", action="append", help="small, default, auto (repeatable)")
    parser.add_argument("--time", default="20m", help="the auto budget's --time (default 20m)")
    parser.add_argument("--seeds", default="0-19", help="e.g. 0-19 or 0,1,2")
    parser.add_argument("--shares", default=",".join(f"{p:g}" for p in SHARES))
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="the records, one per verdict")
    parser.add_argument("--figure", type=Path, default=None)
    parser.add_argument("--step", action="append", help="only this step (repeatable)")
    args = parser.parse_args(argv)
    shares = [float(p) for p in args.shares.split(",")]
    records = []
    if args.json and args.json.is_file():  # resume: the seeds (of the steps) done are kept
        records = json.loads(args.json.read_text())
    time_limit = parse_duration(args.time)
    for budget in args.budget or ["small", "default"]:
        for seed in seed_list(args.seeds):
            if any(r["budget"] == budget and r["seed"] == seed
                   and (args.step is None or r["step"] in args.step) for r in records):  # fmt: skip
                continue
            records += seed_verdicts(budget, shares, seed, args.data_dir, args.step, time_limit)
            if args.json:
                args.json.write_text(json.dumps(records))
            print(f"{budget} seed {seed} done", file=sys.stderr, flush=True)
    rows = table([r for r in records if r["share"] in shares])
    print(markdown(rows))
    if args.figure:
        figure(rows, args.figure)
    broken = problems(rows)
    for line in broken:
        print("curve rule broken:", line, file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
