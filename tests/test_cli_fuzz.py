"""The command line over a corpus of malformed inputs: every loader, every argument.

Each case must end with exit status 2 and exactly one line on stderr, ``error: …``, that
names the file, record and field (or the argument) at fault, shows values from the input
verbatim (no markup, no emoji) and cut to a readable length, and changes no file of an
earlier run folder given as ``--out``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from faithprobe.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def model_dir(tiny_llama_dir) -> Path:
    return tiny_llama_dir


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory, model_dir) -> Path:
    """A finished run folder every case points --out at."""
    root = tmp_path_factory.mktemp("fuzz-run")
    out = root / "earlier"
    args = ["run", "distractors", "--model", str(model_dir), "--limit", "4", "--out", str(out),
            "--cache-dir", str(root / "cache")]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return out


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# -- the corpus ---------------------------------------------------------------------------


def _jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _cloze(**changes) -> dict:
    item = {"id": "b1", "context": "Ann lives in Oslo. Ann lives in", "target": "Oslo",
            "candidates": ["Oslo", "Rome"], "suffix": ".",
            "features": {"base_id": None, "n_attractors": 0}}  # fmt: skip
    item.update(changes)
    return item


def _variant(**features) -> dict:
    f = {"base_id": "b1", "n_attractors": 1, "setting": "single", "attractor_type": "B",
         "position": "after", **features}  # fmt: skip
    return _cloze(id="v1", features=f)


def _siqa(path: Path, labels: str, n: int = 2, **changes) -> Path:
    rec = {"context": "Kai ate.", "question": "Why?", "answerA": "hungry", "answerB": "sad",
           "answerC": "late", **changes}  # fmt: skip
    _jsonl(path, [rec] * n)
    path.with_name(path.stem + "-labels.lst").write_text(labels)
    return path


def _choice(**changes) -> dict:
    return {"id": "q1", "prompt": "2+2?", "choices": ["3", "4", "5"], "label": 1, **changes}


CONTEXTS_HEADER = (
    "source\tcontext\tintervened\tmonotonicity\toperator\tdistractor operator\t"
    "singular\tmass\tplural\tplace\n"
)
INSERTIONS_HEADER = "source\tx_grammar\tx\ty\ty_grammar\tinsertion_rel\n"


def _grid(folder: Path, contexts: str | None = None, insertions: str | None = None) -> Path:
    folder.mkdir()
    (folder / "contexts.tsv").write_text(
        contexts
        if contexts is not None
        else CONTEXTS_HEADER + "T\tA man saw a x.\t\tup\t\t\tx\t\t\t\n"
    )
    (folder / "insertions.tsv").write_text(
        insertions if insertions is not None else INSERTIONS_HEADER + "T\ts\tdog\tanimal\ts\tleq\n"
    )
    return folder


def _squad(qas: list | None = None, context: str = "Anna moved to Paris. She sang.") -> dict:
    qas = qas if qas is not None else [
        {"id": "q1", "question": "Where did Anna move?",
         "answers": [{"text": "Paris", "answer_start": context.index("Paris")}]}
    ]  # fmt: skip
    return {
        "version": "1.1",
        "data": [{"title": "T", "paragraphs": [{"context": context, "qas": qas}]}],
    }


def _write_json(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Case:
    """``make(tmp)`` writes the input and returns the command's arguments after ``run``
    (without --model/--out/--cache-dir); ``expect`` must appear in the error line."""

    name: str
    make: Callable[[Path], list[str]]
    expect: tuple[str, ...]


def _data(suite: str, write: Callable[[Path], Path], *extra: str) -> Callable[[Path], list[str]]:
    return lambda tmp: [suite, "--data", str(write(tmp)), *extra]


BIG = "x" * 5_000_000

# fmt: off
CASES = [
    # cloze items (distractors)
    Case("cloze-empty", _data("distractors", lambda t: _jsonl(t / "e.jsonl", [])), ("e.jsonl", "no records")),
    Case("cloze-blank-lines", _data("distractors", lambda t: (t / "b.jsonl").write_text("\n  \n") and t / "b.jsonl"), ("b.jsonl", "no records")),
    Case("cloze-truncated-json", _data("distractors", lambda t: (t / "t.jsonl").write_text('{"id": "a", "context": "unterm') and t / "t.jsonl"), ("t.jsonl", "line 1", "not valid JSON (Unterminated string starting at: column 24)")),
    Case("cloze-array-line", _data("distractors", lambda t: _jsonl(t / "a.jsonl", [[1, 2]])), ("a.jsonl", "line 1", "JSON object")),
    Case("cloze-id-not-string", _data("distractors", lambda t: _jsonl(t / "i.jsonl", [_cloze(id=7)])), ("i.jsonl", "line 1", "'id'", "str")),
    Case("cloze-candidates-string", _data("distractors", lambda t: _jsonl(t / "c.jsonl", [_cloze(candidates="Oslo")])), ("c.jsonl", "'candidates'")),
    Case("cloze-empty-candidate", _data("distractors", lambda t: _jsonl(t / "c.jsonl", [_cloze(candidates=["Oslo", ""])])), ("c.jsonl", "'candidates'")),
    Case("cloze-target-not-candidate", _data("distractors", lambda t: _jsonl(t / "g.jsonl", [_cloze(target="Paris")])), ("g.jsonl", "'target'", "Paris")),
    Case("cloze-duplicate-id", _data("distractors", lambda t: _jsonl(t / "d.jsonl", [_cloze(), _cloze()])), ("d.jsonl", "line 2", "duplicate id")),
    Case("cloze-not-utf8", _data("distractors", lambda t: (t / "n.jsonl").write_bytes(b'{"id": "\xff\xfe"}\n') and t / "n.jsonl"), ("n.jsonl", "not UTF-8", "line 1")),
    Case("cloze-missing-n-attractors", _data("distractors", lambda t: _jsonl(t / "f.jsonl", [_cloze(features={"base_id": None})])), ("f.jsonl", "b1", "features.n_attractors")),
    Case("cloze-n-attractors-text", _data("distractors", lambda t: _jsonl(t / "f.jsonl", [_cloze(features={"base_id": None, "n_attractors": "two"})])), ("f.jsonl", "features.n_attractors")),
    Case("cloze-unknown-base", _data("distractors", lambda t: _jsonl(t / "u.jsonl", [_variant(base_id="nope")])), ("u.jsonl", "v1", "features.base_id", "nope")),
    Case("cloze-features-list", _data("distractors", lambda t: _jsonl(t / "l.jsonl", [_cloze(features=[1])])), ("l.jsonl", "'features'", "dict")),
    Case("cloze-attractors-not-list", _data("distractors", lambda t: _jsonl(t / "a.jsonl", [_cloze(), _variant(attractors=5)])), ("a.jsonl", "v1", "features.attractors")),
    Case("cloze-filler-not-list", _data("distractors", lambda t: _jsonl(t / "a.jsonl", [_cloze(features={"base_id": None, "n_attractors": 0, "filler": "x"})])), ("a.jsonl", "b1", "features.filler")),
    Case("cloze-huge-value", _data("distractors", lambda t: _jsonl(t / "h.jsonl", [_cloze(target=BIG)])), ("h.jsonl", "'target'", "5,000,000 characters")),
    Case("cloze-markup-id", _data("distractors", lambda t: _jsonl(t / "m.jsonl", [_cloze(id="[bold]x[/]"), _cloze(id="[bold]x[/]")])), ("m.jsonl", "'[bold]x[/]'")),
    Case("cloze-emoji-path", lambda t: ["distractors", "--data", str(t / "capitals:France:Henry.jsonl")], ("capitals:France:Henry.jsonl", "no such")),
    Case("cloze-markup-path", lambda t: ["distractors", "--data", str(t / "items[/].jsonl")], ("items[/].jsonl", "no such")),
    # multiple choice (confidence-shift)
    Case("siqa-no-labels", _data("confidence-shift", lambda t: _jsonl(t / "dev.jsonl", [{"context": "c", "question": "q", "answerA": "a", "answerB": "b", "answerC": "c"}])), ("dev-labels.lst",)),
    Case("siqa-label-out-of-range", _data("confidence-shift", lambda t: _siqa(t / "dev.jsonl", "1\n4\n")), ("dev-labels.lst", "4")),
    Case("siqa-label-count", _data("confidence-shift", lambda t: _siqa(t / "dev.jsonl", "1\n")), ("dev-labels.lst",)),
    Case("siqa-label-text", _data("confidence-shift", lambda t: _siqa(t / "dev.jsonl", "1\nB\n")), ("dev-labels.lst", "B")),
    Case("choice-label-out-of-range", _data("confidence-shift", lambda t: _jsonl(t / "c.jsonl", [_choice(label=5)])), ("c.jsonl", "label")),
    Case("choice-label-text", _data("confidence-shift", lambda t: _jsonl(t / "c.jsonl", [_choice(label="a")])), ("c.jsonl", "label")),
    Case("choice-one-choice", _data("confidence-shift", lambda t: _jsonl(t / "c.jsonl", [_choice(choices=["4"], label=0)])), ("c.jsonl", "choices")),
    Case("choice-duplicate-id", _data("confidence-shift", lambda t: _jsonl(t / "c.jsonl", [_choice(), _choice()])), ("c.jsonl", "q1")),
    Case("choice-missing-prompt", _data("confidence-shift", lambda t: _jsonl(t / "c.jsonl", [{"id": "q", "choices": ["a", "b"], "label": 0}])), ("c.jsonl", "line 1")),
    Case("hellaswag-endings-text", _data("confidence-shift", lambda t: _jsonl(t / "hs.jsonl", [{"activity_label": "a", "ctx_a": "c", "ctx_b": "d", "endings": "ab", "label": 0}]), "-o", "format=hellaswag"), ("hs.jsonl", "endings")),
    Case("choice-format-unknown", _data("confidence-shift", lambda t: _jsonl(t / "c.jsonl", [_choice()]), "-o", "format=csv"), ("format", "csv")),
    # NLI (natural-logic)
    Case("nli-xy-missing-file", _data("natural-logic", lambda t: (t / "g").mkdir() or t / "g"), ("contexts.tsv",)),
    Case("nli-xy-bad-columns", _data("natural-logic", lambda t: _grid(t / "g", contexts="a\tb\n1\t2\n")), ("contexts.tsv",)),
    Case("nli-xy-bad-relation", _data("natural-logic", lambda t: _grid(t / "g", insertions=INSERTIONS_HEADER + "T\ts\tdog\tanimal\ts\tsame\n")), ("insertions.tsv", "insertion_rel")),
    Case("nli-xy-bad-monotonicity", _data("natural-logic", lambda t: _grid(t / "g", contexts=CONTEXTS_HEADER + "T\tA man saw a x.\t\tsideways\t\t\tx\t\t\t\n")), ("contexts.tsv", "monotonicity")),
    Case("nli-challenge-bad-label", lambda t: ["natural-logic", "--data", str(_grid(t / "g")), "-o", f"challenge={_bad_nli(t)}"], ("bad.tsv", "label")),
    # QA (faithfulness, right-reasons)
    Case("squad-not-json", _data("faithfulness", lambda t: (t / "s.json").write_text("{") and t / "s.json"), ("s.json", "not valid JSON")),
    Case("squad-no-data", _data("faithfulness", lambda t: _write_json(t / "s.json", {"version": "1.1"})), ("s.json",)),
    Case("squad-answer-not-in-context", _data("faithfulness", lambda t: _write_json(t / "s.json", _squad([{"id": "q1", "question": "Where?", "answers": [{"text": "Berlin", "answer_start": 2}]}]))), ("s.json", "answers[0]", "Berlin")),
    Case("squad-answer-start-text", _data("faithfulness", lambda t: _write_json(t / "s.json", _squad([{"id": "q1", "question": "Where?", "answers": [{"text": "Paris", "answer_start": "14"}]}]))), ("s.json", "answer_start")),
    Case("squad-duplicate-id", _data("faithfulness", lambda t: _write_json(t / "s.json", _squad(_squad()["data"][0]["paragraphs"][0]["qas"] * 2))), ("s.json", "q1")),
    Case("coqa-odd-turns", _data("faithfulness", lambda t: _write_json(t / "coqa.json", {"version": "1.0", "data": [{"id": "s1", "story": "Tom ran.", "questions": [{"input_text": "Who ran?", "turn_id": 1}], "answers": []}]})), ("coqa.json",)),
    Case("edits-unknown-id", lambda t: ["faithfulness", "--data", str(_write_json(t / "s.json", _squad())), "-o", f"edits={_jsonl(t / 'edits.jsonl', [{'id': 'zz', 'original': 'a', 'replacement': 'b', 'answer': 'no'}])}"], ("edits.jsonl", "zz")),
    Case("right-reasons-no-comparisons", _data("right-reasons", lambda t: _write_json(t / "s.json", _squad())), ("s.json", "no comparison or coreference questions")),
    Case("right-reasons-bad-counterfactuals", lambda t: ["right-reasons", "--data", str(_write_json(t / "s.json", _squad())), "-o", "coreference=true", "-o", f"counterfactuals={_jsonl(t / 'cf.jsonl', [{'id': 'x'}])}"], ("cf.jsonl",)),
    # arguments
    Case("limit-zero", lambda t: ["distractors", "--limit", "0"], ("--limit",)),
    Case("limit-text", lambda t: ["distractors", "--limit", "many"], ("--limit",)),
    Case("option-without-value", lambda t: ["distractors", "-o", "trials"], ("--option", "KEY=VALUE")),
    Case("option-unknown", lambda t: ["confidence-shift", "--data", str(_jsonl(t / "c.jsonl", [_choice()])), "-o", "nonsense=1"], ("nonsense",)),
    Case("option-bad-type", lambda t: ["confidence-shift", "--data", str(_jsonl(t / "c.jsonl", [_choice()])), "-o", "trials=abc"], ("trials", "abc")),
    Case("suite-unknown", lambda t: ["no-such-suite"], ("no-such-suite",)),
    Case("model-is-a-file", lambda t: ["distractors", "--model", str(_jsonl(t / "m.bin", [{}]))], ("m.bin",)),
    Case("executor-unknown", lambda t: ["distractors", "--executor", "dask"], ("--executor",)),
    Case("base-url-without-openai", lambda t: ["distractors", "--base-url", "http://[bold]host/v1"], ("--base-url",)),
]
# fmt: on


def _bad_nli(tmp: Path) -> Path:
    path = tmp / "bad.tsv"
    path.write_text(
        "index\tsentence1\tsentence2\tgold_label\n0\tA dog ran .\tAn animal ran .\tmaybe\n"
    )
    return path


def test_the_corpus_is_large_and_spans_every_loader():
    assert len(CASES) >= 40
    assert {c.make.__name__ for c in CASES} and len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_input_is_one_plain_line_and_exit_2(case, tmp_path, model_dir, earlier_run):
    before = _snapshot(earlier_run)
    args = case.make(tmp_path)
    if "--model" not in args:
        args += ["--model", str(model_dir)]
    args += ["--out", str(earlier_run), "--cache-dir", str(tmp_path / "cache")]
    res = runner.invoke(app, ["run", *args])
    lines = res.stderr.splitlines()
    assert res.exit_code == 2, (res.exit_code, res.stderr[-2000:], res.exception)
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr[-2000:]
    assert "Traceback" not in res.output
    assert len(lines[0]) < 1200  # values are cut to a readable length
    for word in case.expect:
        assert word in lines[0], (word, lines[0])
    assert _snapshot(earlier_run) == before
