"""NLI-XY (Rozanova et al.): contexts with an ``x`` slot x inserted word pairs -> NLI
examples.

``contexts.tsv`` gives each context ``c`` (a sentence with the token ``x``), its
monotonicity at the slot (``up``, ``down`` or ``neither``) and which grammatical kinds of
noun fit the slot (columns ``singular``, ``mass``, ``plural``, ``place``, marked ``x``).
``insertions.tsv`` gives word pairs ``(x, y)`` with their kinds (``x_grammar``,
``y_grammar``: ``s``, ``m``, ``p`` or a column name) and relation ``insertion_rel``
(``leq``: x is a kind of y; ``geq``; ``none``). A kind column the header lacks is empty on
every row (the method's train/dev/test splits have no ``place`` column). Both files are
checked row by row against their declared schemas (:data:`CONTEXTS_SCHEMA`,
:data:`INSERTIONS_SCHEMA`), the cells read case-insensitively in lower case.

Every pair is also used reversed (``leq`` <-> ``geq``); duplicate pairs are dropped, as in
the method's code. A pair goes into a context only where the context admits both words'
kinds. The example is premise ``c(x)``, hypothesis ``c(y)``, and its gold label is
entailment iff (``leq``, ``up``) or (``geq``, ``down``) -- :func:`gold_label`. A context
that takes no pair, or a pair that fits no context, would be in no example: it is an error,
not a silent drop. From the shared files this gives 29,436 examples, 11,981 of them
entailment, the count the method's own code yields.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from faithprobe.datasets.schema import TEXT, DataSchema, Field, Record, Rule
from faithprobe.datasets.tsv import TSVRecord, lowered, read_tsv, require_columns
from faithprobe.errors import DataError, excerpt
from faithprobe.records import ENTAILMENT, NON_ENTAILMENT, NLIExample

MONOTONICITY = ("up", "down", "neither")
RELATIONS = ("leq", "geq", "none")
REVERSED = {"leq": "geq", "geq": "leq", "none": "none"}
KINDS = {"s": "singular", "m": "mass", "p": "plural", "l": "place"}
SLOT = re.compile(r"\bx\b")
ADMITS = "x"  # the mark of a noun kind the context's slot takes
# the columns read case-insensitively (checked and read in lower case)
CASE_FREE = ("monotonicity", *KINDS.values(), "x_grammar", "y_grammar", "insertion_rel")

# challenge sets (two-class NLI) looked for beside an NLI-XY folder, relative to it (a data
# folder's layout, faithprobe.catalog): SNLI's dev and test jsonl (the full files or
# prefixes named after them), not its training file; MultiNLI's matched and mismatched dev
# (its test sets are unlabelled) and ANLI's test set of each round, the method's benchmark
# splits (its Table 6)
CHALLENGE_SETS = (
    "help_test.tsv",
    "monotonicity_fragments_easy_test.tsv",
    "../med/MED.tsv",
    "../help/*.tsv",
    "../snli/snli_1.0_dev*.jsonl",
    "../snli/snli_1.0_test*.jsonl",
    "../mnli/multinli_1.0_dev_matched*.jsonl",
    "../mnli/multinli_1.0_dev_mismatched*.jsonl",
    "../anli/R[123]/test.jsonl",
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
    line: int  # its row in contexts.tsv


@dataclass(frozen=True)
class Insertion:
    id: str
    x: str
    y: str
    relation: str
    x_kind: str
    y_kind: str
    source: str
    line: int  # its row in insertions.tsv


@dataclass
class NLIXYGrid:
    """All examples of an NLI-XY folder, indexed by context and by insertion (the two
    things the method's interventions hold fixed or swap)."""

    contexts: list[Context]
    insertions: list[Insertion]
    examples: list[NLIExample]
    insertion_rows: int = 0  # rows of insertions.tsv (some may add no pair: duplicates)
    by_context: dict[str, list[NLIExample]] = field(default_factory=dict)
    by_insertion: dict[str, list[NLIExample]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        by_context, by_insertion = defaultdict(list), defaultdict(list)
        for ex in self.examples:
            by_context[ex.features["context_id"]].append(ex)
            by_insertion[ex.features["insertion_id"]].append(ex)
        self.by_context, self.by_insertion = dict(by_context), dict(by_insertion)


def _context_has_one_slot(record: Record) -> str | None:
    text = record.get("context", "")
    slots = len(SLOT.findall(text))
    return None if slots == 1 else f"{excerpt(text)} has {slots} slot tokens"


def _context_takes_a_kind(record: Record) -> str | None:
    if not any(record.get(k) == ADMITS for k in KINDS.values()):
        return "no noun kind is marked for the slot"
    return None


KIND_CODES = (*KINDS, *KINDS.values())
CONTEXTS_SCHEMA = DataSchema(
    name="NLI-XY contexts (contexts.tsv)",
    record="one context per row of a tab-separated file with a header line (no quoting); "
    "other columns (intervened, operator, ...) are ignored",
    fields=(
        Field("source", TEXT, "where the context comes from (read, not used)"),
        Field(
            "context",
            TEXT,
            "a sentence with exactly one slot token x (a word of its own), where the inserted "
            "words go",
            required=True,
        ),
        Field(
            "monotonicity",
            TEXT,
            "the context's monotonicity at the slot (read case-insensitively): up (a word may "
            "be replaced by a more general one), down (by a more specific one), neither",
            required=True,
            allowed=MONOTONICITY,
        ),
        *(
            Field(
                kind,
                TEXT,
                f"x: the slot takes {kind} nouns; empty: it does not (a column the header "
                "lacks is empty on every row)",
                allowed=(ADMITS,),
            )
            for kind in KINDS.values()
        ),
    ),
    rules=(
        Rule("context", "the context holds exactly one slot token x", _context_has_one_slot),
        Rule(
            "singular",
            "at least one of singular, mass, plural, place is x",
            _context_takes_a_kind,
        ),
    ),
    links="each context is crossed with every insertion pair (insertions.tsv) whose two "
    "words' kinds it takes; a context that takes no pair's kinds is an error. Contexts are "
    "named c<line> (c0002: the row on line 2)",
)

INSERTIONS_SCHEMA = DataSchema(
    name="NLI-XY insertions (insertions.tsv)",
    record="one word pair per row of a tab-separated file with a header line (no quoting); "
    "other columns are ignored",
    fields=(
        Field(
            "source",
            TEXT,
            "where the pair comes from; the same pair from two sources is used twice",
        ),
        Field("x", TEXT, "the word put in the premise's slot", required=True),
        Field("y", TEXT, "the word put in the hypothesis's slot", required=True),
        Field(
            "x_grammar",
            TEXT,
            "x's noun kind (read case-insensitively): s or singular, m or mass, p or plural, "
            "l or place",
            required=True,
            allowed=KIND_CODES,
        ),
        Field(
            "y_grammar", TEXT, "y's noun kind, as x_grammar", required=True, allowed=KIND_CODES
        ),  # fmt: skip
        Field(
            "insertion_rel",
            TEXT,
            "how x relates to y (read case-insensitively): leq (x is a kind of y: dog, "
            "animal), geq (y is a kind of x), none (neither)",
            required=True,
            allowed=RELATIONS,
        ),
    ),
    links="every pair is also used reversed (y, x; leq and geq swapped), and a pair met "
    "twice is used once. A pair (x, y) goes into every context that takes both words' "
    "kinds: premise = the context with x in its slot, hypothesis = with y; gold = entailment "
    "iff (insertion_rel, monotonicity) is (leq, up) or (geq, down), else non-entailment. "
    "A pair that fits no context is an error. Pairs are named i<line> (reversed: i<line>r)",
)


def _records(path: Path, schema: DataSchema) -> list[tuple[int, TSVRecord]]:
    """The rows of ``path``, each checked against ``schema`` (the cells it reads
    case-insensitively in lower case)."""
    header, rows = read_tsv(path)
    require_columns(path, header, [f.name for f in schema.fields if f.required is True])
    if not rows:
        raise DataError(path, "holds no rows")
    out = []
    for line, row in rows:
        record = lowered(row, CASE_FREE)
        schema.check(path, f"line {line}", record)
        out.append((line, record))
    return out


def read_contexts(path: str | Path) -> list[Context]:
    path = Path(path)
    out = []
    for line, row in _records(path, CONTEXTS_SCHEMA):
        kinds = frozenset(k for k in KINDS.values() if row.get(k) == ADMITS)
        out.append(Context(f"c{line:04d}", row["context"], row["monotonicity"], kinds,
                           row.get("source", ""), line))  # fmt: skip
    return out


def read_insertions(path: str | Path) -> list[Insertion]:
    """The pairs of ``path`` and their reverses, without duplicates."""
    return _pairs(_records(Path(path), INSERTIONS_SCHEMA))


def _pairs(rows: list[tuple[int, TSVRecord]]) -> list[Insertion]:
    """The pairs of the checked rows of insertions.tsv and their reverses, without
    duplicates."""
    out, seen = [], set()
    for line, row in rows:
        rel = row["insertion_rel"]
        xk = KINDS.get(row["x_grammar"], row["x_grammar"])
        yk = KINDS.get(row["y_grammar"], row["y_grammar"])
        source = row.get("source", "")
        forward = Insertion(f"i{line:04d}", row["x"], row["y"], rel, xk, yk, source, line)
        backward = Insertion(f"i{line:04d}r", row["y"], row["x"], REVERSED[rel], yk, xk, source,
                             line)  # fmt: skip
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
    rows = _records(folder / "insertions.tsv", INSERTIONS_SCHEMA)
    insertions = _pairs(rows)
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
    grid = NLIXYGrid(contexts, insertions, examples, insertion_rows=len(rows))
    _check_every_row_is_used(folder, grid)
    return grid


def _check_every_row_is_used(folder: Path, grid: NLIXYGrid) -> None:
    """A context that takes no pair's kinds, or a pair that fits no context, would fall out
    of every set: a DataError naming its row."""
    for c in grid.contexts:
        if c.id not in grid.by_context:
            raise DataError(folder / "contexts.tsv", "takes no insertion pair: none has both "
                            f"words of the kinds it marks ({', '.join(sorted(c.kinds))})",
                            record=f"line {c.line}", field="singular")  # fmt: skip
    for ins in grid.insertions:
        if ins.id not in grid.by_insertion:
            raise DataError(folder / "insertions.tsv", "fits no context: none takes both "
                            f"{ins.x_kind} and {ins.y_kind} nouns",
                            record=f"line {ins.line}", field="x_grammar")  # fmt: skip


def challenge_files(folder: str | Path) -> list[Path]:
    """The known two-class challenge sets found beside an NLI-XY folder; one of their names
    that is not a file (a folder ``help_test.tsv``) is refused rather than passed over."""
    folder = Path(folder)
    found: list[Path] = []
    for pattern in CHALLENGE_SETS:
        for path in sorted(folder.glob(pattern)):
            if not path.is_file():
                raise DataError(path, "is not a file: a challenge set is a file (option challenge)")
            found.append(path.resolve())
    return found
