"""The corpus of text faithprobe cannot write and numbers it cannot take, generated over every
declared ``--data`` format (:mod:`faithprobe.datasets.schema`), so a format or a field
declared later is covered without a new case:

- every text field of a JSON format given a lone surrogate (``"\\ud800"``, which no results
  table or run.json can hold: a run that took one lost its results when it wrote them),
  every number field NaN, an infinity, ``1e400`` or an integer of 31 digits: refused at load
  in one line naming the file, the record and the field;
- every text format (JSON, JSON lines, TSV, the labels and prompt files) beginning with a
  byte-order mark, and every TSV with a byte that is not UTF-8: one line naming the file;
- inside every data folder, each file replaced by a folder and each folder by a file: one
  line naming it.

Each case runs ``faithprobe run`` in process, on a copy of the format's shipped example that
is otherwise good, with the reference reader; :func:`cli_corpus.refused` says what a refusal
is (exit 2, one plain line, nothing written). :data:`FORMATS` gives each declared format its
example and its run; a test fails when a declared format has none.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cli_corpus import refused
from faithprobe.catalog.locate import SAMPLES
from faithprobe.datasets.schema import (
    INTEGER,
    NUMBER,
    TEXT,
    TEXT_OR_INTEGER,
    TEXT_OR_NULL,
    TEXTS,
    DataSchema,
    declared,
    locate,
    schemas_for,
)
from released_tsv import write_released
from schema_cases import BOM, NOT_UTF8_BYTES, SURROGATE, number_literal, unfit_numbers, with_value

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CS, NL, RR = EXAMPLES / "confidence-shift", EXAMPLES / "natural-logic", EXAMPLES / "right-reasons"
TASK = "date_understanding"  # the BBH task a reasoning case keeps


@dataclass(frozen=True)
class Format:
    """A declared format's shipped example and the run that reads it. ``files``: what to
    copy into the case's folder (name there -> source; a folder is copied whole);
    ``changed``: the file of the format, in that folder; ``args``: the run's arguments
    after ``run SUITE``, ``{tmp}`` standing for the folder; ``kind``: ``json`` (one
    document), ``lines`` (JSON lines), ``tsv`` or ``text``; ``record``: how to find the
    record a field is set in (the first line, the first element, the document itself)."""

    suite: str
    files: dict[str, Path | Callable[[Path], Any]]
    changed: str
    args: tuple[str, ...]
    kind: str
    record: Callable[[Any], Any] = lambda doc: doc[0] if isinstance(doc, list) else doc
    example: Path | None = None  # the changed file's source, where it is not in ``files``
    names_field: bool = True  # a refusal names the field (not in a document of id -> text)
    # read by datasets.jsonl.read_text, whose refusal of a BOM or a byte says which; the
    # released folders have a reader of their own (its refusals checked in its tests)
    read_text: bool = True

    @property
    def source(self) -> Path:
        source = self.example or self.files[self.changed]
        assert isinstance(source, Path)
        return source

    def bench(self, tmp: Path) -> Path:
        """The example's files in ``tmp``; the path of the file to change."""
        for name, source in self.files.items():
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if callable(source):
                source(target)
            elif source.is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copyfile(source, target)
        return tmp / self.changed

    def run(self, tmp: Path) -> list[str]:
        args = [a.replace("{tmp}", str(tmp)) for a in self.args]
        return ["run", self.suite, *args, "--model", "ref:reader", "--out", str(tmp / "out"),
                "--cache-dir", str(tmp / "cache")]  # fmt: skip


def _bbh_task(target: Path) -> None:
    """A BBH folder of one task."""
    for sub, suffix in (("bbh", ".json"), ("cot-prompts", ".txt")):
        (target / sub).mkdir(parents=True)
        shutil.copyfile(SAMPLES / "bbh" / sub / f"{TASK}{suffix}", target / sub / f"{TASK}{suffix}")


def _released(target: Path) -> None:
    write_released(target)


# an NLI-XY folder with a challenge set it finds itself (challenge=auto)
NLI_FOLDER = {"nli/contexts.tsv": NL / "contexts.tsv", "nli/insertions.tsv": NL / "insertions.tsv",
              "nli/help_test.tsv": NL / "challenge-help.tsv"}  # fmt: skip
