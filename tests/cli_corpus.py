"""What every bad input of the command-line corpus must give (``tests/test_cli_fuzz*.py``):
exit status 2, exactly one line on stderr, ``error: …``, no traceback, cut to a readable
length, within a time limit, and no file written or changed in the folders watched."""

from __future__ import annotations

import hashlib
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from typer.testing import CliRunner

from faithprobe.cli import app

runner = CliRunner()
SECONDS = 60  # a bad input is refused well within this (a hang fails the case)


def snapshot(*folders: Path) -> dict[str, str]:
    """Every file under ``folders`` (and every folder, so a new empty one shows) with a
    hash of its bytes."""
    out = {}
    for folder in folders:
        if not folder.exists():
            continue
        for p in sorted(folder.rglob("*")):
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def hung(*_):
        raise TimeoutError(f"no answer within {seconds} s: the input hangs the command")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def refused(
    args: Sequence[str],
    *,
    watch: Sequence[Path] = (),
    expect: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> str:
    """Run ``faithprobe ARGS`` and check it refuses them as a bad input must (module
    docstring); ``expect``: words the error line must hold. Returns the line."""
    before = snapshot(*watch)
    with _deadline(SECONDS):
        res = runner.invoke(app, [str(a) for a in args], env=env)
    lines = res.stderr.splitlines()
    assert res.exit_code == 2, (res.exit_code, res.stderr[-2000:], res.exception)
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr[-2000:]
    assert "Traceback" not in res.output
    assert len(lines[0]) < 1200, lines[0]  # values are cut to a readable length
    for word in expect:
        assert word in lines[0], (word, lines[0])
    assert snapshot(*watch) == before, "a refused command wrote or changed a file"
    return lines[0]
