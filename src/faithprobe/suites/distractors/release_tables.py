"""The Dataset section's tables of a run on the method's released files: what was read per
condition folder and per file, which words were scored in another case than a file writes
them, and what was not read (``metrics.json``'s ``release``, written by
:mod:`faithprobe.datasets.distractor_tsv`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.report.table_spec import TableSpec, count, or_dash
from faithprobe.report.tables import DASH, Table


def _counts(key: str):
    """A record's ``key`` (a mapping of counts) as "name: count, …"."""
    return lambda r: ", ".join(f"{k}: {v:,}" for k, v in (r.get(key) or {}).items()) or DASH


def _differs(r: Mapping[str, Any]) -> str:
    """The texts (rows) whose folder's name says otherwise than the text, by what."""
    parts = [f"{what}: {c['items']:,} ({c['rows']:,} rows)" for what, c in r["differs"].items()]
    return "; ".join(parts) or "none"


CONDITIONS = TableSpec(
    "release_conditions",
    "Released files read, per condition folder",
    {
        "condition": or_dash("condition"),
        "setting": or_dash("setting"),
        "folder says": lambda r: f"{r['folder_type']}, {r['folder_position']}",
        "rows": count("rows"),
        "texts": count("items"),
        "base items": count("base_items"),
        "filler rows": count("filler_rows"),
        "variants linked": count("variants_linked"),
        "filler levels (variants)": _counts("filler_levels"),
        "positions (from the text)": _counts("positions"),
        "text differs from folder": _differs,
    },
    rows="conditions",
    ordering=None,
    written=True,
    note="Rows: rows read in the folder's files (one per model); texts: distinct texts among "
    "them, each one item whatever files repeat it; base items and filler rows: its texts "
    "without attractors (the story without filler, and told at each filler level); variants "
    "linked: its texts with attractors, each paired with its folder's base item of the same "
    "candidate set and target. Filler levels, classes and positions are read from each text "
    "against its base item; where the folder's name says otherwise, the text is followed and "
    "the texts (rows) counted in the last column.",
)

FILES = TableSpec(
    "release_files",
    "Released files read",
    {
        "file": or_dash("file"),
        "condition": or_dash("condition"),
        "form": or_dash("form"),
        "rows": count("rows"),
    },
    rows="files",
    ordering=None,
    note="Form: masked (the sentence with the blank, a masked LM's file), prefix (the text up "
    "to the blank, a causal LM's). Both forms of a text are one item: a causal LM is asked "
    "after its context, a masked LM sees the text after the blank too.",
)

RECASED = TableSpec(
    "release_recased",
    "Words scored in another case than a file writes them",
    {
        "item set": or_dash("item_set"),
        "column": or_dash("column"),
        "written": or_dash("written"),
        "scored": or_dash("scored"),
        "rows": count("rows"),
    },
    rows="recased",
    ordering=None,
    note="A candidate is scored as the item set's sentences write it (else as the target "
    "column does); rows: the rows whose column wrote it otherwise.",
)

SKIPPED = TableSpec(
    "release_skipped",
    "Files not read",
    {"file": or_dash("file"), "why": or_dash("why")},
    rows="skipped",
    ordering=None,
)


def release_tables(metrics: Mapping[str, Any]) -> list[Table | None]:
    """The tables of ``metrics["release"]`` (none for other data)."""
    release = metrics.get("release") or {}
    return [spec(release) for spec in (CONDITIONS, FILES, RECASED, SKIPPED)]


def release_lead(metrics: Mapping[str, Any]) -> str:
    """What was read, in a sentence (empty for other data)."""
    totals = (metrics.get("release") or {}).get("totals")
    if not totals:
        return ""
    return (f" Read from the method's released files: {totals['rows']:,} rows in "
            f"{totals['files']:,} files, {totals['items']:,} items after each text was read "
            f"once ({totals['base_items']:,} base items).")  # fmt: skip
