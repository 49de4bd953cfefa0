"""Run a suite end to end and write its run folder.

    pairs -> unique requests -> each subject (through the answer cache) -> results table
    -> metrics -> results.parquet, metrics.json, run.json, tables/, plots/, report.html

Every file is written to a temporary name and renamed into place, and only after all
answers are in, so a failed or interrupted run never leaves a half-written file behind; the
answers computed so far are already in the cache, so running the same command again
resumes where it stopped.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pandas as pd

from faithprobe import __version__
from faithprobe.executors import EXECUTORS, RayConfig, RayExecutor
from faithprobe.subjects import load_subject
from faithprobe.subjects.base import Subject
from faithprobe.subjects.cache import AnswerCache, default_cache_dir
from faithprobe.subjects.cached import CachedSubject
from faithprobe.subjects.openai_compat import EndpointConfig
from faithprobe.suites import Suite, get_suite

METRICS_SCHEMA_VERSION = 1
# ``start_task(description, total)`` returns ``advance(k)``
ProgressFactory = Callable[[str, int], Callable[[int], None]]


@dataclass
class RunConfig:
    suite: str
    models: Sequence[str] = ("embedded",)
    data: Path | None = None
    limit: int | None = None
    seed: int = 0
    batch_size: int = 16
    out: Path | None = None
    cache: bool = True
    cache_dir: Path | None = None
    options: dict[str, object] = field(default_factory=dict)  # suite options
    endpoint: EndpointConfig = field(default_factory=EndpointConfig)  # for openai: models
    executor: str = "inprocess"  # where subjects compute: "inprocess" or "ray"
    ray: RayConfig = field(default_factory=RayConfig)  # for executor="ray"
    command: str = field(default_factory=lambda: " ".join(sys.argv))


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "faithprobe": __version__}
    for pkg in ("torch", "transformers", "tokenizers", "numpy", "pandas", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            continue
    return out


def _clean(value):
    """JSON without NaN: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _clean(value.item())
    return value


