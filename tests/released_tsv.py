"""Folders in the layout of the distractors method's release (Pandia & Ettinger 2021,
``data/combined_data/<condition>/<model>/complete_data_*.csv``), written here in the
release's own sentence forms and with its quirks, and the truth of every text written (what
the reader must read from it); and a run of the suite on them with the reference reader
(:func:`run_reader`).

The quirks, each as the release has it:

* one file per model of the same items: a causal LM's (the text up to the blank), BERT's
  (``… [MASK] .``) and RoBERTa's (``… <mask> .``), each ranking the candidates its own way
  in ``ordered_items``;
* every row told about its own entity, each story at four filler levels (no-attractor rows
  "X has a sister , played basketball , and now works as …"), the ``_distractor`` folders
  repeating the ``_object`` and ``_profession`` rows;
* capitals listed in lower case in the rows without attractors and in the ``_object``
  folders, capitalised elsewhere, the target column capitalised throughout;
* a domain whose filler clauses no phrase list holds ("keeps a diary", "went to school in
  Lyon", "rides a tandem"), told without the "now" that joins the others' filler to the fact;
* unrelated-attractor folders whose variants use other filler clauses than their rows
  without attractors ("fell down on Tuesday");
* rows whose folder's name puts their attractors where the text does not: the capitals'
  B-type rows with two attractors in ``single_entity_distractorSwapped`` are told with the
  attractors after the critical fact (the release's 480 monuments rows);
* a key-entity-later folder (``VaryingKeyEntity``) with the item columns, and a
  ``Varying_key_entity`` folder with only ``sentence`` and ``target_occupation`` (as the
  release's ``data/Varying_key_entity``), written apart (:func:`write_key_entity_without_candidates`).
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from typer.testing import CliRunner

from faithprobe.cli import app

HEADER = ["sentence", "distance_from_beginning", "distance_from_masked_token", "target_prob",
          "ordered_items", "target_occupation", "count_attractors", "relative_prob",
          "relative_rank"]  # fmt: skip
# model folder -> what its sentences add after the blank (None: the text up to the blank)
MODELS = {"GPT2Small": None, "BertBase": "[MASK] .", "RobertaBase": "<mask> ."}
NAMES = ("Daniel", "Sebastian", "Joe", "Rowan", "Jack", "John", "Jake")
UNRELATED = ("writes poetry", "drives a car", "owns a kayak")
N_MAX = 2  # attractors per row, up to


@dataclass(frozen=True)
class Domain:
    """One candidate set's stories and the phrases that tell them."""

    name: str  # the item set the reader names it after
    pairs: tuple[tuple[str, str], ...]  # (background, target)
    fact: str  # "works as a {}"
    query: str  # "For his job , {} sells"
    t_single: str
    b_single: str
    t_multi: str  # "{} likes to buy {}": the other entity, the word
    b_multi: str
    filler: tuple[str, str, str]  # the clauses of the rows without attractors
    now: str = "now "  # what joins filler to the fact
    capitals: bool = False  # the lists' case differs between folders


DOMAINS = (
    Domain("professions", (("florist", "flowers"), ("baker", "bread"), ("butcher", "meat")),
           "works as a {}", "For his job , {} sells", "likes to buy {}", "is friends with {}",
           "{} likes to buy {}", "{} works as a {}",
           ("has a sister", "played basketball", "sang in a choir")),
    Domain("capitals", (("Chile", "Santiago"), ("France", "Paris"), ("Poland", "Warsaw")),
           "lives in {}", "The capital of {}'s country is", "has travelled to {}",
           "has traveled to {}", "{} lives in {}", "{} lives in {}",
           ("has a sister", "played basketball", "sang in a choir"), capitals=True),
    Domain("The goods … sold were", (("beekeeper", "honey"), ("potter", "vases"),
                                        ("weaver", "rugs")),
           "works as a {}", "The goods {} sold were", "trades in {}", "learned from {}",
           "{} trades in {}", "{} works as a {}",
           ("keeps a diary", "went to school in Lyon", "rides a tandem"), now=""),
)  # fmt: skip
# condition folder -> (setting, attractor types, how its rows are told)
FOLDERS = {
    "single_entity_profession": ("single", ("B",), "after"),
    "single_entity_object": ("single", ("T",), "after"),
    "single_entity_distractor": ("single", ("B", "T"), "after"),
    "single_entity_distractorSwapped": ("single", ("B", "T"), "between"),
    "single_entity_with_neutral_distractor": ("single", ("unrelated",), "after"),
    "multiple_entity_profession": ("multi", ("B",), "after"),
    "multiple_entity_object": ("multi", ("T",), "after"),
    "multiple_entity_distractor": ("multi", ("B", "T"), "after"),
    "multiple_entity_distractorSwapped": ("multi", ("B", "T"), "between"),
    "multiple_entity_with_neutral_distractor": ("multi", ("unrelated",), "after"),
    "VaryingKeyEntity": ("multi", ("B",), "later"),
}
NEUTRAL_FILLER = ("fell down on Tuesday",)  # the unrelated folders' variants' third clause


