"""NLI-XY (Rozanova et al.): contexts with an ``x`` slot x inserted word pairs -> NLI
examples.

``contexts.tsv`` gives each context ``c`` (a sentence with the token ``x``), its
monotonicity at the slot (``up``, ``down`` or ``neither``) and which grammatical kinds of
noun fit the slot (columns ``singular``, ``mass``, ``plural``, ``place``, marked ``x``).
``insertions.tsv`` gives word pairs ``(x, y)`` with their kinds (``x_grammar``,
``y_grammar``: ``s``, ``m``, ``p`` or a column name) and relation ``insertion_rel``
(``leq``: x is a kind of y; ``geq``; ``none``).

Every pair is also used reversed (``leq`` <-> ``geq``); duplicate pairs are dropped, as in
the method's code. A pair goes into a context only where the context admits both words'
kinds. The example is premise ``c(x)``, hypothesis ``c(y)``, and its gold label is
entailment iff (``leq``, ``up``) or (``geq``, ``down``) -- :func:`gold_label`. From the
shared files this gives 29,436 examples, 11,981 of them entailment, the count the method's
own code yields.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from faithprobe.datasets.jsonl import read_text
from faithprobe.errors import DataError, excerpt
from faithprobe.examples import ENTAILMENT, NON_ENTAILMENT, NLIExample

MONOTONICITY = ("up", "down", "neither")
RELATIONS = ("leq", "geq", "none")
REVERSED = {"leq": "geq", "geq": "leq", "none": "none"}
KINDS = {"s": "singular", "m": "mass", "p": "plural", "l": "place"}
SLOT = re.compile(r"\bx\b")

# challenge sets (two-class NLI) looked for beside an NLI-XY folder, relative to it; SNLI's
# dev and test jsonl (the full files or prefixes named after them), not its training file
CHALLENGE_SETS = (
    "help_test.tsv",
    "monotonicity_fragments_easy_test.tsv",
    "../med/MED.tsv",
    "../help/*.tsv",
    "../snli/snli_1.0_dev*.jsonl",
    "../snli/snli_1.0_test*.jsonl",
)


def gold_label(relation: str, monotonicity: str) -> str:
    """Entailment iff the insertion's direction matches the context's monotonicity."""
    if (relation, monotonicity) in (("leq", "up"), ("geq", "down")):
        return ENTAILMENT
    return NON_ENTAILMENT


@dataclass(frozen=True)
class Context:
    id: str
    text: str
    monotonicity: str
    kinds: frozenset[str]  # the noun kinds the slot admits
    source: str


@dataclass(frozen=True)
class Insertion:
    id: str
    x: str
    y: str
    relation: str
    x_kind: str
    y_kind: str
    source: str


@dataclass
class NLIXYGrid:
    """All examples of an NLI-XY folder, indexed by context and by insertion (the two
    things the method's interventions hold fixed or swap)."""

    contexts: list[Context]
    insertions: list[Insertion]
    examples: list[NLIExample]
    by_context: dict[str, list[NLIExample]] = field(default_factory=dict)
    by_insertion: dict[str, list[NLIExample]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        by_context, by_insertion = defaultdict(list), defaultdict(list)
        for ex in self.examples:
            by_context[ex.features["context_id"]].append(ex)
            by_insertion[ex.features["insertion_id"]].append(ex)
        self.by_context, self.by_insertion = dict(by_context), dict(by_insertion)


def _rows(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    lines = read_text(path).splitlines()
    reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = [h.strip() for h in next(reader, [])]
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(path, f"header lacks column(s) {', '.join(missing)}", record="line 1")
    out = []
    for line, row in enumerate(reader, start=2):
        if any(cell.strip() for cell in row):
            cells = [c.strip() for c in row] + [""] * (len(header) - len(row))
            out.append((line, dict(zip(header, cells, strict=False))))
    if not out:
        raise DataError(path, "holds no rows")
    return out


def _choice(path: Path, line: int, row: dict, name: str, allowed) -> str:
    value = row[name].lower()
    if value not in allowed:
        raise DataError(
            path,
            f"expected one of {', '.join(allowed)}, got {excerpt(row[name])}",
            record=f"line {line}",
            field=name,
        )
    return value


def read_contexts(path: str | Path) -> list[Context]:
    path = Path(path)
    out = []
    for line, row in _rows(path, ("context", "monotonicity", *KINDS.values())):
        text = row["context"]
        if len(SLOT.findall(text)) != 1:
            raise DataError(
                path,
                f"needs exactly one slot token 'x': {excerpt(text)}",
                record=f"line {line}",
                field="context",
            )
        kinds = frozenset(k for k in KINDS.values() if row[k].lower() == "x")
        if not kinds:
            raise DataError(
                path,
                "no noun kind marked for the slot",
                record=f"line {line}",
                field="singular/mass/plural/place",
            )
        monotonicity = _choice(path, line, row, "monotonicity", MONOTONICITY)
        out.append(Context(f"c{line:04d}", text, monotonicity, kinds, row.get("source", "")))
    return out


def read_insertions(path: str | Path) -> list[Insertion]:
    """The pairs of ``path`` and their reverses, without duplicates."""
    path = Path(path)
    out, seen = [], set()
    for line, row in _rows(path, ("x", "y", "x_grammar", "y_grammar", "insertion_rel")):
        for name in ("x", "y"):
            if not row[name]:
                raise DataError(path, "empty", record=f"line {line}", field=name)
        rel = _choice(path, line, row, "insertion_rel", RELATIONS)
        xk = KINDS.get(row["x_grammar"].lower(), row["x_grammar"].lower())
        yk = KINDS.get(row["y_grammar"].lower(), row["y_grammar"].lower())
        for name, kind in (("x_grammar", xk), ("y_grammar", yk)):
            if kind not in KINDS.values():
                raise DataError(
                    path,
                    f"unknown noun kind {excerpt(row[name])}; expected one of "
                    f"{', '.join([*KINDS, *KINDS.values()])}",
                    record=f"line {line}",
                    field=name,
                )
        source = row.get("source", "")
        forward = Insertion(f"i{line:04d}", row["x"], row["y"], rel, xk, yk, source)
        backward = Insertion(f"i{line:04d}r", row["y"], row["x"], REVERSED[rel], yk, xk, source)
        for ins in (forward, backward):
            key = (ins.x, ins.y, ins.relation, ins.x_kind, ins.y_kind, ins.source)
            if key not in seen:
                seen.add(key)
                out.append(ins)
    return out


def instantiate(context: Context, word: str) -> str:
    return SLOT.sub(word, context.text, count=1)


def read_nli_xy(folder: str | Path) -> NLIXYGrid:
    """The grid of ``folder/contexts.tsv`` x ``folder/insertions.tsv``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(folder, "expected an NLI-XY folder holding contexts.tsv and insertions.tsv")
    contexts = read_contexts(folder / "contexts.tsv")
    insertions = read_insertions(folder / "insertions.tsv")
    examples = []
    for c in contexts:
        for ins in insertions:
            if ins.x_kind not in c.kinds or ins.y_kind not in c.kinds:
                continue
            examples.append(
                NLIExample(
                    id=f"nlixy-{c.id}-{ins.id}",
                    premise=instantiate(c, ins.x),
                    hypothesis=instantiate(c, ins.y),
                    label=gold_label(ins.relation, c.monotonicity),
                    features={
                        "source": "nli-xy",
                        "context_id": c.id,
                        "context": c.text,
                        "monotonicity": c.monotonicity,
                        "insertion_id": ins.id,
                        "x": ins.x,
                        "y": ins.y,
                        "relation": ins.relation,
                    },
                )
            )
    return NLIXYGrid(contexts, insertions, examples)


def challenge_files(folder: str | Path) -> list[Path]:
    """The known two-class challenge sets found beside an NLI-XY folder."""
    folder = Path(folder)
    found: list[Path] = []
    for pattern in CHALLENGE_SETS:
        found += sorted(p.resolve() for p in folder.glob(pattern) if p.is_file())
    return found
