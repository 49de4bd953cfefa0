"""Run a suite end to end:

    pairs -> unique requests -> each subject (through the answer cache) -> results table
    -> metrics

:func:`run` returns a :class:`Run`; :func:`faithprobe.report.write_run` writes its folder
(results.parquet, metrics.json, run.json, tables/, plots/, report.html) whole. The answers
are in the cache as soon as they are computed, so a failed or interrupted run resumes where
it stopped when the same command runs again. Everything that can be checked without a
model (options, the output and cache folders, the data and its pairs) is checked before any
model is loaded.
"""

from __future__ import annotations

import io
import json
import platform
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from faithprobe import __version__, json_values
from faithprobe.atomic import json_text
from faithprobe.errors import DataError, UsageError
from faithprobe.executors import ExecutorSpec, RayExecutor, check_placed
from faithprobe.interventions import Pair
from faithprobe.memo import Memo, fingerprint, module_fingerprint
from faithprobe.options import record
from faithprobe.output_folders import check_cache_dir, check_target
from faithprobe.records import Origin
from faithprobe.subjects import (
    CannotAnswer,
    ModelSpec,
    check_unique_names,
    load_subject,
    model_spec,
)
from faithprobe.subjects.answer_cache import AnswerCache, answers_file
from faithprobe.subjects.backends import answering
from faithprobe.subjects.base import Subject
from faithprobe.subjects.cached_subject import CachedSubject
from faithprobe.suite_protocol import COMMON_COLUMNS, Suite, get_suite

METRICS_SCHEMA_VERSION = 1
# ``start_task(description, total)`` returns ``advance(k)``
ProgressFactory = Callable[[str, int], Callable[[int], None]]


@dataclass
class RunConfig:
    suite: str
    models: Sequence[str | ModelSpec] = ("embedded",)  # strings are parsed once, on entry
    data: Path | None = None
    limit: int | None = None
    seed: int = 0
    batch_size: int = 16
    out: Path | None = None
    force: bool = False  # replace an ``out`` folder that is not a run folder
    cache: bool = True
    cache_dir: Path | None = None
    options: dict[str, object] = field(default_factory=dict)  # suite options
    executor: ExecutorSpec = field(default_factory=ExecutorSpec)  # where subjects compute
    command: str = field(default_factory=lambda: " ".join(sys.argv))


