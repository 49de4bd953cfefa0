"""Run folders: each folder replaced whole or not at all (each file in it is written whole
by :mod:`faithprobe.atomic`).

A run (or a rebuilt report) is written into a staging folder beside its target
(``.NAME.staging-<pid>``) and swapped in only once every file, the report included, is
there. On Linux the swap is one ``renameat2(RENAME_EXCHANGE)`` call, so at every instant
the target holds either the complete old folder or the complete new one. Where that call
is missing the old folder is renamed aside (``.NAME.previous-<pid>``) before the new one is
renamed into place; a kill between the two renames leaves the old folder aside, and the
next write to the same target (:func:`recover`) puts it back.

An existing ``--out`` folder is replaced only if it is a faithprobe run folder (its
``run.json`` says faithprobe wrote it) or empty; anything else is refused unless forced.
A command writing one file (``generate --out``) follows the same rules for that file
(:func:`check_file_target`).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from faithprobe.errors import UsageError

MARKER = "run.json"
_STAGING, _PREVIOUS = "staging", "previous"


# -- ownership --------------------------------------------------------------------------


def is_run_folder(path: Path) -> bool:
    """Whether ``path`` is a folder faithprobe wrote: its run.json names a faithprobe
    version."""
    try:
        record = json.loads((Path(path) / MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    versions = record.get("versions") if isinstance(record, dict) else None
    return isinstance(versions, dict) and "faithprobe" in versions


def check_creatable(path: Path, option: str) -> None:
    """Refuse ``path`` when a file stands where one of its folders would be (``x.json/out``):
    nothing could be created there, and finding that out at the end would cost the run."""
    for parent in Path(path).parents:  # the nearest first
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{option} {path}: {parent} is a file, not a folder")
            return


def _check_writable(path: Path, option: str) -> None:
    """Refuse ``path`` when the nearest of its folders that exists is one this process may
    not write in: what is written there (the file, a staging folder beside it, the folders
    made on the way) could not be, and finding that out at the end would cost the work."""
    nearest = next((p for p in Path(path).absolute().parents if p.exists()), None)
    if nearest is not None and not os.access(nearest, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: cannot write in {nearest} (permission denied)")


def check_target(path: Path, *, force: bool = False, option: str = "--out") -> Path:
    """``path`` if a run may be written there: absent, an empty folder, or a run folder of
    ours (with ``force``: any folder that is not the working directory or one holding it).
    Checked before any work, so a refused run costs nothing."""
    path = Path(path)
    check_creatable(path, option)
    _check_writable(path, option)
    recover(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path}: is a file, not a folder")
    if not path.is_dir():
        return path
    if Path.cwd().resolve().is_relative_to(path.resolve()):
        raise UsageError(f"{option} {path}: holds the working directory; choose a new folder")
    if force or is_run_folder(path) or not any(path.iterdir()):
        return path
    raise UsageError(
        f"{option} {path}: exists and is not a faithprobe run folder (no run.json of ours); "
        "choose another folder, or pass --force to replace it whole"
    )


def check_cache_dir(path: Path | None) -> None:
    """A cache folder that is an existing file (or below one) fails before any work."""
    if path is None:
        return
    check_creatable(path, "--cache-dir")
    if Path(path).exists() and not Path(path).is_dir():
        raise UsageError(f"--cache-dir {path}: is a file, not a folder")


def check_file_target(
    path: Path, *, ours: Callable[[Path], bool], force: bool = False, option: str = "--out"
) -> Path:
    """``path`` if a file may be written there: absent, empty, or a file ``ours`` says
    faithprobe wrote (with ``force``: any regular file); a folder, a device, or a path below
    a file is refused. The rules of :func:`check_target`, for commands that write one file
    (whole, through :mod:`faithprobe.atomic`)."""
    path = Path(path)
    check_creatable(path, option)
    _check_writable(path, option)
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder, not a file")
    if not path.exists():
        return path
    if not path.is_file():
        raise UsageError(f"{option} {path}: is not a regular file")
    if force or path.stat().st_size == 0 or ours(path):
        return path
    raise UsageError(
        f"{option} {path}: exists and is not a file faithprobe wrote; choose another file, "
        "or pass --force to replace it"
    )


# -- replacing a folder whole -------------------------------------------------------------


def _sibling(target: Path, role: str, pid: int | None = None) -> Path:
    return target.parent / f".{target.name}.{role}-{os.getpid() if pid is None else pid}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _siblings(target: Path, role: str) -> list[tuple[Path, int]]:
    prefix = f".{target.name}.{role}-"
    if not target.parent.is_dir():
        return []
    found = []
    for p in target.parent.iterdir():
        if p.name.startswith(prefix) and p.name[len(prefix) :].isdigit():
            found.append((p, int(p.name[len(prefix) :])))
    return found


def recover(target: Path) -> None:
    """Finish what a killed swap left: put an old folder set aside back in place (if the
    new one never arrived) or delete it (if it did), and remove staging folders of
    processes that are gone."""
    target = Path(target)
    for aside, pid in _siblings(target, _PREVIOUS):
        if _alive(pid) and pid != os.getpid():
            continue
        if target.exists():
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(aside, target)
    for staging, pid in _siblings(target, _STAGING):
        if not _alive(pid) or pid == os.getpid():
            shutil.rmtree(staging, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2`` with ``RENAME_EXCHANGE``);
    False where the system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(staging: Path, target: Path) -> None:
    """Put the complete folder ``staging`` at ``target``, replacing what was there whole."""
    if not target.exists():
        os.rename(staging, target)
        return
    if _exchange(staging, target):
        shutil.rmtree(staging)  # now the old folder
        return
    aside = _sibling(target, _PREVIOUS)
    os.rename(target, aside)
    os.rename(staging, target)
    shutil.rmtree(aside)


@contextmanager
def replaced_whole(target: Path) -> Iterator[Path]:
    """A fresh staging folder to write a run into; when the block ends without an error it
    replaces ``target`` whole, and on an error (or a kill) ``target`` is left as it was."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover(target)
    staging = _sibling(target, _STAGING)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, target)
