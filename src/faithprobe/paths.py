"""The one check of a path a user gives: an option, an argument or an environment variable.

Before anything is read or written, a path is expanded (``~``, ``~user``) and refused in
one line when no file could ever be there or when it is the wrong kind of thing: a name or
a whole path longer than the file system takes, a ``~user`` with no such user, a folder
where a file is read or written, a file (or a FIFO, a device) where a folder is, a path
below a file, something that cannot be read, a place that cannot be written. What the path
is for is its :class:`Kind`; whether an existing output may be replaced (it is ours, or
``--force``) is the caller's rule (:mod:`faithprobe.output_folders`).

:func:`checked` raises :class:`~faithprobe.errors.UsageError` naming the option;
:func:`argument` is the same check as a typer ``parser``, so that a command's path options
are refused at parse, before the command runs.
"""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from faithprobe.errors import UsageError, excerpt
from faithprobe.json_values import unwritable


class Kind(enum.Enum):
    """What a path is for."""

    READ_FILE = "a file to read"
    READ_FOLDER = "a folder to read"
    READ_ANY = "a file or folder to read"  # or a name the command looks up (--data squad)
    WRITE_FILE = "a file to write"
    WRITE_FOLDER = "a folder to write"


def _limit(name: str, fallback: int) -> int:
    try:
        return os.pathconf("/", name)
    except (OSError, ValueError, AttributeError):  # no such limit here (Windows)
        return fallback


NAME_MAX = _limit("PC_NAME_MAX", 255)  # bytes in one name
PATH_MAX = _limit("PC_PATH_MAX", 4096)  # bytes in a whole path


class PathProblem(ValueError):
    """Why a path cannot be used, without the option's name (the caller adds it)."""


def expanded(text: str | Path) -> Path:
    """``text`` with ``~`` and ``~user`` expanded, and no longer than the file system takes;
    :class:`PathProblem` otherwise."""
    text = os.fspath(text)
    if "\0" in text:
        raise PathProblem("holds a NUL character")
    if why := unwritable(text):  # a byte of the name that is not UTF-8
        raise PathProblem(f"{why}: a byte of the name that is not UTF-8, and faithprobe "
                          "writes the paths it is given into run.json: rename it")  # fmt: skip
    if text.startswith("~"):
        user = text[1:].split("/", 1)[0]
        try:
            text = os.path.expanduser(text)
        except (KeyError, RuntimeError):  # no home folder to expand ~ into
            user = user or "the current user"
            raise PathProblem(f"cannot expand ~{user}: no such user or home folder") from None
        if text.startswith("~"):
            raise PathProblem(f"cannot expand ~{user}: no such user")
    size = len(os.fsencode(text))
    if size > PATH_MAX:
        raise PathProblem(f"a path of {size:,} bytes; the file system takes {PATH_MAX:,}")
    if (longest := max((len(os.fsencode(n)) for n in text.split(os.sep)), default=0)) > NAME_MAX:
        raise PathProblem(f"holds a name of {longest:,} bytes; the file system takes {NAME_MAX}")
    return Path(text)


def _mode(path: Path) -> int | None:
    """The kind bits of what is at ``path`` (following links), None where nothing is."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:  # a folder on the way cannot be searched, a link loop...
        raise PathProblem(f"cannot be looked at: {err.strerror or err}") from None


def _nearest_folder(path: Path) -> Path:
    """The nearest of ``path``'s parents that exists; :class:`PathProblem` where a file
    stands where a folder would be (``x.json/out``)."""
    for parent in path.parents:
        mode = _mode(parent)
        if mode is None:
            continue
        if not stat.S_ISDIR(mode):
            raise PathProblem(f"{parent} is a file, not a folder")
        return parent
    return Path(".")


def _writable(folder: Path) -> None:
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PathProblem(f"cannot write in {folder} (permission denied)")


def check(path: Path, kind: Kind) -> None:
    """Refuse ``path`` (already :func:`expanded`) when it cannot serve as ``kind``; a path
    to read that does not exist passes (the command says what it looked for)."""
    mode = _mode(path)
    reading = kind in (Kind.READ_FILE, Kind.READ_FOLDER, Kind.READ_ANY)
    if mode is None:
        if not reading:
            _writable(_nearest_folder(path))
        return
    folder, regular = stat.S_ISDIR(mode), stat.S_ISREG(mode)
    if kind in (Kind.READ_FOLDER, Kind.WRITE_FOLDER) and not folder:
        raise PathProblem("is a file, not a folder" if regular else "is not a folder")
    if kind in (Kind.READ_FILE, Kind.WRITE_FILE) and folder:
        raise PathProblem("is a folder, not a file")
    if not (folder or regular):  # a FIFO would hang a reader, a device is no output
        raise PathProblem("is not a regular file (a FIFO, a device or a socket)")
    if reading and not os.access(path, os.R_OK | (os.X_OK if folder else 0)):
        raise PathProblem("cannot be read (permission denied)")
    if kind is Kind.WRITE_FOLDER:
        _writable(path)
    elif kind is Kind.WRITE_FILE:
        _writable(_nearest_folder(path))


def usable(text: str | Path, kind: Kind) -> Path:
    """``text`` :func:`expanded` and checked as ``kind`` (:func:`check`)."""
    path = expanded(text)
    check(path, kind)
    return path


def checked(text: str | Path, option: str, kind: Kind) -> Path:
    """:func:`usable`, a problem being a :class:`~faithprobe.errors.UsageError` naming
    ``option`` (``--out``, ``$FAITHPROBE_DATA``)."""
    try:
        return usable(text, kind)
    except PathProblem as problem:
        raise UsageError(f"{option} {excerpt(os.fspath(text))}: {problem}") from None


def argument(kind: Kind) -> Callable[[str], Path]:
    """A typer ``parser`` checking a path option or argument as ``kind`` at parse: a
    problem is click's one-line error naming the option."""

    def parse(text: str) -> Path:
        import typer  # the command line's; the checks above serve library callers too

        try:
            return usable(text, kind)
        except PathProblem as problem:
            raise typer.BadParameter(f"{excerpt(os.fspath(text))}: {problem}") from None

    parse.__name__ = f"path ({kind.value})"
    parse.kind = kind  # type: ignore[attr-defined]  # read by the generated CLI corpus
    return parse


def path_option(kind: Kind, help: str, *names: str) -> Any:
    """A typer option holding a path, checked as ``kind`` at parse (:func:`argument`)."""
    import typer

    return typer.Option(*names, parser=argument(kind), help=help)
