"""The built-in suites are declared in ``pyproject.toml`` as a plug-in declares its suites
(the entry-point group ``faithprobe.suites``), so the suite protocol finds them without
importing the suites' package; faithprobe's own come first, in the order of their names."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from faithprobe import registry
from faithprobe.errors import UsageError
from faithprobe.registry import SUITE_GROUP, declared, load_target
from faithprobe.suite_protocol import SUITES, SuiteEntry

ROOT = Path(__file__).resolve().parents[1]


def test_every_suite_package_is_declared_and_nothing_else():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    points = project["entry-points"][SUITE_GROUP]
    folders = ROOT / "src" / "faithprobe" / "suites"
    packages = {f"faithprobe.suites.{p.parent.name}" for p in folders.glob("*/__init__.py")}
    assert set(points.values()) == packages
    assert SUITES.names()[: len(points)] == sorted(points)  # each under its suite's name


def point(name: str, value: str, distribution: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, value=value, dist=SimpleNamespace(name=distribution))


def test_faithprobe_own_come_first_in_the_order_of_their_names(monkeypatch):
    found = [point("shout", "toy_suite", "toy-suite"), point("b", "faithprobe.suites.b", "faithprobe"),
             point("a", "faithprobe.suites.a", "faithprobe")]  # fmt: skip
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: found)
    assert [p.name for p in declared(SUITE_GROUP)] == ["a", "b", "shout"]


def test_metadata_without_faithprobe_own_is_one_clear_error(monkeypatch):
    """A source checkout used without an install, or an install older than the
    ``pyproject.toml`` that declares the suites: a plug-in alone is not taken for all."""
    found = [point("shout", "toy_suite", "toy-suite")]
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: found)
    with pytest.raises(
        UsageError, match=r"'faithprobe.suites' \(it is not installed.*: install it"
    ):
        declared(SUITE_GROUP)


def test_a_suite_laid_out_as_the_built_in_ones_names_its_parts_by_convention():
    entry = SuiteEntry.in_package("faithprobe.suites.natural_logic", name="n", description="",
                                  method="")  # fmt: skip
    assert (entry.suite, entry.report, entry.headline) == (
        "faithprobe.suites.natural_logic.suite:NaturalLogicSuite",
        "faithprobe.suites.natural_logic.report:NaturalLogicReport",
        "faithprobe.suites.natural_logic.headline:headline",
    )
    built_in = [p.name for p in declared(SUITE_GROUP) if p.value.startswith("faithprobe.")]
    for entry in map(SUITES.get, built_in):  # each part is where the entry says
        assert all(load_target(t) for t in (entry.suite, entry.report, entry.headline))


def test_faithprobe_list_without_the_metadata_is_one_line(monkeypatch):
    from typer.testing import CliRunner

    from faithprobe.cli import app

    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [])
    for state, empty in (
        ("_entries", {}),
        ("_aliases", {}),
        ("_loaded", {}),
        ("_discovered", False),
    ):
        monkeypatch.setattr(SUITES, state, empty)  # found afresh, as in a new process
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 2
    assert result.output.startswith("error: faithprobe's metadata names nothing")
    assert len(result.output.strip().splitlines()) == 1
