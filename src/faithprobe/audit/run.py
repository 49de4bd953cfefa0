"""Run an audit: every step of :data:`~faithprobe.audit.plan.STEPS` that a model can
answer, at one budget, through the shared answer cache, into one folder replaced whole:

    DIR/index.html       the faithfulness card (:mod:`faithprobe.report.card`)
    DIR/metrics.json     the card's numbers (:mod:`faithprobe.audit.card`, docs/audit.md)
    DIR/run.json         what was run: command, budget, models, data, versions, times
    DIR/suites/<step>/   each step's full run folder (report.html, results.parquet, ...)

Everything that can fail without a model is checked first, for every step: the data, the
options, the sampled pairs and whether each model answers what the step asks. Models are
loaded once (on the first answer the cache does not hold) and shared by the steps. An
interrupted audit loses no answer: the same command resumes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from faithprobe.atomic import write_json
from faithprobe.audit.card import card_metrics
from faithprobe.audit.edges import Edges
from faithprobe.audit.plan import STEPS, Step, check_budget, data_root, step_data
from faithprobe.errors import UsageError
from faithprobe.report.card import write_card
from faithprobe.report.runs import write_run
from faithprobe.runfolder import check_target, replaced_whole
from faithprobe.runner import (
    Prepared,
    ProgressFactory,
    RunConfig,
    cannot_answer,
    package_versions,
    prepare,
    run,
)
from faithprobe.subjects import check_model, load_subject
from faithprobe.subjects.cache import answers_file
from faithprobe.subjects.openai_compat import EndpointConfig


@dataclass
class AuditConfig:
    models: Sequence[str]
    out: Path
    budget: str = "small"
    data_dir: Path | None = None
    seed: int = 0
    batch_size: int = 16
    force: bool = False
    cache: bool = True
    cache_dir: Path | None = None
    endpoint: EndpointConfig = field(default_factory=EndpointConfig)
    steps: Sequence[Step] = STEPS
    command: str = ""
    edges: Sequence[str] = ()  # --edge NAME=VALUE: a faithful region's bound moved


@dataclass
class Planned:
    """A step as the audit will run it: prepared, with the models that answer it and the
    reasons the others do not; or skipped with its reason."""

    step: Step
    config: RunConfig | None = None
    prepared: Prepared | None = None
    subjects: list = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # {"name", "reason"} per model
    reason: str | None = None  # why the whole step is skipped


def _plan(config: AuditConfig, subjects: list, root: Path | None) -> list[Planned]:
    planned = []
    for step in config.steps:
        data, why = step_data(step, root)
        if why:
            planned.append(Planned(step, reason=why))
            continue
        run_config = RunConfig(
            suite=step.suite,
            models=[s.name for s in subjects],
            data=data,
            limit=step.limits[config.budget],
            seed=config.seed,
            batch_size=config.batch_size,
            out=config.out / "suites" / step.name,  # re-rooted in the staging folder to run
            cache=config.cache,
            cache_dir=config.cache_dir,
            options=step.options_for(config.budget),
            command=config.command,
        )
        prepared = prepare(run_config, check_models=False)
        p = Planned(step, run_config, prepared)
        for subject in subjects:
            if (why := cannot_answer(prepared.suite, prepared.pairs, subject)) is None:
                p.subjects.append(subject)
            else:
                p.skipped.append({"name": subject.name, "reason": why})
        if not p.subjects:
            p.reason = "no model answers it: " + "; ".join(s["reason"] for s in p.skipped)
        planned.append(p)
    return planned


def audit(
    config: AuditConfig,
    *,
    progress: ProgressFactory | None = None,
    log: Callable[[str], None] = lambda msg: None,
    subjects: Sequence | None = None,
) -> Path:
    """Run the audit ``config`` describes (``subjects`` overrides ``config.models``: tests,
    library use) and write its folder whole; returns the folder."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    budget = check_budget(config.budget)
    edges = Edges.parse(config.edges, [s.suite for s in config.steps])
    out = check_target(config.out, force=config.force)
    if subjects is None:
        if not config.models:
            raise UsageError("give at least one --model")
        for spec in config.models:
            check_model(spec)
        subjects = [
            load_subject(m, batch_size=config.batch_size, endpoint=config.endpoint, defer=True)
            for m in config.models
        ]
    names = [s.name for s in subjects]
    if len(set(names)) != len(names):
        raise UsageError(f"two models share a name: {', '.join(names)}")
    root = data_root(config.data_dir)
    planned = _plan(config, list(subjects), root)
    runs: list[dict] = []
    with replaced_whole(out) as staging:
        for i, p in enumerate(planned, 1):
            entry = {"step": p.step.name, "suite": p.step.suite, "question": p.step.question}
            if p.reason:
                log(f"[{i}/{len(planned)}] {p.step.name}: skipped ({p.reason})")
                runs.append({**entry, "status": "skipped", "reason": p.reason})
                continue
            log(f"[{i}/{len(planned)}] {p.step.name}: {len(p.prepared.pairs)} pairs")
            folder = staging / "suites" / p.step.name
            prepared = Prepared(p.prepared.suite, p.prepared.pairs, folder, p.prepared.cache_path)
            clock = time.perf_counter()
            finished = run(
                p.config, progress=progress, subjects=p.subjects, log=lambda m: None,
                prepared=prepared,
            )  # fmt: skip
            write_run(finished)
            runs.append(
                {
                    **entry,
                    "status": "ran",
                    "folder": f"suites/{p.step.name}",
                    "report": f"suites/{p.step.name}/report.html",
                    "limit": p.config.limit,
                    "options": dict(p.config.options),
                    "data": str(p.config.data) if p.config.data else None,
                    "n_pairs": len(p.prepared.pairs),
                    "seconds": round(time.perf_counter() - clock, 1),
                    "models": [s.name for s in p.subjects],
                    "skipped_models": p.skipped,
                    "metrics": finished.metrics,
                }
            )
        models = [{"spec": spec, "name": s.name, "fingerprint": s.fingerprint}
                  for spec, s in zip(config.models or names, subjects, strict=True)]  # fmt: skip
        metrics = card_metrics(runs, models, budget=budget, seed=config.seed, edges=edges)
        write_json(staging / "metrics.json", metrics)
        write_json(
            staging / "run.json",
            {
                "kind": "audit",
                "command": config.command,
                "budget": config.budget,
                "seed": config.seed,
                "edges": dict(edges.overrides),
                "batch_size": config.batch_size,
                "data_dir": str(root) if root else None,
                "cache": str(answers_file(config.cache_dir)) if config.cache else None,
                "models": models,
                "steps": [{k: v for k, v in r.items() if k != "metrics"} for r in runs],
                "versions": package_versions(),
                "started": started,
                "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        )
        write_card(staging)
    return out
