"""The ``faithprobe`` command: list, run, report, generate."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from faithprobe import quiet
from faithprobe.console import (
    command_line,
    log,
    out_console,
    print_error,
    print_rows,
    print_table,
    progress_bars,
    set_arguments,
    user_errors,
)
from faithprobe.errors import UsageError, excerpt
from faithprobe.executors.settings import GPUS, WORKERS
from faithprobe.numbers import SEEDS, bound_integers, number_option, ranged
from faithprobe.options import check_among
from faithprobe.paths import Kind, argument, path_option
from faithprobe.subcommands import command_group
from faithprobe.urls import redact_command

if TYPE_CHECKING:
    from faithprobe.audit.execute import AuditConfig

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# ours are the progress bars that count items; set before transformers is imported, this
# hides its weight-loading bars (and the hub's) as logging.disable_progress_bar() would
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

RESUME = "answers computed so far are cached; run the same command again to resume"


class Commands(TyperGroup):
    """The ``faithprobe`` command group. Click's own usage errors (a missing argument, an
    unknown option, a bad value) are printed like the project's errors: one plain line,
    exit status 2. Every integer option of every command has a range, its own or that of
    the integers faithprobe takes (:func:`~faithprobe.numbers.bound_integers`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        bound_integers(self)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        set_arguments(sys.argv[1:] if args is None else [str(a) for a in args])
        try:
            if not standalone_mode:
                return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            try:
                code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            except typer.TyperException as err:  # click's usage errors
                ctx = getattr(err, "ctx", None)
                hint = f" (see '{ctx.command_path} --help')" if ctx else ""
                print_error(err.format_message() + hint)
                sys.exit(err.exit_code)
            except typer.Abort:
                print_error("aborted")
                sys.exit(1)
            sys.exit(code if isinstance(code, int) else 0)
        finally:
            quiet.restore()  # a command run in-process (by tests) leaves no filters behind


app = command_group(
    "Test whether language models use the information they should.",
    cls=Commands,
    pretty_exceptions_enable=False,  # a bug shows Python's own traceback, nothing hidden
)


@app.command("list")
def list_things() -> None:
    """Suites, interventions, dataset loaders and generators, model backends, embedded
    models (and whether they are installed)."""
    with user_errors("nothing was listed"):  # e.g. faithprobe's metadata missing: one line
        _print_lists()


def _print_lists() -> None:
    from faithprobe.datasets import LOADERS
    from faithprobe.datasets.schema import declared, schemas_for
    from faithprobe.executors.settings import EXECUTOR_SETTINGS
    from faithprobe.generators import GENERATORS
    from faithprobe.interventions import available
    from faithprobe.options import describe
    from faithprobe.subjects import BACKENDS
    from faithprobe.subjects.gguf.embedded import MODELS
    from faithprobe.suite_protocol import SUITES

    sections = {
        "suites": {e.name: e.description for e in SUITES.entries()},
        "suite options (--option KEY=VALUE)": {
            f"{e.name}: {key}": f"{text} (default {default!r})"
            for e in SUITES.entries()
            for key, default, text in describe(SUITES.get(e.name).options)
        },
        "interventions": {
            i.name: f"changes {i.changes}; holds {i.holds}; expects: {i.expectation.name}"
            for i in available()
        },
        "--data formats (fields: faithprobe data schema SUITE)": {
            suite: "; ".join(s.name for s in schemas_for(suite)) for suite in declared()
        },
        "dataset loaders": {e.name: e.description for e in LOADERS.entries()},
        "generators": {e.name: e.description for e in GENERATORS.entries()},
        "generator options (generate NAME --option KEY=VALUE)": {
            f"{e.name}: {key}": f"{text} (default {default!r})"
            for e in GENERATORS.entries()
            for key, default, text in describe(GENERATORS.get(e.name).config)
        },
        "model backends": {e.name: _backend_line(e.target) for e in BACKENDS.entries()},
        "model backend settings (--model-option KEY=VALUE)": _backend_settings(
            BACKENDS.entries(), describe
        ),
        "executor settings (--executor NAME,KEY=VALUE; ray: --placement MODEL@KEY=VALUE)": {
            f"{name}: {key}": f"{text} (default {default!r})"
            for name, settings in EXECUTOR_SETTINGS.items()
            for key, default, text in describe(settings)
        },
        "embedded models (--model NAME)": {
            m.name: f"{m.display}; terms: {m.terms}; "
            + ("installed" if m.installed else f"not installed: {m.install}")
            for m in MODELS.values()
        },
    }
    for title, entries in sections.items():
        table = Table(title=title, show_header=False, title_justify="left")
        table.add_column("name", style="bold", no_wrap=True)
        table.add_column("description")
        for name, text in entries.items():
            table.add_row(Text(name), Text(text))
        out_console.print(table)


def _backend_settings(entries, describe) -> dict[str, str]:
    """Each backend setting once, with the backends that have it (the transformers
    backends share theirs): ``"BACKENDS: KEY"`` -> its help and default."""
    owners: dict[tuple, list[str]] = {}
    for e in entries:
        for key, default, text in describe(e.target.settings):
            owners.setdefault((key, repr(default), text), []).append(e.name)
    return {
        f"{', '.join(names)}: {key}": f"{text} (default {default})"
        for (key, default, text), names in owners.items()
    }


def _backend_line(backend) -> str:
    """A backend's description, then the request kinds it answers (and when)."""
    answers = [f"{kind} ({when})" if when else kind for kind, when in backend.answered().items()]
    return backend.description + (f"; answers {', '.join(answers)}" if answers else "")


# options several commands share, declared once
Seed = Annotated[int, number_option(*SEEDS, int, help="seed for generation and sampling")]
BatchSize = Annotated[
    int,
    typer.Option(
        min=1,
        help="rows per forward pass (a causal LM packs short scoring items into a row); on "
        "a GPU the least: batches grow to the memory found free (docs/models.md)",
    ),
]
Force = Annotated[
    bool,
    typer.Option(
        "--force",
        help="replace an --out folder (audit --markdown: a file) that faithprobe did not write",
    ),
]
NoCache = Annotated[
    bool, typer.Option("--no-cache", help="do not read or write the persistent answer cache")
]
CacheDir = Annotated[
    Path | None,
    path_option(
        Kind.WRITE_FOLDER, "cache folder (default: $FAITHPROBE_CACHE_DIR or the user cache)"
    ),
]


def _libraries_speak(verbose: bool) -> bool:
    """``--verbose``: the libraries' warnings and log lines shown as they come; without it
    the known ones are hidden (:mod:`faithprobe.quiet`) from here until the command ends."""
    if not verbose:
        quiet.hush()
    return verbose


Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose",
        callback=_libraries_speak,
        help="also show the warnings and log lines of the libraries faithprobe runs on "
        "(transformers, torch...), hidden by default",
    ),
]


