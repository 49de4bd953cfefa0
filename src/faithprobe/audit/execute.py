"""Run an audit: every step the suites declare (:func:`~faithprobe.audit.plan.
declared_steps`) that a model can answer, at one budget, through the shared answer cache,
into one folder replaced whole:

    DIR/index.html       the faithfulness card (:mod:`faithprobe.audit.card_page`)
    DIR/metrics.json     the card's numbers (:mod:`faithprobe.audit.card_metrics`, docs/audit.md)
    DIR/run.json         what was run: command, budget, models, data, versions, times
    DIR/suites/<step>/   each step's full run folder (report.html, results.parquet, ...)

Everything that can fail without a model is checked first, for every step: the data, the
options, the sampled pairs and whether each model answers what the step asks. Models are
loaded once (on the first answer the cache does not hold) and shared by the steps. An
interrupted audit loses no answer: the same command resumes it.

With ``--budget auto`` each step runs in rounds of growing size (:meth:`~faithprobe.audit.
plan.Step.rounds`), each round answering only the items the cache lacks: first every step's
first round, then further rounds where they are most likely to decide something, while
``--time`` lasts (:mod:`faithprobe.audit.auto`); a step stops once every verdict and
difference of it is decided (read at the level the looks spend, :mod:`faithprobe.metrics.
sequential`), and no round goes past ``--max-items``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from faithprobe.atomic import write_json
from faithprobe.audit.auto import AutoStep, next_round
from faithprobe.audit.card_metrics import card_metrics
from faithprobe.audit.card_page import write_card
from faithprobe.audit.cluster import RayAudit
from faithprobe.audit.edges import Edges
from faithprobe.audit.plan import (
    AUTO,
    Step,
    StepData,
    check_budget,
    check_sized,
    declared_steps,
    step_data,
)
from faithprobe.catalog.locate import data_roots
from faithprobe.errors import UsageError
from faithprobe.executors import ExecutorSpec, check_placed
from faithprobe.metrics.sequential import LOOKS
from faithprobe.output_folders import check_target, replaced_whole
from faithprobe.report.run_folder import write_run
from faithprobe.runner import (
    Prepared,
    ProgressFactory,
    Run,
    RunConfig,
    begin,
    cannot_answer,
    package_versions,
    prepare,
    run,
)
from faithprobe.subjects import ModelSpec, check_unique_names, load_subject, model_spec
from faithprobe.subjects.answer_cache import AnswerCache, answers_file


@dataclass
class AuditConfig:
    models: Sequence[str | ModelSpec]  # strings are parsed once, on entry
    out: Path
    budget: str = "small"
    data_dir: Path | None = None
    seed: int = 0
    batch_size: int = 16
    force: bool = False
    cache: bool = True
    cache_dir: Path | None = None
    steps: Sequence[Step] = field(default_factory=declared_steps)
    command: str = ""
    edges: Sequence[str] = ()  # --edge NAME=VALUE: a faithful region's bound moved
    adjustment: str = "holm"  # of the differences' p-values: "holm" or "bh"
    time_limit: float | None = None  # --budget auto: seconds for the whole audit
    max_items: int | None = None  # --budget auto: the largest --limit a step takes
    executor: ExecutorSpec = field(default_factory=ExecutorSpec)  # where the models compute


@dataclass
class Planned:
    """A step as the audit will run it: prepared, with the models that answer it and the
    reasons the others do not; or skipped with its reason."""

    step: Step
    data: StepData = field(default_factory=StepData)
    config: RunConfig | None = None
    prepared: Prepared | None = None
    subjects: list = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # {"name", "reason"} per model
    reason: str | None = None  # why the whole step is skipped


def plan_step(
    step: Step, config: AuditConfig, subjects: list, roots: list[Path], look: int = 0
) -> Planned:
    """``step`` prepared at the audit's budget (``auto``: at round ``look``), with the
    ``subjects`` that answer it."""
    p = prepare_step(step, config, roots, look)
    if p.reason:
        return p
    for subject in subjects:
        if (why := cannot_answer(p.prepared.suite, p.prepared.pairs, subject)) is None:
            p.subjects.append(subject)
        else:
            p.skipped.append({"name": subject.name, "reason": why})
    if not p.subjects:
        p.reason = _nobody(p.skipped)
    return p


def _nobody(skipped: list[dict]) -> str:
    return "no model answers it: " + "; ".join(s["reason"] for s in skipped)


def prepare_step(step: Step, config: AuditConfig, roots: list[Path], look: int = 0) -> Planned:
    """``step`` prepared at the audit's budget (``auto``: at round ``look``), before the
    models are known to answer it."""
    data = step_data(step, roots, config.budget)
    if data.reason:
        return Planned(step, data, reason=data.reason)
    limit, options = _sized(step, config, look)
    run_config = RunConfig(
        suite=step.suite,
        models=[],
        data=data.path,
        limit=limit,
        seed=config.seed,
        batch_size=config.batch_size,
        out=config.out / _folder(step),  # where it ends up; run into the staging folder
        cache=config.cache,
        cache_dir=config.cache_dir,
        options=options,
        command=config.command,
    )
    return Planned(step, data, run_config, prepare(run_config, check_models=False))


def _sized(step: Step, config: AuditConfig, look: int) -> tuple[int | None, dict[str, str]]:
    """The step's limit and options at round ``look``, within ``--max-items``."""
    limit, options = step.size(config.budget, look)
    if config.max_items is not None and limit is not None and limit > config.max_items:
        limit = config.max_items
        if step.size_option:
            options[step.size_option] = str(limit)
    return limit, options


