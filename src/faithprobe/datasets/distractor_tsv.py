"""The distractors method's released items (Pandia & Ettinger 2021, "Sorting through the
noise"), read as released: ``--data`` names the folder of condition folders, one condition
folder or one file (:mod:`.distractor_tsv_layout`), and each row of each file
(:mod:`.distractor_tsv_rows`) becomes part of one cloze item.

* **One item per context.** The release holds one file per model, the same items in each:
  the masked LMs' files write the sentence with the blank (``... sells [MASK] .``), the
  causal LMs' the text up to it. Both forms of a text are one item: its ``context`` is the
  text before the blank and its ``suffix`` the text after it in the masked form, so a causal
  LM is asked after the context and a masked LM sees both sides, each model kind its own
  form. The same text in several folders is one item too (the ``_distractor`` folders
  repeat the ``_object`` and ``_profession`` rows; every folder repeats its base rows).
* **Domains and base items.** A domain is the rows sharing a candidate set (case aside); its
  item set is named after the generated item set with the same targets, else after its
  query ("For his job , … sells"). In each folder, a domain's rows without attractors of one
  target are its story told at each filler level: the one the others extend is the base
  item, the others its filler rows. A row with attractors is linked to the base item of its
  folder with its target (case aside), the one whose words it shares most where a folder
  tells the story more than once.
* **What a row holds** is read from its text against its base item (filler clauses,
  attractors, their class and position: :mod:`.distractor_tsv_design`); where the folder's
  name says otherwise the text is followed and the row counted.
* **Candidates** are scored as the domain's sentences write them ("has travelled to
  Santiago": ``Santiago``, although some lists write ``santiago``); a word no sentence
  writes keeps the target column's case, else the lists'. A domain whose sentences are
  written in lower case throughout, names included (the release's monuments: "jack visited
  the taj mahal"), tells no word's case, so its words keep the target column's (``Egypt``).
  Each item's candidates are put in alphabetical order: a file's ``ordered_items`` is that
  model's ranking, so its order would tell the answer.

:func:`read_released` returns the items and what was read (:class:`ReleaseRead`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from faithprobe.datasets.distractor_tsv_design import (
    ENTITY,
    TOKEN,
    Classes,
    Design,
    Frame,
    Story,
    Text,
    derive,
)
from faithprobe.datasets.distractor_tsv_layout import Condition, is_data_file, layout
from faithprobe.datasets.distractor_tsv_rows import COLUMNS, Row, read_rows
from faithprobe.datasets.schema import TEXT, DataSchema, Field
from faithprobe.datasets.stories import ITEM_SETS, NO_ATTRACTOR
from faithprobe.errors import DataError, excerpt
from faithprobe.records import ClozeExample

LINKED_BY = "same folder, candidate set and target (case aside); most words shared"


RELEASED_TSV_SCHEMA = DataSchema(
    name="the method's released TSV folders (--data FOLDER or FILE)",
    record="one row per item of a tab-separated .csv or .tsv file, with a header line, in a "
    "folder naming its condition (single_entity_distractor, multiple_entity_distractor, "
    "*Swapped, *_with_neutral_distractor, *_object, *_profession, VaryingKeyEntity)",
    fields=(
        Field(
            "sentence",
            TEXT,
            "the text up to the blank (a causal LM's form), or the whole sentence with [MASK] "
            "or <mask> at the blank (a masked LM's); both forms of a text are one item",
            required=True,
        ),
        Field(
            "ordered_items",
            TEXT,
            "the candidate words written as a Python list, e.g. ['doctor', 'lawyer'] (column "
            "candidates is read too); scored as the sentences write them, in alphabetical order",
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
            "how many attractors the row holds, a whole number; 0 marks the base item and its "
            "filler rows (column num_attractors is read too)",
            required=True,
        ),
    ),
    links=f"a row with attractors is linked to its folder's base item of the same candidate "
    f"set and target (features.linked_by: '{LINKED_BY}'); its filler, attractors and their "
    "position are read from its text against that base item",
)


@dataclass
class Seen:
    """One distinct text of the release: what its rows say, and where they are."""

    target: str  # case-folded
    domain: frozenset[str]  # the candidate set, case-folded
    n: int
    where: Row  # its first row
    suffix: str = ""  # the masked form's text after the blank ("" if no file has that form)
    rows: Counter = field(default_factory=Counter)  # condition name -> rows


def _counts() -> defaultdict:
    return defaultdict(lambda: defaultdict(Counter))


@dataclass
class Written:
    """How the files write each domain's words, per domain and case-folded word: in the
    candidate lists and in the target column (form -> rows)."""

    listed: dict[frozenset, dict[str, Counter]] = field(default_factory=_counts)
    target: dict[frozenset, dict[str, Counter]] = field(default_factory=_counts)


@dataclass
class ReleaseRead:
    """The items read and what reading found (``record``: the report's Dataset section)."""

    items: list[ClozeExample]
    record: dict


def read_released(path: str | Path) -> ReleaseRead:
    """The release's items under ``path`` (module docstring)."""
    path = Path(path)
    found = layout(path)
    folders = sorted(found.folders, key=lambda f: f[0].order)
    seen: dict[str, Seen] = {}
    in_folder: dict[str, dict[str, Seen]] = {}
    files: list[dict] = []
    forms = Written()
    for cond, paths in folders:
        mine = in_folder.setdefault(cond.name, {})
        for p in paths:
            rows = read_rows(p)
            if rows is None:
                found.skipped.append((p, f"no column {COLUMNS['sentence'][0]}: not an item file"))
                continue
            files.append(_read_file(p, cond, rows, seen, mine, forms))
    if not files:
        raise DataError(path, "no item file: no .csv or .tsv file here has a sentence column")
    linker = _Linker(seen, in_folder, {c.name: c for c, _ in folders}, forms)
    items = linker.items()
    record = {
        "files": [{**f, "file": _shown(path, f["file"])} for f in files],
        "conditions": linker.conditions(),
        "skipped": [{"file": _shown(path, p), "why": why} for p, why in found.skipped],
        "recased": linker.recased(),
        "totals": {
            "files": len(files),
            "rows": sum(f["rows"] for f in files),
            "items": len(items),
            "base_items": sum(1 for i in items if i.features["base_id"] is None),
        },
        "linked_by": LINKED_BY,
    }
    return ReleaseRead(items, record)


def _shown(root: Path, path: Path) -> str:
    """``path`` as the report shows it: under the folder given, or its name."""
    try:
        return str(path.relative_to(root)) if path != root else path.name
    except ValueError:
        return path.name


def _read_file(path: Path, cond: Condition, rows: Iterable[Row], seen: dict[str, Seen],
               mine: dict[str, Seen], forms: Written) -> dict:  # fmt: skip
    """Read ``rows`` of one file into ``seen`` (every text) and ``mine`` (the folder's),
    counting the candidate forms each domain's lists and target column write."""
    count, masked = 0, 0
    for row in rows:
        count += 1
        masked += row.suffix is not None
        domain = frozenset(c.casefold() for c in row.candidates)
        target = row.target.casefold()
        item = seen.get(row.context)
        if item is None:
            item = seen[row.context] = Seen(target, domain, row.n, row)
        elif (item.target, item.domain, item.n) != (target, domain, row.n):
            raise DataError(row.path, f"the text {excerpt(row.context)} has "
                            f"{_says(target, domain, row.n)} here but "
                            f"{_says(item.target, item.domain, item.n)} in "
                            f"{item.where.path} line {item.where.line}",
                            record=f"line {row.line}")  # fmt: skip
        if row.suffix and not item.suffix:
            item.suffix = row.suffix
        item.rows[cond.name] += 1
        mine[row.context] = item
        for c in row.candidates:
            forms.listed[domain][c.casefold()][c] += 1
        forms.target[domain][target][row.target] += 1
    form = "masked" if masked == count else "prefix" if not masked else "mixed"
    return {"condition": cond.name, "file": path, "rows": count, "form": form}


def _says(target: str, domain: frozenset, n: int) -> str:
    return f"target {target!r}, candidates {excerpt(sorted(domain))} and {n} attractors"


class _Linker:
    """The texts read, made into items: domains, base items, links and designs."""

    def __init__(self, seen: dict[str, Seen], in_folder: dict[str, dict[str, Seen]],
                 conditions: dict[str, Condition], forms: Written) -> None:  # fmt: skip
        self.seen, self.in_folder, self.conditions_by_name = seen, in_folder, conditions
        self.forms = forms
        by_domain: dict[frozenset, list[str]] = defaultdict(list)
        for context, item in seen.items():
            by_domain[item.domain].append(context)
        self.frames = {d: Frame.of(texts) for d, texts in by_domain.items()}
        self.texts = {c: self.frames[i.domain].text(c) for c, i in seen.items()}
        self.stories: dict[str, dict[tuple, list[tuple[str, Story]]]] = {}
        for name, mine in in_folder.items():
            self.stories[name] = self._stories(mine)
        bases: dict[frozenset, dict[str, list[Text]]] = defaultdict(lambda: defaultdict(list))
        for stories in self.stories.values():
            for (domain, target), told in stories.items():
                bases[domain][target] += [s.base for _, s in told]
        self.classes = {d: Classes.of(d, by_target) for d, by_target in bases.items()}
        self.names = self._item_set_names(by_domain)
        self.scored = {d: self._scored(d, texts) for d, texts in by_domain.items()}
        self.designs: dict[tuple[str, str], tuple[str, Design]] = {}

    # -- stories ---------------------------------------------------------------------

    def _stories(self, mine: dict[str, Seen]) -> dict[tuple, list[tuple[str, Story]]]:
        """(domain, target) -> [(base item's context, its story)] of one folder: its rows
        without attractors, shortest first, each extending an earlier one a filler row of
        it, else a base item."""
        zero: dict[tuple, list[str]] = defaultdict(list)
        for context, item in mine.items():
            if item.n == 0:
                zero[(item.domain, item.target)].append(context)
        out: dict[tuple, list[tuple[str, Story]]] = {}
        for key, contexts in zero.items():
            told: list[tuple[str, Text, list[Text]]] = []
            for context in sorted(contexts, key=lambda c: len(self.texts[c].low)):
                text = self.texts[context]
                base = next((b for b in told if _extends(text, b[1])), None)
                if base is None:
                    told.append((context, text, []))
                else:
                    base[2].append(text)
            out[key] = [(c, Story(b, tuple(f))) for c, b, f in told]
        return out

    def _story_of(self, folder: str, context: str) -> tuple[str, Story]:
        item = self.seen[context]
        told = self.stories[folder].get((item.domain, item.target))
        if not told:
            row = item.where
            raise DataError(row.path, f"no row without attractors in {folder} has target "
                            f"{excerpt(row.target)} (case aside) and these candidates, so this "
                            "row has no base item to pair with", record=f"line {row.line}",
                            field=COLUMNS["target"][0])  # fmt: skip
        if len(told) == 1:
            return told[0]
        text = self.texts[context]
        for base_context, story in told:
            if base_context == context or text in story.fillers:
                return base_context, story
        return max(told, key=lambda s: _shared(text, s[1].base))

    def design(self, folder: str, context: str) -> tuple[str, Design]:
        """(base item's context, what the row holds) of ``context`` read in ``folder``."""
        key = (folder, context)
        if key not in self.designs:
            base, story = self._story_of(folder, context)
            item, cond = self.seen[context], self.conditions_by_name[folder]
            design = derive(self.texts[context], story, self.classes[item.domain], item.target,
                            cond.kind, item.n > 0)  # fmt: skip
            self.designs[key] = (base, design)
        return self.designs[key]

    # -- items -----------------------------------------------------------------------

    def items(self) -> list[ClozeExample]:
        """Base items first (each text once), then the other rows, in reading order."""
        bases: dict[str, ClozeExample] = {}
        variants: list[tuple[str, str, str, Design]] = []
        done: set[str] = set()
        for folder, mine in self.in_folder.items():
            for context in mine:
                if context in done:
                    continue
                done.add(context)
                base, design = self.design(folder, context)
                if base == context or (self.seen[context].n == 0 and not design.filler):
                    bases[context] = self._base_item(f"b{len(bases)}", context, folder)
                    continue
                variants.append((context, folder, base, design))
        out = list(bases.values())
        for k, (context, folder, base, design) in enumerate(variants):
            base_id = bases[base].id if base in bases else self._missing_base(context, base)
            out.append(self._variant(f"{base_id}|{folder}|{k}", base_id, context, folder, design))
        return out

    def _missing_base(self, context: str, base: str) -> str:
        row = self.seen[context].where
        raise DataError(row.path, f"its base item {excerpt(base)} was read as a row with filler",
                        record=f"line {row.line}")  # fmt: skip

    def _example(self, item_id: str, context: str, features: dict) -> ClozeExample:
        item = self.seen[context]
        scored = self.scored[item.domain]
        candidates = tuple(scored[c] for c in sorted(item.domain))
        features = {**features, "item_set": self.names[item.domain]}
        return ClozeExample(item_id, context, scored[item.target], candidates, item.suffix,
                            features)  # fmt: skip

    def _base_item(self, item_id: str, context: str, folder: str) -> ClozeExample:
        return self._example(item_id, context, {"base_id": None, "n_attractors": 0,
                                                "condition": folder})  # fmt: skip

    def _variant(self, item_id: str, base_id: str, context: str, folder: str,
                 design: Design) -> ClozeExample:  # fmt: skip
        cond, n = self.conditions_by_name[folder], self.seen[context].n
        features = {
            "base_id": base_id,
            "n_attractors": n,
            "setting": cond.setting,
            "attractor_type": design.attractor_type if n else NO_ATTRACTOR,
            "position": design.position if n else cond.position,
            "condition": folder,
            "linked_by": LINKED_BY,
        }
        if design.filler:
            features["filler"] = list(design.filler)
        if n and len(design.named) == n:
            features["attractors"] = list(design.named)
        return self._example(item_id, context, features)

    # -- names and casing --------------------------------------------------------------

    def _item_set_names(self, by_domain: dict[frozenset, list[str]]) -> dict[frozenset, str]:
        """Each domain's item set: the generated item set with the same targets, else its
        query with the key entity shown as "…"."""
        known = {frozenset(t.casefold() for t in s.targets): name for name, s in ITEM_SETS.items()}
        out = {}
        for domain, contexts in by_domain.items():
            if domain in known:
                out[domain] = known[domain]
                continue
            context = contexts[0]
            text = self.texts[context]
            query = re.split(r"(?<=[.!?])\s+", context.strip())[-1]
            names = {raw for raw, low in zip(text.raw, text.low, strict=True) if low == ENTITY}
            for name in names:
                query = re.sub(rf"\b{re.escape(name)}\b", "…", query)
            out[domain] = query
        return out

    def _scored(self, domain: frozenset, contexts: list[str]) -> dict[str, str]:
        """Each candidate of ``domain`` (case-folded) as it is scored (module docstring)."""
        written: dict[str, Counter] = defaultdict(Counter)
        starting: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
        for c in domain:
            tokens = [t.lower() for t in TOKEN.findall(c)]
            starting[tokens[0]].append((c, tokens))
        if not any(any(ch.isupper() for ch in context) for context in contexts):
            contexts = []  # sentences written in lower case throughout tell no word's case
        for context in contexts:
            text = self.texts[context]
            for i, first in enumerate(text.low):
                for c, tokens in starting.get(first, ()):
                    if list(text.low[i : i + len(tokens)]) == tokens:
                        written[c][_span(context, text.raw, i, len(tokens))] += 1
        out = {}
        for c in domain:
            for counts in (written[c], self.forms.target[domain][c], self.forms.listed[domain][c]):
                if counts:
                    out[c] = counts.most_common(1)[0][0]
                    break
        return out

    def recased(self) -> list[dict]:
        """The words scored in another case than a file writes them: per item set, word and
        column, the rows that wrote it so."""
        out = []
        for domain, scored in self.scored.items():
            for c, form in sorted(scored.items()):
                for column, counts in ((COLUMNS["candidates"][0], self.forms.listed),
                                       (COLUMNS["target"][0], self.forms.target)):  # fmt: skip
                    for written, rows in sorted(counts[domain][c].items()):
                        if written != form:
                            out.append({"item_set": self.names[domain], "column": column,
                                        "written": written, "scored": form, "rows": rows})  # fmt: skip
        return out

    # -- what each folder held -----------------------------------------------------------

    def conditions(self) -> list[dict]:
        """Per condition folder: rows, texts, base items, filler rows and variants linked;
        the variants' filler levels, classes and positions as read from the text, and how
        many texts (and rows) the folder's name says otherwise of."""
        out = []
        for folder, mine in self.in_folder.items():
            cond = self.conditions_by_name[folder]
            counts: dict[str, Counter] = defaultdict(Counter)
            differs: dict[str, Counter] = defaultdict(Counter)
            for context, item in mine.items():
                base, design = self.design(folder, context)
                rows = item.rows[folder]
                if item.n == 0:
                    counts["kind"]["base" if base == context or not design.filler
                                   else "filler"] += 1  # fmt: skip
                    continue
                counts["kind"]["variant"] += 1
                counts["filler"][len(design.filler)] += 1
                counts["position"][design.position] += 1
                counts["type"][design.attractor_type] += 1
                checks = {
                    "position": design.position != cond.position,
                    "type": cond.kind is not None and design.attractor_type != cond.kind,
                    "count": design.attractor_type in ("B", "T") and len(design.named) != item.n,
                }
                for what, off in checks.items():
                    if off:
                        differs[what]["items"] += 1
                        differs[what]["rows"] += rows
            out.append({
                "condition": folder,
                "setting": cond.setting,
                "folder_type": cond.kind or "B or T",
                "folder_position": cond.position,
                "rows": sum(i.rows[folder] for i in mine.values()),
                "items": len(mine),
                "base_items": counts["kind"]["base"],
                "filler_rows": counts["kind"]["filler"],
                "variants_linked": counts["kind"]["variant"],
                "filler_levels": {str(k): v for k, v in sorted(counts["filler"].items())},
                "positions": dict(sorted(counts["position"].items())),
                "types": dict(sorted(counts["type"].items())),
                "differs": {what: dict(c) for what, c in sorted(differs.items())},
            })  # fmt: skip
        return out


def _span(context: str, raw: tuple[str, ...], start: int, length: int) -> str:
    """The words ``raw[start:start+length]`` as ``context`` writes them."""
    if length == 1:
        return raw[start]
    pattern = r"\W*".join(re.escape(t) for t in raw[start : start + length])
    found = re.search(pattern, context)
    return found.group(0) if found else " ".join(raw[start : start + length])


def _extends(text: Text, base: Text) -> bool:
    """Whether ``text`` holds every token of ``base``, in order (a filler row of it), and is
    not the same story told again."""
    if text.low == base.low:
        return False
    matcher = SequenceMatcher(None, base.low, text.low, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks()) == len(base.low)


def _shared(text: Text, base: Text) -> int:
    matcher = SequenceMatcher(None, base.low, text.low, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks())


def is_release_path(path: Path) -> bool:
    """Whether ``--data path`` is read as the release (a folder, or a ``.csv``/``.tsv``
    file) rather than as JSON lines."""
    return path.is_dir() or is_data_file(path)