def _parse_options(items: list[str], flag: str = "--option") -> dict[str, str]:
    """``KEY=VALUE`` items as a dict; a key given twice is refused (the second value would
    silently win)."""
    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint=flag)
        if key.strip() in options:
            raise typer.BadParameter(f"{key.strip()} is given twice: give it once", param_hint=flag)
        options[key.strip()] = value
    return options


def _model_specs(models: list[str], items: list[str], **aliases: object) -> list:
    """Every ``--model`` parsed once (:func:`~faithprobe.subjects.parse_model`: checked
    before any data is read or model loaded), with the ``--model-option`` settings of its
    backend; ``aliases``: the same settings under their older flags (``--base-url``...),
    None where not given. A setting no model's backend has is refused, and so is a setting
    given under both names with two values."""
    from faithprobe.subjects import parse_model
    from faithprobe.subjects.endpoint.settings import check_base_url

    given = {key: value for key, value in aliases.items() if value is not None}
    settings = _parse_options(items, "--model-option")
    for key in given.keys() & settings.keys():
        if str(given[key]) != settings[key]:
            flag, one, other = "--" + key.replace("_", "-"), settings[key], str(given[key])
            raise UsageError(  # shown as run.json keeps commands: URLs' credentials redacted
                f"--model-option {key}={excerpt(redact_command([one]))} and {flag} "
                f"{excerpt(redact_command([other]))} disagree: give the setting once"
            )
    options = {**given, **settings}
    specs = [parse_model(text, options) for text in models]
    taken = {f.name for spec in specs for f in dataclasses.fields(spec.settings)}
    if unused := [key for key in given if key not in taken]:  # the older flags: openai's
        flag = "--" + unused[0].replace("_", "-")
        raise UsageError(f"{flag} is for openai:MODEL models; none was given")
    if "base_url" in given:
        check_base_url(given["base_url"])  # "" too, which as a setting means none
    if unknown := [key for key in options if key not in taken and key not in given]:
        raise UsageError(
            f"--model-option {unknown[0]}: no --model's backend has that setting "
            "(`faithprobe list` shows each backend's)"
        )
    return specs


ModelOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--model-option",
        help="a setting of the models' backend, KEY=VALUE (repeatable; applies to each "
        "--model whose backend has it, under settings in the spec, MODEL,KEY=VALUE; "
        "`faithprobe list` shows each backend's), e.g. base_url=http://127.0.0.1:8000/v1",
    ),
]


def _endpoint_option(setting: str, number: type | None = None):
    """An older flag for the ``openai`` backend's ``setting`` (kept: scripts use it); a
    ``number`` (int or float) takes the range the setting declares."""
    from faithprobe.options import bounds
    from faithprobe.subjects.endpoint.settings import EndpointConfig

    shown = {
        "help": f"the same as --model-option {setting}=VALUE (openai: models)",
        "rich_help_panel": "OpenAI-compatible endpoints (older flags)",
    }
    if number is None:
        return typer.Option(**shown)
    return number_option(*bounds(EndpointConfig, setting), kind=number, **shown)


def _ray_option(setting: str, text: str, **kwargs):
    """An older flag of ``run`` for the Ray executor's ``setting`` (kept: scripts use it)."""
    return typer.Option(
        help=f"{text}; the same as --executor ray,{setting}=VALUE",
        rich_help_panel="Ray executor (older flags)",
        **kwargs,
    )


def _older_flags_declared(
    base_url: Annotated[str | None, _endpoint_option("base_url")] = None,
    api: Annotated[str | None, _endpoint_option("api")] = None,
    api_key_env: Annotated[str | None, _endpoint_option("api_key_env")] = None,
    concurrency: Annotated[int | None, _endpoint_option("concurrency", int)] = None,
    timeout: Annotated[float | None, _endpoint_option("timeout", float)] = None,
    max_retries: Annotated[int | None, _endpoint_option("max_retries", int)] = None,
    address: Annotated[
        str | None, _ray_option("address", "a running Ray cluster, e.g. HEAD:6379")
    ] = None,
    workers: Annotated[
        int | None, _ray_option("workers", "actors per model", **ranged(*WORKERS, int))
    ] = None,
    gpus_per_worker: Annotated[
        float | None,
        number_option(
            *GPUS,
            help="the same as --executor ray,gpus_per_worker=G",
            rich_help_panel="Ray executor (older flags)",
        ),
    ] = None,
) -> None:
    """The older flags of ``run`` and ``audit``, each a setting of a spec under its former
    name: the ``openai`` backend's (``--base-url URL`` is ``--model-option base_url=URL``)
    and the Ray executor's (``--workers N`` is ``--executor ray,workers=N``). Declared here
    as typer reads options, never called: :func:`_with_older_flags` adds them to a command."""


ENDPOINT_FLAGS = ("base_url", "api", "api_key_env", "concurrency", "timeout", "max_retries")
RAY_FLAGS = ("address", "workers", "gpus_per_worker")
_OLDER_FLAGS = "faithprobe.older_flags"  # where the click context keeps the values given


def _keep_older_flag(ctx: typer.Context, param: typer.CallbackParam, value: object) -> None:
    """An older flag's callback: its value, when given, kept for :func:`_older_flags`."""
    if value is not None:
        ctx.meta.setdefault(_OLDER_FLAGS, {})[param.name] = value