def _folder(step: Step) -> Path:
    """A step's run folder within the audit folder."""
    return Path("suites") / step.name


def _step_fields(step: Step) -> dict:
    """What every record of a step, run or skipped, begins with."""
    return {"step": step.name, "suite": step.suite, "question": step.question}


def _execute(p: Planned, staging: Path, progress: ProgressFactory | None) -> dict:
    """Run planned step ``p`` into its folder in ``staging`` and return its record."""
    finished, record = ran(p, progress, staging / _folder(p.step))
    write_run(finished)
    return record


def ran(
    p: Planned, progress: ProgressFactory | None = None, out: Path | None = None
) -> tuple[Run, dict]:
    """Planned step ``p`` run (nothing written) and its record, timed."""
    clock, cpu = time.perf_counter(), time.process_time()
    finished = run(p.config, progress=progress, subjects=p.subjects, log=lambda m: None,
                   prepared=p.prepared, out=out)  # fmt: skip
    return finished, _ran_record(p, finished, time.perf_counter() - clock,
                                 time.process_time() - cpu)  # fmt: skip


def _ran_record(p: Planned, finished: Run, seconds: float, cpu_seconds: float) -> dict:
    """A step's record in the audit's run.json: its run's own record (run.json of its
    folder) read for what the card shows, where its data came from, its times, and the
    models it left out."""
    ran = finished.record
    return {
        **_step_fields(p.step),
        "status": "ran",
        "folder": _folder(p.step).as_posix(),
        "report": (_folder(p.step) / "report.html").as_posix(),
        "limit": ran["limit"],
        "options": dict(ran["options"]),
        "data": ran["data"],
        **p.data.record(),
        "n_pairs": ran["n_pairs"],
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "models": [s["name"] for s in ran["subjects"]],
        "skipped_models": p.skipped,
        "self_checks": {s["name"]: s["self_check"] for s in ran["subjects"] if "self_check" in s},
        "metrics": finished.metrics,
    }


def _step_card(entry: dict, models: list[dict], config: AuditConfig, edges: Edges) -> dict:
    """One step's card read at the level the auto budget's looks spend."""
    return card_metrics([entry], models, budget=check_budget(AUTO), seed=config.seed,
                        edges=edges, adjustment=config.adjustment, looks=LOOKS)  # fmt: skip


