"""A ``--model`` string, parsed once: :class:`ModelSpec`.

The command line (or a library call) parses each ``--model`` with
:func:`faithprobe.subjects.backends.parse_model`, which checks it -- the backend's own check,
before any data is read or any model loaded -- and names its backend, its target and its
settings; everything after takes the spec as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from faithprobe.errors import UsageError


@dataclass(frozen=True)
class ModelSpec:
    """``text``: the model as given, without settings (what messages show); ``backend``: the
    registered backend's name; ``target``: what the backend loads (a folder, a Hugging Face
    id, a file, an endpoint's model name, a heuristic's or reference model's name);
    ``name``: the subject's name (in results and the answer cache); ``settings``: an
    instance of the backend's settings dataclass."""

    text: str
    backend: str
    target: str
    name: str
    settings: Any = None

    def __str__(self) -> str:
        return self.text


def check_unique_names(names: Iterable[str]) -> None:
    """Models side by side must differ by name: results are told apart by it."""
    names = list(names)
    if len(set(names)) != len(names):
        raise UsageError(f"two models share a name: {', '.join(names)}")
