"""What the command line shows: plain one-line errors, log lines, tables, progress bars.

Every text from data, arguments or paths is printed as plain text: never read as rich
markup (``[/]``, ``[bold]``) or emoji codes (``:flag:``), never wrapped when the output is
not a terminal. An error is one line, with values cut to a readable length.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from faithprobe.errors import FaithprobeError
from faithprobe.urls import redact_command

ERROR_CHARS = 1000  # an error line longer than this keeps its head and tail

console = Console(stderr=True, emoji=False, highlight=False, markup=False, soft_wrap=True)
# Piped or logged output gets room for the CI columns instead of rich's 80.
out_console = Console(
    emoji=False, highlight=False, markup=False, width=None if sys.stdout.isatty() else 160
)


_arguments: list[str] = []


def set_arguments(args: list[str]) -> None:
    """Remember the arguments the command was called with (see :func:`command_line`)."""
    _arguments[:] = args


def command_line() -> str:
    """The command as it was called, for run.json, with any credentials in URLs redacted."""
    return redact_command(["faithprobe", *_arguments])


def one_line(message: str, limit: int = ERROR_CHARS) -> str:
    """``message`` on one line (line breaks become spaces) and at most about ``limit``
    characters: the head and the tail are kept, the middle is cut and counted. A character
    UTF-8 cannot hold (a lone surrogate: an undecodable byte of a path, a value from a
    refused JSON file) is shown as its escape, ``\\udcff``."""
    text = re.sub(r"\s*[\r\n]+\s*", " ", str(message)).strip()
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    return f"{head} … ({len(text) - len(head) - len(tail):,} characters cut) … {tail}"


def print_error(message: str) -> None:
    """``error: <message>`` as one plain line on stderr."""
    console.print(Text.assemble(("error: ", "bold red"), one_line(message)))


def log(message: str) -> None:
    """A plain line of progress news on stderr."""
    console.print(Text(str(message)))


@contextmanager
def user_errors(interrupted: str) -> Iterator[None]:
    """The project's own errors become one line and exit status 2; Ctrl-C prints
    ``interrupted`` and exits 130. Anything else is a bug and keeps its traceback."""
    try:
        yield
    except FaithprobeError as err:
        print_error(str(err))
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print(Text.assemble(("interrupted", "yellow"), f": {interrupted}"))
        raise typer.Exit(130) from None


def print_table(frame, title: str) -> None:
    """A pandas frame as a table on stdout."""
    print_rows([str(c) for c in frame.columns], frame.itertuples(index=False), title)


def print_rows(header: Sequence[str], rows: Iterable[Sequence[object]], title: str) -> None:
    """Rows under ``header`` as a table on stdout."""
    table = Table(title=title, show_lines=False)
    for col in header:
        table.add_column(str(col), overflow="fold")
    for row in rows:
        table.add_row(*[Text(str(v)) for v in row])
    out_console.print(table)


class RateColumn(ProgressColumn):
    """Items per second over the recent window."""

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} items/s" if speed else "– items/s", style="cyan")


def _item_progress() -> Progress:
    """A progress display (on stderr) for bars that count items."""
    columns = [
        TextColumn("{task.description}", markup=False, style="bold"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("items"),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    return Progress(*columns, console=console, transient=False)


def byte_progress() -> Progress:
    """A progress display (on stderr) for downloads, counting bytes, in a terminal only
    (rich ends even a transient display with a newline, which would break a one-line
    error); the bars go when the command ends, and its log lines say what was done."""
    columns = [
        TextColumn("{task.description}", markup=False, style="bold"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    ]
    return Progress(*columns, console=console, transient=True, disable=not console.is_terminal)


ProgressFactory = Callable[[str, int], Callable[[int], None]]


@contextmanager
def progress_bars(progress: Progress | None = None) -> Iterator[ProgressFactory]:
    """``start(description, total)`` returning ``advance(k)``, as the runner takes it, on
    ``progress`` (default: bars counting items). The display starts with the first bar, so
    a command that fails before any work prints nothing but its error."""
    progress = progress or _item_progress()
    started = False

    def start(description: str, total: int) -> Callable[[int], None]:
        nonlocal started
        if not started:
            progress.start()
            started = True
        task = progress.add_task(description, total=total)
        return lambda k: progress.advance(task, k)

    try:
        yield start
    finally:
        if started:
            progress.stop()