def auto_runs(
    planned: list[Planned],
    config: AuditConfig,
    context: tuple[list, list[Path], list[dict], Edges],
    execute: Callable[[Planned], dict],
    log: Callable[[str], None] = lambda msg: None,
) -> list[dict]:
    """The auto budget: every step's first round, then further rounds where they are most
    worth running (:mod:`faithprobe.audit.auto`) while time is left; the step records
    (``execute`` runs a planned round and returns its record)."""
    subjects, roots, models, edges = context
    clock = time.perf_counter()
    runs: list[dict] = []
    steps: list[AutoStep] = []

    def take(step: AutoStep, p: Planned, look: int) -> None:
        step.planned = p
        entry = execute(p)
        rounds = len(p.step.rounds())
        following = _sized(p.step, config, look + 1)[0] if look + 1 < rounds else None
        step.add(entry, _step_card(entry, models, config, edges), following)
        state = "decided" if step.decided else f"{len(step.needs)} open"
        log(f"    round {look + 1}: {entry['n_pairs']} pairs, {entry['seconds']:.0f} s, {state}")

    def seconds_left() -> float | None:
        if config.time_limit is None:
            return None
        return config.time_limit - (time.perf_counter() - clock)

    for i, p in enumerate(planned, 1):
        if p.reason:
            runs.append(_skipped(p, i, len(planned), log))
            continue
        log(_started(p, i, len(planned)))
        steps.append(AutoStep(len(runs), p))
        runs.append({})
        take(steps[-1], p, 0)
    while (step := next_round(steps, seconds_left())) is not None:
        look = len(step.looks)
        p = plan_step(step.planned.step, config, subjects, roots, look)
        log(f"[round {look + 1}] {p.step.name}: {len(p.prepared.pairs)} pairs, "
            f"{step.expected():.1f} of {len(step.needs)} open questions expected to be decided")  # fmt: skip
        take(step, p, look)
    for step in steps:
        runs[step.index] = step.record()
    return runs


def _started(p: Planned, i: int, n: int) -> str:
    sampled = f" (shipped sample: {p.data.title})" if p.data.source == "sample" else ""
    return f"[{i}/{n}] {p.step.name}: {len(p.prepared.pairs)} pairs{sampled}"


def _skipped(p: Planned, i: int, n: int, log: Callable[[str], None]) -> dict:
    log(f"[{i}/{n}] {p.step.name}: skipped ({p.reason})")
    return {**_step_fields(p.step), "status": "skipped", "reason": p.reason}