CHALLENGE = ("--data", "{tmp}/nli", "-o", "bases=0", "-o")
STORIES = EXAMPLES / "negation" / "stories.coqa.json"
FORMATS: dict[str, Format] = {
    "Social IQA (<split>.jsonl)": Format(
        "confidence-shift",
        {"dev.jsonl": CS / "socialiqa.jsonl", "dev-labels.lst": CS / "socialiqa-labels.lst"},
        "dev.jsonl", ("--data", "{tmp}/dev.jsonl"), "lines"),
    "Social IQA labels (<split>-labels.lst)": Format(
        "confidence-shift",
        {"dev.jsonl": CS / "socialiqa.jsonl", "dev-labels.lst": CS / "socialiqa-labels.lst"},
        "dev-labels.lst", ("--data", "{tmp}/dev.jsonl"), "text"),
    "HellaSwag (original jsonl)": Format(
        "confidence-shift", {"hs.jsonl": CS / "hellaswag.jsonl"}, "hs.jsonl",
        ("--data", "{tmp}/hs.jsonl"), "lines"),
    "prompt/choices/label (JSON lines)": Format(
        "confidence-shift", {"mc.jsonl": CS / "choices.jsonl"}, "mc.jsonl",
        ("--data", "{tmp}/mc.jsonl"), "lines"),
    "cloze items (JSON lines)": Format(
        "distractors", {"items.jsonl": EXAMPLES / "distractors.jsonl"}, "items.jsonl",
        ("--data", "{tmp}/items.jsonl"), "lines"),
    "the method's released TSV folders (--data FOLDER or FILE)": Format(
        "distractors", {"released": _released},
        "released/single_entity_distractor/GPT2Small/complete_data_For_GPT2Small.csv",
        ("--data", "{tmp}/released"), "tsv", read_text=False),
    "SQuAD-format JSON (SQuAD v1.1/v2.0, Quoref)": Format(
        "faithfulness", {"squad.json": EXAMPLES / "faithfulness" / "squad.json"}, "squad.json",
        ("--data", "{tmp}/squad.json"), "json"),
    "CoQA JSON": Format(
        "faithfulness", {"coqa.json": STORIES}, "coqa.json", ("--data", "{tmp}/coqa.json"), "json"),
    "HotpotQA JSON (HotpotQA, 2WikiMultiHopQA)": Format(
        "faithfulness", {"hotpot.json": EXAMPLES / "faithfulness" / "hotpotqa.json"},
        "hotpot.json", ("--data", "{tmp}/hotpot.json"), "json"),
    "negation edits (JSON lines, option edits=FILE)": Format(
        "faithfulness", {"coqa.json": STORIES, "edits.jsonl": EXAMPLES / "negation" / "edits.jsonl"},
        "edits.jsonl", ("--data", "{tmp}/coqa.json", "-o", "edits={tmp}/edits.jsonl"), "lines"),
    "+Aug sentences (augment_file=FILE)": Format(
        "faithfulness", {"hotpot.json": EXAMPLES / "faithfulness" / "hotpotqa.json",
                         "aug.json": EXAMPLES / "faithfulness" / "augment.json"},
        "aug.json", ("--data", "{tmp}/hotpot.json", "-o", "augment_file={tmp}/aug.json"), "json",
        record=lambda doc: {"id": next(iter(doc)), "sentence": doc[next(iter(doc))]},
        names_field=False),
    "NLI-XY contexts (contexts.tsv)": Format(
        "natural-logic", NLI_FOLDER, "nli/contexts.tsv", (*CHALLENGE, "challenge=auto"), "tsv"),
    "NLI-XY insertions (insertions.tsv)": Format(
        "natural-logic", NLI_FOLDER, "nli/insertions.tsv", (*CHALLENGE, "challenge=auto"), "tsv"),
    "two-class NLI, MNLI-style TSV (option challenge)": Format(
        "natural-logic", {**NLI_FOLDER, "c.tsv": NL / "challenge-mnli.tsv"}, "c.tsv",
        (*CHALLENGE, "challenge={tmp}/c.tsv"), "tsv"),
    "two-class NLI, HELP's TSV (option challenge)": Format(
        "natural-logic", NLI_FOLDER, "nli/help_test.tsv", (*CHALLENGE, "challenge=auto"), "tsv"),
    "two-class NLI, JSON lines (option challenge)": Format(
        "natural-logic", {**NLI_FOLDER, "c.jsonl": NL / "challenge.jsonl"}, "c.jsonl",
        (*CHALLENGE, "challenge={tmp}/c.jsonl"), "lines"),
    "two-class NLI, SNLI's and MultiNLI's official jsonl (option challenge)": Format(
        "natural-logic", {**NLI_FOLDER, "c.jsonl": NL / "challenge-snli.jsonl"}, "c.jsonl",
        (*CHALLENGE, "challenge={tmp}/c.jsonl"), "lines"),
    "two-class NLI, ANLI's release jsonl (option challenge)": Format(
        "natural-logic", {**NLI_FOLDER, "c.jsonl": NL / "challenge-anli.jsonl"}, "c.jsonl",
        (*CHALLENGE, "challenge={tmp}/c.jsonl"), "lines"),
    "two-class NLI, ANLI as its README shows it (option challenge)": Format(
        "natural-logic", {**NLI_FOLDER, "c.jsonl": NL / "challenge-anli-readme.jsonl"},
        "c.jsonl", (*CHALLENGE, "challenge={tmp}/c.jsonl"), "lines"),
    "BIG-Bench Hard task file (bbh/<task>.json)": Format(
        "reasoning", {"bbh": _bbh_task}, f"bbh/bbh/{TASK}.json", ("--data", "{tmp}/bbh"), "json",
        example=SAMPLES / "bbh" / "bbh" / f"{TASK}.json"),
    "BIG-Bench Hard chain-of-thought prompt (cot-prompts/<task>.txt)": Format(
        "reasoning", {"bbh": _bbh_task}, f"bbh/cot-prompts/{TASK}.txt", ("--data", "{tmp}/bbh"),
        "text"),
    "coreference counterfactuals (JSON lines, option counterfactuals=FILE)": Format(
        "right-reasons", {"quoref.json": RR / "coreference.quoref.json",
                          "cf.jsonl": RR / "counterfactuals.jsonl"},
        "cf.jsonl", ("--data", "{tmp}/quoref.json", "-o", "counterfactuals={tmp}/cf.jsonl",
                     "-o", "saliency="), "lines"),
}  # fmt: skip
TEXT_KINDS = (TEXT, TEXT_OR_NULL, TEXTS, TEXT_OR_INTEGER)
NUMBER_KINDS = (INTEGER, NUMBER, TEXT_OR_INTEGER)


