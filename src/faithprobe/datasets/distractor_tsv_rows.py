"""One file of the distractors method's release (Pandia & Ettinger 2021) read as rows: the
tab-separated text, its columns, and each row's sentence split at the blank, its candidate
list, target and attractor count, checked cell by cell.

A file is read as the release writes it, a UTF-8 byte-order mark included (some editors add
one). What a file cannot hold is refused in one line naming the file, the line and the
column: bytes that are not UTF-8 (a lone surrogate encoded, among others), a cell longer than
the csv module reads (the row is not one of the release's), a candidate cell that is not a
Python list of words, a target outside the list (case aside), a count that is not a whole
number, and a lone surrogate a list cell spells (``'\\ud800'``: no tokenizer encodes it).

A file without a ``sentence`` column holds no items (the release keeps regression tables
beside its item files): :func:`read_rows` says so by returning None, and the caller lists it
as not read. A file with sentences but without the other columns is refused, naming what it
lacks (``data/Varying_key_entity`` of the release has only ``sentence`` and
``target_occupation``).
"""

from __future__ import annotations

import ast
import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from faithprobe.datasets.jsonl import read_text
from faithprobe.errors import DataError, excerpt

# column role -> the names the release (and files written like it) give it
COLUMNS = {
    "sentence": ("sentence",),
    "candidates": ("ordered_items", "candidates"),
    "target": ("target_occupation", "target"),
    "n": ("count_attractors", "num_attractors"),
}
# what each column is, for a file that lacks it
COLUMN_ROLES = {
    "candidates": "the candidate set",
    "target": "the target",
    "n": "the number of attractors",
}
# the blank of a masked LM's form: BERT's [MASK] (lower-cased in the uncased files), RoBERTa's
BLANK = re.compile(r"\[mask\]|<mask>", re.IGNORECASE)
SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Row:
    """One row of a release file, as written there."""

    path: Path
    line: int
    context: str  # the text before the blank
    suffix: str | None  # the text after the blank in a masked LM's form; None: the prefix form
    target: str  # as the target column writes it
    candidates: tuple[str, ...]  # as the candidate list writes them (a model's ranking)
    n: int  # the count_attractors column


def header_of(path: Path, text: str) -> list[str]:
    """The column names of the file's first line."""
    first = next(csv.reader(io.StringIO(text.partition("\n")[0]), delimiter="\t"), [])
    return [name.strip() for name in first]


def _columns(path: Path, header: list[str]) -> dict[str, str]:
    """Column role -> the file's column name; refuses a file lacking one, naming them all."""
    found = {role: next((n for n in names if n in header), None) for role, names in COLUMNS.items()}
    missing = [role for role, name in found.items() if name is None]
    if missing:
        lacks = "; ".join(f"{' or '.join(COLUMNS[r])} ({COLUMN_ROLES[r]})" for r in missing)
        raise DataError(path, f"no column {lacks}, so its rows cannot be scored "
                        f"(header: {excerpt(header)})", record="line 1")  # fmt: skip
    return {role: name for role, name in found.items() if name is not None}


def read_rows(path: Path) -> Iterator[Row] | None:
    """The rows of the release file ``path``, read as they are iterated (the file's header
    checked first); None if it has no ``sentence`` column (it holds no items)."""
    text = read_text(path, tab_separated=True)
    header = header_of(path, text)
    if COLUMNS["sentence"][0] not in header:
        return None
    return _rows(path, text, _columns(path, header))


def _rows(path: Path, text: str, cols: dict[str, str]) -> Iterator[Row]:
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t")
    line = 1  # the last line read whole (the header's, first)
    try:
        for record in reader:
            line = reader.line_num
            yield _row(path, line, {role: record.get(name) or "" for role, name in cols.items()},
                       cols)  # fmt: skip
    except csv.Error as err:  # the row after the last one read whole
        raise DataError(path, f"cannot read it as tab-separated text: {err}",
                        record=f"line {line + 1}") from None  # fmt: skip


def _row(path: Path, line: int, cells: dict[str, str], cols: dict[str, str]) -> Row:
    def refuse(role: str, message: str) -> DataError:
        return DataError(path, message, record=f"line {line}", field=cols[role])

    sentence = cells["sentence"]
    blank = BLANK.search(sentence)
    context = (sentence[: blank.start()] if blank else sentence).strip()
    if not context:
        raise refuse("sentence", f"{excerpt(sentence)} has no text before the blank")
    suffix = sentence[blank.end() :].strip() if blank else None
    candidates = _candidates(cells["candidates"])
    if candidates is None:
        raise refuse("candidates", f"{excerpt(cells['candidates'])} is not a Python list of "
                     "words, each once (case aside)")  # fmt: skip
    if any(SURROGATE.search(c) for c in candidates):
        raise refuse("candidates", "a candidate holds a lone surrogate (not a character)")
    target = cells["target"].strip()
    if target.casefold() not in {c.casefold() for c in candidates}:
        raise refuse("target", f"target {excerpt(target)} is not among the candidates "
                     f"{excerpt(list(candidates))}")  # fmt: skip
    n_text = cells["n"].strip()
    if not n_text.isdigit() or not n_text.isascii():
        raise refuse("n", f"{excerpt(n_text)} is not a whole number of attractors")
    return Row(path, line, context, suffix, target, candidates, int(n_text))


@lru_cache(maxsize=4096)
def _candidates(text: str) -> tuple[str, ...] | None:
    """The candidate list a cell writes (``['paris', 'santiago']``), or None. Remembered: a
    release writes the same lists in every row of a story (1M rows, some thousand lists)."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, list | tuple) or not value:
        return None
    if not all(isinstance(v, str) and v.strip() for v in value):
        return None
    words = tuple(v.strip() for v in value)
    if len({w.casefold() for w in words}) != len(words):
        return None
    return words
