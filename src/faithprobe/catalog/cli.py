"""``faithprobe data list``, ``faithprobe data fetch NAME...`` and ``faithprobe data schema
SUITE``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from faithprobe.catalog.entries import DataSet
from faithprobe.catalog.locate import DATA_ENV
from faithprobe.console import byte_progress, log, out_console, progress_bars, user_errors
from faithprobe.numbers import HOUR, number_option
from faithprobe.paths import Kind, path_option
from faithprobe.subcommands import command_group

if TYPE_CHECKING:
    from faithprobe.catalog.fetch import Fetched

MIRROR_ENV = "FAITHPROBE_DATA_MIRROR"

data_app = command_group(
    "The data sets the suites read: where they are, and fetching them by name."
)


@data_app.command("list")
def list_data() -> None:
    """Each data set: what it is, its size, its license, and where it is.

    Where: the path found in the data folders, else "sample shipped (small budget)", else
    "not present"."""
    from faithprobe.catalog.entries import CATALOGUE
    from faithprobe.catalog.locate import data_roots, fetch_root

    with user_errors("nothing was changed"):
        roots = data_roots()
        table = Table(title="data sets (faithprobe data fetch NAME)", title_justify="left")
        table.add_column("name", style="bold", no_wrap=True)
        table.add_column("what", ratio=3)
        table.add_column("size", ratio=1)
        table.add_column("license", ratio=2)
        table.add_column("where", no_wrap=True)
        for e in CATALOGUE:
            table.add_row(*(Text(v) for v in (e.name, e.what, e.size, e.license, _where(e, roots))))
        out_console.print(table)
        log(
            f"data folders searched: {', '.join(str(r) for r in roots)} (after a command's "
            f"--data-dir); `faithprobe data fetch` writes to {fetch_root()} (set ${DATA_ENV} "
            "to use another folder)"
        )


def _where(entry: DataSet, roots: list[Path]) -> str:
    """The path a suite would read, with a count where some of the set's files are missing;
    else the shipped sample; else ``not present``."""
    from faithprobe.catalog.locate import sample

    for root in roots:
        path = root / entry.path
        if path.exists():
            have = sum((root / f.path).is_file() for f in entry.files)
            whole = have == len(entry.files)
            return str(path) if whole else f"{path} ({have} of {len(entry.files)} files)"
    if sample(entry.path) is not None:
        return "sample shipped (small budget)"
    return "not present"


@data_app.command("fetch")
def fetch_data(
    names: Annotated[
        list[str], typer.Argument(metavar="NAME", help="data sets (see `faithprobe data list`)")
    ],
    to: Annotated[
        Path | None,
        path_option(
            Kind.WRITE_FOLDER,
            f"data folder to fill (default: ${DATA_ENV}, else the user cache's faithprobe/data)",
            "--to",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="download again files already present and checked")
    ] = False,
    timeout: Annotated[
        float, number_option(0.01, HOUR, help="seconds to wait for a connection or for more bytes")
    ] = 60.0,
    mirror: Annotated[
        str | None,
        typer.Option(
            envvar=MIRROR_ENV,
            help="fetch each file from MIRROR/<its path in a data folder> instead (archives: "
            "MIRROR/<data set folder>/<archive name>)",
        ),
    ] = None,
) -> None:
    """Download data sets by name from their authors' official locations.

    Resumable, checked against a SHA-256 (or the file's format), moved into place whole;
    a failure is one line saying where to put the file by hand (docs/data.md)."""
    from faithprobe.catalog.entries import dataset
    from faithprobe.catalog.locate import fetch_root

    with user_errors("a partial download is kept as <file>.part; run it again to resume"):
        entries = [dataset(name) for name in dict.fromkeys(names)]  # all known, or none fetched
        from faithprobe.catalog.fetch import fetch

        root = to if to is not None else fetch_root()
        with progress_bars(byte_progress()) as bars:
            for entry in entries:
                done = fetch(
                    entry, root, force=force, timeout=timeout, progress=bars, mirror=mirror
                )
                log(f"{entry.name}: {entry.title} ready at {root / entry.path} ({_summary(done)})")


@data_app.command("schema")
def print_schema(
    suite: Annotated[str, typer.Argument(help="suite whose --data records to describe")],
    markdown: Annotated[
        bool, typer.Option("--markdown", help="as the Markdown table of the suite's docs page")
    ] = False,
) -> None:
    """The fields a suite's --data records hold: types, allowed values, how records link.

    Every record is checked against it when the suite loads the file."""
    from faithprobe.datasets.schema import declared, schemas_for, suite_markdown, suite_text
    from faithprobe.errors import UsageError

    with user_errors("nothing was changed"):
        if not schemas_for(suite):
            raise UsageError(
                f"suite {suite!r} declares no --data schema (declared: {', '.join(declared())})"
            )
        shown = suite_markdown(suite) if markdown else suite_text(suite)
        out_console.print(Text(shown), end="", soft_wrap=True)


def _summary(done: list[Fetched]) -> str:
    """E.g. ``1 file fetched, 1 file already present; checked by sha256, format labels``."""
    counts = Counter(d.how for d in done)
    parts = [
        f"{n} file{'s' if n > 1 else ''} {how}"
        for how, n in (("fetched", counts["fetched"]), ("already present", counts["present"]))
        if n
    ]
    checks = ", ".join(dict.fromkeys(d.check for d in done))
    return f"{', '.join(parts)}; checked by {checks}"
