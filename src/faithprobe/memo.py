"""Derived outputs remembered by the fingerprint of what they are made from.

A run's metrics follow from its results table, seed and options; its figures from its
metrics. Re-running a finished run (every answer cached) would compute them again, and
bootstrap intervals and drawing figures are most of what such a re-run costs. A
:class:`Memo` keeps each output in a file named by the fingerprint of its inputs *and of
faithprobe's own code* (:func:`code_fingerprint`: any change to any module, or to the
versions of the libraries that compute or draw, is a new key; a plug-in suite's package is
hashed too, :func:`module_fingerprint`), the idea of Hugging Face datasets' fingerprinted
transforms. A hit is the same bytes a fresh computation writes.
The memo lives beside the answer cache, so ``--cache-dir`` moves it and ``--no-cache``
turns it off.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from importlib import metadata
from pathlib import Path

from faithprobe.atomic import replacing

# the libraries whose versions can change a computed or drawn output
_LIBRARIES = ("numpy", "pandas", "scipy", "statsmodels", "matplotlib")


def _hash_sources(root: Path, h) -> None:
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".html", ".j2", ".css") and path.is_file():
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())


@cache
def code_fingerprint() -> str:
    """A hash of every module of this faithprobe and of the versions of the libraries that
    compute metrics and draw figures."""
    h = hashlib.sha256()
    _hash_sources(Path(__file__).resolve().parent, h)
    for name in _LIBRARIES:
        try:
            h.update(f"{name}=={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            continue
    return h.hexdigest()


@cache
def module_fingerprint(module: str) -> str:
    """A hash of the sources of the top-level package (or single-file module) holding
    ``module``, for code that lives outside faithprobe (a suite installed as a plug-in);
    empty for faithprobe's own modules, which :func:`code_fingerprint` covers."""
    top = module.split(".")[0]
    if top == "faithprobe":
        return ""
    spec = importlib.util.find_spec(top)
    h = hashlib.sha256()
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            _hash_sources(Path(folder).resolve(), h)
    elif spec is not None and spec.origin and spec.origin.endswith(".py"):
        h.update(Path(spec.origin).read_bytes())
    return h.hexdigest()


def fingerprint(*parts: bytes | str) -> str:
    """The key of an output made from ``parts`` by this code."""
    h = hashlib.sha256(code_fingerprint().encode())
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:32]


class Memo:
    """Outputs of one kind (``folder``: e.g. ``<cache>/memo/figures``), one file each,
    written whole (:mod:`faithprobe.atomic`), so concurrent runs never read a part."""

    def __init__(self, folder: str | Path, suffix: str) -> None:
        self.folder, self.suffix = Path(folder), suffix

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{self.suffix}"

    def get(self, key: str) -> bytes | None:
        try:
            return self.path(key).read_bytes()
        except FileNotFoundError:
            return None

    def put(self, key: str, data: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with replacing(self.path(key)) as tmp:
            tmp.write_bytes(data)