@dataclass(frozen=True)
class Truth:
    """What one written text holds: what the reader must read from it."""

    condition: str
    target: str
    n: int
    attractor_type: str  # "none" for a row without attractors
    position: str | None  # None for a row without attractors
    filler: int  # filler level
    attractors: tuple[str, ...]  # the related attractors' words, as written
    base: str  # the base item's text


def _a(word: str) -> str:
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _listed(words: list[str], oxford: bool = True) -> str:
    """'a', 'a and b', 'a , b , and c' (without ``oxford``: 'a , b and c')."""
    if len(words) <= 2:
        return " and ".join(words)
    last = " , and " if oxford else " and "
    return " , ".join(words[:-1]) + last + words[-1]


def _told(d: Domain, e: str, background: str, filler: tuple[str, ...], oxford: bool) -> str:
    """The key entity, its filler clauses and its critical fact, filler first."""
    fact = d.fact.format(background)
    if not filler:
        return f"{e} {fact}"
    if len(filler) == 1:
        return f"{e} {filler[0]} and {d.now}{fact}"
    joined = " , ".join(filler) + (" ," if oxford else "")
    return f"{e} {joined} and {d.now}{fact}"


def story_text(d: Domain, e: str, background: str, filler: tuple[str, ...] = (),
               attractors: tuple[str, ...] = (), kind: str = "none", setting: str = "single",
               position: str = "after", others: tuple[str, ...] = ()) -> str:  # fmt: skip
    """One row's text, told as the release tells it."""
    words = [_a(w) if kind == "B" and d.fact.startswith("works") else w for w in attractors]
    if kind == "unrelated":
        phrases = list(attractors)
    elif setting == "single":
        phrases = [(d.t_single if kind == "T" else d.b_single).format(_listed(words))]
    else:
        phrases = []
    if setting == "multi" and kind != "unrelated":
        template = d.t_multi if kind == "T" else d.b_multi
        phrases = [template.format(o, w.removeprefix("a ").removeprefix("an "))
                   for o, w in zip(others, words, strict=True)]  # fmt: skip
    elif setting == "multi":
        phrases = [f"{o} {p}" for o, p in zip(others, attractors, strict=True)]
    if not attractors:
        first = _told(d, e, background, filler, oxford=True)
    elif position == "after":
        first = f"{_told(d, e, background, filler, oxford=False)} and {_listed(phrases, False)}"
        if len(phrases) > 1:
            first = (f"{_told(d, e, background, filler, oxford=False)} , "
                     f"{' , '.join(phrases[:-1])} , and {phrases[-1]}")  # fmt: skip
    elif position == "between" and setting == "single":
        first = f"{e} {phrases[0]} and {d.fact.format(background)}"
        first += _after_fact(filler)
    elif position == "between":
        first = (f"{e} knows that {_listed(phrases, False)} and he himself "
                 f"{d.fact.format(background)}{_after_fact(filler)}")  # fmt: skip
    else:  # later: the key entity told among the others, after the first
        told = [f"{others[0]} {d.fact.format(attractors[0])}", f"{e} {d.fact.format(background)}"]
        told += [f"{o} {d.fact.format(w)}" for o, w in zip(others[1:], attractors[1:], strict=True)]
        first = _listed(told)
    return f"{first} . {d.query.format(e)}"


def _after_fact(filler: tuple[str, ...]) -> str:
    if not filler:
        return ""
    if len(filler) == 1:
        return f" and {filler[0]}"
    return f" , {' , '.join(filler[:-1])} and {filler[-1]}"


