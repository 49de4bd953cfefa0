"""The distractors method's released item files (Pandia & Ettinger 2021, "Sorting through the
noise"), read as the suite's cloze items, so ``--data FOLDER`` runs the original items.

Layout: one folder per condition, named as the method names them, holding tab-separated
files (``.csv`` or ``.tsv``; one per model in the released results, the same items in each),
directly or in sub-folders::

    single_entity_distractor/           related attractors after the critical fact
    multiple_entity_distractor/
    single_entity_distractorSwapped/    related attractors between entity and fact
    single_entity_with_neutral_distractor/   unrelated attractors
    single_entity_object/               T-type attractors (the target's class)
    single_entity_profession/           B-type attractors (the background word's class)

(``multiple_entity_*`` alike; ``_Swapped`` with or without the underscore.) One row per item:
``sentence`` (the text up to the blank, or the whole sentence with ``[MASK]`` at the blank),
``ordered_items`` (the candidate list, written as a Python list), ``target_occupation`` (the
target word) and ``count_attractors``; ``candidates`` and ``target`` are read too.

What the rows do not say is recovered as follows, and recorded in each item's
``features.linked_by``:

* **base items**: the rows without attractors or filler. The same text in several folders or
  files is one item (so single and multiple entity variants of one story pair up).
* **filler**: the release tells each story at four distances, with none to all three of its
  filler clauses (:data:`FILLER_CLAUSES`: "has a sister", "played basketball", "sang in a
  choir"; before the critical fact, or after it in the ``Swapped`` folders). A row's clauses
  are its ``features.filler`` (the suite's filler view, by their count); a row with filler
  and no attractors is the no-attractor point of its filler level's curve.
* **links**: every row tells its story about its own entity, so a variant cannot name its
  base by entity. It is linked to the base item with the same target whose words it shares
  most (its entity's name is not among them) (the base item of the same
  background/target pair: its critical fact is in the variant); ties go to the base item
  read first.
* **attractor type**: the ``_profession`` folders' are B, the ``_object`` folders' T, the
  ``_with_neutral_distractor`` folders' unrelated; the ``_distractor`` folders mix both, so
  an item there is T if its sentence names another candidate (a word of the target's class),
  else B. An item met in several folders keeps the first folder's type in the order above.
"""

from __future__ import annotations

import ast
import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from faithprobe.datasets.schema import TEXT, DataSchema, Field
from faithprobe.datasets.stories import NO_ATTRACTOR
from faithprobe.errors import DataError, excerpt
from faithprobe.records import ClozeExample

ITEM_SET = "pandia-ettinger-2021"
CONDITION = re.compile(r"^(single|multiple)_entity_(.+?)(_?Swapped)?$")
# folder suffix -> attractor type (None: related, typed per item)
KINDS = {
    "profession": "B",
    "object": "T",
    "with_neutral_distractor": "unrelated",
    "distractor": None,
}
ORDER = ("profession", "object", "with_neutral_distractor", "distractor")  # typed folders first
SETTING = {"single": "single", "multiple": "multi"}
COLUMNS = {
    "sentence": ("sentence",),
    "candidates": ("ordered_items", "candidates"),
    "target": ("target_occupation", "target"),
    "n": ("count_attractors", "num_attractors"),
}
MASKS = ("[MASK]", "[mask]", "<mask>")
LINKED_BY = "same target, most words shared (released TSVs)"
# the filler clauses of the released items, which vary the distance to the critical fact
FILLER_CLAUSES = ("has a sister", "played basketball", "sang in a choir")
WORD = re.compile(r"\w+")


RELEASED_TSV_SCHEMA = DataSchema(
    name="the method's released TSV folders (--data FOLDER)",
    record="one row per item of a tab-separated .csv or .tsv file, with a header line, in a "
    "folder naming its condition (single_entity_distractor, multiple_entity_distractor, "
    "*_Swapped, *_with_neutral_distractor, *_object, *_profession)",
    fields=(
        Field(
            "sentence",
            TEXT,
            "the text up to the blank, or the whole sentence with [MASK] at the blank",
            required=True,
        ),
        Field(
            "ordered_items",
            TEXT,
            "the candidate words written as a Python list, e.g. ['doctor', 'lawyer'] (column "
            "candidates is read too)",
            required=True,
        ),
        Field(
            "target_occupation",
            TEXT,
            "the right word, one of the candidates (case aside; column target is read too)",
            required=True,
        ),
        Field(
            "count_attractors",
            TEXT,
            "how many attractors the row holds, a whole number; 0 marks a base item (column "
            "num_attractors is read too)",
            required=True,
        ),
    ),
    links=f"a row with attractors is linked to the row without attractors of the same target "
    f"whose words it shares most (its features.linked_by says '{LINKED_BY}'); the "
    "same text in several folders or files is one item",
)


@dataclass(frozen=True)
class Row:
    """One row of a released file and the condition its folder names."""

    path: Path
    line: int
    condition: str  # the folder's name
    setting: str
    kind: str
    swapped: bool
    context: str
    suffix: str
    target: str
    candidates: tuple[str, ...]
    n: int

    @property
    def filler(self) -> list[str]:
        """The filler clauses the row's sentence holds, in the order it says them."""
        held = [c for c in FILLER_CLAUSES if c in self.context]
        return sorted(held, key=self.context.index)


def is_released_layout(folder: Path) -> bool:
    """Whether ``folder`` holds (or is) condition folders named as the method names them."""
    return folder.is_dir() and any(CONDITION.match(d.name) for d in _condition_dirs(folder))


def _condition_dirs(folder: Path) -> list[Path]:
    if CONDITION.match(folder.name):
        return [folder]
    return sorted(d for d in folder.iterdir() if d.is_dir() and CONDITION.match(d.name))


