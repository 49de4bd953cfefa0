"""Metrics and figures are remembered by the fingerprint of their inputs and of the code: a
re-run with the same results writes the same bytes without computing or drawing them, and
anything that changes an input (results, seed, code) computes them again."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithprobe import memo as memo_module
from faithprobe import runner as runner_module
from faithprobe.report import run_to_folder
from faithprobe.runner import RunConfig
from faithprobe.suites.distractors.report import DistractorsReport


def outputs(run: Path) -> list[str]:
    """The metrics, the summary table and every figure a run folder holds (which figures a
    12-pair sample draws depends on the conditions it holds)."""
    plots = sorted(f"plots/{p.name}" for p in (run / "plots").iterdir())
    assert plots, "no figure drawn"
    return ["metrics.json", "tables/summary.csv", *plots]


def _config(tmp_path, out: str, **changes) -> RunConfig:
    config = RunConfig(
        suite="distractors",
        models=[str(changes.pop("model"))],
        limit=12,
        seed=1,
        batch_size=4,
        out=tmp_path / out,
        cache_dir=tmp_path / "cache",
    )
    for key, value in changes.items():
        setattr(config, key, value)
    return config


@pytest.fixture
def counted(monkeypatch):
    """How many times metrics were computed and figures drawn."""
    calls = {"metrics": 0, "plots": 0}
    compute, draw = runner_module.compute_metrics, DistractorsReport.plots

    def counting_metrics(*args, **kwargs):
        calls["metrics"] += 1
        return compute(*args, **kwargs)

    def counting_plots(metrics, folder):
        calls["plots"] += 1
        return draw(metrics, folder)

    monkeypatch.setattr(runner_module, "compute_metrics", counting_metrics)
    monkeypatch.setattr(DistractorsReport, "plots", staticmethod(counting_plots))
    return calls


def test_a_rerun_writes_the_same_bytes_without_computing(tiny_llama_dir, tmp_path, counted):
    first = run_to_folder(_config(tmp_path, "first", model=tiny_llama_dir))
    assert counted == {"metrics": 1, "plots": 1}
    again = run_to_folder(_config(tmp_path, "again", model=tiny_llama_dir))
    assert counted == {"metrics": 1, "plots": 1}
    assert outputs(again) == outputs(first)
    for name in outputs(first):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name


def test_remembered_outputs_equal_computed_ones(tiny_llama_dir, tmp_path, counted):
    """Without a cache nothing is remembered: the same run computes the same bytes."""
    remembered = run_to_folder(_config(tmp_path, "a", model=tiny_llama_dir))
    run_to_folder(_config(tmp_path, "b", model=tiny_llama_dir))
    computed = run_to_folder(_config(tmp_path, "c", model=tiny_llama_dir, cache=False))
    assert counted == {"metrics": 2, "plots": 2}
    assert outputs(computed) == outputs(remembered)
    for name in outputs(remembered):
        assert (computed / name).read_bytes() == (remembered / name).read_bytes(), name


def test_changed_inputs_or_code_compute_again(tiny_llama_dir, tmp_path, counted, monkeypatch):
    run_to_folder(_config(tmp_path, "a", model=tiny_llama_dir))
    run_to_folder(_config(tmp_path, "b", model=tiny_llama_dir, seed=2))  # other results
    assert counted == {"metrics": 2, "plots": 2}
    monkeypatch.setattr(memo_module, "code_fingerprint", lambda: "edited code")
    run_to_folder(_config(tmp_path, "c", model=tiny_llama_dir))
    assert counted == {"metrics": 3, "plots": 3}


def test_the_code_fingerprint_covers_every_module():
    memo_module.code_fingerprint.cache_clear()
    assert len(memo_module.code_fingerprint()) == 64
    assert memo_module.fingerprint("a", b"b") != memo_module.fingerprint("ab")


def test_a_plugin_package_is_part_of_the_key(tmp_path, monkeypatch):
    package = tmp_path / "plugin_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "metrics.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    memo_module.module_fingerprint.cache_clear()
    before = memo_module.module_fingerprint("plugin_pkg.metrics")
    (package / "metrics.py").write_text("X = 2\n")
    memo_module.module_fingerprint.cache_clear()
    assert memo_module.module_fingerprint("plugin_pkg.metrics") != before
    assert memo_module.module_fingerprint("faithprobe.suites.distractors.metrics") == ""
