"""Where the audit's steps find their data: the data folders in order, the shipped samples
at the small budget only, and a skip reason that says how to fetch what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithprobe.audit.plan import STEPS, step_data
from faithprobe.catalog.locate import SAMPLES, data_roots, resolve
from faithprobe.errors import DataError, UsageError

DATA_STEPS = [s for s in STEPS if s.data is not None]


@pytest.fixture
def empty_fetch_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "fetched"
    root.mkdir()
    monkeypatch.setenv("FAITHPROBE_DATA", str(root))
    return root


@pytest.mark.parametrize("step", DATA_STEPS, ids=lambda s: s.name)
def test_the_small_budget_falls_back_to_the_shipped_sample(step, empty_fetch_root):
    found = step_data(step, data_roots(), "small")
    assert found.reason is None and found.source == "sample"
    assert found.path == SAMPLES / step.data and found.path.exists()
    record = found.record()
    assert record["data_set"] == found.sample.title != found.dataset.title
    assert record["data_license"] == found.sample.license
    readme = (found.path if found.path.is_dir() else found.path.parent) / "README.md"
    assert found.sample.license in readme.read_text()  # the license beside the files


@pytest.mark.parametrize("budget", ["default", "full", "auto"])
@pytest.mark.parametrize("step", DATA_STEPS, ids=lambda s: s.name)
def test_larger_budgets_need_the_full_file_and_say_how_to_get_it(step, budget, empty_fetch_root):
    found = step_data(step, data_roots(), budget)
    assert found.path is None and found.source is None
    assert f"faithprobe data fetch {found.dataset.name}" in found.reason
    assert "serves --budget small only" in found.reason
    assert str(empty_fetch_root) in found.reason and step.data in found.reason


@pytest.mark.parametrize("step", DATA_STEPS, ids=lambda s: s.name)
def test_a_data_folder_comes_before_the_sample(step, tmp_path, empty_fetch_root):
    given = tmp_path / "given"
    target = given / step.data
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x")  # step_data finds files; reading them is the suite's job
    for budget in ("small", "default"):
        found = step_data(step, data_roots(given), budget)
        assert (found.path, found.source) == (target, "full")
    fetched = empty_fetch_root / step.data  # the fetch folder, searched after --data-dir
    fetched.parent.mkdir(parents=True, exist_ok=True)
    fetched.write_text("y")
    assert step_data(step, data_roots(), "default").path == fetched
    assert step_data(step, data_roots(given), "default").path == target


def test_a_partial_download_is_not_data(empty_fetch_root):
    squad = next(s for s in STEPS if s.name == "faithfulness-deletion")
    part = empty_fetch_root / (squad.data + ".part")
    part.parent.mkdir(parents=True)
    part.write_text("{")
    assert step_data(squad, data_roots(), "default").reason is not None


def test_generated_data_needs_no_folder(empty_fetch_root):
    step = next(s for s in STEPS if s.data is None)
    found = step_data(step, data_roots(), "default")
    assert found.reason is None and found.path is None
    assert found.record() == {"data_source": "generated"}


def test_run_takes_a_fetched_data_set_by_name(tmp_path, empty_fetch_root):
    squad = empty_fetch_root / "squad" / "dev-v1.1.json"
    squad.parent.mkdir()
    squad.write_text("{}")
    assert resolve(Path("squad")) == squad
    here = tmp_path / "squad"  # a path that exists wins over the name
    here.write_text("{}")
    assert resolve(here) == here
    with pytest.raises(UsageError, match=r"faithprobe data fetch socialiqa"):
        resolve(Path("socialiqa"))
    with pytest.raises(DataError, match=r"nor a data set name \(squad, "):
        resolve(Path("no-such-thing.json"))


def test_a_missing_data_dir_is_refused():
    with pytest.raises(UsageError, match="no such folder"):
        data_roots(Path("/nonexistent/data"))