def _column(path: Path, header: list[str], field: str) -> str:
    for name in COLUMNS[field]:
        if name in header:
            return name
    raise DataError(path, f"no column {' or '.join(COLUMNS[field])} (header: {excerpt(header)})",
                    record="line 1", field=COLUMNS[field][0])  # fmt: skip


def _split(sentence: str) -> tuple[str, str]:
    """(context, suffix): the text before and after the blank."""
    for mask in MASKS:
        if mask in sentence:
            before, after = sentence.split(mask, 1)
            return before.rstrip(), after.strip()
    return sentence.rstrip(), ""


def _candidates(path: Path, line: int, text: str) -> tuple[str, ...]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if (
        not isinstance(value, list | tuple)
        or not value
        or not all(isinstance(v, str) and v.strip() for v in value)
    ):
        raise DataError(path, f"{excerpt(text)} is not a Python list of words",
                        record=f"line {line}", field=COLUMNS["candidates"][0])  # fmt: skip
    return tuple(value)


def _target(path: Path, line: int, word: str, candidates: tuple[str, ...]) -> str:
    """The candidate ``word`` names (the released files differ in case at times)."""
    for c in candidates:
        if c == word or c.lower() == word.lower():
            return c
    raise DataError(path, f"target {excerpt(word)} is not among the candidates",
                    record=f"line {line}", field=COLUMNS["target"][0])  # fmt: skip


def _rows(folder: Path) -> Iterator[Row]:
    for cond in _condition_dirs(folder):
        found = CONDITION.match(cond.name)
        assert found is not None
        setting, rest, swapped = found.group(1), found.group(2), bool(found.group(3))
        if rest not in KINDS:
            known = ", ".join(f"*_{k}" for k in KINDS)
            raise DataError(cond, f"condition {excerpt(rest)} is not one of the method's: {known}")
        files = sorted(p for p in cond.rglob("*") if p.suffix in (".csv", ".tsv") and p.is_file())
        if not files:
            raise DataError(cond, "no .csv or .tsv file in this condition's folder")
        for path in files:
            yield from _file_rows(path, cond.name, SETTING[setting], rest, swapped)


def _file_rows(path: Path, condition: str, setting: str, kind: str, swapped: bool) -> Iterator[Row]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(path, f"cannot read it: {err}") from None
    reader = csv.DictReader(text.splitlines(), delimiter="\t")
    header = list(reader.fieldnames or [])
    cols = {field: _column(path, header, field) for field in COLUMNS}
    for line, record in enumerate(reader, start=2):
        context, suffix = _split(record[cols["sentence"]] or "")
        candidates = _candidates(path, line, record[cols["candidates"]] or "")
        try:
            n = int(record[cols["n"]] or "")
        except ValueError:
            raise DataError(path, f"{excerpt(record[cols['n']])} is not a whole number",
                            record=f"line {line}", field=cols["n"]) from None  # fmt: skip
        target = _target(path, line, record[cols["target"]] or "", candidates)
        yield Row(path, line, condition, setting, kind, swapped, context, suffix, target,
                  candidates, n)  # fmt: skip


def _words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


def _attractor_type(row: Row) -> str:
    typed = KINDS[row.kind]
    if typed is not None:
        return typed
    others = {c.lower() for c in row.candidates if c != row.target}
    return "T" if others & _words(row.context) else "B"


def read_released(folder: str | Path) -> list[ClozeExample]:
    """The items of the method's released condition folders under ``folder`` (module
    docstring): base items first, then their variants, each text once."""
    folder = Path(folder)
    rows = sorted(_rows(folder), key=lambda r: ORDER.index(r.kind))
    bases: dict[tuple, ClozeExample] = {}
    for row in rows:
        key = (row.context, row.suffix, row.target)
        if row.n == 0 and not row.filler and key not in bases:
            item_id = f"base{len(bases)}"
            features = {"base_id": None, "n_attractors": 0, "item_set": ITEM_SET}
            bases[key] = ClozeExample(item_id, row.context, row.target, row.candidates,
                                      row.suffix, features)  # fmt: skip
    by_target: dict[str, list[ClozeExample]] = {}
    for base in bases.values():
        by_target.setdefault(base.target, []).append(base)
    variants: dict[tuple, ClozeExample] = {}
    for row in rows:
        key = (row.setting, row.context, row.suffix, row.target)
        if (row.n == 0 and not row.filler) or key in variants:
            continue
        base = _base_of(row, by_target.get(row.target, []))
        kind = _attractor_type(row) if row.n else NO_ATTRACTOR
        position = "between" if row.swapped else "after"
        item_id = f"{base.id}|{row.kind}{'_swapped' if row.swapped else ''}|{len(variants)}"
        features = {"base_id": base.id, "n_attractors": row.n, "setting": row.setting,
                    "attractor_type": kind, "position": position, "item_set": ITEM_SET,
                    "condition": row.condition, "linked_by": LINKED_BY}  # fmt: skip
        if row.filler:
            features["filler"] = row.filler
        variants[key] = ClozeExample(item_id, row.context, row.target, row.candidates,
                                     row.suffix, features)  # fmt: skip
    return list(bases.values()) + list(variants.values())


def _base_of(row: Row, candidates: list[ClozeExample]) -> ClozeExample:
    """The base item of ``row``'s background/target pair: same target, most words shared
    (module docstring)."""
    if not candidates:
        raise DataError(row.path, f"no row without attractors has target {excerpt(row.target)}, "
                        "so this item has no base item to pair with",
                        record=f"line {row.line}", field=COLUMNS["target"][0])  # fmt: skip
    words = _words(row.context)
    return max(candidates, key=lambda b: len(_words(b.context) & words))
