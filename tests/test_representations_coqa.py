"""``faithprobe analyze representations`` on CoQA: the questions read as the faithfulness
suite reads them (the same loader, the same turns of history with their gold answers, the
same rationale spans and deletion variants OS, TS and TS-R), the history put before each
question as the suite asks an extractive model, the suite's history options taken on the
command line, and a bad record refused in one line. On the shipped CoQA example
(``examples/faithfulness/coqa.json``, written for faithprobe) with two tiny random BERT QA
models."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import torch

from cli_corpus import refused, runner
from conftest import tiny_bert_config
from faithprobe.asking.qa_questions import QAAsker
from faithprobe.cli import app
from faithprobe.datasets.qa_formats import QAReading
from faithprobe.qa.questions import history_question
from faithprobe.representations.analysis import analyze, read_items
from faithprobe.representations.config import AnalysisConfig, NamedEncoder
from faithprobe.suite_protocol import get_suite

COQA = Path(__file__).resolve().parents[1] / "examples" / "faithfulness" / "coqa.json"
TURNS = 17  # questions in the example: 7 + 5 + 5


@pytest.fixture(scope="module")
def models(tiny_pair_tokenizer, tmp_path_factory) -> dict[str, Path]:
    from transformers import BertForQuestionAnswering

    folders = {}
    for name, seed in (("OT", 0), ("IBT", 1)):
        torch.manual_seed(seed)
        model = BertForQuestionAnswering(tiny_bert_config(len(tiny_pair_tokenizer))).eval()
        folder = tmp_path_factory.mktemp("coqa-models") / name
        model.save_pretrained(folder)
        tiny_pair_tokenizer.save_pretrained(folder)
        folders[name] = folder
    return folders


def _suite_pairs(options: dict[str, str] | None = None):
    return get_suite("faithfulness", options or {}).pairs(COQA, seed=0)


def test_the_items_are_the_faithfulness_suites_questions_variants_and_history():
    read = read_items(COQA, limit=None)
    assert len(read.items) == TURNS
    by_id = {item.id: item for item in read.items}
    suite = {}
    for pair in _suite_pairs():
        variant = pair.intervened.features["variant"]
        suite.setdefault(pair.original.id, {})[variant] = pair
    assert set(by_id) == set(suite)
    asker = QAAsker.from_options(get_suite("faithfulness").options)
    extractive = type("Extractive", (), {"accepts": frozenset({"span-answer"})})()
    for item_id, item in by_id.items():
        pairs = suite[item_id]
        assert item.original == pairs["OS"].original
        kept = {v: p.intervened for v, p in pairs.items() if v != "OS" and not p.dropped}
        assert {v: x.context for v, x in item.variants.items()} == {
            v: x.context for v, x in kept.items()
        }
        # the question with its history, as the suite asks an extractive model
        request = asker.request(item.original, extractive)
        assert item.inputs()[0] == (request.question, item.original.context)
    turn3 = by_id["coqa-ex1-3"].original
    assert turn3.history == (
        ("Where does the Tallis Library stand?", "on the east bank of the river Wend"),
        ("Who founded it?", "a group of mill workers"),
    )
    assert history_question(turn3).startswith("Where does the Tallis Library stand? on the east")
    assert turn3.rationale == ((62, 84),)  # "It was founded in 1841"
    # a rationale in the first sentence leaves no TS-R: dropped and counted, as the suite does
    assert set(by_id["coqa-ex1-1"].variants) == {"TS"}
    dropped = Counter((v, p.dropped) for ps in suite.values() for v, p in ps.items() if p.dropped)
    assert read.drops == [
        {"variant": v, "reason": r, "count": n} for (v, r), n in sorted(dropped.items())
    ]
    assert ("TS-R", "the rationale begins in the first sentence") in dropped


@pytest.mark.parametrize(
    ("reading", "options"),
    [
        ({"history_turns": 0}, {"history_turns": "0"}),
        (
            {"history_turns": 1, "coqa_rules": "method"},
            {"history_turns": "1", "coqa_rules": "method"},
        ),
    ],
    ids=["no-history", "method-rules"],
)
def test_the_history_options_read_as_the_suites(reading, options):
    read = read_items(COQA, limit=None, reading=QAReading(**reading))
    originals = {p.original.id: p.original for p in _suite_pairs(options)}
    assert {i.id: i.original for i in read.items} == originals
    item = {i.id: i for i in read.items}["coqa-ex1-7"]
    if reading["history_turns"] == 0:
        assert item.inputs()[0][0] == "Who paid for it?"
    else:  # the method's rules skip the unknown turn before it, and read "not at all" as no
        assert item.original.history == (("Was she a nurse?", "no"),)
        assert {i.id: i for i in read.items}["coqa-ex2-4"].original.answers[0] == "no"


def test_analyze_compares_os_with_ts_and_ts_r_on_coqa(models):
    specs = [NamedEncoder(name, str(path)) for name, path in models.items()]
    analysis = analyze(AnalysisConfig(models=specs, data=COQA, limit=None))
    sims = analysis.similarities
    assert set(sims["comparison"]) == {"OS vs TS", "OS vs TS-R"}
    sizes = analysis.metrics["sizes"]
    assert sizes["items"] == TURNS and sizes["passages"] == 3
    read = read_items(COQA, limit=None)
    assert sizes["compared"] == {
        "OS vs TS": sum("TS" in i.variants for i in read.items),
        "OS vs TS-R": sum("TS-R" in i.variants for i in read.items),
    }
    assert analysis.metrics["options"]["history_turns"] == 2
    assert analysis.metrics["options"]["coqa_rules"] == "faithprobe"
    # the history is part of every input: the question tokens are paired too
    tokens = analysis.tokens
    assert (tokens["segment"] == "question").any()
    ts_r = sims[sims["comparison"] == "OS vs TS-R"]
    assert not ts_r["same_text"].any() and (ts_r["cls_cosine"] < 1 - 1e-4).all()


def test_the_command_line_takes_the_suites_history_options(models, tmp_path):
    out = tmp_path / "repr-coqa"
    args = ["analyze", "representations", "--data", str(COQA), "--out", str(out),
            "--model", f"OT={models['OT']}", "--model", f"IBT={models['IBT']}",
            "--history-turns", "1", "--coqa-rules", "method"]  # fmt: skip
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["options"]["history_turns"], metrics["options"]["coqa_rules"]) == (1, "method")
    sims = pd.read_parquet(out / "similarities.parquet")
    assert set(sims["comparison"]) == {"OS vs TS", "OS vs TS-R"}
    pngs = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert pngs == ["cls_os-ts-r.png", "cls_os-ts.png", "tokens_os-ts-r.png", "tokens_os-ts.png"]


def test_a_bad_coqa_record_or_option_is_one_line(models, tmp_path):
    doc = json.loads(COQA.read_text())
    doc["data"][1]["answers"][2]["span_text"] = "a baby fox sitting in the hay"
    bad = tmp_path / "coqa-bad.json"
    bad.write_text(json.dumps(doc))
    args = ["analyze", "representations", "--data", bad, "--out", tmp_path / "o",
            "--model", f"OT={models['OT']}", "--model", f"IBT={models['IBT']}"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=[str(bad), "record data[1] (id ex2).answers[2]",
                                            "field 'span_text'", "does not match the story"])  # fmt: skip
    args[2] = COQA
    refused([*args, "--coqa-rules", "authors"], watch=[tmp_path], expect=["--coqa-rules"])
    refused([*args, "--history-turns", "-1"], watch=[tmp_path], expect=["--history-turns"])
