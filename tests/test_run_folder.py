"""A run folder is replaced whole or not at all, and --out never clobbers what is not ours."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from faithprobe import output_folders as runfolder
from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.output_folders import check_target, is_run_folder, recover, replaced_whole

runner = CliRunner()


@pytest.fixture(scope="module")
def model_dir(tiny_llama_dir) -> Path:
    return tiny_llama_dir


def _run(*args) -> object:
    return runner.invoke(app, ["run", *[str(a) for a in args]])


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# -- the staging folder and the swap ------------------------------------------------------


def _fake_run(folder: Path, tag: str) -> None:
    (folder / "run.json").write_text(json.dumps({"versions": {"faithprobe": "0"}, "tag": tag}))
    (folder / f"only-{tag}.txt").write_text(tag)


@pytest.mark.parametrize("atomic_exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_folder_is_replaced_whole(tmp_path, monkeypatch, atomic_exchange):
    if not atomic_exchange:
        monkeypatch.setattr(runfolder, "_exchange", lambda a, b: False)
    target = tmp_path / "run"
    with replaced_whole(target) as staging:
        _fake_run(staging, "old")
    with replaced_whole(target) as staging:
        assert not staging.samefile(target) and staging.parent == target.parent
        _fake_run(staging, "new")
    assert sorted(_files(target)) == ["only-new.txt", "run.json"]  # nothing of the old left
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no staging or aside folder left


def test_a_failure_while_writing_leaves_the_old_folder(tmp_path):
    target = tmp_path / "run"
    with replaced_whole(target) as staging:
        _fake_run(staging, "old")
    before = _files(target)
    with pytest.raises(RuntimeError), replaced_whole(target) as staging:
        _fake_run(staging, "new")
        raise RuntimeError("the report failed")
    assert _files(target) == before
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_recover_puts_back_a_folder_set_aside_by_a_killed_swap(tmp_path):
    target = tmp_path / "run"
    target.mkdir()
    _fake_run(target, "old")
    dead = 2**22 + 12345  # beyond the default pid range: no such process
    aside = tmp_path / f".run.previous-{dead}"
    target.rename(aside)  # killed between "old aside" and "new in place"
    (tmp_path / f".run.staging-{dead}").mkdir()  # and its staging folder left behind
    recover(target)
    assert json.loads((target / "run.json").read_text())["tag"] == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_out_must_be_ours_empty_or_new(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "thesis.tex").write_text("years of work")
    with pytest.raises(UsageError, match="not a faithprobe run folder.*--force"):
        check_target(theirs)
    assert check_target(theirs, force=True) == theirs
    (tmp_path / "empty").mkdir()
    assert check_target(tmp_path / "empty") == tmp_path / "empty"
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        check_target(tmp_path / "a-file")
    with pytest.raises(UsageError, match="working directory"):
        check_target(tmp_path, force=True)
    with pytest.raises(UsageError, match="working directory"):
        check_target(Path("."), force=True)
    assert not is_run_folder(theirs)


# -- through the command line -------------------------------------------------------------


def test_out_that_is_not_a_run_folder_is_refused_unless_forced(tmp_path, model_dir):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    res = _run("distractors", "--model", model_dir, "--limit", 4, "--out", theirs,
               "--cache-dir", tmp_path / "c")  # fmt: skip
    assert res.exit_code == 2 and "not a faithprobe run folder" in res.stderr
    assert (theirs / "notes.txt").read_text() == "mine"
    res = _run("distractors", "--model", model_dir, "--limit", 4, "--out", theirs,
               "--cache-dir", tmp_path / "c", "--force")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert not (theirs / "notes.txt").exists() and is_run_folder(theirs)


def test_out_or_cache_dir_naming_a_file_fails_before_any_work(tmp_path, model_dir, monkeypatch):
    from faithprobe.suites.distractors.suite import DistractorsSuite

    def no_pairs_please(*_):
        raise AssertionError("pairs were built before the arguments were checked")

    monkeypatch.setattr(DistractorsSuite, "pairs", no_pairs_please)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for flag in ("--out", "--cache-dir"):
        res = _run("distractors", "--model", model_dir, flag, a_file)
        said = f"{flag}': '{a_file}': is a file, not a folder"
        assert res.exit_code == 2 and said in res.stderr, res.output
    assert a_file.read_text() == "x"


def test_an_old_run_of_another_suite_is_replaced_whole(tmp_path, model_dir):
    out, cache = tmp_path / "run", tmp_path / "c"
    data = tmp_path / "mc.jsonl"
    rows = [{"id": f"q{i}", "prompt": f"Ann has {i} cats. How many cats?",
             "choices": [str(i), str(i + 1), "none"], "label": 0} for i in range(4)]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = _run("confidence-shift", "--model", model_dir, "--data", data, "-o", "trials=1",
               "--out", out, "--cache-dir", cache)  # fmt: skip
    assert res.exit_code == 0, res.output
    res = _run(
        "distractors", "--model", model_dir, "--limit", 4, "--out", out, "--cache-dir", cache
    )
    assert res.exit_code == 0, res.output
    fresh = tmp_path / "fresh"
    res = _run("distractors", "--model", model_dir, "--limit", 4, "--out", fresh,
               "--cache-dir", cache)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert set(_files(out)) == set(_files(fresh))  # no table or plot of the old suite left


def test_text_from_data_is_drawn_as_plain_text(tmp_path, model_dir):
    """A ``$…$`` attractor type (any text from the data that reaches a legend or a panel
    title) once crashed matplotlib's mathtext parser while the report was written."""
    out = tmp_path / "run"
    res = _run("distractors", "--model", model_dir, "--limit", 24, "--out", out,
               "--cache-dir", tmp_path / "c")  # fmt: skip
    assert res.exit_code == 0, res.output
    results = pd.read_parquet(out / "results.parquet")
    variants = results["intervention"] != "none"
    results.loc[variants, "attractor_type"] = "$\\frac{1}{0$ [bold]x[/] :flag:"
    results["competent"] = True  # so that every curve has estimates to draw
    results["correct"] = results.index % 2 == 0
    results.to_parquet(out / "results.parquet", index=False)
    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output
    assert {p.name for p in (out / "plots").glob("*.png")} >= {"accuracy.png"}
    assert "$\\frac{1}{0$ [bold]x[/] :flag:" in (out / "report.html").read_text()


