"""A new model backend is one module: ``tests/toy_backend`` installed as a plug-in (the
entry-point group ``faithprobe.backends``) into a temporary folder, listed by ``faithprobe
list`` and run through the command line with a setting, nothing in faithprobe changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOY = Path(__file__).parent / "toy_backend"
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(TOY, site / "toy_backend", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "toy_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[faithprobe.backends]\ntoy = toy_backend\n")
    return site


def faithprobe(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    command = [sys.executable, "-c", "from faithprobe.cli import app; app()", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def test_the_toy_backend_is_one_module():
    assert sorted(p.name for p in TOY.glob("*.py")) == ["__init__.py"]


def test_list_shows_the_backend_and_its_setting(site):
    res = faithprobe(site, "list")
    assert res.returncode == 0, res.stderr
    assert "candidates scored by their length" in res.stdout and "toy: bias" in res.stdout


def test_run_through_the_toy_backend(site, tmp_path):
    out = tmp_path / "run"
    res = faithprobe(site, "run", "distractors", "--model", "toy:anything", "--limit", "5",
                     "--model-option", "bias=2", "--out", str(out),
                     "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    (subject,) = json.loads((out / "run.json").read_text())["subjects"]
    # 5 attractor variants, their 5 base items and each base item's critical-fact swap
    assert (subject["name"], subject["kind"], subject["computed_requests"]) == (
        "toy:anything", "toy", 15)  # fmt: skip


def test_a_setting_no_backend_has_is_refused(site, tmp_path):
    res = faithprobe(site, "run", "distractors", "--model", "toy:x,bias=1,colour=red",
                     "--limit", "5", "--out", str(tmp_path / "run"))  # fmt: skip
    assert res.returncode != 0 and "backend toy has no setting 'colour'" in res.stderr


def test_the_request_kinds_it_declares_are_offered_to_a_model_that_cannot_answer(site):
    """A model asked for candidate scores it cannot give is told of every backend that
    declares them, the plug-in's too."""
    code = ("from faithprobe.subjects.backends import answering; "
            "print(answering('candidate-scores')); print(answering('span-answer'))")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    scores, spans = res.stdout.splitlines()
    assert scores.split(", ")[-2:] == ["openai (an endpoint serving completions with logprobs)",
                                       "toy"]  # fmt: skip
    assert spans == "heuristic, hf-qa"
