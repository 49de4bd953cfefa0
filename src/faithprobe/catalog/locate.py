"""Where data is looked for: the data folders, in order, and the samples in the package.

A data folder is laid out as the catalogue says (:mod:`faithprobe.catalog.entries`). The
folders searched, first match wins:

1. ``--data-dir DIR``, where a command takes one;
2. ``$FAITHPROBE_DATA``, where it is set;
3. the folder ``faithprobe data fetch`` fills: ``$FAITHPROBE_DATA`` if set, else
   ``data`` under the user's cache folder (``~/.cache/faithprobe/data`` on Linux).

The samples shipped with faithprobe (``catalog/samples``, laid out the same way) stand in
for a missing file only where the caller allows it (the audit's ``small`` budget).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from faithprobe.errors import DataError, UsageError
from faithprobe.paths import Kind, checked

DATA_ENV = "FAITHPROBE_DATA"
SAMPLES = Path(__file__).resolve().parent / "samples"


def fetch_root() -> Path:
    """The folder ``faithprobe data fetch`` writes to (``$FAITHPROBE_DATA`` naming a file,
    or a path no folder could have, is refused)."""
    if env := os.environ.get(DATA_ENV):
        return checked(env, f"${DATA_ENV}", Kind.READ_FOLDER)
    return Path(platformdirs.user_cache_dir("faithprobe")) / "data"


def data_roots(given: Path | None = None) -> list[Path]:
    """The data folders searched, in order (``given``: ``--data-dir``, which must exist)."""
    roots: list[Path] = []
    if given is not None:
        if not Path(given).is_dir():
            raise UsageError(f"--data-dir {given}: no such folder")
        roots.append(Path(given))
    fetched = fetch_root()
    if fetched not in roots:
        roots.append(fetched)
    return roots


def find(relative: str, roots: list[Path]) -> Path | None:
    """``relative`` (a catalogue path such as ``squad/dev-v1.1.json``) under the first of
    ``roots`` that holds it, or None."""
    for root in roots:
        path = root / relative
        if path.exists():
            return path
    return None


@dataclass(frozen=True)
class Sample:
    """A sample shipped with faithprobe: what it is and its license, as the card names it
    (``samples/README.md`` and the README beside each give source and attribution)."""

    relative: str
    title: str
    license: str

    @property
    def path(self) -> Path:
        return SAMPLES / self.relative


SHIPPED = (
    Sample("squad/dev-v1.1.json", "327 questions of SQuAD 1.1 dev", "CC BY-SA 4.0"),
    Sample("socialiqa/dev.jsonl", "300 instances of Social IQA dev", "CC BY 4.0"),
    Sample("nli-xy", "a grid in NLI-XY's format written for faithprobe (not NLI-XY)", "Apache-2.0"),
    Sample("bbh", "162 items of BIG-Bench Hard (6 per task) with the authors' prompts", "MIT"),
)


def sample(relative: str) -> Sample | None:
    """The shipped sample standing in for ``relative``, or None where none is shipped."""
    for shipped in SHIPPED:
        if shipped.relative == relative and shipped.path.exists():
            return shipped
    return None


def resolve(given: Path, roots: list[Path] | None = None) -> Path:
    """``--data`` as given: an existing file or folder, else a data set's name (``squad``,
    ``nli-xy``, ...) found in the data folders; anything else is refused in one line."""
    from faithprobe.catalog.entries import CATALOGUE, dataset

    if given.exists():
        return given
    roots = data_roots() if roots is None else roots
    names = [entry.name for entry in CATALOGUE]
    if str(given) not in names:
        raise DataError(
            given, f"no such data file or folder, nor a data set name ({', '.join(names)})"
        )
    entry = dataset(str(given))
    found = find(entry.path, roots)
    if found is None:
        looked = ", ".join(str(r) for r in roots)
        raise UsageError(
            f"--data {entry.name}: {entry.title} is in no data folder (looked in {looked}); "
            f"run `faithprobe data fetch {entry.name}` first"
        )
    return found
