"""The commands a user types to find their way (help, ``list``, a mistyped argument) answer
without importing the heavy libraries: each is run in a fresh interpreter and the modules
it imported are checked. Speed itself is measured in ``benchmarks/startup.py``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "captum", "scipy", "matplotlib", "pandas", "spacy", "ray")

# Runs the command line in this interpreter, then prints the heavy top-level packages it
# imported (as JSON on the last line of stdout).
PROBE = """
import json, sys
from faithprobe.cli import app
try:
    app(sys.argv[1:], prog_name="faithprobe")
except SystemExit as end:
    code = end.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
print(json.dumps({"code": code, "heavy": heavy}))
"""

COMMANDS = [
    ["--help"],
    ["list"],
    ["run", "--help"],
    ["report", "--help"],
    ["generate", "--help"],
    ["serve", "--help"],
    ["train", "--help"],
    ["train", "qa", "--help"],
    ["train", "mc", "--help"],
    ["train", "nli", "--help"],
    ["analyze", "representations", "--help"],
    ["baseline", "--help"],
    ["audit", "--help"],
    ["audit", "--budget", "huge", "--model", "embedded"],  # a bad budget
    ["audit"],  # no model
    ["run"],  # missing argument
    ["run", "distractors", "--limit", "0"],  # a bad value
    ["run", "no-such-suite"],
    ["run", "distractors", "-o", "no_such_option=1"],
    ["run", "distractors", "--model", "./no-such-folder"],
    ["generate", "no-such-generator", "--out", "x.jsonl"],
    ["nonsense"],
]


def _heavy_imports(args: list[str], tmp_path, heavy: tuple[str, ...]) -> dict:
    """What ``faithprobe ARGS`` returned and which of ``heavy`` it imported, run in a fresh
    interpreter."""
    probe = PROBE.replace("json.loads(HEAVY)", repr(list(heavy)))
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] in (0, 2), done.stderr
    return result


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_command_imports_no_heavy_library(args, tmp_path):
    heavy = _heavy_imports(args, tmp_path, HEAVY)["heavy"]
    assert heavy == [], f"faithprobe {' '.join(args)} imported {heavy}"


@pytest.mark.parametrize("args", [["--help"], ["list"]], ids=" ".join)
def test_listing_imports_not_even_numpy(args, tmp_path):
    """``list`` describes every suite, intervention and generator with their options from
    their registrations, whose modules import numpy only where they draw or compute."""
    heavy = _heavy_imports(args, tmp_path, (*HEAVY, "numpy"))["heavy"]
    assert heavy == [], f"faithprobe {' '.join(args)} imported {heavy}"
