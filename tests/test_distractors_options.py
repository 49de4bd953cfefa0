"""The distractors suite's method options: padded n = 0 items (``filler``), the Figure 1
main view beside the pooled one, and a competent item set shared by the run's models
(``competent=shared``)."""

import hashlib
import json

import pandas as pd
import pytest

from faithprobe.datasets.stories import NEUTRAL_SENTENCES
from faithprobe.errors import UsageError
from faithprobe.generators.distractors import DistractorConfig, build, generate, plan
from faithprobe.report import write_run
from faithprobe.runner import RunConfig, run
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.distractors import metrics as m


def _digest(items) -> str:
    rows = [[i.id, i.context, i.target, list(i.candidates), i.suffix, i.features] for i in items]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]


def test_the_default_set_is_unchanged_for_a_seed():
    """Hashes of the generated set (changed once on purpose since the padding option: the
    unrelated attractor "wears glasses" named a candidate and became "flies kites")."""
    assert _digest(generate(DistractorConfig(), 0)) == "2375ecabca1b2883"
    assert _digest(generate(DistractorConfig(fillers=(0, 2)), 0)) == "2eb8ed5928aca293"


def test_filler_sentences_add_one_padded_no_attractor_copy_per_base():
    plain = generate(DistractorConfig(), 0)
    padded = generate(DistractorConfig(filler_sentences=2), 0)
    extra = [i for i in padded if i.id.endswith("|pad2")]
    bases = [i for i in plain if i.features["base_id"] is None]
    assert len(extra) == len(bases) == 44
    assert [i for i in padded if not i.id.endswith("|pad2")] == plain
    for base, item in zip(bases, extra, strict=True):
        f = item.features
        assert f["base_id"] == base.id and f["n_attractors"] == 0 and not f["attractors"]
        assert len(f["padding"]) == 2 and set(f["padding"]) <= set(NEUTRAL_SENTENCES)
        first, query = base.context.split(". ", 1)
        assert item.context == " ".join([first + ".", *f["padding"], query])
        assert item.target == base.target and item.candidates == base.candidates
    with pytest.raises(UsageError, match="filler_sentences"):
        DistractorConfig(filler_sentences=4)
    with pytest.raises(UsageError, match="option filler=5: expected a number from 0 to 3"):
        get_suite("distractors", {"filler": "5"})
    with pytest.raises(UsageError, match="option competent='all': choose from 'each', 'shared'"):
        get_suite("distractors", {"competent": "all"})


def test_the_plan_builds_the_padded_items_and_sampling_matches():
    config = DistractorConfig(filler_sentences=1, item_sets=("sports",))
    bases, planned = plan(config, 2)
    assert bases + build(planned, 2) == generate(config, 2)
    suite = get_suite("distractors", {"filler": "1"})
    drawn = suite.sampled_pairs(None, 60, 3)
    assert drawn == suite.sample(suite.pairs(None, 3), 60, 3)
    assert any(p.intervention == "padding[n=1]" for p in drawn)


def _row(subject, base, kind, n, correct, *, position="after", padding=0, competent=True):
    is_base = kind == "none" and not padding
    return {
        "subject": subject,
        "original_id": base,
        "intervention": "none" if is_base else "x",
        "item_set": "capitals",
        "setting": "none" if is_base else "single",
        "attractor_type": kind,
        "n_attractors": n,
        "position": "none" if kind == "none" else position,
        "n_filler": 0,
        "n_padding": padding,
        "competent": competent,
        "correct": correct,
        "log_relative_probability": 0.0,
    }


def _results() -> pd.DataFrame:
    rows = []
    for s, ok in (("s1", {"a", "b", "c"}), ("s2", {"a", "b"})):
        for b in "abc":
            rows.append(_row(s, b, "none", 0, b in ok, competent=b in ok))
            rows.append(_row(s, b, "none", 0, b == "a", padding=2))  # padded: only a right
            rows.append(_row(s, b, "B", 1, True, position="after"))
            rows.append(_row(s, b, "B", 1, False, position="between"))
    return pd.DataFrame(rows)


def _accuracy(est, view, subject, n):
    e = pd.DataFrame(est)
    e = e[(e.view == view) & (e.metric == "accuracy") & (e.subject == subject)]
    return e.set_index("n_attractors").loc[n]