def _with_older_flags(*names: str) -> type[TyperCommand]:
    """A command class with the older flags ``names`` (:func:`_older_flags_declared`) as
    options that are no parameters of its function: their values wait in the click context
    until the specs are parsed (:func:`_older_flags`), so a command keeps its old command
    lines and its function only the settings' one home, the specs. (Typer makes the
    command, with ``params`` from the function's signature.)"""
    declared = typer.Typer()
    declared.command()(_older_flags_declared)

    class WithOlderFlags(TyperCommand):
        def __init__(self, *args, params: list, **kwargs) -> None:
            older = [p for p in typer.main.get_command(declared).params if p.name in names]
            for option in older:
                option.expose_value, option.callback = False, _keep_older_flag
            super().__init__(*args, params=[*params, *older], **kwargs)

    return WithOlderFlags


def _older_flags(ctx: typer.Context, names: tuple[str, ...]) -> dict[str, object]:
    """The values the older flags ``names`` were given on the command line of ``ctx``."""
    given = ctx.meta.get(_OLDER_FLAGS, {})
    return {name: given[name] for name in names if name in given}


ExecutorOption = Annotated[
    str,
    typer.Option(
        help="where the models compute: 'inprocess' (default) or 'ray[,KEY=VALUE...]' (each "
        "model on its own pool of Ray actors, one replica each, requests sharded over them; "
        "settings address, workers, gpus_per_worker, cpus_per_worker, num_cpus, "
        "max_replacements, replace_timeout: `faithprobe list`; needs pip install "
        "'faithprobe[ray]')",
        rich_help_panel="Ray executor",
    ),
]
PlacementOption = Annotated[
    list[str] | None,
    typer.Option(
        help="MODEL@KEY=VALUE[,KEY=VALUE]: one model's own workers, gpus_per_worker or "
        "cpus_per_worker on Ray (MODEL: its name or --model text; repeatable)",
        rich_help_panel="Ray executor",
    ),
]


Suite = Annotated[str, typer.Argument(help="suite to run (see `faithprobe list`)")]
RunModels = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="'embedded', a local folder or a Hugging Face id (its backend read off its "
        "config), or BACKEND:TARGET (gguf:FILE.gguf, openai:MODEL, ...); repeat to compare "
        "models; `faithprobe list` shows every backend and its settings",
    ),
]
Data = Annotated[
    Path | None,
    path_option(
        Kind.READ_ANY,
        "data file or folder (natural-logic: an NLI-XY folder), or the name of a data set "
        "fetched with `faithprobe data fetch` (squad, socialiqa, nli-xy, ...); default: the "
        "suite's generated dataset",
    ),
]
Limit = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="pairs to sample, evenly across conditions (confidence-shift: instances; "
        "natural-logic: base examples, and examples per challenge set)",
    ),
]
RunOut = Annotated[
    Path | None,
    path_option(Kind.WRITE_FOLDER, "run folder (default runs/SUITE-TIME)"),
]
SuiteOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        help="suite option KEY=VALUE (repeatable; `faithprobe list` shows each suite's)",
    ),
]


@app.command(cls=_with_older_flags(*ENDPOINT_FLAGS, *RAY_FLAGS))
def run(
    ctx: typer.Context,
    suite: Suite,
    model: RunModels = None,
    data: Data = None,
    limit: Limit = None,
    seed: Seed = 0,
    batch_size: BatchSize = 16,
    out: RunOut = None,
    force: Force = False,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    verbose: Verbose = False,
    option: SuiteOptions = None,
    model_option: ModelOptions = None,
    executor: ExecutorOption = "inprocess",
    placement: PlacementOption = None,
) -> None:
    """Run SUITE on one or more models and write a run folder with a report."""
    from faithprobe.executors import parse_executor
    from faithprobe.suite_protocol import suite_options

    with user_errors(RESUME):
        options = _parse_options(option or [])
        suite_options(suite, options)  # a mistyped suite or option: told before the imports
        older = _older_flags(ctx, ENDPOINT_FLAGS)
        specs = _model_specs(model or ["embedded"], model_option or [], **older)
        if data is not None:
            from faithprobe.catalog.locate import resolve

            data = resolve(data)
        executor_spec = parse_executor(executor, placement or (), _older_flags(ctx, RAY_FLAGS))
        from faithprobe.report import run_to_folder, summary_table, summary_title
        from faithprobe.runner import RunConfig

        config = RunConfig(
            suite=suite,
            models=specs,
            data=data,
            limit=limit,
            seed=seed,
            batch_size=batch_size,
            out=out,
            force=force,
            cache=not no_cache,
            cache_dir=cache_dir,
            options=options,
            executor=executor_spec,
            command=command_line(),
        )
        with progress_bars() as progress:
            folder = run_to_folder(config, progress=progress, log=log)
        metrics = json.loads((folder / "metrics.json").read_text())
        print_table(summary_table(metrics), summary_title(metrics))
        log(f"run folder: {folder}  report: {folder / 'report.html'}")