def write_json(path: Path, payload: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(_clean(payload), indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def write_parquet(path: Path, frame: pd.DataFrame) -> None:
    tmp = path.with_name(path.name + ".tmp")
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)


class ModelPool:
    """The models a suite asks while it makes its pairs (``Suite.complete``: e.g. the
    generator of TS-R+Aug sentences), each loaded once and asked through the run's answer
    cache, so those calls resume and repeat for free like the subjects' own."""

    def __init__(
        self,
        cache: AnswerCache,
        batch_size: int,
        progress: ProgressFactory | None = None,
        endpoint: EndpointConfig | None = None,
    ) -> None:
        self.cache, self.batch_size, self.progress = cache, batch_size, progress
        self.endpoint = endpoint or EndpointConfig()
        self._loaded: dict[str, CachedSubject] = {}

    def get(self, spec: str) -> CachedSubject:
        if spec not in self._loaded:
            subject = load_subject(spec, batch_size=self.batch_size, endpoint=self.endpoint)
            self._loaded[spec] = CachedSubject(subject, self.cache)
        return self._loaded[spec]

    def ask(self, spec: str, requests: Sequence, what: str) -> list:
        """``requests`` answered by the model ``spec``, with a progress bar named ``what``."""
        subject = self.get(spec)
        advance = (
            self.progress(f"{what} ({subject.name})", len(requests)) if self.progress else None
        )
        return subject.answer(requests, advance)

    def info(self) -> list[dict]:
        return [
            {
                "spec": spec,
                "name": s.name,
                "fingerprint": s.fingerprint,
                "computed_requests": s.computed,
            }
            for spec, s in self._loaded.items()
        ]


def answer_all(suite: Suite, pairs, subject: Subject, progress: ProgressFactory | None) -> dict:
    """Scores for every example the pairs use, keyed by example id, and the answers to a
    suite's extra requests (``Suite.extra_requests``) keyed by (example id, name)."""
    examples = {}
    for p in pairs:
        examples.setdefault(p.original.id, p.original)
        examples.setdefault(p.intervened.id, p.intervened)
    keys, requests = [], []
    for i in sorted(examples):
        keys.append(i)
        requests.append(suite.request(examples[i], subject))
        for name, extra in suite.extra_requests(examples[i], subject).items():
            keys.append((i, name))
            requests.append(extra)
    subject.check_accepts(requests)  # before any work: name what the model cannot answer
    advance = progress(subject.name, len(requests)) if progress else None
    scored = subject.answer(requests, advance)
    return dict(zip(keys, scored, strict=True))


def compute_metrics(suite: Suite, results: pd.DataFrame, seed: int, subjects: list[dict]) -> dict:
    return {
        "schema_version": METRICS_SCHEMA_VERSION,
        "suite": suite.name,
        "seed": seed,
        "subjects": [{"name": s["name"], "fingerprint": s["fingerprint"]} for s in subjects],
        **suite.metrics(results, seed),
    }


def load_subjects(config: RunConfig, stack: ExitStack) -> tuple[list[Subject], dict]:
    """The subjects ``config.models`` name, computed where ``config.executor`` says (the Ray
    executor's actors live until ``stack`` closes), and the executor's settings."""
    if config.executor not in EXECUTORS:
        raise ValueError(f"unknown executor {config.executor!r}; choose from {EXECUTORS}")
    load, executor = load_subject, {"name": "inprocess"}
    if config.executor == "ray":
        ray = stack.enter_context(RayExecutor(config.ray))
        load, executor = ray.subject, ray.describe()
    subjects = [
        load(m, batch_size=config.batch_size, endpoint=config.endpoint) for m in config.models
    ]
    return subjects, executor


def run(
    config: RunConfig,
    *,
    progress: ProgressFactory | None = None,
    subjects: Sequence[Subject] | None = None,
    log: Callable[[str], None] = lambda msg: None,
) -> Path:
    """Run ``config``; ``subjects`` overrides ``config.models`` (library use, tests)."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    suite = get_suite(config.suite, config.options)
    cache_path = (config.cache_dir or default_cache_dir()) / "answers.sqlite"
    cache = AnswerCache(cache_path if config.cache else None)
    rows, info = [], []
    with ExitStack() as stack:
        stack.callback(cache.close)
        pairs = suite.sample(suite.pairs(config.data, config.seed), config.limit, config.seed)
        pool = ModelPool(cache, config.batch_size, progress, config.endpoint)
        pairs = suite.complete(pairs, pool)
        log(f"{len(pairs)} pairs ({suite.name}, seed {config.seed})")
        executor = {"name": "inprocess"}  # subjects given by the caller compute here
        if subjects is None:
            subjects, executor = load_subjects(config, stack)
        names = [s.name for s in subjects]
        if len(set(names)) != len(names):
            raise ValueError(f"two subjects share a name: {names}")
        for subject in subjects:
            cached = CachedSubject(subject, cache)
            before = subject.usage()
            answers = answer_all(suite, pairs, cached, progress)
            rows += suite.rows(pairs, subject, answers)
            entry = {
                "name": subject.name,
                "fingerprint": subject.fingerprint,
                "kind": subject.kind,
                **subject.describe(),
                "computed_requests": cached.computed,
                "cached_requests": len(answers) - cached.computed,
            }
            if before is not None:  # what this run cost (tokens, HTTP requests)
                entry["usage"] = {k: v - before.get(k, 0) for k, v in subject.usage().items()}
            info.append(entry)
    results = pd.DataFrame(rows)
    metrics = compute_metrics(suite, results, config.seed, info)

    out = config.out or Path("runs") / f"{suite.name}-{started.replace(':', '')}"
    out.mkdir(parents=True, exist_ok=True)
    write_parquet(out / "results.parquet", results)
    write_json(out / "metrics.json", metrics)
    write_json(
        out / "run.json",
        {
            "command": config.command,
            "suite": suite.name,
            "seed": config.seed,
            "options": config.options,
            "limit": config.limit,
            "batch_size": config.batch_size,
            "executor": executor,
            "data": str(config.data) if config.data else None,
            "cache": str(cache_path) if config.cache else None,
            "versions": _versions(),
            "subjects": info,
            "pair_models": pool.info(),
            "started": started,
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "n_pairs": len(pairs),
            "data_record": suite.data_record(),
        },
    )
    from faithprobe.report import build_report

    build_report(out)
    return out


def rebuild(run_dirs: Sequence[Path], out: Path | None = None) -> Path:
    """Recompute metrics from results tables (one run, or several runs merged to compare
    their models) and rebuild the report."""
    from faithprobe.report import build_report

    if not run_dirs:
        raise ValueError("give at least one run folder")
    for d in run_dirs:
        if not (d / "results.parquet").is_file():
            raise FileNotFoundError(f"{d}: no results.parquet (is it a faithprobe run folder?)")
    runs = [json.loads((d / "run.json").read_text()) for d in run_dirs]
    suites = {r["suite"] for r in runs}
    seeds = {r["seed"] for r in runs}
    if len(suites) != 1:
        raise ValueError(f"runs of different suites cannot be merged: {sorted(suites)}")
    target = out or run_dirs[0]
    results = pd.concat([pd.read_parquet(d / "results.parquet") for d in run_dirs])
    results = results.drop_duplicates(["subject", "pair_id"]).reset_index(drop=True)
    subjects = list({s["name"]: s for r in runs for s in r["subjects"]}.values())
    options = [r.get("options") or {} for r in runs]
    if any(o != options[0] for o in options):
        raise ValueError(f"runs with different suite options cannot be merged: {options}")
    suite = get_suite(suites.pop(), options[0])
    suite.restore_data_record(runs[0].get("data_record") or {})
    seed = min(seeds)
    target.mkdir(parents=True, exist_ok=True)
    if len(run_dirs) > 1 or target != run_dirs[0]:
        write_parquet(target / "results.parquet", results)
        write_json(
            target / "run.json",
            {
                **runs[0],
                "command": " ".join(sys.argv),
                "subjects": subjects,
                "merged_from": [str(d) for d in run_dirs],
                "n_pairs": int(results["pair_id"].nunique()),
            },
        )
    write_json(target / "metrics.json", compute_metrics(suite, results, seed, subjects))
    build_report(target)
    return target
