"""The invariants of benchmarks/audit_scheduling.py's simulation of the audit on Ray: no
makespan below a lower bound, one model on one worker is the serial sum, the driver is never
busier than the clock, and the measured audit folder is read as its run.json says."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

with pytest.MonkeyPatch.context() as patch:  # the benchmark by path, without Ray or torch
    patch.syspath_prepend(Path(__file__).parents[1] / "benchmarks")
    sim = importlib.import_module("audit_scheduling")

STEPS = (
    sim.Step("cloze", 386, 0.06),
    sim.Step("none left", 0, 0.1),
    sim.Step("qa", 51, 0.4),
    sim.Step("nli", 900, 0.05),
    sim.Step("reasoning", 22, 2.4),
)
DRIVER = sim.DriverCosts(0.001, sim.Linear(2e-5, 7e-6), sim.Linear(3e-5, 1e-5))
FREE = sim.DriverCosts(0.0, sim.Linear(0.0, 0.0), sim.Linear(0.0, 0.0))


def scenario(**given) -> sim.Scenario:
    base = dict(models=12, workers=4, workers_per_model=2, steps=STEPS, load_seconds=5.0,
                driver=DRIVER, shard_size=64)  # fmt: skip
    return sim.Scenario(**{**base, **given})


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"workers": 1, "workers_per_model": 1},
        {"workers": 16, "workers_per_model": 1},
        {"workers": 16, "workers_per_model": 4, "speedup": 1000.0},
        {"workers": 3, "workers_per_model": 5, "sigma": 0.0},
        {"models": 20, "workers": 3, "workers_per_model": 3, "speedup": 100.0},
        {"workers": 16, "workers_per_model": 1, "growing": True},
        {"models": 20, "workers": 7, "workers_per_model": 2, "speedup": 10.0, "growing": True},
    ],
)
def test_no_makespan_below_a_bound_every_request_answered_every_worker_freed(given):
    s = scenario(**given)
    o = sim.simulate(s)
    r = sim.row(s, o)
    assert o.makespan >= (o.work + o.loads) / s.workers - 1e-9
    assert o.makespan >= o.driver_busy - 1e-9
    assert o.makespan >= o.longest_model - 1e-9
    assert r["makespan_over_binding_bound"] >= 1.0
    best = sim.any_policy_bound(s)
    assert o.makespan >= best * (1 - 1e-5)
    assert best >= (o.work + o.loads) / s.workers * (1 - 1e-5)
    assert 0.0 < o.driver_busy / o.makespan <= 1.0
    assert o.requests == s.models * sum(st.requests for st in s.steps)
    assert o.actor_loads >= s.models


def test_one_model_on_one_worker_is_its_load_plus_the_serial_sum():
    s = scenario(models=1, workers=1, workers_per_model=1, driver=FREE, sigma=0.0)
    o = sim.simulate(s)
    serial = sum(st.requests * st.seconds_per_request for st in STEPS)
    assert o.makespan == pytest.approx(5.0 + serial)
    assert o.longest_queue == 0 and o.actor_loads == 1


def test_no_policy_beats_one_model_on_one_worker_and_many_workers_share_a_model_loaded_often():
    alone = scenario(models=1, workers=1, workers_per_model=1, driver=FREE, sigma=0.0)
    serial = sum(st.requests * st.seconds_per_request for st in STEPS)
    assert sim.any_policy_bound(alone) == pytest.approx(5.0 + serial, rel=1e-5)
    # 4 workers: 4 actors each load (5 s) then share the work, all within the workers' time
    spread = scenario(models=1, workers=4, workers_per_model=4, driver=FREE, sigma=0.0)
    assert sim.any_policy_bound(spread) == pytest.approx(5.0 + serial / 4, rel=1e-5)


def test_the_largest_model_placed_first_does_not_wait_behind_the_small_ones(monkeypatch):
    """Two workers, two small models given before a large one: in the order given the large
    one starts when a small one ends; largest first, it starts at once."""
    monkeypatch.setattr(sim, "model_sizes", lambda models, sigma, seed: [1.0, 1.0, 3.0])
    one = (sim.Step("cloze", 10, 1.0),)
    given = scenario(models=3, workers=2, workers_per_model=1, steps=one, driver=FREE)
    first = sim.replace(given, largest_first=True)
    assert sim.simulate(given).makespan == pytest.approx(15.0 + 45.0)  # a small one, then it
    assert sim.simulate(first).makespan == pytest.approx(45.0)  # the small ones beside it
    charged = sim.replace(first, driver=DRIVER)
    assert sim.row(charged, sim.simulate(charged))["order"] == "largest first"


def test_one_worker_waits_for_the_driver_after_every_shard():
    s = scenario(models=1, workers=1, workers_per_model=1, sigma=0.0)
    o = sim.simulate(s)
    shards = [sim.shards(st.requests, 1, 64) for st in STEPS if st.requests]
    expected = 5.0 + sum(st.requests * st.seconds_per_request for st in STEPS)
    expected += sum(DRIVER.release(n) for step in shards for n in step)
    expected += sum(DRIVER.write(step[-1]) for step in shards)  # a step ends once written
    assert o.makespan == pytest.approx(expected)


def test_a_fast_cluster_is_held_to_the_drivers_rate():
    s = scenario(models=40, workers=64, workers_per_model=1, speedup=1e6, load_seconds=0.01)
    o = sim.simulate(s)
    assert sim.row(s, o)["binds"] == "driver"
    assert o.requests / o.makespan <= s.shard_size / DRIVER.service(s.shard_size)


def test_more_workers_never_slow_a_driver_free_audit_of_equal_models():
    spans = [
        sim.simulate(scenario(workers=w, workers_per_model=1, driver=FREE, sigma=0.0)).makespan
        for w in (1, 2, 4, 12)
    ]
    assert spans == sorted(spans, reverse=True)


def test_growing_pools_shorten_an_audit_whose_last_models_leave_workers_idle():
    """One step of many shards (a step of one shard runs on one actor however many join)."""
    fixed = scenario(models=12, workers=16, workers_per_model=1, driver=FREE,
                     steps=(sim.Step("nli", 3000, 0.05),))  # fmt: skip
    growing = sim.replace(fixed, growing=True)
    a, b = sim.simulate(fixed), sim.simulate(growing)
    assert b.makespan < 0.8 * a.makespan
    assert b.actor_loads > a.actor_loads == 12  # the grown actors, each loaded
    assert b.requests == a.requests


def test_the_same_seed_gives_the_same_audit_and_another_seed_another():
    assert sim.simulate(scenario(seed=3)) == sim.simulate(scenario(seed=3))
    assert sim.simulate(scenario(seed=3)).makespan != sim.simulate(scenario(seed=4)).makespan


def test_shards_are_cut_as_the_executor_cuts_them():
    assert sim.shards(150, 1, 64) == [64, 64, 22]
    assert sim.shards(51, 4, 64) == [13, 13, 13, 12]
    assert sim.shards(3, 8, 64) == [1, 1, 1]


def test_the_measured_audit_gives_each_step_its_seconds_per_request(tmp_path):
    steps = [
        {"step": "distractors", "status": "ran", "folder": "suites/distractors", "seconds": 24.5},
        {"step": "natural-logic", "status": "skipped", "folder": None, "seconds": None},
        {"step": "reasoning", "status": "ran", "folder": "suites/reasoning", "seconds": 53.2},
    ]
    (tmp_path / "run.json").write_text(json.dumps({"steps": steps, "batch_size": 16}))
    for folder, computed in (("distractors", 386), ("reasoning", 22)):
        (tmp_path / "suites" / folder).mkdir(parents=True)
        run = {"subjects": [{"computed_requests": computed}, {"computed_requests": 1}]}
        (tmp_path / "suites" / folder / "run.json").write_text(json.dumps(run))
    read, record = sim.measured_audit(tmp_path)
    assert [(s.name, s.requests) for s in read] == [("distractors", 386), ("reasoning", 22)]
    assert read[1].seconds_per_request == pytest.approx(53.2 / 22)
    assert record["batch_size"] == 16