AuditModels = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="a model as `run` takes it ('embedded', a folder, a Hugging Face id, or "
        "BACKEND:TARGET); repeat to put models side by side",
    ),
]
Budget = Annotated[
    str,
    typer.Option(
        help="items per suite: 'small' (a first look), 'default' (intervals that decide "
        "most verdicts), 'full' (every item: hours), 'auto' (rounds until decided, within "
        "--time / --max-items); docs/audit.md lists the sizes"
    ),
]
Time = Annotated[
    str | None,
    typer.Option("--time", help="--budget auto: time for the whole audit (90s, 20m, 1h30m)"),
]
MaxItems = Annotated[
    int | None,
    typer.Option(help="--budget auto: the largest --limit a step takes (its suite's items)"),
]
Adjust = Annotated[
    str,
    typer.Option(
        help="how the p-values of the differences between models are adjusted over the "
        "card: 'holm' (family-wise error) or 'bh' (Benjamini-Hochberg, false discovery rate)"
    ),
]
AuditOut = Annotated[
    Path | None,
    path_option(Kind.WRITE_FOLDER, "audit folder (default runs/audit-TIME)"),
]
DataDir = Annotated[
    Path | None,
    path_option(
        Kind.READ_FOLDER,
        "a data folder holding squad/dev-v1.1.json, nli-xy/ and socialiqa/, searched before "
        "$FAITHPROBE_DATA and the folder `faithprobe data fetch` fills; at --budget small the "
        "samples shipped with faithprobe stand in for missing files, at larger budgets a step "
        "whose data is missing is skipped with the reason",
    ),
]
Compare = Annotated[
    tuple[Path, Path] | None,
    path_option(
        Kind.READ_FOLDER, "OLD NEW: show what changed between two audit folders (no models are run)"
    ),
]
FailOn = Annotated[
    str | None,
    typer.Option(help="with --compare: 'regressed' exits 1 if any effect regressed (for CI)"),
]
Markdown = Annotated[
    Path | None,
    path_option(
        Kind.WRITE_FILE,
        "with --compare: also write the comparison as Markdown to this file (replacing only a "
        "comparison faithprobe wrote, unless --force)",
    ),
]
Edge = Annotated[
    list[str] | None,
    typer.Option(
        help="NAME=VALUE: move the edge of a faithful region (repeatable; names and "
        "defaults in docs/audit.md); recorded in run.json"
    ),
]


