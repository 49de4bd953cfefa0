"""Where the distractors method's release (Pandia & Ettinger 2021) keeps its items: one
folder per condition, named as the method names it, holding one tab-separated file per model
(directly or in a model's sub-folder). ``--data`` may name the folder holding the condition
folders (the release's ``data/combined_data``), one condition folder, a model's sub-folder of
one, or one file.

    single_entity_distractor/                related attractors (either class)
    single_entity_distractorSwapped/         the same, between the key entity and the fact
    single_entity_with_neutral_distractor/   unrelated attractors
    single_entity_object/                    T-type attractors (the target's class)
    single_entity_profession/                B-type attractors (the background's class)
    multiple_entity_*/                       the same, said of other entities
    VaryingKeyEntity/, Varying_key_entity/   the key entity named after other entities

(``_Swapped`` with or without the underscore.) The folder's name states a condition; the
rows' texts are read for what they hold (:mod:`.distractor_tsv_design`), and where the two
disagree the text is followed and the disagreement counted.

Anything else is refused in one line naming it: a folder holding no condition folder, a
condition-like name the method does not use (``single_entity_related``), a file where the
release has a condition folder, a folder named like a data file. Files that are not
``.csv``/``.tsv`` (the release keeps plots, logs and scripts beside its items) and hidden
files (an editor's lock file) are listed as not read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from faithprobe.errors import DataError, excerpt

CONDITION = re.compile(r"^(single|multiple)_entity_(.+?)(_?Swapped)?$")
KEY_ENTITY_LATER = re.compile(r"^varying_?key_?entity$", re.IGNORECASE)
# folder suffix -> the attractor class it names (None: related, of either class)
KINDS = {
    "profession": "B",
    "object": "T",
    "with_neutral_distractor": "unrelated",
    "distractor": None,
}
SETTING = {"single": "single", "multiple": "multi"}
DATA_SUFFIXES = (".csv", ".tsv")
NAMES = "single_entity_*, multiple_entity_* (*_profession, *_object, *_distractor, " \
    "*_with_neutral_distractor, *Swapped) or VaryingKeyEntity"  # fmt: skip


@dataclass(frozen=True)
class Condition:
    """A condition folder and what its name states."""

    name: str
    setting: str  # single, multi
    kind: str | None  # the attractor class it names; None: related, of either class
    position: str  # where its name puts the attractors: after, between, later

    @property
    def order(self) -> tuple:
        """Reading order: folders naming one class first, so an item the release repeats
        in a mixed folder is read as the typed folder states it."""
        kinds = ("B", "T", "unrelated", None)
        return (self.position == "later", kinds.index(self.kind), self.setting != "single",
                self.position != "after", self.name)  # fmt: skip


def condition_of(folder: Path) -> Condition | None:
    """The condition ``folder``'s name states, None if it names none; a name shaped like the
    method's with another condition is refused."""
    name = folder.name
    if KEY_ENTITY_LATER.match(name):
        return Condition(name, "multi", None, "later")
    found = CONDITION.match(name)
    if found is None:
        return None
    setting, rest, swapped = found.group(1), found.group(2), bool(found.group(3))
    if rest not in KINDS:
        known = ", ".join(f"*_{k}" for k in KINDS)
        raise DataError(folder, f"condition {excerpt(rest)} is not one of the method's: {known}")
    return Condition(name, SETTING[setting], KINDS[rest], "between" if swapped else "after")


@dataclass
class Layout:
    """The condition folders to read, each with its data files, and what was not read."""

    folders: list[tuple[Condition, list[Path]]] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def is_data_file(path: Path) -> bool:
    return path.suffix.lower() in DATA_SUFFIXES


def layout(path: Path) -> Layout:
    """What ``--data path`` holds of the release (module docstring)."""
    out = Layout()
    if not path.is_dir():
        out.folders.append((_enclosing(path, "file"), [path]))
        return out
    own = condition_of(path)
    folders = [path] if own is not None else []
    if own is None:
        for child in sorted(path.iterdir()):
            if condition_of(child) is None:
                out.skipped.append((child, "not a condition folder"))
            elif not child.is_dir():
                raise DataError(child, "a file where the release has a condition folder")
            else:
                folders.append(child)
    if not folders and any(condition_of(p) for p in path.parents[:2]):
        out.skipped.clear()  # a model's sub-folder: its files, as its condition's
        out.folders.append((_enclosing(path, "folder"), _data_files(path, out.skipped)))
        return out
    if not folders:
        subs = [p.name for p in sorted(path.iterdir()) if p.is_dir()][:8]
        raise DataError(path, f"holds no condition folder of the method's release ({NAMES}); "
                        f"its sub-folders: {', '.join(subs) or 'none'}")  # fmt: skip
    for folder in folders:
        cond = condition_of(folder)
        assert cond is not None
        out.folders.append((cond, _data_files(folder, out.skipped)))
    return out


def _enclosing(path: Path, what: str) -> Condition:
    """The condition of the folder ``path`` (a model's file or sub-folder) lies in."""
    cond = next((c for p in path.parents[:3] if (c := condition_of(p)) is not None), None)
    if cond is None:
        raise DataError(path, f"a release {what} is read as its condition, but none of the "
                        f"folders it lies in is named as the method names them ({NAMES})")  # fmt: skip
    return cond


def _data_files(folder: Path, skipped: list[tuple[Path, str]]) -> list[Path]:
    """The ``.csv``/``.tsv`` files under a condition folder (its model sub-folders too),
    sorted; what else it holds goes to ``skipped``."""
    files = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        for d in sorted(dirs):
            if is_data_file(here / d):
                raise DataError(here / d, "a folder where the release has a data file")
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            p = here / name
            if name.startswith("."):
                skipped.append((p, "a hidden file"))
            elif not is_data_file(p):
                skipped.append((p, "not a .csv or .tsv file"))
            else:
                files.append(p)
    if not files:
        raise DataError(folder, "no .csv or .tsv file in this condition's folder")
    return sorted(files)