def _schemas() -> dict[str, DataSchema]:
    return {s.name: s for suite in declared() for s in schemas_for(suite)}


def _read(fmt: Format, path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if fmt.kind == "lines":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def _write(fmt: Format, path: Path, doc: Any) -> None:
    """``doc`` as the format writes it, a surrogate as its escape, a number literal
    (:func:`schema_cases.number_literal`) as it is."""
    lines = fmt.kind == "lines"
    text = "".join(json.dumps(r) + "\n" for r in doc) if lines else json.dumps(doc)
    path.write_text(number_literal(text), encoding="ascii")


def _place(record: Any, field: str) -> str | None:
    """Where ``field`` is (or would be, under a parent that is there) in ``record``."""
    places = locate(record, field)
    present = [where for where, here, _ in places if here]
    return (present or [where for where, _, _ in places] or [None])[0]


def _set(fmt: Format, doc: Any, field: str, value: Any) -> tuple[Any, str]:
    """``doc`` with ``field`` of its record set to ``value``; where it was set."""
    record = fmt.record(doc)
    where = _place(record, field)
    changed = with_value(record, where, value)
    if fmt.record(doc) is doc:
        return changed, where
    if isinstance(doc, list):
        return [changed, *doc[1:]], where
    return {**doc, changed["id"]: changed["sentence"]}, where  # the +Aug object


def _field_cases() -> list:
    cases = []
    for name, schema in _schemas().items():
        fmt = FORMATS.get(name)
        if fmt is None or fmt.kind not in ("json", "lines"):
            continue
        example = _read(fmt, fmt.source)
        record = fmt.record(example)
        numbered = 0
        for f in schema.fields:
            if _place(record, f.name) is None:
                continue
            if f.kind in TEXT_KINDS:
                value = [SURROGATE] if f.kind is TEXTS else SURROGATE
                cases.append(pytest.param(name, f.name, value, id=f"{name} | {f.name} | surrogate"))
            if f.kind in NUMBER_KINDS:
                label, value = unfit_numbers()[numbered % len(unfit_numbers())]
                numbered += 1
                cases.append(pytest.param(name, f.name, value, id=f"{name} | {f.name} | {label}"))
    return cases


FIELD_CASES = _field_cases()


@pytest.mark.parametrize(("name", "field", "value"), FIELD_CASES)
def test_a_value_faithprobe_cannot_write_or_take_is_refused_at_load(tmp_path, name, field, value):
    """The run's results would hold the text (a lone surrogate: lost when written) or the
    number (NaN, an infinity, 31 digits): refused before any model answers."""
    fmt = FORMATS[name]
    path = fmt.bench(tmp_path)
    doc, where = _set(fmt, _read(fmt, path), field, value)
    _write(fmt, path, doc)
    expect = (
        [str(path), field.rsplit(".", 1)[-1].removesuffix("[]")] if fmt.names_field else [str(path)]
    )
    refused(fmt.run(tmp_path), watch=[tmp_path], expect=expect)


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_byte_order_mark_on_every_text_format_is_one_line(tmp_path, name):
    fmt = FORMATS[name]
    path = fmt.bench(tmp_path)
    path.write_bytes(BOM.encode("utf-8") + path.read_bytes())
    expect = [str(path), "byte-order mark"] if fmt.read_text else [str(path)]
    refused(fmt.run(tmp_path), watch=[tmp_path], expect=expect)


@pytest.mark.parametrize("name", [n for n, f in FORMATS.items() if f.kind in ("tsv", "text")])
def test_a_byte_that_is_not_utf8_in_a_text_format_is_one_line(tmp_path, name):
    """JSON spells a surrogate as an escape; elsewhere it can only come as bytes, which are
    not UTF-8: refused naming the line they are on."""
    fmt = FORMATS[name]
    path = fmt.bench(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[1] = NOT_UTF8_BYTES + lines[1]
    path.write_bytes(b"\n".join(lines))
    expect = [str(path), "not UTF-8", "line 2"] if fmt.read_text else [str(path)]
    refused(fmt.run(tmp_path), watch=[tmp_path], expect=expect)


def _swaps() -> list:
    """(format, path inside its data folder) for every file and folder of each data folder
    a format's run reads (the released folders are their reader's: test_distractor_tsv)."""
    cases, seen = [], set()
    for name, fmt in FORMATS.items():
        data = fmt.args[fmt.args.index("--data") + 1]
        root = data.removeprefix("{tmp}/").split("/")[0]
        if not fmt.read_text or (fmt.suite, root) in seen:
            continue
        seen.add((fmt.suite, root))
        for inside in _inside(fmt, root):
            cases.append(pytest.param(name, inside, id=f"{fmt.suite} {inside}"))
    return cases


def _inside(fmt: Format, root: str) -> list[str]:
    """The paths under the case folder that the run reads, relative to it: the data
    folder's files and folders, or the files beside a data file (its labels)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        fmt.bench(Path(tmp))
        found = Path(tmp) / root
        if found.is_dir():
            return sorted(str(p.relative_to(tmp)) for p in found.rglob("*"))
        return sorted(n for n in fmt.files if n != root and not n.startswith(root + "/"))


SWAPS = _swaps()


@pytest.mark.parametrize(("name", "inside"), SWAPS)
def test_a_folder_where_a_file_is_read_and_a_file_where_a_folder_is_are_one_line(
    tmp_path, name, inside
):
    fmt = FORMATS[name]
    fmt.bench(tmp_path)
    path = tmp_path / inside
    if path.is_dir():
        shutil.rmtree(path)
        path.write_text("a file where a folder was\n")
    else:
        path.unlink()
        path.mkdir()
    refused(fmt.run(tmp_path), watch=[tmp_path], expect=[path.name])


def test_every_declared_format_has_an_example_and_its_cases():
    assert set(_schemas()) == set(FORMATS), "a declared format without an entry in FORMATS"
    fields = {(c.values[0], c.values[1]) for c in FIELD_CASES}
    assert ("cloze items (JSON lines)", "features.base_id") in fields
    assert ("SQuAD-format JSON (SQuAD v1.1/v2.0, Quoref)",
            "data[].paragraphs[].qas[].answers[].answer_start") in fields  # fmt: skip
    labels = {c.id.rsplit(" | ", 1)[1] for c in FIELD_CASES}
    assert labels >= {"surrogate", "1e400", "nan", "-infinity", "31-digits"}
    assert {c.values[1] for c in SWAPS} >= {"nli/contexts.tsv", "bbh/bbh", "dev-labels.lst"}