@app.command(cls=_with_older_flags("base_url", "api"))
def audit(
    ctx: typer.Context,
    model: AuditModels = None,
    budget: Budget = "small",
    time: Time = None,
    max_items: MaxItems = None,
    adjust: Adjust = "holm",
    out: AuditOut = None,
    data_dir: DataDir = None,
    compare: Compare = None,
    fail_on: FailOn = None,
    markdown: Markdown = None,
    edge: Edge = None,
    seed: Seed = 0,
    batch_size: BatchSize = 16,
    force: Force = False,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    verbose: Verbose = False,
    model_option: ModelOptions = None,
    executor: ExecutorOption = "inprocess",
    placement: PlacementOption = None,
) -> None:
    """Run every suite each model can answer at one budget, and write one faithfulness card
    (index.html) with a verdict per suite and model; or compare two audits."""
    from faithprobe.audit.edges import Edges
    from faithprobe.audit.plan import STEPS, check_auto, check_budget
    from faithprobe.catalog.locate import data_roots
    from faithprobe.metrics.comparison import ADJUSTMENTS
    from faithprobe.output_folders import check_cache_dir

    with user_errors(RESUME):
        check_among(adjust, ADJUSTMENTS, f"--adjust {adjust!r}")
        if compare is not None:
            if model or edge:
                raise UsageError(
                    "--compare reads two finished audits; it takes no --model or --edge"
                )
            _compare(compare, adjust, fail_on, markdown, force=force)
            return
        if fail_on is not None or markdown is not None:
            raise UsageError("--fail-on and --markdown go with --compare OLD NEW")
        if not model:
            raise UsageError("give --model (repeat it to compare models), or --compare OLD NEW")
        check_budget(budget)
        time_limit = check_auto(budget, time, max_items)
        Edges.parse(edge or (), [s.suite for s in STEPS])
        older = _older_flags(ctx, ENDPOINT_FLAGS)
        specs = _model_specs(model, model_option or [], **older)
        from faithprobe.executors import check_placed, parse_executor

        executor_spec = parse_executor(executor, placement or ())
        check_placed(executor_spec, specs)
        data_roots(data_dir)
        check_cache_dir(cache_dir)
        from faithprobe.audit.execute import AuditConfig

        config = AuditConfig(
            models=specs,
            out=out or _default_out("audit"),
            budget=budget,
            data_dir=data_dir,
            seed=seed,
            batch_size=batch_size,
            force=force,
            cache=not no_cache,
            cache_dir=cache_dir,
            command=command_line(),
            edges=edge or (),
            adjustment=adjust,
            time_limit=time_limit,
            max_items=max_items,
            executor=executor_spec,
        )
        _run_audit(config)


def _default_out(kind: str) -> Path:
    """``runs/KIND-TIME``: where a command writes without ``--out``."""
    from datetime import UTC, datetime

    return Path("runs") / f"{kind}-{datetime.now(UTC).strftime('%Y-%m-%dT%H%M%S')}"


def _run_audit(config: AuditConfig) -> None:
    """Run the audit ``config`` describes with progress bars, print its card, and exit 1
    when a model is missing from it (a pipeline must see the gap)."""
    from faithprobe.audit.card_page import card_rows
    from faithprobe.audit.execute import audit as run_audit

    with progress_bars() as progress:
        folder = run_audit(config, progress=progress, log=log)
    metrics = json.loads((folder / "metrics.json").read_text())
    print_rows(*card_rows(metrics), f"faithfulness card ({config.budget} budget)")
    log(f"audit folder: {folder}  card: {folder / 'index.html'}")
    failed = json.loads((folder / "run.json").read_text()).get("failed_models") or []
    if failed:  # the card holds the others; a pipeline must still see the gap
        names = ", ".join(f["name"] for f in failed)
        log(f"not on the card (exit status 1): {names}; why: run.json failed_models")
        raise typer.Exit(1)


def _compare(
    folders: tuple[Path, Path],
    adjustment: str,
    fail_on: str | None,
    markdown: Path | None,
    *,
    force: bool,
) -> None:
    """``audit --compare``: the table, the Markdown file, and exit 1 on ``--fail-on``."""
    from faithprobe.atomic import write_text
    from faithprobe.audit.compare import (
        check_fail_on,
        compare_audits,
        compare_markdown,
        compare_rows,
        failed,
        written_by_compare,
    )
    from faithprobe.output_folders import check_file_target

    check_fail_on(fail_on)
    if markdown is not None:
        check_file_target(markdown, ours=written_by_compare, force=force, option="--markdown")
    comparison = compare_audits(*folders, adjustment=adjustment)
    print_rows(*compare_rows(comparison), f"{folders[0]} → {folders[1]}")
    log(comparison.pairing())
    if markdown is not None:
        try:
            markdown.parent.mkdir(parents=True, exist_ok=True)  # as generate --out's folders
            write_text(markdown, compare_markdown(comparison))
        except OSError as err:
            raise UsageError(f"--markdown {markdown}: {err.strerror or err}") from None
        log(f"markdown: {markdown}")
    if failed(comparison, fail_on):
        log("a supported regression: exit 1 (--fail-on regressed)")
        raise typer.Exit(1)