def _rows(d: Domain, folder: str, setting: str, kinds: tuple[str, ...], position: str,
          names: list[str]) -> list[tuple[str, int, str, Truth]]:  # fmt: skip
    """(text, n, target, truth) of one domain's rows in one folder."""
    out = []
    targets = [t for _, t in d.pairs]
    for b_i, (background, target) in enumerate(d.pairs):
        e0 = names[b_i % len(names)]
        base = story_text(d, e0, background)
        levels = range(3) if position == "later" else range(4)
        told_levels = range(1) if position == "later" else levels  # later: no filler told
        for level in levels:
            text = story_text(d, e0, background, d.filler[:level])
            out.append((text, 0, target, Truth(folder, target, 0, "none", None, level, (), base)))
        for kind in kinds:
            if kind == "unrelated":
                pool = list(UNRELATED)
            elif kind == "T":
                pool = [t for t in targets if t != target]
            else:
                pool = [b for b, _ in d.pairs if b != background]
            for n in range(1, N_MAX + 1):
                for k, chosen in enumerate(combinations(pool, n)):
                    if position == "later" and n != 2:
                        continue
                    e = names[(b_i + k + n + 1) % len(names)]
                    others = tuple(o for o in names if o != e)[:n]
                    told = position
                    if (folder == "single_entity_distractorSwapped" and d.capitals and kind == "B"
                            and n == 2):  # fmt: skip
                        told = "after"  # the folder says between; the text puts them after
                    clauses = d.filler if kind != "unrelated" else (d.filler[0], d.filler[2],
                                                                    *NEUTRAL_FILLER)  # fmt: skip
                    for level in told_levels:
                        text = story_text(d, e, background, clauses[:level], chosen, kind,
                                          setting, told, others)  # fmt: skip
                        shown = chosen if kind != "unrelated" else ()
                        out.append(
                            (
                                text,
                                n,
                                target,
                                Truth(folder, target, n, kind, told, level, shown, base),
                            )
                        )
    return out


def write_released(root: Path, folders: tuple[str, ...] = tuple(FOLDERS),
                   domains: tuple[Domain, ...] = DOMAINS) -> dict[str, list[Truth]]:  # fmt: skip
    """Write ``folders`` of ``domains`` under ``root``; return the truth of each text, one per
    folder it is written in. The folders telling attractors after the fact name their
    stories' entities alike, so they repeat each other's rows without attractors, and the
    ``_distractor`` folders the typed folders' rows; the ``Swapped`` and key-entity folders
    name them otherwise, as the release does."""
    truth: dict[str, list[Truth]] = {}
    for folder in folders:
        setting, kinds, position = FOLDERS[folder]
        shift = {"after": 0, "between": 1, "later": 2}[position]
        names = list(NAMES[shift:] + NAMES[:shift])
        rows = [r for d in domains for r in _rows(d, folder, setting, kinds, position, names)]
        for text, *_, t in rows:
            if t not in truth.setdefault(text, []):
                truth[text].append(t)
        for model, blank in MODELS.items():
            _write(root / folder / model / f"complete_data_For_{model}.csv", rows, blank, model,
                   folder, domains)  # fmt: skip
    return truth


def _write(path: Path, rows, blank: str | None, model: str, folder: str, domains) -> None:
    rng = random.Random(f"{model}/{folder}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(HEADER)
        for text, n, target, truth in rows:
            d = next(d for d in domains if target in [t for _, t in d.pairs])
            ranked = [t for _, t in d.pairs]
            rng.shuffle(ranked)
            lower = d.capitals and (n == 0 or "object" in folder)
            listed = [t.lower() for t in ranked] if lower else ranked
            sentence = text if blank is None else f"{text} {blank}"
            writer.writerow([sentence, truth.filler * 4, 7, round(rng.random(), 4), repr(listed),
                             target, n, round(rng.random() * 2, 2), rng.randint(1, 3)])  # fmt: skip


def write_key_entity_without_candidates(root: Path) -> Path:
    """A ``Varying_key_entity`` folder as the release's ``data/Varying_key_entity``: only
    ``sentence`` and ``target_occupation``."""
    path = root / "Varying_key_entity" / "complete_data_For_RobertaBase.csv"
    path.parent.mkdir(parents=True)
    path.write_text(
        "sentence\ttarget_occupation\n"
        "Daniel works as a florist . For his job , Daniel sells <mask> .\tflowers\n"
    )
    return path.parent


def run_reader(data: Path, out: Path, *options: str) -> dict:
    """Run the distractors suite on ``data`` with the faithful reference reader into ``out``
    (its cache beside it; ``options``: more arguments); return its ``metrics.json``."""
    args = ["run", "distractors", "--data", str(data), "--model", "ref:reader",
            "--out", str(out), "--cache-dir", str(out.parent / "cache"), *options]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads((out / "metrics.json").read_text())