def test_a_run_with_no_pairs_is_an_error_and_keeps_the_old_folder(tmp_path, model_dir):
    out, cache = tmp_path / "run", tmp_path / "c"
    assert _run("distractors", "--model", model_dir, "--limit", 4, "--out", out,
                "--cache-dir", cache).exit_code == 0  # fmt: skip
    before = _files(out)
    base_only = tmp_path / "bases.jsonl"
    base_only.write_text(json.dumps({"id": "b", "context": "Ann lives in", "target": "Oslo",
                                     "candidates": ["Oslo", "Rome"],
                                     "features": {"base_id": None, "n_attractors": 0}}) + "\n")  # fmt: skip
    res = _run("distractors", "--model", model_dir, "--data", base_only, "--out", out,
               "--cache-dir", cache)  # fmt: skip
    assert res.exit_code == 2
    assert f"{base_only}: no attractor variants" in res.stderr
    assert _files(out) == before


# -- killed while writing -----------------------------------------------------------------

RUN = "from faithprobe.cli import app; app()"


def _small_data(folder: Path) -> Path:
    """Two base items with all their variants: a run reads them instead of generating the
    whole dataset, so a trial costs little more than the process start."""
    path = folder / "items.jsonl"
    assert runner.invoke(app, ["generate", "distractors", "--out", str(path)]).exit_code == 0
    items = [json.loads(x) for x in path.read_text().splitlines()]
    bases = [i["id"] for i in items if i["features"].get("base_id") is None][:2]
    keep = [i for i in items if i["id"] in bases or i["features"].get("base_id") in bases]
    path.write_text("".join(json.dumps(i) + "\n" for i in keep))
    return path


def _start(model_dir: Path, data: Path, out: Path, cache: Path, limit: int) -> subprocess.Popen:
    args = ["run", "distractors", "--model", str(model_dir), "--data", str(data),
            "--limit", str(limit), "--out", str(out), "--cache-dir", str(cache)]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-c", RUN, *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def _staging_seen(out: Path, proc: subprocess.Popen, timeout: float = 120.0) -> float:
    """Wait until the process has begun writing (its staging folder exists); the time."""
    deadline = time.monotonic() + timeout
    name = f".{out.name}.staging-{proc.pid}"
    while time.monotonic() < deadline and proc.poll() is None:
        if (out.parent / name).exists():
            return time.monotonic()
        time.sleep(0.002)
    raise AssertionError("the run never began writing")


def _complete(folder: Path, names: set[str], limit: int) -> bool:
    if set(_files(folder)) != names:
        return False
    run = json.loads((folder / "run.json").read_text())
    json.loads((folder / "metrics.json").read_text())
    pd.read_parquet(folder / "results.parquet")
    return run["limit"] == limit and (folder / "report.html").read_text().rstrip().endswith(
        "</html>"
    )


def test_a_kill_while_writing_leaves_the_old_or_the_new_folder_whole(tmp_path, model_dir):
    out, cache = tmp_path / "run", tmp_path / "cache"
    data = _small_data(tmp_path)
    # the new run's answers are cached, so a run is mostly its writing phase
    reference = tmp_path / "reference"
    proc = _start(model_dir, data, reference, cache, 8)
    started = _staging_seen(reference, proc)
    while not reference.exists():  # it appears when the staging folder is swapped in
        time.sleep(0.002)
    write_seconds = time.monotonic() - started
    assert proc.wait(timeout=300) == 0
    new_names = set(_files(reference))
    assert _run("distractors", "--model", model_dir, "--data", data, "--limit", 4, "--out", out,
                "--cache-dir", cache).exit_code == 0  # fmt: skip
    old = _files(out)

    rng = random.Random(7)
    outcomes = {"old": 0, "new": 0}
    for _ in range(10):
        proc = _start(model_dir, data, out, cache, 8)
        seen = _staging_seen(out, proc)
        time.sleep(max(0.0, rng.uniform(0.0, 2.5 * write_seconds) - (time.monotonic() - seen)))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        if _files(out) == old:
            outcomes["old"] += 1
        else:
            assert _complete(out, new_names, 8), sorted(_files(out))
            outcomes["new"] += 1
            # back to the old folder for the next trial
            with replaced_whole(out) as staging:
                for name, content in old.items():
                    (staging / name).parent.mkdir(parents=True, exist_ok=True)
                    (staging / name).write_bytes(content)
    print(f"kills while writing: {outcomes}")
    assert outcomes["old"] >= 1, outcomes  # most kills land before the swap
    # the next run clears what the killed ones left and writes the folder whole
    assert _run("distractors", "--model", model_dir, "--data", data, "--limit", 8, "--out", out,
                "--cache-dir", cache).exit_code == 0  # fmt: skip
    assert _complete(out, new_names, 8)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cache",
        "items.jsonl",
        "reference",
        "run",
    ]
