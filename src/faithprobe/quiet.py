"""Third-party warnings kept off faithprobe's console, unless ``--verbose`` lets them through.

What faithprobe prints on stderr goes through :mod:`faithprobe.console`: log lines,
progress bars, errors. The libraries under it (transformers, huggingface_hub, torch...)
print warnings of their own there too, about things a faithprobe user cannot act on.
Where a warning came from a call of faithprobe's, the call was fixed
(:mod:`faithprobe.subjects.hf.kv_cache_name`); the known ones that remain are filtered here,
each by category, module and message (:data:`KNOWN_WARNINGS`), so that a warning nobody
has seen yet still shows. transformers' and huggingface_hub's loggers are set to show
errors only, and tqdm's bars are off (unless the user chose otherwise in the environment
variables these are read from).

:func:`hush` applies all that, :func:`restore` undoes it (the command line restores it
when a command ends, for the commands run in-process by tests). Nothing here imports the
libraries: their loggers are read from environment variables when they are imported.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable
from typing import NamedTuple


class KnownWarning(NamedTuple):
    """A warning a library gives that faithprobe's user cannot act on: its ``category``,
    the ``module`` it is attributed to and its ``message`` (regular expressions matched at
    the start, as :func:`warnings.filterwarnings` takes them), and why it is hidden."""

    category: type[Warning]
    module: str
    message: str
    why: str


KNOWN_WARNINGS = (
    KnownWarning(
        FutureWarning,
        # attributed to the caller of the model's forward: torch's module call, or a
        # decorator of transformers' around it (Gemma 3)
        r"(torch\.nn\.modules\.module|transformers\.utils\.generic)$",
        r"`past_key_values` is deprecated and will be removed in version [\d.]+ "
        r"for `\w+\.forward`\. Use `cache` instead\.$",
        "transformers 5 renamed a model's key/value cache argument; faithprobe passes the new "
        "name (faithprobe.subjects.hf.kv_cache_name), but a model's own code written for "
        "transformers 4 (trust_remote_code) may still pass the old one to transformers' layers",
    ),
)

# library logger -> the environment variable its verbosity is read from on import
LIBRARY_VERBOSITY = {
    "transformers": "TRANSFORMERS_VERBOSITY",
    "huggingface_hub": "HF_HUB_VERBOSITY",
}
# tqdm reads its defaults from the environment on import: no bar of its own (transformers
# draws one while it dequantises a GGUF file; faithprobe's bars are rich's and count items)
NO_TQDM_BARS = "TQDM_DISABLE"

_undo: list[Callable[[], None]] = []  # what restore() does, last first


def hush() -> None:
    """Hide the known warnings, the libraries' log lines below errors and tqdm's bars, until
    :func:`restore`. Calling it again while hushed changes nothing."""
    if _undo:
        return
    caught = warnings.catch_warnings()
    caught.__enter__()
    _undo.append(lambda: caught.__exit__(None, None, None))
    for known in KNOWN_WARNINGS:
        warnings.filterwarnings(
            "ignore", message=known.message, category=known.category, module=known.module
        )
    _set_unless_chosen(NO_TQDM_BARS, "1")
    for name, variable in LIBRARY_VERBOSITY.items():
        if _set_unless_chosen(variable, "error"):  # read when the library is imported,
            logger = logging.getLogger(name)  # and set now, should it be imported already
            level = logger.level
            logger.setLevel(logging.ERROR)
            _undo.append(lambda lg=logger, lv=level: lg.setLevel(lv))


def hushed() -> bool:
    """Whether :func:`hush` is in force: a library faithprobe starts itself with a log
    level of its own (Ray's ``logging_level``) is then started at errors only."""
    return bool(_undo)


def restore() -> None:
    """Undo :func:`hush` (nothing if it was not called)."""
    while _undo:
        _undo.pop()()


def _set_unless_chosen(variable: str, value: str) -> bool:
    """Set the environment variable unless the user has (their choice stands)."""
    if variable in os.environ:
        return False
    os.environ[variable] = value
    _undo.append(lambda: os.environ.pop(variable, None))
    return True