@dataclass(frozen=True)
class Run:
    """A finished run, before its folder is written: where it goes, the results table,
    the metrics and the record that becomes ``run.json``."""

    out: Path
    results: pd.DataFrame
    metrics: dict
    record: dict


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "faithprobe": __version__}
    for pkg in ("torch", "transformers", "tokenizers", "numpy", "pandas", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            continue
    return out


class ModelPool:
    """The models a suite asks while it makes its pairs (``Suite.complete``: e.g. the
    generator of TS-R+Aug sentences), each loaded once and asked through the run's answer
    cache, so those calls resume and repeat for free like the subjects' own."""

    def __init__(
        self, cache: AnswerCache, batch_size: int, progress: ProgressFactory | None = None
    ) -> None:
        self.cache, self.batch_size, self.progress = cache, batch_size, progress
        self._loaded: dict[str, CachedSubject] = {}

    def get(self, spec: str) -> CachedSubject:
        if spec not in self._loaded:
            subject = load_subject(spec, batch_size=self.batch_size, defer=True)
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


def requests_of(suite: Suite, pairs, subject: Subject) -> tuple[list, list, dict]:
    """What ``subject`` is asked about the pairs: (the keys its answers are found by, the
    requests, the example each request was first made from). An example's own request is
    keyed by its id, a suite's extra requests (``Suite.extra_requests``) by (example id,
    name); examples in id order."""
    examples = {}
    for p in pairs:
        examples.setdefault(p.original.id, p.original)
        examples.setdefault(p.intervened.id, p.intervened)
    keys, requests, shown = [], [], {}
    for i in sorted(examples):
        extras = suite.extra_requests(examples[i], subject)
        asked = [(i, suite.request(examples[i], subject))]
        asked += [((i, name), extra) for name, extra in extras.items()]
        for key, request in asked:
            keys.append(key)
            requests.append(request)
            shown.setdefault(request, examples[i])
    return keys, requests, shown


def origins_of(pairs: Sequence[Pair]) -> dict[str, Origin]:
    """Intervened example id -> its :class:`~faithprobe.records.Origin`, for the examples
    the pairs made (not dropped, not an original themselves); an example several pairs made
    takes the first pair's by pair id."""
    originals = {p.original.id for p in pairs}
    out: dict[str, Origin] = {}
    for p in sorted(pairs, key=lambda p: p.id):
        made = p.intervened.id
        if not p.dropped and made not in originals:
            out.setdefault(made, Origin(p.original, p.intervention))
    return out


def check_accepts(subject: Subject, requests: Sequence) -> None:
    """:meth:`Subject.check_accepts`, its refusal naming the backends that answer the kind
    refused (:func:`~faithprobe.subjects.backends.answering`)."""
    try:
        subject.check_accepts(requests)
    except CannotAnswer as err:
        raise err.naming(answering(err.kind)) from None


def answer_all(suite: Suite, pairs, subject: Subject, progress: ProgressFactory | None) -> dict:
    """Scores for every example the pairs use, keyed as :func:`requests_of` keys them, and
    the answers to the suite's follow-up requests (``Suite.follow_ups``, asked in rounds
    until none is new), keyed as the suite keys them. A subject that reads examples
    (``Subject.reads_examples``: a reference model) is shown the example behind each request
    first, the first by id where several make one (a follow-up's: its key's example)."""
    keys, requests, shown = requests_of(suite, pairs, subject)
    check_accepts(subject, requests)  # before any work: name what the model cannot answer
    origins = origins_of(pairs)
    if subject.reads_examples:
        subject.read_examples(shown, origins)
    advance = progress(subject.name, len(requests)) if progress else None
    answers = dict(zip(keys, subject.answer(requests, advance), strict=True))
    examples = {e.id: e for p in pairs for e in (p.original, p.intervened)}
    while asked := {
        k: r for k, r in suite.follow_ups(pairs, subject, answers).items() if k not in answers
    }:
        follow = list(asked.values())
        check_accepts(subject, follow)
        if subject.reads_examples:
            for key, request in asked.items():
                shown.setdefault(request, examples[key[0]])
            subject.read_examples(shown, origins)
        advance = progress(f"{subject.name} (follow-ups)", len(follow)) if progress else None
        answers.update(zip(asked, subject.answer(follow, advance), strict=True))
    return answers


def result_rows(suite: Suite, pairs: Sequence[Pair], subject: Subject, answers: dict) -> list[dict]:
    """The results table's rows for one subject: the columns every suite shares
    (:data:`~faithprobe.suite_protocol.COMMON_COLUMNS`, the expectation judged on the suite's
    :meth:`~faithprobe.suite_protocol.Suite.behaviour`), then the suite's own."""
    by_id = {p.id: p for p in pairs}
    out = []
    for row in suite.rows(pairs, subject, answers):
        pair = by_id[row["pair_id"]]
        if clash := set(row) & set(COMMON_COLUMNS) - {"pair_id"}:
            raise ValueError(f"suite {suite.name} writes the runner's columns {sorted(clash)}")
        behaviour = suite.behaviour(pair, row)
        common = {
            "pair_id": pair.id,
            "original_id": pair.original.id,
            "intervened_id": None if pair.dropped else pair.intervened.id,
            "subject": subject.name,
            "subject_fingerprint": subject.fingerprint,
            "intervention": pair.intervention,
            "expectation": pair.expectation.name,
            "expectation_met": None if behaviour is None else pair.expectation.met(behaviour),
            "dropped_reason": pair.dropped,
        }
        out.append(common | row)
    return out


def compute_metrics(suite: Suite, results: pd.DataFrame, seed: int, subjects: list[dict]) -> dict:
    return {
        "schema_version": METRICS_SCHEMA_VERSION,
        "suite": suite.name,
        "seed": seed,
        "subjects": [{"name": s["name"], "fingerprint": s["fingerprint"]} for s in subjects],
        "options": record(suite.options),
        **suite.metrics(results, seed),
    }


def memo_dir(run_record: Mapping[str, Any]) -> Path | None:
    """Where a run's derived outputs (metrics, figures) are remembered
    (:mod:`faithprobe.memo`): beside its answer cache; nowhere without one."""
    cache = run_record.get("cache")
    return Path(cache).parent / "memo" if cache else None


def remembered_metrics(
    suite: Suite, results: pd.DataFrame, seed: int, subjects: list[dict], memo: Path | None
) -> dict:
    """:func:`compute_metrics`, remembered in ``memo`` by the fingerprint of the results
    table, seed, options, subjects and what reading the data found (:meth:`Suite.data_record`,
    which metrics may show), and of the code: a re-run whose answers are all cached has the
    same results, so its bootstrap intervals are not drawn again. Either way the metrics come
    back as their JSON reads (NaN as None), the form metrics.json holds."""
    if memo is None:
        return compute_metrics(suite, results, seed, subjects)
    table = io.BytesIO()
    results.to_parquet(table, index=False)
    key = fingerprint(
        module_fingerprint(type(suite).__module__),
        suite.name,
        str(seed),
        json.dumps(record(suite.options), sort_keys=True, default=str),
        json.dumps([[s["name"], s["fingerprint"]] for s in subjects]),
        json.dumps(suite.data_record(), sort_keys=True, default=str),
        table.getvalue(),
    )
    memos = Memo(memo / "metrics", ".json")
    if (hit := memos.get(key)) is not None:
        try:
            return json_values.loads(hit.decode("utf-8"))
        except ValueError:  # not what json_text writes (a number faithprobe never writes):
            pass  # changed outside faithprobe, so computed again and replaced
    hit = json_text(compute_metrics(suite, results, seed, subjects)).encode()
    memos.put(key, hit)
    return json.loads(hit)


def load_subjects(config: RunConfig, stack: ExitStack) -> tuple[Iterator[Subject], dict]:
    """The subjects ``config.models`` name, one after another, computed where
    ``config.executor`` says, and the executor's record. In process, a local model is
    loaded only if a request misses the cache. On Ray a model's actors start when its turn
    comes and are killed once it has answered, so a cluster with room for one model's
    actors runs them all (the Ray executor itself lives until ``stack`` closes)."""
    if config.executor.name != "ray":
        loaded = [load_subject(m, batch_size=config.batch_size, defer=True) for m in config.models]
        return iter(loaded), {"name": "inprocess"}
    ray = stack.enter_context(RayExecutor(config.executor.settings))
    ray.check_fits({m.name: config.executor.placed(m.name, m.text) for m in config.models})

    def in_turn() -> Iterator[Subject]:
        for m in config.models:
            settings = config.executor.placed(m.name, m.text)
            subject = ray.subject(m, batch_size=config.batch_size, settings=settings)
            yield subject
            subject.close()

    return in_turn(), {**config.executor.record(), **ray.describe()}


def _check(config: RunConfig, suite: Suite, models: Sequence[ModelSpec]) -> tuple[Path, Path]:
    """The run folder and the cache file, after checking what can fail before any work."""
    check_placed(config.executor, models)
    if config.data is not None and not Path(config.data).exists():
        raise DataError(config.data, "no such data file or folder")
    check_cache_dir(config.cache_dir)
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H%M%S")
    out = check_target(config.out or Path("runs") / f"{suite.name}-{started}", force=config.force)
    return out, answers_file(config.cache_dir)


def _no_pairs(suite: Suite, data: Path | None) -> DataError | UsageError:
    """Why a run has nothing to run, naming the data and what the suite dropped."""
    dropped = suite.drop_summary()
    why = f"no {suite.items_noun} to run" + (f" (dropped: {dropped})" if dropped else "")
    return DataError(data, why) if data is not None else UsageError(f"generated data: {why}")


def _truncated(answers: dict) -> int:
    """How many answers say their input was cut to fit the model."""
    return sum(bool(getattr(a, "truncated", False)) for a in answers.values())


@dataclass(frozen=True)
class Prepared:
    """What a run needs before any model: its suite (which may hold what reading the data
    found), its sampled pairs, the run folder and the cache file, all checked."""

    suite: Suite
    pairs: list[Pair]
    out: Path
    cache_path: Path


def prepare(config: RunConfig, *, check_models: bool = True) -> Prepared:
    """Check ``config`` and sample its pairs, before any model is loaded."""
    suite = get_suite(config.suite, config.options)
    if check_models:  # parsed once, here: what follows takes the specs
        config.models = [model_spec(m) for m in config.models]
    out, cache_path = _check(config, suite, config.models if check_models else ())
    pairs = suite.sampled_pairs(config.data, config.limit, config.seed)
    if not pairs:
        raise _no_pairs(suite, config.data)
    return Prepared(suite, pairs, out, cache_path)


def cannot_answer(suite: Suite, pairs: Sequence[Pair], subject: Subject) -> str | None:
    """Why ``subject`` cannot answer what ``suite`` asks (read off the requests of the first
    pair, without computing anything), or None if it can."""
    pair = pairs[0]
    try:
        requests = []
        for example in (pair.original, pair.intervened):
            requests.append(suite.request(example, subject))
            requests += suite.extra_requests(example, subject).values()
        check_accepts(subject, requests)
    except UsageError as err:
        return str(err)
    return None


def subject_rows(
    suite: Suite,
    pairs: Sequence[Pair],
    subject: Subject,
    cache: AnswerCache,
    progress: ProgressFactory | None = None,
) -> tuple[list[dict], dict]:
    """One subject's part of a run: its rows of the results table and its entry in
    run.json's ``subjects`` (what it computed, what the cache held, what it cost)."""
    # a subject whose answers depend on more than the request is asked directly
    cached = CachedSubject(subject, cache) if subject.cacheable else None
    before = subject.usage()
    answers = answer_all(suite, pairs, subject if cached is None else cached, progress)
    computed = cached.computed if cached else len(answers)
    entry = {
        "name": subject.name,
        "fingerprint": subject.fingerprint,
        "kind": subject.kind,
        **subject.describe(),
        "computed_requests": computed,
        "cached_requests": len(answers) - computed,
        "truncated_requests": _truncated(answers),
    }
    if before is not None:  # what this run cost (tokens, HTTP requests)
        entry["usage"] = {k: v - before.get(k, 0) for k, v in subject.usage().items()}
    return result_rows(suite, pairs, subject, answers), entry


@dataclass
class Begun:
    """A run whose pairs are complete (:meth:`Suite.complete`), waiting for its subjects'
    rows (:func:`subject_rows`); :meth:`finish` makes the :class:`Run`."""

    config: RunConfig
    prepared: Prepared
    pairs: list[Pair]
    pool: ModelPool  # kept: a suite may ask its models again for follow-ups
    started: str

    def finish(self, parts: Sequence[tuple[list[dict], dict]], executor: dict,
               out: Path | None = None) -> Run:  # fmt: skip
        """The run of the subjects' ``parts`` (rows, entry), in the subjects' order."""
        config, suite = self.config, self.prepared.suite
        results = pd.DataFrame([row for rows, _ in parts for row in rows])
        info = [entry for _, entry in parts]
        cache_path = self.prepared.cache_path
        memo = cache_path.parent / "memo" if config.cache else None
        metrics = remembered_metrics(suite, results, config.seed, info, memo)
        record = {
            "command": config.command,
            "suite": suite.name,
            "seed": config.seed,
            "options": config.options,
            "limit": config.limit,
            "batch_size": config.batch_size,
            "executor": executor,
            "data": str(config.data) if config.data else None,
            "cache": str(cache_path) if config.cache else None,
            "versions": package_versions(),
            "subjects": info,
            "pair_models": self.pool.info(),
            "started": self.started,
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "n_pairs": len(self.pairs),
            "data_record": suite.data_record(),
        }
        return Run(out or self.prepared.out, results, metrics, record)


def begin(
    config: RunConfig,
    prepared: Prepared,
    cache: AnswerCache,
    progress: ProgressFactory | None = None,
    log: Callable[[str], None] = lambda msg: None,
) -> Begun:
    """The pairs of ``prepared`` completed by the suite, asking the models it needs for
    them (:class:`ModelPool`) through ``cache``."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    pool = ModelPool(cache, config.batch_size, progress)
    pairs = prepared.suite.complete(prepared.pairs, pool)
    log(f"{prepared.suite.pairs_note(pairs)} ({prepared.suite.name}, seed {config.seed})")
    return Begun(config, prepared, pairs, pool, started)


def run(
    config: RunConfig,
    *,
    progress: ProgressFactory | None = None,
    subjects: Sequence[Subject] | None = None,
    log: Callable[[str], None] = lambda msg: None,
    prepared: Prepared | None = None,
    out: Path | None = None,
) -> Run:
    """Run ``config`` (``subjects`` overrides ``config.models``: library use, tests;
    ``prepared``: what :func:`prepare` made of ``config`` already; ``out``: the run folder,
    if not the one ``prepared`` checked: an audit writes each step first into its staging
    folder, which replaces the audit folder whole); the run folder is written by
    :func:`faithprobe.report.write_run`."""
    if prepared is None:
        prepared = prepare(config, check_models=subjects is None)
    cache = AnswerCache(prepared.cache_path if config.cache else None)
    with ExitStack() as stack:
        stack.callback(cache.close)
        begun = begin(config, prepared, cache, progress, log)
        executor = {"name": "inprocess"}  # subjects given by the caller compute here
        if subjects is None:
            check_unique_names(m.name for m in config.models)
            subjects, executor = load_subjects(config, stack)
        else:
            check_unique_names(s.name for s in subjects)
        parts = [subject_rows(prepared.suite, begun.pairs, s, cache, progress) for s in subjects]
    return begun.finish(parts, executor, out)
