"""The command line over a corpus of bad files that faithprobe reads back: run folders
(``report``), audit folders (``report`` and ``audit --compare``), ``gguf:`` model files
(``run`` and ``audit``), and answer caches (``run``), each refused as a bad input must be
(:func:`cli_corpus.refused`: exit 2, one plain ``error:`` line naming the file, record and
field, nothing written or changed in any folder the command could write to, not even an
empty cache file)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe.audit.card_metrics import card_metrics
from faithprobe.audit.plan import BUDGETS
from faithprobe.cli import app
from schema_cases import number_literal, unfit_numbers
from tiny_gguf import write_llama_gguf

runner = CliRunner()


@dataclass(frozen=True)
class Sources:
    """The whole inputs every case starts from (never changed: every case watches them)."""

    root: Path
    run: Path  # a finished distractors run of the tiny Llama
    audit: Path  # an audit folder of that run as its distractors step
    gguf: Path  # the tiny Llama as a GGUF file
    model_dir: Path  # the tiny Llama as a model folder


@pytest.fixture(scope="module")
def sources(tmp_path_factory, tiny_llama_dir, tiny_llama, tiny_tokenizer) -> Sources:
    root = tmp_path_factory.mktemp("sources")
    run = root / "run"
    res = runner.invoke(app, ["run", "distractors", "--model", str(tiny_llama_dir), "--limit",
                              "40", "--out", str(run), "--cache-dir", str(root / "cache")])  # fmt: skip
    assert res.exit_code == 0, res.output
    gguf = write_llama_gguf(tiny_llama, tiny_tokenizer, root / "tiny.gguf")
    return Sources(root, run, _audit_of(run, root / "audit"), gguf, tiny_llama_dir)


def _audit_of(run: Path, folder: Path) -> Path:
    """An audit folder whose one step is the run ``run`` (through the card's own code)."""
    metrics = json.loads((run / "metrics.json").read_text())
    name = metrics["subjects"][0]["name"]
    step = {"step": "distractors", "suite": "distractors", "question": "q", "status": "ran",
            "report": "suites/distractors/report.html", "limit": 40, "options": {}, "data": None,
            "n_pairs": 40, "seconds": 1.0, "models": [name], "skipped_models": [],
            "metrics": metrics}  # fmt: skip
    card = card_metrics([step], [{"spec": name, "name": name, "fingerprint": "f"}],
                        budget=BUDGETS["small"], seed=0)  # fmt: skip
    shutil.copytree(run, folder / "suites" / "distractors")
    (folder / "metrics.json").write_text(json.dumps(card))
    (folder / "run.json").write_text(json.dumps({"kind": "audit", "versions": {"faithprobe": "x"}}))
    return folder


class Bench:
    """Where one case builds its bad input: fresh copies of the sources in ``tmp``."""

    def __init__(self, tmp: Path, sources: Sources) -> None:
        self.tmp, self.sources = tmp, sources

    def run(self, name: str = "run") -> Path:
        return Path(shutil.copytree(self.sources.run, self.tmp / name))

    def audit(self, name: str) -> Path:
        return Path(shutil.copytree(self.sources.audit, self.tmp / name))

    def gguf_bytes(self) -> bytes:
        return self.sources.gguf.read_bytes()


@dataclass(frozen=True)
class Case:
    """``make(bench)`` writes the bad input and returns the command's arguments; the error
    line must hold every word of ``expect``."""

    name: str
    make: Callable[[Bench], list[str]]
    expect: tuple[str, ...]


# -- run folders: report ------------------------------------------------------------------


def _edit_json(path: Path, change: Callable[[dict], object]) -> None:
    """``change`` the JSON document at ``path`` in place."""
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _report(name: str, corrupt: Callable[[Path], object], *expect: str) -> Case:
    def make(b: Bench) -> list[str]:
        folder = b.run()
        corrupt(folder)
        return ["report", str(folder)]

    return Case(f"report-{name}", make, expect)


def _run_json(name: str, change: Callable[[dict], object], *expect: str) -> Case:
    return _report(name, lambda f: _edit_json(f / "run.json", change), "run.json", *expect)


def _results_change(folder: Path, change: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    path = folder / "results.parquet"
    change(pd.read_parquet(path)).to_parquet(path)


def _results(name: str, change: Callable[[pd.DataFrame], pd.DataFrame], *expect: str) -> Case:
    return _report(name, lambda f: _results_change(f, change), "results.parquet", *expect)


def _results_bytes(name: str, data: Callable[[bytes], bytes], *expect: str) -> Case:
    def corrupt(folder: Path) -> None:
        path = folder / "results.parquet"
        path.write_bytes(data(path.read_bytes()))

    return _report(name, corrupt, "results.parquet", *expect)


def _drop(*columns: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    return lambda frame: frame.drop(columns=list(columns))


def _set(column: str, value) -> Callable[[pd.DataFrame], pd.DataFrame]:
    return lambda frame: frame.assign(**{column: value})


def _pop(key: str) -> Callable[[dict], object]:
    return lambda doc: doc.pop(key)


def _put(key: str, value) -> Callable[[dict], object]:
    return lambda doc: doc.__setitem__(key, value)


def _subject(key: str, value=None, drop: bool = False) -> Callable[[dict], object]:
    def change(doc: dict) -> None:
        if drop:
            del doc["subjects"][0][key]
        else:
            doc["subjects"][0][key] = value

    return change


def _merged(name: str, corrupt_second: Callable[[Path], object], *expect: str) -> Case:
    def make(b: Bench) -> list[str]:
        first, second = b.run("first"), b.run("second")
        corrupt_second(second)
        return ["report", str(first), str(second), "--out", str(b.tmp / "merged")]

    return Case(f"report-merge-{name}", make, expect)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _foreign(b: Bench) -> Path:
    """A folder of someone else's files."""
    return _write(b.tmp / "mine" / "thesis.txt", "chapter 1").parent


def _audit_card(name: str, corrupt: Callable[[Path], object], *expect: str) -> Case:
    def make(b: Bench) -> list[str]:
        folder = b.audit("audit")
        corrupt(folder)
        return ["report", str(folder)]

    return Case(f"report-audit-{name}", make, expect)


def _audit_metrics(name: str, change: Callable[[dict], object], *expect: str) -> Case:
    def corrupt(folder: Path) -> None:
        _edit_json(folder / "metrics.json", change)

    return _audit_card(name, corrupt, "metrics.json", *expect)


REPORT_CASES = [
    # results.parquet unreadable
    _results_bytes("results-garbage", lambda d: b"not a parquet file " * 40, "not a readable results table"),
    _results_bytes("results-truncated", lambda d: d[: len(d) // 2], "not a readable results table"),
    _results_bytes("results-tail-only", lambda d: d[-64:], "not a readable results table"),
    _results_bytes("results-empty-file", lambda d: b"", "not a readable results table"),
    _results_bytes("results-csv", lambda d: b"pair_id,subject\np1,m\n", "not a readable results table"),
    _results_bytes("results-magic-only", lambda d: b"PAR1" + b"\0" * 64 + b"PAR1", "not a readable results table"),
    _report("results-missing", lambda f: (f / "results.parquet").unlink(), "results.parquet"),
    _report("results-is-a-folder", lambda f: (f / "results.parquet").unlink() or (f / "results.parquet").mkdir(), "results.parquet"),
    # results.parquet of the wrong shape
    _results("results-zero-rows", lambda fr: fr.iloc[:0], "holds no results"),
    _results("results-no-subject-column", _drop("subject"), "'subject'", "missing"),
    _results("results-no-pair-id-column", _drop("pair_id"), "'pair_id'", "missing"),
    _results("results-no-expectation-met", _drop("expectation_met"), "'expectation_met'"),
    _results("results-no-correct-column", _drop("correct"), "'correct'", "missing"),
    _results("results-no-competent-column", _drop("competent"), "'competent'", "missing"),
    _results("results-common-columns-only", lambda fr: fr[["pair_id", "original_id", "intervened_id", "subject", "subject_fingerprint", "intervention", "expectation", "expectation_met", "dropped_reason"]], "missing"),
    _results("results-another-table", lambda fr: pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), "'pair_id'", "missing"),
    _results("results-subject-numbers", _set("subject", 7), "row 0", "'subject'", "expected a string"),
    _results("results-subject-null", _set("subject", None), "row 0", "'subject'"),
    _results("results-pair-id-numbers", lambda fr: fr.assign(pair_id=range(len(fr))), "row 0", "'pair_id'"),
    _results("results-unknown-model", _set("subject", "[bold]someone else[/]"), "'[bold]someone else[/]'", "not among run.json's subjects"),
    # run.json: fields missing or of the wrong type
    _run_json("run-json-no-suite", _pop("suite"), "'suite'", "missing"),
    _run_json("run-json-no-seed", _pop("seed"), "'seed'", "missing"),
    _run_json("run-json-no-subjects", _pop("subjects"), "'subjects'", "missing"),
    _run_json("run-json-suite-number", _put("suite", 5), "'suite'", "expected str"),
    _run_json("run-json-suite-unknown", _put("suite", "no-such-suite"), "'suite'", "unknown suite"),
    _run_json("run-json-seed-text", _put("seed", "0"), "'seed'", "expected int"),
    _run_json("run-json-seed-bool", _put("seed", True), "'seed'", "expected int"),
    _run_json("run-json-seed-float", _put("seed", 1.5), "'seed'", "expected int"),
    _run_json("run-json-subjects-dict", _put("subjects", {"name": "m"}), "'subjects'", "expected list"),
    _run_json("run-json-subjects-empty", _put("subjects", []), "'subjects'", "no models"),
    _run_json("run-json-subject-string", lambda d: d.__setitem__("subjects", ["m"]), "subjects[0]", "JSON object"),
    _run_json("run-json-subject-no-name", _subject("name", drop=True), "subjects[0]", "'name'"),
    _run_json("run-json-subject-name-number", _subject("name", 7), "subjects[0]", "'name'"),
    _run_json("run-json-subject-no-fingerprint", _subject("fingerprint", drop=True), "subjects[0]", "'fingerprint'"),
    _run_json("run-json-options-list", _put("options", ["filler=2"]), "'options'"),
    _run_json("run-json-options-unknown", _put("options", {"nonsense": 1}), "'options'", "nonsense"),
    _run_json("run-json-options-bad-value", _put("options", {"filler": "many"}), "'options'", "many"),
    _run_json("run-json-cache-number", _put("cache", 5), "'cache'", "expected str"),
    _run_json("run-json-data-record-text", _put("data_record", "x"), "'data_record'"),
    # not a run folder at all
    _report("run-json-garbage", lambda f: (f / "run.json").write_text("{garbage"), "not a faithprobe run folder"),
    _report("run-json-a-list", lambda f: (f / "run.json").write_text("[1, 2]"), "not a faithprobe run folder"),
    _report("run-json-no-versions", lambda f: _edit_json(f / "run.json", _pop("versions")), "not a faithprobe run folder"),
    _report("run-json-missing", lambda f: (f / "run.json").unlink(), "not a faithprobe run folder"),
    Case("report-folder-missing", lambda b: ["report", str(b.tmp / "nowhere")], ("nowhere", "not a faithprobe run folder")),
    Case("report-folder-is-a-file", lambda b: ["report", str(_write(b.tmp / "notes.txt", "hi"))], ("notes.txt", "is a file, not a folder")),
    Case("report-an-audit-folder-merged", lambda b: ["report", str(b.audit("audit")), str(b.run()), "--out", str(b.tmp / "merged")], ("audit folder", "alone")),
    # audit folders: report rebuilds the card from metrics.json and run.json
    _audit_card("metrics-not-json", lambda f: (f / "metrics.json").write_text("{"), "not an audit folder"),
    _audit_card("metrics-no-kind", lambda f: _edit_json(f / "metrics.json", _pop("kind")), "not an audit folder"),
    _audit_metrics("step-name-a-path", lambda d: d["steps"][0].update(step="../../elsewhere"), "steps[0]", "'step'"),
    _audit_metrics("effect-value-text", lambda d: d["effects"][0].update(value="abc"), "effects[0]", "'value'"),
    _audit_metrics("verdict-a-number", lambda d: d["steps"][0]["verdicts"].update(dict.fromkeys(d["steps"][0]["verdicts"], 1)), "steps[0]", "'verdicts'"),
    _audit_metrics("competence-no-baseline", lambda d: d["competence"][0].pop("baseline"), "competence[0]", "'baseline'"),
    _audit_metrics("summary-missing", _pop("summary"), "'summary'", "missing"),
    _audit_metrics("budget-a-string", _put("budget", "small"), "'budget'", "expected dict"),
    _audit_card("run-json-data-dirs-number", lambda f: _edit_json(f / "run.json", _put("data_dirs", 5)), "run.json", "'data_dirs'"),
    # merging and --out
    _merged("second-garbage", lambda f: (f / "results.parquet").write_bytes(b"garbage"), "second", "results.parquet"),
    _merged("second-no-seed", lambda f: _edit_json(f / "run.json", _pop("seed")), "second", "'seed'"),
    _merged("columns-differ", lambda f: _results_change(f, _drop("scores")), "second", "columns differ"),
    _merged("other-suite", lambda f: _edit_json(f / "run.json", _put("suite", "confidence-shift")), "different suites"),
    Case("report-merge-without-out", lambda b: ["report", str(b.run("a")), str(b.run("b"))], ("--out",)),
    Case("report-out-is-a-file", lambda b: ["report", str(b.run()), "--out", str(_write(b.tmp / "o.txt", "x"))], ("o.txt", "is a file")),
    Case("report-out-foreign-folder", lambda b: ["report", str(b.run()), "--out", str(_foreign(b))], ("mine", "not a faithprobe run folder")),
]  # fmt: skip


# -- audit folders: audit --compare -------------------------------------------------------


def _compare(name: str, corrupt: Callable[[Path], object], *expect: str) -> Case:
    def make(b: Bench) -> list[str]:
        old, new = b.audit("old"), b.audit("new")
        corrupt(new)
        return ["audit", "--compare", str(old), str(new)]

    return Case(f"compare-{name}", make, expect)


def _card(name: str, change: Callable[[dict], object], *expect: str) -> Case:
    return _compare(name, lambda f: _edit_json(f / "metrics.json", change), "metrics.json", *expect)


def _effect(key: str, value=None, drop: bool = False) -> Callable[[dict], object]:
    def change(doc: dict) -> None:
        if drop:
            del doc["effects"][0][key]
        else:
            doc["effects"][0][key] = value

    return change


def _region(key: str, value=None, drop: bool = False) -> Callable[[dict], object]:
    def change(doc: dict) -> None:
        if drop:
            del doc["effects"][0]["region"][key]
        else:
            doc["effects"][0]["region"][key] = value

    return change


def _in(field: str, index: int, key: str, value=None, drop: bool = False):
    def change(doc: dict) -> None:
        if drop:
            del doc[field][index][key]
        else:
            doc[field][index][key] = value

    return change


def _step_metrics(name: str, corrupt: Callable[[Path], object], *expect: str) -> Case:
    return _compare(name, lambda f: corrupt(f / "suites" / "distractors" / "metrics.json"), *expect)


def _units(change: Callable[[dict], object]) -> Callable[[Path], object]:
    """Change every per-unit record (of at least one unit) of a step's metrics.json."""

    def visit(node) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("units"), dict) and node["units"]["unit"]:
                change(node["units"])
            for v in node.values():
                visit(v)
        elif isinstance(node, list):
            for v in node:
                visit(v)

    return lambda path: _edit_json(path, visit)


COMPARE_CASES = [
    # the card's fields
    _card("no-models", _pop("models"), "'models'", "missing"),
    _card("no-effects", _pop("effects"), "'effects'", "missing"),
    _card("no-steps", _pop("steps"), "'steps'", "missing"),
    _card("effects-null", _put("effects", None), "'effects'", "expected list"),
    _card("models-a-dict", _put("models", {"name": "m"}), "'models'", "expected list"),
    _card("steps-a-string", _put("steps", "distractors"), "'steps'", "expected list"),
    _card("seed-text", _put("seed", "abc"), "'seed'", "expected int"),
    _card("seed-float", _put("seed", 1.5), "'seed'", "expected int"),
    _card("model-a-string", _put("models", ["m"]), "models[0]", "JSON object"),
    _card("model-without-name", _in("models", 0, "name", drop=True), "models[0]", "'name'", "missing"),
    _card("model-name-number", _in("models", 0, "name", 7), "models[0]", "'name'"),
    _card("model-listed-twice", lambda d: d["models"].append(dict(d["models"][0])), "models[1]", "listed twice"),
    _card("step-a-string", _put("steps", ["distractors"]), "steps[0]", "JSON object"),
    _card("step-without-status", _in("steps", 0, "status", drop=True), "steps[0]", "'status'"),
    _card("step-name-number", _in("steps", 0, "step", 5), "steps[0]", "'step'"),
    _card("step-name-a-path", _in("steps", 0, "step", "../../elsewhere"), "steps[0]", "'step'", "../../elsewhere"),
    _card("step-suite-null", _in("steps", 0, "suite", None), "steps[0]", "'suite'"),
    # one effect's fields
    _card("effect-a-string", lambda d: d["effects"].__setitem__(0, "related_drop"), "effects[0]", "JSON object"),
    _card("effect-no-subject", _effect("subject", drop=True), "effects[0]", "'subject'"),
    _card("effect-subject-number", _effect("subject", 3), "effects[0]", "'subject'"),
    _card("effect-no-step", _effect("step", drop=True), "effects[0]", "'step'"),
    _card("effect-key-number", _effect("key", 5), "effects[0]", "'key'"),
    _card("effect-no-title", _effect("title", drop=True), "effects[0]", "'title'"),
    _card("effect-value-numeric-text", _effect("value", "0.3"), "effects[0]", "'value'"),
    _card("effect-value-text", _effect("value", "abc"), "effects[0]", "'value'"),
    _card("effect-value-bool", _effect("value", True), "effects[0]", "'value'"),
    _card("effect-value-infinite", _effect("value", float("inf")), "effects[0]", "'value'", "finite"),
    _card("effect-value-huge-integer", _effect("value", 10**400), "effects[0]", "'value'", "outside the integers"),
    _card("effect-ci-low-text", _effect("ci_low", "low"), "effects[0]", "'ci_low'"),
    _card("effect-interval-reversed", lambda d: d["effects"][0].update(ci_low=0.9, ci_high=0.1), "effects[0]", "'ci_low'", "above"),
    _card("effect-n-text", _effect("n", "50"), "effects[0]", "'n'"),
    _card("effect-n-negative", _effect("n", -3), "effects[0]", "'n'", "negative"),
    _card("effect-n-fraction", _effect("n", 2.5), "effects[0]", "'n'"),
    _card("effect-no-region", _effect("region", drop=True), "effects[0]", "'region'"),
    _card("effect-region-text", _effect("region", "at most 0.1"), "effects[0]", "'region'"),
    _card("effect-region-side-bad", _region("side", "sideways"), "effects[0].region", "'side'", "sideways"),
    _card("effect-region-no-side", _region("side", drop=True), "effects[0].region", "'side'"),
    _card("effect-region-bound-text", _region("bound", "0.1"), "effects[0].region", "'bound'"),
    _card("effect-region-bound-null", _region("bound", None), "effects[0].region", "'bound'"),
    _card("effect-region-bound-nan", _region("bound", float("nan")), "effects[0].region", "'bound'"),
    _card("effect-twice", lambda d: d["effects"].append(dict(d["effects"][0])), "effects[", "repeats"),
    # a step folder's metrics.json
    _step_metrics("step-metrics-garbage", lambda p: p.write_text("{not json"), "suites/distractors/metrics.json", "JSON"),
    _step_metrics("step-metrics-not-utf8", lambda p: p.write_bytes(b"\xff\xfe{}"), "suites/distractors/metrics.json"),
    _step_metrics("step-metrics-a-list", lambda p: p.write_text("[]"), "suites/distractors/metrics.json", "JSON object"),
    _step_metrics("step-metrics-empty-object", lambda p: p.write_text("{}"), "suites/distractors/metrics.json", "distractors"),
    _step_metrics("step-metrics-a-folder", lambda p: p.unlink() or p.mkdir(), "suites/distractors/metrics.json"),
    _step_metrics("step-units-bad-formula", _units(lambda u: u.__setitem__("formula", "nope")), "suites/distractors/metrics.json", "nope"),
    _step_metrics("step-units-short-column", _units(lambda u: u["columns"][0].append(0.5)), "suites/distractors/metrics.json", "one entry per unit"),
    _step_metrics("step-units-text-numbers", _units(lambda u: u["columns"][0].__setitem__(0, "x")), "suites/distractors/metrics.json"),
    # not an audit folder
    _compare("metrics-not-json", lambda f: (f / "metrics.json").write_text("{"), "not an audit folder"),
    _compare("metrics-empty", lambda f: (f / "metrics.json").write_text(""), "not an audit folder"),
    _compare("metrics-a-list", lambda f: (f / "metrics.json").write_text("[]"), "not an audit folder"),
    _card("metrics-no-kind", _pop("kind"), "not an audit folder"),
    Case("compare-folder-missing", lambda b: ["audit", "--compare", str(b.audit("old")), str(b.tmp / "nowhere")], ("nowhere", "not an audit folder")),
]  # fmt: skip


# -- gguf: model files, for run and audit -------------------------------------------------


def _patched(at: Callable[[bytes], int], fmt: str, value: int) -> Callable[[bytes], bytes]:
    """The GGUF with a number at offset ``at(data)`` replaced."""

    def change(data: bytes) -> bytes:
        i = at(data)
        return data[:i] + struct.pack("<" + fmt, value) + data[i + struct.calcsize(fmt) :]

    return change


def _first_key_type(data: bytes) -> int:
    return 32 + struct.unpack_from("<Q", data, 24)[0]


def _tensor_field(skip: int) -> Callable[[bytes], int]:
    """Offset of a field of the first tensor's description: ``skip`` bytes after its n_dims
    (0: n_dims, then 8 per dimension, then the type, then the offset)."""
    name = b"token_embd.weight"
    return lambda data: data.index(name) + len(name) + skip


def _bad_gguf(change: Callable[[bytes], bytes]) -> Callable[[Bench], Path]:
    def write(b: Bench) -> Path:
        path = b.tmp / "m.gguf"
        path.write_bytes(change(b.gguf_bytes()))
        return path

    return write


def _folder_with_subfolder(b: Bench) -> Path:
    (b.tmp / "models" / "m.gguf").mkdir(parents=True)
    return b.tmp / "models"


def _fifo(b: Bench) -> Path:
    os.mkfifo(b.tmp / "m.gguf")
    return b.tmp / "m.gguf"


def _device(b: Bench) -> Path:
    (b.tmp / "m.gguf").symlink_to("/dev/zero")
    return b.tmp / "m.gguf"


def _two_ggufs(b: Bench) -> Path:
    for name in ("a.gguf", "b.gguf"):
        (b.tmp / "models" / name).parent.mkdir(exist_ok=True)
        shutil.copy(b.sources.gguf, b.tmp / "models" / name)
    return b.tmp / "models"


def _text_gguf(b: Bench) -> Path:
    return _write(b.tmp / "m.gguf", "this is a model, honest\n" * 40)


GGUF_FILES: list[tuple[str, Callable[[Bench], Path], tuple[str, ...]]] = [
    ("first-kib", _bad_gguf(lambda d: d[:1024]), ("m.gguf", "cut short")),
    ("header-only", _bad_gguf(lambda d: d[:24]), ("m.gguf", "cut short")),
    ("ten-bytes", _bad_gguf(lambda d: d[:10]), ("m.gguf", "cut short")),
    ("empty", _bad_gguf(lambda d: b""), ("m.gguf", "0 bytes")),
    ("tensor-data-cut", _bad_gguf(lambda d: d[:-100]), ("m.gguf", "cut short", "tensor")),
    ("half", _bad_gguf(lambda d: d[: len(d) // 2]), ("m.gguf", "cut short")),
    ("wrong-magic", _bad_gguf(lambda d: b"GGML" + d[4:]), ("m.gguf", "not a GGUF file")),
    ("a-text-file", _text_gguf, ("m.gguf", "not a GGUF file")),
    ("version-1", _bad_gguf(_patched(lambda d: 4, "I", 1)), ("m.gguf", "version 1")),
    ("version-99", _bad_gguf(_patched(lambda d: 4, "I", 99)), ("m.gguf", "version 99")),
    ("tensor-count-huge", _bad_gguf(_patched(lambda d: 8, "Q", 1 << 60)), ("m.gguf", "tensors")),
    ("tensor-count-zero", _bad_gguf(_patched(lambda d: 8, "Q", 0)), ("m.gguf", "no tensors")),
    ("entry-count-huge", _bad_gguf(_patched(lambda d: 16, "Q", 1 << 60)), ("m.gguf", "metadata entries")),
    ("key-length-huge", _bad_gguf(_patched(lambda d: 24, "Q", 1 << 62)), ("m.gguf", "metadata entry 0")),
    ("value-type-unknown", _bad_gguf(_patched(_first_key_type, "I", 99)), ("m.gguf", "metadata entry 0", "value type 99")),
    ("tensor-dims-nine", _bad_gguf(_patched(_tensor_field(0), "I", 9)), ("m.gguf", "token_embd.weight", "9 dimensions")),
    ("tensor-type-unknown", _bad_gguf(_patched(_tensor_field(4 + 16), "I", 99)), ("m.gguf", "token_embd.weight", "type 99")),
    ("tensor-offset-misaligned", _bad_gguf(_patched(_tensor_field(4 + 16 + 4), "Q", 3)), ("m.gguf", "token_embd.weight", "multiple")),
    ("tensor-offset-past-end", _bad_gguf(_patched(_tensor_field(4 + 16 + 4), "Q", 1 << 40)), ("m.gguf", "token_embd.weight", "ends at byte")),
    ("tensor-dims-huge", _bad_gguf(_patched(_tensor_field(4), "Q", 1 << 50)), ("m.gguf", "token_embd.weight")),
    ("folder-holding-a-subfolder", _folder_with_subfolder, ("models", "found: none")),
    ("a-fifo", _fifo, ("m.gguf", "not a regular file")),
    ("a-device", _device, ("m.gguf", "not a regular file")),
    ("folder-with-two", _two_ggufs, ("found: a.gguf, b.gguf",)),
]  # fmt: skip


def _gguf_run(write: Callable[[Bench], Path]) -> Callable[[Bench], list[str]]:
    return lambda b: ["run", "distractors", "--model", f"gguf:{write(b)}", "--out",
                      str(b.tmp / "out"), "--cache-dir", str(b.tmp / "cache")]  # fmt: skip


def _gguf_audit(write: Callable[[Bench], Path]) -> Callable[[Bench], list[str]]:
    return lambda b: ["audit", "--model", f"gguf:{write(b)}", "--out", str(b.tmp / "out"),
                      "--cache-dir", str(b.tmp / "cache")]  # fmt: skip


GGUF_CASES = [
    Case(f"{command}-gguf-{name}", make(write), expect)
    for name, write, expect in GGUF_FILES
    for command, make in (("run", _gguf_run), ("audit", _gguf_audit))
]


# -- answer caches: a failed run leaves none, a foreign one is refused ---------------------


def _augment(spec: Callable[[Bench], str], *expect: str) -> Callable[[Bench], list[str]]:
    """faithfulness with ``-o augment=MODEL``: the augmenting model is loaded once the
    sampled pairs are known, after the run opened its answer cache."""

    def make(b: Bench) -> list[str]:
        squad = {"version": "1.1", "data": [{"title": "T", "paragraphs": [{
            "context": "Anna moved to Paris. She sang.",
            "qas": [{"id": "q1", "question": "Where did Anna move?",
                     "answers": [{"text": "Paris", "answer_start": 14}]}]}]}]}  # fmt: skip
        data = _write(b.tmp / "squad.json", json.dumps(squad))
        return ["run", "faithfulness", "--data", str(data), "-o", f"augment={spec(b)}",
                "--model", str(b.sources.model_dir), "--out", str(b.tmp / "out"),
                "--cache-dir", str(b.tmp / "cache")]  # fmt: skip

    return make


def _cache_run(
    prepare: Callable[[Path], object], cache: str = "cache"
) -> Callable[[Bench], list[str]]:
    """distractors with an answer cache ``prepare`` made in ``tmp/<cache>``."""

    def make(b: Bench) -> list[str]:
        prepare(b.tmp)
        return ["run", "distractors", "--model", str(b.sources.model_dir), "--limit", "4",
                "--out", str(b.tmp / "out"), "--cache-dir", str(b.tmp / cache)]  # fmt: skip

    return make


def _sqlite(path: Path, *statements: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


CACHE_CASES = [
    Case("cache-augment-missing-gguf", _augment(lambda b: f"gguf:{b.tmp / 'missing.gguf'}"), ("missing.gguf", "does not exist")),
    Case("cache-augment-truncated-gguf", _augment(lambda b: f"gguf:{_bad_gguf(lambda d: d[:1024])(b)}"), ("m.gguf", "cut short")),
    Case("cache-augment-unknown-embedded", _augment(lambda b: "embedded:no-such"), ("embedded:no-such",)),
    Case("cache-augment-no-such-folder", _augment(lambda b: str(b.tmp / "no-model")), ("no-model",)),
    Case("cache-augment-a-file", _augment(lambda b: str(_write(b.tmp / "model.bin", "x"))), ("model.bin", "is a file")),
    Case("cache-augment-openai-nameless", _augment(lambda b: "openai:"), ("openai:",)),
    Case("cache-augment-empty-gguf-folder", _augment(lambda b: f"gguf:{_folder_with_subfolder(b)}"), ("found: none",)),
    Case("cache-file-is-a-folder", _cache_run(lambda t: (t / "cache" / "answers.sqlite").mkdir(parents=True)), ("answers.sqlite", "not a file")),
    Case("cache-dir-below-a-file", _cache_run(lambda t: _write(t / "notes.txt", "x"), "notes.txt/cache"), ("notes.txt", "is a file")),
    Case("cache-another-programs-database", _cache_run(lambda t: _sqlite(t / "cache" / "answers.sqlite", "CREATE TABLE notes (id INTEGER, body TEXT)", "INSERT INTO notes VALUES (1, 'mine')")), ("answers.sqlite", "not a faithprobe cache", "notes")),
    Case("cache-answers-without-value", _cache_run(lambda t: _sqlite(t / "cache" / "answers.sqlite", "CREATE TABLE answers (key TEXT PRIMARY KEY, text TEXT)")), ("answers.sqlite", "'value'")),
    Case("cache-claims-without-expires", _cache_run(lambda t: _sqlite(t / "cache" / "answers.sqlite", "CREATE TABLE claims (key TEXT PRIMARY KEY, owner TEXT)")), ("answers.sqlite", "'expires'")),
]  # fmt: skip


CASES = REPORT_CASES + COMPARE_CASES + GGUF_CASES + CACHE_CASES


# -- numbers read back: every number of every file faithprobe wrote and reads again --------
# (an audit's own run.json is the hand-made one of _audit_of: it holds none)

# file of the sources -> how faithprobe reads it again (``{f}``: the folder holding it)
READ_BACK = {
    "audit/metrics.json": ["report", "{f}"],
    "audit/suites/distractors/metrics.json": ["audit", "--compare", "{old}", "{f}"],
    "audit/suites/distractors/run.json": ["report", "{f}/suites/distractors"],
    "run/run.json": ["report", "{f}"],
}


def _numbers(doc, steps: tuple = ()) -> dict[str, tuple]:
    """Each number's place in ``doc`` (its path's steps), one per pattern (list indices
    left out: ``effects[].value`` once), in document order."""
    found: dict[str, tuple] = {}
    if isinstance(doc, dict):
        for key, value in doc.items():
            for pattern, place in _numbers(value, (*steps, key)).items():
                found.setdefault(pattern, place)
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            for pattern, place in _numbers(value, (*steps, i)).items():
                found.setdefault(pattern, place)
    elif isinstance(doc, int | float) and not isinstance(doc, bool):
        found[".".join("[]" if isinstance(s, int) else s for s in steps)] = steps
    return found


@pytest.mark.parametrize("name", list(READ_BACK))
def test_a_number_faithprobe_never_writes_is_refused_wherever_it_is_read_back(
    name, tmp_path, sources
):
    """Every number (one per pattern) of each file, in turn NaN, an infinity, 1e400 or 31
    digits (a value faithprobe writes as null, or cannot have written): refused in one
    line naming the file and the field, never shown (a card used to show ``inf [0.918,
    1]`` and a verdict for a competence of 1e400)."""
    bench = Bench(tmp_path, sources)
    old, folder = (
        bench.audit("old"),
        bench.audit("audit") if name.startswith("audit") else bench.run(),
    )
    path = folder / name.split("/", 1)[1]
    good = path.read_text()
    args = [a.replace("{f}", str(folder)).replace("{old}", str(old)) for a in READ_BACK[name]]
    values = unfit_numbers()
    failed = []
    places = _numbers(json.loads(good))
    assert places, "no number to change"
    for i, (pattern, steps) in enumerate(places.items()):
        doc = json.loads(good)
        label, value = values[i % len(values)]
        *parents, last = steps
        node = doc
        for step in parents:
            node = node[step]
        node[last] = value
        path.write_text(number_literal(json.dumps(doc)))
        try:
            refused(args, watch=[tmp_path], expect=[name.rsplit("/", 1)[1], str(last)])
        except AssertionError as err:
            failed.append(f"{pattern} = {label}: {str(err)[:300]}")
        path.write_text(good)
    assert failed == [], f"{len(failed)} of {len(places)} numbers believed:\n" + "\n".join(failed)


def test_the_corpus_is_large_and_every_case_distinct():
    assert len(CASES) >= 75
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_file_is_one_plain_line_and_nothing_written(case, tmp_path, sources):
    bench = Bench(tmp_path / "case", sources)
    bench.tmp.mkdir()
    args = case.make(bench)
    env = {"FAITHPROBE_CACHE_DIR": str(tmp_path / "default-cache")}
    refused(args, watch=[tmp_path, sources.root], expect=case.expect, env=env)


# -- what stays accepted ------------------------------------------------------------------


def test_the_sources_themselves_report_and_compare_cleanly(tmp_path, sources):
    bench = Bench(tmp_path, sources)
    res = runner.invoke(app, ["report", str(bench.run())])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", str(bench.audit("card"))])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "card" / "card.md").is_file() and (
        tmp_path / "card" / "index.html"
    ).is_file()
    old, new = bench.audit("old"), bench.audit("new")
    res = runner.invoke(app, ["audit", "--compare", str(old), str(new)])
    assert res.exit_code == 0, res.output
    assert "matched effects paired" in res.stderr and not res.stderr.startswith("0 of")


def test_report_rebuilds_a_lost_or_damaged_metrics_json(tmp_path, sources):
    """metrics.json is what report writes, not what it reads: it is recomputed."""
    folder = Bench(tmp_path, sources).run()
    expected = json.loads((folder / "metrics.json").read_text())
    (folder / "metrics.json").write_text("{garbage")
    assert runner.invoke(app, ["report", str(folder)]).exit_code == 0
    assert json.loads((folder / "metrics.json").read_text()) == expected


def test_a_gguf_folder_counts_only_its_regular_files(tmp_path, sources):
    from faithprobe.subjects.gguf.models import find_gguf

    (tmp_path / "models" / "old.gguf").mkdir(parents=True)
    shutil.copy(sources.gguf, tmp_path / "models" / "tiny.gguf")
    assert find_gguf(tmp_path / "models") == tmp_path / "models" / "tiny.gguf"


def test_a_cache_is_made_by_its_first_write_and_unmade_if_nothing_was_answered(tmp_path):
    from faithprobe.subjects.answer_cache import AnswerCache

    path = tmp_path / "new" / "cache" / "answers.sqlite"
    cache = AnswerCache(path)
    assert cache.get_many(["k"]) == {} and len(cache) == 0 and not (tmp_path / "new").exists()
    assert cache.claim(["k"], lease=60) == ["k"] and path.is_file()
    cache.close()  # a run that failed before its first answer
    assert list(tmp_path.iterdir()) == []
    first, second = AnswerCache(path), AnswerCache(path)
    first.claim(["k"], lease=60)
    assert second.claim(["k"], lease=60) == []  # the claim is seen: the file is shared
    first.close()  # another run still has the file open: it stays
    second.put_many({"k": "{}"})
    second.close()
    assert AnswerCache(path).get_many(["k"]) == {"k": "{}"}


def test_a_cached_answer_holding_a_number_faithprobe_never_writes_is_refused(tmp_path, sources):
    """Each number of a cached answer in turn +inf, 1e400 or 31 digits (faithprobe's writer
    puts NaN and -inf there, never these): the run that reads it back ends with exit 2 and
    one line naming the cache, the answer and the field (after its progress lines: the
    answer is read when its turn comes), and writes no run folder."""
    cache = tmp_path / "cache"
    shutil.copytree(sources.root / "cache", cache, ignore=shutil.ignore_patterns("memo"))
    with sqlite3.connect(cache / "answers.sqlite") as conn:
        key, good = conn.execute("SELECT key, value FROM answers ORDER BY key LIMIT 1").fetchone()
    conn.close()
    args = ["run", "distractors", "--model", str(sources.model_dir), "--limit", "40",
            "--out", str(tmp_path / "out"), "--cache-dir", str(cache)]  # fmt: skip
    values = [(label, v) for label, v in unfit_numbers() if label in ("1e400", "31-digits")]
    values.append(("infinity", "@@number Infinity@@"))
    for steps in _numbers(json.loads(good)).values():
        for _, value in values:
            answer = json.loads(good)
            answer[steps[0]][steps[1]] = value
            with sqlite3.connect(cache / "answers.sqlite") as conn:
                conn.execute("UPDATE answers SET value = ? WHERE key = ?",
                             (number_literal(json.dumps(answer)), key))  # fmt: skip
            conn.close()
            res = runner.invoke(app, args)
            last = res.stderr.strip().splitlines()[-1]
            assert res.exit_code == 2 and "Traceback" not in res.output, res.output[-2000:]
            assert last.startswith("error: ") and f"answer {key}" in last, last
            assert "answers.sqlite" in last and f"{steps[0]}[{steps[1]}]" in last, last
            assert not (tmp_path / "out").exists()
