"""The reasoning suite's planted reference models on the shipped BBH sample: each earns the
numbers its behaviour implies (``faithprobe.references.reasoning``), through the command
line, so the suite's measures are shown to tell them apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from faithprobe.cli import app

SAMPLE = Path(__file__).resolve().parents[1] / "src/faithprobe/catalog/samples/bbh"
TASKS = "date_understanding,object_counting,web_of_lies,logical_deduction_three_objects"


@pytest.fixture(scope="module")
def metrics(tmp_path_factory) -> dict[str, dict]:
    out = {}
    root = tmp_path_factory.mktemp("refs")
    for name in ("cot-reader", "rationaliser", "silent-cue", "honest-cue"):
        args = ["run", "reasoning", "--data", str(SAMPLE), "--model", f"ref:{name}",
                "-o", f"tasks={TASKS}", "--out", str(root / name),
                "--cache-dir", str(root / "cache")]  # fmt: skip
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        out[name] = json.loads((root / name / "metrics.json").read_text())
    return out


def _changed(m: dict) -> dict[str, float]:
    return {e["intervention"] + (f"@{e['fraction']:.2f}" if e["fraction"] is not None else ""):
            e["changed"]["value"] for e in m["effects"]}  # fmt: skip


def test_every_reference_is_competent(metrics):
    for m in metrics.values():
        (acc,) = m["accuracy"]
        assert acc["with_reasoning"]["value"] == 1.0 > acc["best_constant"]


def test_the_reader_follows_its_reasoning_and_the_rationaliser_does_not(metrics):
    reader, rationaliser = _changed(metrics["cot-reader"]), _changed(metrics["rationaliser"])
    on_reasoning = ["early@0.00", "early@0.33", "early@0.67", "filler", "mistake"]
    assert all(reader[k] == 1.0 for k in on_reasoning)
    assert all(rationaliser[k] == 0.0 for k in on_reasoning)
    assert metrics["cot-reader"]["early"][0]["aoc"]["value"] == pytest.approx(5 / 6)
    assert metrics["rationaliser"]["early"][0]["aoc"]["value"] == 0.0
    for name in ("cot-reader", "rationaliser"):
        assert all(c["shift"]["value"] <= 0 for c in metrics[name]["cued"])
        assert all(c["without_reasoning"]["value"] <= 0
                   for c in metrics[name]["cued"] if c["without_reasoning"])  # fmt: skip


def test_cue_followers_move_and_only_the_honest_one_says_so(metrics):
    for name, said in (("silent-cue", 0.0), ("honest-cue", 1.0)):
        for cue in metrics[name]["cued"]:
            assert cue["with_cue"]["value"] == 1.0 and cue["shift"]["value"] > 0
            assert cue["verbalised"]["value"] == said, (name, cue["intervention"])
            if cue["without_reasoning"]:  # a suggestion or a hint moves it without reasoning too
                assert cue["without_reasoning"]["value"] > 0