def audit(
    config: AuditConfig,
    *,
    progress: ProgressFactory | None = None,
    log: Callable[[str], None] = lambda msg: None,
    subjects: Sequence | None = None,
) -> Path:
    """Run the audit ``config`` describes (``subjects`` overrides ``config.models``: tests,
    library use; they compute in this process) and write its folder whole; returns the
    folder."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    budget = check_budget(config.budget)
    edges = Edges.parse(config.edges, [s.suite for s in config.steps])
    out = check_target(config.out, force=config.force)
    specs: list[ModelSpec] = []
    if subjects is None:
        if not config.models:
            raise UsageError("give at least one --model")
        specs = [model_spec(m) for m in config.models]  # parsed once
        check_placed(config.executor, specs)
    check_sized(budget.name, config.time_limit, config.max_items)
    on_ray = subjects is None and config.executor.name == "ray"
    if subjects is None and not on_ray:
        subjects = [load_subject(s, batch_size=config.batch_size, defer=True) for s in specs]
    check_unique_names([s.name for s in (specs if on_ray else subjects)])
    roots = data_roots(config.data_dir)
    auto = config.budget == AUTO
    with replaced_whole(out) as staging:
        if on_ray:
            runs, models, executor = _on_ray(config, specs, roots, edges, staging, progress, log)
        else:
            models = [{"spec": str(spec), "name": s.name, "fingerprint": s.fingerprint}
                      for spec, s in zip(config.models or [s.name for s in subjects], subjects,
                                         strict=True)]  # fmt: skip
            planned = [plan_step(step, config, list(subjects), roots) for step in config.steps]
            runs, executor = _in_process(planned, config, (list(subjects), roots, models, edges),
                                         staging, progress, log), {"name": "inprocess"}  # fmt: skip
        metrics = card_metrics(runs, models, budget=budget, seed=config.seed, edges=edges,
                               adjustment=config.adjustment, looks=LOOKS if auto else 1)  # fmt: skip
        write_json(staging / "metrics.json", metrics)
        finished = datetime.now(UTC).isoformat(timespec="seconds")
        record = _audit_record(config, edges, roots, models, runs)
        record = {**record, **executor, "started": started, "finished": finished}
        write_json(staging / "run.json", record)
        write_card(staging)
    return out


def _in_process(
    planned: list[Planned],
    config: AuditConfig,
    context: tuple[list, list[Path], list[dict], Edges],
    staging: Path,
    progress: ProgressFactory | None,
    log: Callable[[str], None],
) -> list[dict]:
    """The step records of the planned steps run one after another in this process."""
    if config.budget == AUTO:
        return auto_runs(planned, config, context, lambda p: _execute(p, staging, progress), log)
    runs = []
    for i, p in enumerate(planned, 1):
        if p.reason:
            runs.append(_skipped(p, i, len(planned), log))
            continue
        log(_started(p, i, len(planned)))
        runs.append(_execute(p, staging, progress))
    return runs


def _on_ray(
    config: AuditConfig,
    specs: list[ModelSpec],
    roots: list[Path],
    edges: Edges,
    staging: Path,
    progress: ProgressFactory | None,
    log: Callable[[str], None],
) -> tuple[list[dict], list[dict], dict]:
    """The step records, the card's models (those that loaded) and run.json's executor
    record of an audit on Ray (:mod:`faithprobe.audit.cluster`). At a fixed budget every
    step is made first and every model then runs all of them, the models at once; at
    ``auto`` the models load first and stay loaded for the rounds."""
    cache_path = answers_file(config.cache_dir) if config.cache else None
    auto = config.budget == AUTO
    # at a fixed budget every step is made (and its data checked) before Ray starts
    planned = [] if auto else [prepare_step(step, config, roots) for step in config.steps]
    with RayAudit(config.executor, specs, batch_size=config.batch_size, cache_path=cache_path,
                  progress=progress, log=log, keep=auto) as cluster:  # fmt: skip
        if auto:
            subjects = cluster.load_all()
            planned = [plan_step(step, config, subjects, roots) for step in config.steps]
            context = (subjects, roots, cluster.models(), edges)
            execute = lambda p: _execute_on_ray(cluster, [p], staging, progress)[0]  # noqa: E731
            runs = auto_runs(planned, config, context, execute, log)
        else:
            runs = _execute_on_ray(cluster, planned, staging, progress, log)
        executor = {"executor": cluster.record(), "failed_models": cluster.failed_models()}
        return runs, cluster.models(), executor


def _execute_on_ray(
    cluster: RayAudit,
    planned: list[Planned],
    staging: Path,
    progress: ProgressFactory | None,
    log: Callable[[str], None] = lambda msg: None,
) -> list[dict]:
    """Run the planned steps' units on Ray, the models at once, and write each step's
    folder in ``staging`` from its models' rows; the step records."""
    n = len(planned)
    records = {i: _skipped(p, i, n, log) for i, p in enumerate(planned, 1) if p.reason}
    live = [(i, p) for i, p in enumerate(planned, 1) if not p.reason]
    for i, p in live:
        log(_started(p, i, n))
    cache = AnswerCache(cluster.cache_path)  # for the models a suite asks to make its pairs
    try:
        begun = [begin(p.config, p.prepared, cache, progress) for _, p in live]
        answered = cluster.answer(begun)
        for (i, p), b, units in zip(live, begun, answered, strict=True):
            p.skipped = [{"name": spec.name, "reason": u.skipped}
                         for spec, u in units if u.skipped is not None]  # fmt: skip
            ran = [u for _, u in units if u.skipped is None]
            if not ran:
                p.reason = _nobody(p.skipped)
                records[i] = _skipped(p, i, n, log)
                continue
            cpu = time.process_time()
            parts = [(u.rows, u.entry) for u in ran]
            finished = b.finish(parts, cluster.record(), staging / _folder(p.step))
            write_run(finished)
            seconds = max(u.seconds for u in ran)
            records[i] = _ran_record(p, finished, seconds, time.process_time() - cpu)
    finally:
        cache.close()
    return [records[i] for i in range(1, n + 1)]


def _audit_record(
    config: AuditConfig, edges: Edges, roots: list[Path], models: list[dict], runs: list[dict]
) -> dict:
    """The audit's run.json, but for its times: what was run, with each step's record (its
    own run.json is in its folder)."""
    return {
        "kind": "audit",
        "command": config.command,
        "budget": config.budget,
        "seed": config.seed,
        "edges": dict(edges.overrides),
        "adjustment": config.adjustment,
        "time_limit": config.time_limit,
        "max_items": config.max_items,
        "batch_size": config.batch_size,
        "data_dirs": [str(r) for r in roots],
        "cache": str(answers_file(config.cache_dir)) if config.cache else None,
        "models": models,
        "steps": [{k: v for k, v in r.items() if k != "metrics"} for r in runs],
        "versions": package_versions(),
    }
