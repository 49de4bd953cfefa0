"""Models shipped inside PyPI packages: find a package's folder without importing it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from faithprobe.errors import ModelError


def package_folder(package: str, install: str, what: str) -> Path:
    """The folder of the installed ``package``; a clear error naming ``install`` if absent."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"{what} needs the PyPI package: {install}")
    return Path(next(iter(spec.submodule_search_locations)))