def test_main_view_is_attractors_after_the_fact_and_n0_is_the_padded_items():
    results = _results()
    assert m.zero_point(results) == {"items": "padded", "n_padding": 2, "n_items": 3}
    est = m.estimates(results)
    assert _accuracy(est, "main", "s1", 1)["value"] == 1.0  # after only
    assert _accuracy(est, "pooled", "s1", 1)["value"] == 0.5  # after and between
    zero = _accuracy(est, "main", "s1", 0)
    assert zero["value"] == pytest.approx(1 / 3) and zero["n"] == 3  # padded, not 1.0
    bare = m.estimates(results[results["n_padding"] == 0])
    assert _accuracy(bare, "main", "s1", 0)["value"] == 1.0  # base items: 1 by construction
    assert m.zero_point(results[results["n_padding"] == 0])["items"] == "base"


def test_shared_competent_set_counts_the_items_every_model_passes():
    results = _results()
    each, shared = m.estimates(results), m.estimates(results, shared=True)
    assert _accuracy(each, "main", "s1", 1)["n"] == 3
    assert _accuracy(each, "main", "s2", 1)["n"] == 2
    assert _accuracy(shared, "main", "s1", 1)["n"] == _accuracy(shared, "main", "s2", 1)["n"] == 2
    assert m.competent_ids(results, shared=True) == {
        (s, b) for s in ("s1", "s2") for b in ("a", "b")
    }
    counted = {r["subject"]: r for r in m.competent_set(results, shared=True)}
    assert counted["s1"]["n_own_competent"] == 3 and counted["s1"]["n_counted"] == 2
    assert counted["s2"]["rule"] == "shared" and counted["s2"]["n_counted"] == 2
    tests = m.tests(results, shared=True)
    assert {t["subject"] for t in tests} == {"s1", "s2"}
    one = next(t for t in tests if t["name"] == "one related attractor (single, after)")
    # padded n = 0 (a right, b wrong) against n = 1 after the fact (both right); the
    # attractors between entity and fact (both wrong) are a test of their own
    assert one["comparison"] == "accuracy at n=0 (padded) − accuracy at n=1 (after)"
    assert one["difference"] == pytest.approx(((1 - 1) + (0 - 1)) / 2) and one["n"] == 2
    between = next(t for t in tests if t["name"] == "one related attractor (single, between)")
    assert between["difference"] == pytest.approx(((1 - 0) + (0 - 0)) / 2)
    bare = m.tests(results[results["n_padding"] == 0])
    one = next(t for t in bare if t["name"] == "one related attractor (single, after)")
    assert one["comparison"].startswith("competent base (1.0)")


def test_run_with_filler_and_shared_competence(tmp_path, tiny_llama, tiny_tokenizer):
    subjects = [
        HFCausal(tiny_llama, tiny_tokenizer, name=name, batch_size=bs)
        for name, bs in (("tiny-a", 1), ("tiny-b", 8))
    ]
    config = RunConfig(
        suite="distractors",
        out=tmp_path / "run",
        cache=False,
        limit=40,
        options={"filler": "1", "competent": "shared"},
    )
    out = write_run(run(config, subjects=subjects))
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["zero_point"]["items"] == "padded" and metrics["zero_point"]["n_padding"] == 1
    sets = metrics["competent_set"]
    assert [r["rule"] for r in sets] == ["shared", "shared"]
    assert sets[0]["n_counted"] == sets[1]["n_counted"]  # one model, two names
    assert {"main", "pooled"} <= {e["view"] for e in metrics["estimates"]}
    res = pd.read_parquet(out / "results.parquet")
    assert (res.loc[res["n_padding"] > 0, "n_attractors"] == 0).all()
    assert "padding[n=1]" in set(res["intervention"])
    assert (out / "tables" / "competent_set.csv").is_file()
    assert (out / "tables" / "accuracy_pooled.csv").is_file()
    html = (out / "report.html").read_text()
    assert "the method&#39;s Figure 1" in html or "the method's Figure 1" in html
    assert "padded with 1 neutral" in html and "Rule shared" in html