@app.command()
def report(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            parser=argument(Kind.READ_FOLDER), help="one or more run folders, or one audit folder"
        ),
    ],
    out: Annotated[
        Path | None,
        path_option(
            Kind.WRITE_FOLDER, "folder for a merged report (default: the first run folder)"
        ),
    ] = None,
    force: Force = False,
) -> None:
    """(Re)build the report of finished runs (several are merged to compare models), or an
    audit folder's card (index.html, card.md) from its metrics.json and run.json."""
    from faithprobe.report import rebuild
    from faithprobe.report.run_folder import is_audit_folder

    with user_errors("nothing was changed"):
        if len(run_dirs) == 1 and out is None and is_audit_folder(run_dirs[0]):
            from faithprobe.audit.card_page import CARD_MD, check_card, read_run, write_card
            from faithprobe.audit.compare import check_audit

            folder = run_dirs[0]
            metrics = check_audit(folder)  # as audit --compare checks it, then the rest
            check_card(folder / "metrics.json", metrics)
            read_run(folder / "run.json")
            log(f"card: {write_card(folder)} and {folder / CARD_MD}")
            return
        if len(run_dirs) > 1 and out is None:
            raise UsageError("merging several runs needs --out FOLDER")
        folder = rebuild(run_dirs, out, force=force, command=command_line())
        log(f"report: {folder / 'report.html'}")


@app.command()
def generate(
    name: Annotated[str, typer.Argument(help="generator (see `faithprobe list`)")],
    out: Annotated[
        Path,
        path_option(Kind.WRITE_FILE, "file to write (JSON lines; SQuAD JSON for comparisons)"),
    ],
    seed: Annotated[
        int, number_option(*SEEDS, int, help="seed for names, values and sampled attractors")
    ] = 0,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-o",
            help="generator option KEY=VALUE, lists comma-separated (repeatable; "
            "`faithprobe list` shows each generator's)",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="replace an --out file that faithprobe did not write"),
    ] = False,
) -> None:
    """Write a generated dataset (whole, or nothing) and print its breakdown by condition."""
    from collections import Counter

    from faithprobe.generators import GENERATORS, written_by_a_generator
    from faithprobe.output_folders import check_file_target

    with user_errors("nothing was written"):
        generator = GENERATORS.get(name)
        config = generator.configure(_parse_options(option or []))
        check_file_target(out, ours=written_by_a_generator, force=force)
        items = generator.build(config, seed)
        try:
            n = generator.write(items, out)
        except OSError as err:
            raise UsageError(f"--out {out}: cannot write it: {err.strerror or err}") from None
        counts = Counter(tuple(generator.breakdown(i).values()) for i in items)
        table = Table(title=f"{n} items by condition")  # the path goes below: never wrapped
        for col in (*generator.breakdown(items[0]), "items"):
            table.add_column(col)
        for key, c in sorted(counts.items()):
            table.add_row(*map(str, key), str(c))
        out_console.print(table)
        log(f"{n} items written to {out}")


from faithprobe.serving.cli import serve  # noqa: E402

app.command()(serve)

from faithprobe.training.cli import train_app  # noqa: E402

app.add_typer(train_app, name="train", help="Fine-tune small task models for the suites to probe.")

from faithprobe.representations.cli import analyze_app  # noqa: E402

app.add_typer(
    analyze_app,
    name="analyze",
    help="Analyse models beyond their answers (hidden representations).",
)

from faithprobe.baseline.cli import baseline_app  # noqa: E402

app.add_typer(baseline_app, name="baseline", help="Baselines to set models against (heuristic QA).")

from faithprobe.catalog.cli import data_app  # noqa: E402

app.add_typer(data_app, name="data", help="The data sets the suites read: list them, fetch them.")
