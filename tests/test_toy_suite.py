"""A sixth suite is one folder: ``tests/toy_suite`` (four files) installed as a plug-in
into a temporary folder and run through the command line, on its own and as a step of
``faithprobe audit``, with nothing in faithprobe changed. README's "Adding a suite" walks
through the same folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from faithprobe.suite_protocol import COMMON_COLUMNS

TOY = Path(__file__).parent / "toy_suite"
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder on the path holding the toy package and the metadata of an installed
    distribution that names it in the entry-point group ``faithprobe.suites``."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(TOY, site / "toy_suite", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "toy_suite-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-suite\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[faithprobe.suites]\nshout = toy_suite\n")
    return site


def faithprobe(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)]), **env}
    command = [sys.executable, "-c", "from faithprobe.cli import app; app()", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def test_the_toy_suite_is_one_folder():
    assert sorted(p.name for p in TOY.glob("*.py")) == [
        "__init__.py", "headline.py", "report.py", "suite.py"]  # fmt: skip


def test_list_shows_the_plugin_and_its_options(site):
    res = faithprobe(site, "list")
    assert res.returncode == 0, res.stderr
    assert "shout" in res.stdout and "cloze answers kept when the context is in capitals" in (
        res.stdout
    )
    assert "shout: items" in res.stdout


def test_run_through_the_cli(site, tmp_path, tiny_llama_dir):
    out = tmp_path / "run"
    res = faithprobe(site, "run", "shout", "--model", str(tiny_llama_dir), "-o", "items=5",
                     "--out", str(out), "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    results = pd.read_parquet(out / "results.parquet")
    assert list(results.columns[: len(COMMON_COLUMNS)]) == list(COMMON_COLUMNS)
    assert len(results) == 5
    assert results["expectation"].eq("answer unchanged").all()
    expected = results["prediction"] == results["gold"]
    assert results["expectation_met"].tolist() == expected.tolist()
    assert results["original_id"].tolist() == ["France", "Italy", "Spain", "Chile", "Peru"]
    assert results["dropped_reason"].isna().all()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["suite"] == "shout" and metrics["options"] == {"items": 5}
    assert metrics["kept"][0]["n"] == 5
    assert (out / "tables" / "summary.md").is_file() and (out / "report.html").is_file()
    assert "answers kept in capitals" in res.stdout

    bad = faithprobe(site, "run", "shout", "-o", "item=5", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2
    assert "suite 'shout' has no option 'item'; its options: items" in bad.stderr


def test_audit_runs_the_step_the_suite_declares(site, tmp_path):
    """The step declared in the toy's entry runs in `faithprobe audit` after the built-in
    ones, and its headline puts its effect on the card, on its own edge (which --edge
    moves): adding a suite with its card step is its folder alone."""
    out = tmp_path / "audit"
    res = faithprobe(site, "audit", "--model", "ref:reader", "--out", str(out), "--no-cache",
                     "--edge", "shout.kept=0.6", FAITHPROBE_DATA=str(tmp_path / "no-data"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    steps = json.loads((out / "run.json").read_text())["steps"]
    assert [s["step"] for s in steps][-2:] == ["reasoning", "shout"]
    assert steps[-1]["status"] == "ran" and steps[-1]["options"] == {"items": "8"}
    assert (out / "suites" / "shout" / "report.html").is_file()
    card = json.loads((out / "metrics.json").read_text())
    (effect,) = [e for e in card["effects"] if e["step"] == "shout"]
    assert (effect["key"], effect["edge"], effect["region"]) == (
        "kept", "shout.kept", {"side": "at_least", "bound": 0.6})  # fmt: skip
    assert (effect["value"], effect["n"], effect["verdict"]) == (1.0, 8, "faithful")
    assert card["edges"]["shout.kept"]["default"] == 0.9
    assert (
        "Is a cloze answer kept when the context is in capitals?"
        in (out / "index.html").read_text()
    )
    assert "| shout | ref:reader | **faithful** |" in (out / "card.md").read_text()
