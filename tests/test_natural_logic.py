"""The natural-logic suite: NLI-XY grid, gold labeller, the four intervention sets on a
hand-made table, intervals over base examples, NLI loaders, and a run with a tiny LM."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from faithprobe.datasets.nli import read_nli
from faithprobe.datasets.nli_xy import challenge_files, gold_label, read_nli_xy
from faithprobe.errors import DataError, UsageError
from faithprobe.interventions import get
from faithprobe.interventions.feature_swaps import NO_ALTERNATIVE
from faithprobe.records import NLIExample
from faithprobe.report import write_run
from faithprobe.requests import CandidateScoreRequest, TextPairRequest
from faithprobe.runner import RunConfig, run
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.natural_logic.intervals import MIN_BASES, base_rates, flat_variance
from faithprobe.suites.natural_logic.metrics import (
    causal_effects,
    effect_pair,
    ranking,
    subject_differences,
)

HEADER_C = "source\tcontext\tintervened\tmonotonicity\toperator\tdistractor operator\t" \
    "singular\tmass\tplural\tplace\n"  # fmt: skip
CONTEXTS = [
    ("T", "A man saw a x.", "up", "x", "", ""),  # c0002 singular only
    ("T", "No man saw a x.", "down", "x", "", ""),  # c0003 singular only
    ("T", "Some men ate x today.", "up", "", "x", "x"),  # c0004 mass + plural
    ("T", "Few men ate x today.", "down", "", "x", "x"),  # c0005 mass + plural
    ("T", "Exactly two men saw a x.", "neither", "x", "", ""),  # c0006 singular only
    ("T", "Every man saw a x.", "down", "x", "", ""),  # c0007 singular only
]
HEADER_I = "source\tx_grammar\tx\ty\ty_grammar\tinsertion_rel\n"
INSERTIONS = [
    ("T", "s", "dog", "animal", "s", "leq"),  # i0002 (+ i0002r: animal, dog, geq)
    ("T", "s", "cat", "table", "s", "none"),  # i0003 (+ i0003r)
    ("T", "m", "rice", "food", "m", "leq"),  # i0004 (+ i0004r)
    ("T", "s", "dog", "animal", "s", "leq"),  # i0005: duplicate of i0002, dropped
]


def write_grid(folder):
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        "\t".join([s, c, "", m, "", "", sg, ms, pl, ""]) + "\n" for s, c, m, sg, ms, pl in CONTEXTS
    ]
    (folder / "contexts.tsv").write_text(HEADER_C + "".join(rows))
    (folder / "insertions.tsv").write_text(
        HEADER_I + "".join("\t".join(r) + "\n" for r in INSERTIONS)
    )
    return folder


@pytest.fixture(scope="module")
def grid_dir(tmp_path_factory):
    folder = write_grid(tmp_path_factory.mktemp("nlixy") / "nli-xy")
    (folder / "help_test.tsv").write_text(
        "index\tsentence1\tsentence2\tgold_label\n"
        "0\tA dog ran .\tAn animal ran .\tentailment\n"
        "1\tAn animal ran .\tA dog ran .\tneutral\n"
        "2\tNo dog ran .\tA dog ran .\tcontradiction\n"
    )
    return folder


@pytest.mark.parametrize(
    ("relation", "monotonicity", "gold"),
    [
        ("leq", "up", "entailment"),
        ("geq", "down", "entailment"),
        ("leq", "down", "non-entailment"),
        ("geq", "up", "non-entailment"),
        ("none", "up", "non-entailment"),
        ("none", "down", "non-entailment"),
        ("leq", "neither", "non-entailment"),
        ("geq", "neither", "non-entailment"),
        ("none", "neither", "non-entailment"),
    ],
)
def test_gold_labeller_every_case(relation, monotonicity, gold):
    assert gold_label(relation, monotonicity) == gold


def test_grid_reverses_pairs_filters_by_kind_and_drops_duplicates(grid_dir):
    grid = read_nli_xy(grid_dir)
    assert [i.id for i in grid.insertions] == [
        "i0002",
        "i0002r",
        "i0003",
        "i0003r",
        "i0004",
        "i0004r",
    ]
    rev = next(i for i in grid.insertions if i.id == "i0002r")
    assert (rev.x, rev.y, rev.relation) == ("animal", "dog", "geq")
    # singular contexts take the 4 singular pairs, mass/plural contexts the 2 mass pairs
    assert len(grid.examples) == 4 * 4 + 2 * 2
    ex = next(e for e in grid.examples if e.id == "nlixy-c0003-i0002r")
    assert (ex.premise, ex.hypothesis, ex.label) == (
        "No man saw a animal.",
        "No man saw a dog.",
        "entailment",
    )
    assert {e.features["insertion_id"] for e in grid.by_context["c0004"]} == {"i0004", "i0004r"}


def test_grid_errors_name_file_record_and_field(tmp_path):
    folder = write_grid(tmp_path / "bad")
    text = (folder / "insertions.tsv").read_text().replace("\tleq\n", "\tsubset\n", 1)
    (folder / "insertions.tsv").write_text(text)
    with pytest.raises(DataError, match=r"insertions.tsv: record line 2: field 'insertion_rel'"):
        read_nli_xy(folder)
    folder = write_grid(tmp_path / "bad2")
    text = (folder / "contexts.tsv").read_text().replace("A man saw a x.", "A man saw a y.")
    (folder / "contexts.tsv").write_text(text)
    with pytest.raises(DataError, match=r"contexts.tsv: record line 2: field 'context'.*slot"):
        read_nli_xy(folder)


def _alts(grid, name, base_id):
    base = next(e for e in grid.examples if e.id == base_id)
    return sorted(a.id for a in get(name).apply(base, seed=0, pool=grid).examples)


def test_the_four_intervention_conditions(grid_dir):
    grid = read_nli_xy(grid_dir)
    base = "nlixy-c0002-i0002"  # "A man saw a dog." => "... animal."  leq, up: entailment
    # I0: same pair, other context whose monotonicity and gold differ: down and neither
    assert _alts(grid, "swap_context_flip", base) == [
        "nlixy-c0003-i0002",
        "nlixy-c0006-i0002",
        "nlixy-c0007-i0002",
    ]
    # I1: same context, other pair with another relation and gold -> geq and none pairs
    assert _alts(grid, "swap_pair_flip", base) == [
        "nlixy-c0002-i0002r",
        "nlixy-c0002-i0003",
        "nlixy-c0002-i0003r",
    ]
    # I2: same pair, other context with the same monotonicity: none among singular contexts
    assert _alts(grid, "swap_context_keep", base) == []
    assert _alts(grid, "swap_context_keep", "nlixy-c0003-i0002r") == ["nlixy-c0007-i0002r"]
    # I3: same context, other pair with the same relation (leq): none singular
    assert _alts(grid, "swap_pair_keep", base) == []

    # I1 as the method built it (option i1=leq-geq): leq <-> geq only
    assert _alts(grid, "swap_pair_reverse", base) == ["nlixy-c0002-i0002r"]

    base = "nlixy-c0002-i0003"  # none, up: non-entailment
    assert _alts(grid, "swap_context_flip", base) == []  # "none" is never entailment
    assert _alts(grid, "swap_pair_flip", base) == ["nlixy-c0002-i0002"]
    assert _alts(grid, "swap_pair_reverse", base) == []  # a none pair is never swapped
    assert _alts(grid, "swap_pair_keep", base) == ["nlixy-c0002-i0003r"]  # none <-> none

    base = "nlixy-c0004-i0004"  # rice/food, leq, up (mass)
    assert _alts(grid, "swap_context_flip", base) == ["nlixy-c0005-i0004"]
    assert _alts(grid, "swap_pair_flip", base) == ["nlixy-c0004-i0004r"]

    base = "nlixy-c0006-i0002"  # neither: non-entailment; I2 needs another neither context
    assert _alts(grid, "swap_context_keep", base) == []
    example = next(e for e in grid.examples if e.id == base)
    assert get("swap_context_keep").apply(example, seed=0, pool=grid).reason == NO_ALTERNATIVE
    assert _alts(grid, "swap_context_flip", base) == ["nlixy-c0002-i0002"]  # not to down


def _synthetic(cp_by_base: dict[str, list[int]], set_name: str) -> pd.DataFrame:
    rows = [
        {"subject": "m", "set": set_name, "original_id": b, "intervened_id": f"{b}>{i}", "cp": c}
        for b, cps in cp_by_base.items()
        for i, c in enumerate(cps)
    ]
    return pd.DataFrame(rows)


def test_intervals_resample_bases_not_pairs():
    rng = np.random.default_rng(1)
    # 60 bases, each flips all or none of its 20 pairs: pairs within a base are perfectly
    # correlated, so the interval must be as wide as a 60-item proportion's, not 1,200's
    tce = _synthetic({f"b{i}": [int(rng.random() < 0.5)] * 20 for i in range(60)}, "I1")
    dce = _synthetic({f"b{i}": [0] * 19 + [int(i % 10 == 0)] for i in range(60)}, "I3")
    est = effect_pair(tce, dce, seed=0)
    t = est["tce"]
    assert t["ci_low"] < t["value"] < t["ci_high"]
    assert t["ci_high"] - t["ci_low"] > 0.18  # ~ 2 * 1.96 * sqrt(.25 / 60) = 0.25
    assert est["dce"]["value"] == pytest.approx(6 / 1200)
    assert est["delta"]["value"] == pytest.approx(t["value"] - 6 / 1200)
    assert est["ratio"]["value"] == pytest.approx(t["value"] / (6 / 1200))
    assert est["dce_over_tce"]["value"] == pytest.approx((6 / 1200) / t["value"])
    # the ratio's interval and its inverse's are the same set of ratios
    r, q = est["dce_over_tce"], est["ratio"]
    assert 0 <= r["ci_low"] < r["value"] < r["ci_high"]
    assert q["ci_low"] == pytest.approx(1 / r["ci_high"])
    assert (
        r["ci_low"] == 0 and q["ci_high"] is None or q["ci_high"] == pytest.approx(1 / r["ci_low"])
    )
    assert est["n_bases"] == 60 and "bootstrap-t over 60 base examples" in est["interval"]
    assert effect_pair(tce, dce, seed=0) == est  # seeded


def test_flat_rates_get_an_interval_and_few_bases_none():
    """A rate the same on every base (a reader's TCE = 1, DCE = 0) still gets an interval
    (as if each base were one trial), and below MIN_BASES no effect gets one."""
    k = MIN_BASES
    always = _synthetic({f"b{i}": [1, 1, 1] for i in range(k)}, "I0")
    never = _synthetic({f"b{i}": [0, 0] for i in range(k)}, "I2")
    est = effect_pair(always, never, seed=0)
    assert est["tce"]["value"] == 1 and 0.7 < est["tce"]["ci_low"] < 1 == est["tce"]["ci_high"]
    assert est["dce"]["value"] == 0 == est["dce"]["ci_low"] and 0 < est["dce"]["ci_high"] < 0.3
    assert 0.5 < est["delta"]["ci_low"] < est["delta"]["ci_high"] == 1
    assert est["ratio"]["value"] == float("inf") and est["ratio"]["ci_high"] is None
    assert est["dce_over_tce"]["value"] == 0 == est["dce_over_tce"]["ci_low"]
    assert 0 < est["dce_over_tce"]["ci_high"] < 0.5  # the reader is faithful at MIN_BASES
    few = effect_pair(always.iloc[: 3 * (k - 1)], never.iloc[: 2 * (k - 1)], seed=0)
    assert few["n_bases"] == k - 1 and few["delta"]["value"] == 1
    assert few["delta"]["ci_low"] is None is few["delta"]["ci_high"]
    assert f"no interval below {k} bases" in few["interval"]


def test_a_rate_nearly_the_same_on_every_base_is_floored_too():
    """The case that broke the bootstrap-t when only an exactly flat rate was floored: TCE 1
    on 20 of 24 bases, 29 of 30 on two and 0 on two (a reader memorising two bases), DCE
    near 0. Resamples without the two zeros had a near-zero variance, their t statistics ran
    past 30 and TCE - DCE came out 0.91 [-0.79, 1.0]; every rate's variance now adds a flat
    rate's, so the interval stays where the data put it."""
    tce = {f"b{i}": [1] * 30 for i in range(20)}
    tce |= {"b20": [1] * 29 + [0], "b21": [1] * 29 + [0], "b22": [0] * 30, "b23": [0] * 30}
    dce = {f"b{i}": [0] * 20 for i in range(24)} | {"b5": [1] + [0] * 19}
    est = effect_pair(_synthetic(tce, "I0"), _synthetic(dce, "I2"), seed=0)
    assert est["tce"]["value"] == pytest.approx(658 / 720)
    assert 0.6 < est["delta"]["ci_low"] < est["delta"]["value"] < est["delta"]["ci_high"] <= 1
    flat = base_rates(np.array([[30.0] * 24]), np.array([[30.0] * 24]), seed=0)
    assert flat.cov[0, 0] == pytest.approx(float(flat_variance(24)))
    nearly = base_rates(np.array([[30.0] * 23 + [29.0]]), np.array([[30.0] * 24]), seed=0)
    assert flat.cov[0, 0] < nearly.cov[0, 0] < 1.01 * flat.cov[0, 0]  # the spread, added


def test_a_model_that_never_moves_has_no_ratio_and_ranks():
    always = _synthetic({f"b{i}": [1, 1, 1] for i in range(MIN_BASES)}, "I0")
    never = _synthetic({f"b{i}": [0, 0] for i in range(MIN_BASES)}, "I2")
    still = effect_pair(never.assign(set="I0"), never, seed=0)
    assert [still["dce_over_tce"][k] for k in ("value", "ci_low", "ci_high")] == [None] * 3
    assert still["delta"]["value"] == 0 and still["delta"]["ci_high"] < 0.5
    results = pd.concat([always, never, always.assign(set="I1"), never.assign(set="I3")])
    results = pd.concat([results, results.assign(subject="n", cp=1 - results["cp"])])
    effects = causal_effects(results, seed=0)
    assert {(e["subject"], e["feature"]) for e in effects} == {
        (s, f) for s in "mn" for f in ("insertion", "context")
    }
    ranks = {(r["subject"], r["feature"]): r for r in ranking(effects)}
    assert ranks[("m", "context")]["robustness_rank"] == 1
    assert ranks[("n", "context")]["robustness_rank"] == 2
    assert ranks[("m", "insertion")]["sensitivity_rank"] == 1


def test_the_ratio_interval_is_where_the_contrast_test_turns():
    """DCE/TCE's bounds are the ratios r at which the interval of DCE - r * TCE just reaches
    0 (Fieller's construction), and every interval is at least as wide as t's."""
    rng = np.random.default_rng(3)
    sums = np.vstack([rng.binomial(20, rng.beta(4, 2, 30)), rng.binomial(20, rng.beta(1, 4, 30))])
    rates = base_rates(sums, np.full((2, 30), 20), seed=0)
    ratio = rates.ratio(1, 0)
    assert ratio["value"] == pytest.approx(sums[1].sum() / sums[0].sum())
    for end in ("ci_low", "ci_high"):  # at r below the estimate DCE - r * TCE > 0, above < 0
        touching = rates.contrast([-ratio[end], 1])
        assert touching[end] == pytest.approx(0, abs=1e-6)
    delta = rates.contrast([1, -1])
    se = np.sqrt(np.array([1, -1]) @ rates.cov @ np.array([1, -1]))
    assert delta["ci_high"] - delta["ci_low"] >= 2 * rates.t * se - 1e-12


def test_subject_differences_pair_the_bootstrap_over_shared_bases():
    """The HELP contrast: two models on the same pairs, A flips every label-changing pair's
    prediction and B half of them; both keep label-preserving predictions."""
    rng = np.random.default_rng(2)
    half = {f"b{i}": [int(rng.random() < 0.5) for _ in range(6)] for i in range(40)}
    a = pd.concat(
        [_synthetic({b: [1] * 6 for b in half}, "I1"), _synthetic({b: [0] * 4 for b in half}, "I3")]
    )
    b = pd.concat([_synthetic(half, "I1"), _synthetic({b: [0] * 4 for b in half}, "I3")])
    results = pd.concat([a.assign(subject="with-help"), b.assign(subject="without")])
    (tce, dce) = [d for d in subject_differences(results, seed=0) if d["feature"] == "insertion"]
    assert (tce["quantity"], tce["subject_a"], tce["subject_b"]) == ("TCE", "with-help", "without")
    assert tce["value"] == pytest.approx(1 - sum(map(sum, half.values())) / 240)
    assert 0 < tce["ci_low"] < tce["value"] < tce["ci_high"] and tce["p_value"] < 0.01
    assert dce["value"] == 0 and dce["p_value"] == 1.0
    from faithprobe.suites.natural_logic.report import NaturalLogicReport

    metrics = {"subject_differences": [tce, dce], "subjects": [{"name": "with-help"}]}
    table = NaturalLogicReport.tables(metrics)["subject_differences"]
    assert list(table.display["A"]) == ["with-help"] * 2 and "excludes 0" in table.note
    # twins: a difference of 0 on every base; a rate flat across bases (A's TCE = 1, DCE =
    # 0) keeps its as-if-one-trial-per-base variance, so the interval is not a point there
    same = subject_differences(pd.concat([a, a.assign(subject="twin")]), seed=0)
    assert all(d["value"] == 0 and d["ci_low"] < 0 < d["ci_high"] for d in same)
    assert all(d["p_value"] == 1 for d in same)


def test_the_card_effects_carry_their_pairs_as_units():
    """TCE - DCE and DCE/TCE carry the per-pair CP they are means of (for paired comparisons
    between models): the same value, clustered by base, ids of pairs shared by two models
    and not naming either; a model that never moves has no ratio on either side. The
    report's tables leave the units out."""
    from faithprobe.suites.natural_logic.headline import headline
    from faithprobe.suites.natural_logic.report import NaturalLogicReport

    rng = np.random.default_rng(4)
    bases = [f"b{i}" for i in range(MIN_BASES + 2)]
    sets = pd.concat(  # uneven pairs per base: a mean over pairs is not one over bases
        _synthetic({b: rng.integers(0, 2, rng.integers(1, 6)).tolist() for b in bases}, name)
        for name in ("I0", "I1", "I2", "I3")
    )
    results = pd.concat(
        [sets.assign(subject="reader-model"), sets.assign(subject="still-model", cp=0)]
    )
    metrics = {"effects": causal_effects(results, seed=0)}
    effects = headline(metrics)
    assert {e.key.rsplit("_", 1)[0] for e in effects} == {"delta", "dce_over_tce"}
    assert len(effects) == 8
    by = {}
    for e in effects:
        u = e.units
        assert u is not None and u.formula == ("ratio" if "over" in e.key else "difference")
        assert abs(u.value() - e.value) < 1e-9 or np.isnan(u.value()) and np.isnan(e.value)
        assert set(u.cluster) == set(bases) and not any("model" in i for i in u.unit)
        by.setdefault(e.key, []).append(u)
    assert all(len(set(a.unit) & set(b.unit)) == len(a.unit) for a, b in by.values())
    ratio = next(e for e in effects if e.subject == "reader-model" and "over" in e.key)
    assert not np.isnan(ratio.value)
    table = NaturalLogicReport.tables(metrics)["effects"].data
    assert not any("units" in c for c in table.columns) and "delta.value" in table


def test_nli_loaders_collapse_labels_and_name_bad_records(tmp_path, grid_dir):
    ex = read_nli(grid_dir / "help_test.tsv")
    assert [e.label for e in ex] == ["entailment", "non-entailment", "non-entailment"]
    assert ex[2].features["gold_label"] == "contradiction"
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence1\tsentence2\tgold_label\nA\tB\tmaybe\n")
    with pytest.raises(DataError, match=r"bad.tsv: record line 2: field 'gold_label'.*maybe"):
        read_nli(bad)
    js = tmp_path / "x.jsonl"
    js.write_text('{"premise": "A", "hypothesis": "B", "label": "NEUTRAL"}\n{"premise": "A"}\n')
    with pytest.raises(DataError, match=r"x.jsonl: record line 2: field 'label'"):
        read_nli(js)


def test_requests_follow_what_the_subject_accepts(grid_dir):
    suite = get_suite("natural-logic")
    ex = read_nli_xy(grid_dir).examples[0]

    class Classifier:
        accepts = frozenset({"text-pair-classes"})

    lm_request = suite.request(ex)
    assert isinstance(lm_request, CandidateScoreRequest)
    assert lm_request.candidates == ("True", "False")
    assert lm_request.context.startswith(ex.premise + "\nQuestion: " + ex.hypothesis)
    assert suite.request(ex, Classifier()) == TextPairRequest(ex.premise, ex.hypothesis)
    with pytest.raises(UsageError, match="label_words"):
        get_suite("natural-logic", {"label_words": "Yes"})
    with pytest.raises(UsageError, match="hypothesis"):
        get_suite("natural-logic", {"template": "{premise}?"})


def test_run_end_to_end_with_a_tiny_lm(tmp_path, grid_dir, tiny_llama, tiny_tokenizer):
    frames = []
    for bs in (1, 8):
        subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny", batch_size=bs)
        out = write_run(
            run(
                RunConfig(
                    suite="natural-logic", data=grid_dir, out=tmp_path / f"bs{bs}", cache=False
                ),
                subjects=[subject],
            )
        )
        frames.append(pd.read_parquet(out / "results.parquet").sort_values("pair_id"))
    a, b = frames
    assert (a["prediction"].to_numpy() == b["prediction"].to_numpy()).all()
    assert (a["p_entailment"] - b["p_entailment"]).abs().max() < 1e-5
    metrics = json.loads((out / "metrics.json").read_text())
    sizes = {r["set"]: r for r in metrics["set_sizes"]}
    assert sizes["I0"]["seed_set"] == 20  # every grid example is a base (bases=400 > 20)
    assert set(a["set"]) == {"I0", "I1", "I2", "I3", "none"}
    assert (a.loc[a["set"] == "none", "source"] == "help_test").all()
    assert a["cp"].isin([0, 1]).all()
    i1 = a[a["set"] == "I1"]
    assert (i1["gold"] != i1["original_gold"]).all()
    assert (i1["expectation_met"] == (i1["cp"] == 1)).all()
    # the runner's columns: the set is the intervention, every pair was made
    assert (a["intervention"] == a["set"]).all() and a["dropped_reason"].isna().all()
    swaps = a[a["set"] != "none"]
    assert (swaps["set"] + ":" + swaps["original_id"] + ">" + swaps["intervened_id"]).equals(
        swaps["pair_id"]
    )
    assert set(a.loc[a["set"] == "I1", "feature_swap"]) == {"swap_pair_flip"}
    assert set(a.loc[a["set"] == "none", "feature_swap"]) == {"none"}
    kept, challenge = a[a["set"].isin(["I2", "I3"])], a[a["set"] == "none"]
    assert (kept["expectation_met"] == (kept["cp"] == 0)).all()
    assert challenge["expectation_met"].equals(challenge["correct"])  # answer unchanged
    assert {r["feature"] for r in metrics["effects"]} == {"insertion", "context"}
    for r in metrics["effects"]:  # the card's effects' units are the pairs, by their ids
        assert set(r["delta"]["units"]["unit"]) <= set(swaps["pair_id"])
    assert not any("units" in c for c in pd.read_csv(out / "tables" / "effects.csv").columns)
    (competence,) = metrics["competence"]  # on the 20 bases, against the best constant label
    assert competence["subject"] == "tiny" and competence["n"] == 20
    assert competence["baseline_answer"] in ("text:entailment", "text:non-entailment")
    assert [r["source"] for r in metrics["challenge_accuracy"]] == ["help_test"]
    html = (out / "report.html").read_text()
    for section in ("sets", "effects", "accuracy", "examples"):
        assert f'<section id="{section}">' in html


def test_limit_keeps_a_prefix_of_the_seed_set(grid_dir):
    suite = get_suite("natural-logic", {"bases": "6"})
    pairs = suite.pairs(grid_dir, 0)
    bases6 = {p.original.id for p in pairs if p.intervention != "none"}
    small = suite.sample(pairs, 2, 0)
    bases2 = {p.original.id for p in small if p.intervention != "none"}
    assert len(bases2) <= 2 and bases2 <= bases6
    assert sum(p.intervention == "none" for p in small) == 2  # per challenge set
    ids = [p.id for p in pairs]
    assert len(ids) == len(set(ids))


def test_option_i1_leq_geq_keeps_only_directional_swaps(
    tmp_path, grid_dir, tiny_llama, tiny_tokenizer
):
    with pytest.raises(UsageError, match="option i1='none': choose from 'all', 'leq-geq'"):
        get_suite("natural-logic", {"i1": "none"})
    pairs = {
        i1: [p for p in get_suite("natural-logic", {"i1": i1}).pairs(grid_dir, 0)]
        for i1 in ("all", "leq-geq")
    }
    rel = lambda p: (p.original.features["relation"], p.intervened.features["relation"])  # noqa: E731
    i1_all = [p.id for p in pairs["all"] if p.intervention == "I1"]
    i1_dir = [p.id for p in pairs["leq-geq"] if p.intervention == "I1"]
    assert i1_dir == [p.id for p in pairs["all"] if p.intervention == "I1" and "none" not in rel(p)]
    assert 0 < len(i1_dir) < len(i1_all)
    others = lambda ps: [p.id for p in ps if p.intervention != "I1"]  # noqa: E731
    assert others(pairs["all"]) == others(pairs["leq-geq"])  # the other sets are untouched

    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny")
    config = RunConfig(
        suite="natural-logic",
        data=grid_dir,
        out=tmp_path / "i1",
        cache=False,
        options={"i1": "leq-geq", "challenge": "none"},
    )
    out = write_run(run(config, subjects=[subject]))
    metrics = json.loads((out / "metrics.json").read_text())
    sizes = {r["set"]: r for r in metrics["set_sizes"]}
    assert sizes["I1"]["intervention"] == "swap_pair_reverse"
    assert sizes["I1"]["pairs"] == len(i1_dir) and sizes["I1"]["method_size"] == 22640
    assert sizes["I0"]["intervention"] == "swap_context_flip"
    res = pd.read_parquet(out / "results.parquet")
    assert set(res.loc[res["set"] == "I1", "feature_swap"]) == {"swap_pair_reverse"}
    assert "swap_pair_reverse" in (out / "tables" / "set_sizes.csv").read_text()
    assert "swap_pair_reverse" in (out / "report.html").read_text()
    assert metrics["subject_differences"] == []  # one subject: nothing to compare


def test_content_free_calibration_shifts_the_log_odds(
    tmp_path, grid_dir, tiny_llama, tiny_tokenizer
):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny")
    out = write_run(
        run(
            RunConfig(
                suite="natural-logic",
                data=grid_dir,
                out=tmp_path / "cal",
                cache=False,
                limit=2,
                options={"calibration": "content-free", "challenge": "none"},
            ),
            subjects=[subject],
        )
    )
    res = pd.read_parquet(out / "results.parquet")
    assert not res["set"].isin(["calibration"]).any()
    suite = get_suite("natural-logic")
    free = [NLIExample(f"f{i}", t, t, None) for i, t in enumerate(("N/A", "[MASK]", ""))]
    scores = subject.answer([suite.request(e) for e in free])
    offset = np.mean([s.logprobs[0] - s.logprobs[1] for s in scores])
    assert res["calibration_offset"].iloc[0] == pytest.approx(offset, abs=1e-5)
    logit = lambda p: np.log(p) - np.log1p(-p)  # noqa: E731
    shifted = logit(res["raw_p_entailment"]) - offset
    assert np.allclose(shifted, logit(res["p_entailment"]), atol=1e-4)


SHARED_NLI_XY = Path(__file__).resolve().parents[2] / "shared" / "data" / "nli-xy"


@pytest.mark.skipif(not SHARED_NLI_XY.is_dir(), reason="../shared/data/nli-xy not present")
def test_shared_nli_xy_gives_the_methods_count_and_challenge_sets():
    grid = read_nli_xy(SHARED_NLI_XY)
    assert len(grid.examples) == 29436
    assert sum(e.label == "entailment" for e in grid.examples) == 11981
    assert len(grid.contexts) == 208 and len(grid.insertions) == 292
    names = [p.name for p in challenge_files(SHARED_NLI_XY)]
    assert names[:3] == ["help_test.tsv", "monotonicity_fragments_easy_test.tsv", "MED.tsv"]
    own = [p for p in challenge_files(SHARED_NLI_XY) if p.parent.name != "snli"]
    assert sum(len(read_nli(p)) for p in own) == 17502  # SNLI: tests/test_snli_challenge.py


@pytest.mark.skipif(not SHARED_NLI_XY.is_dir(), reason="../shared/data/nli-xy not present")
def test_shared_nli_xy_i1_leq_geq_gives_the_methods_i1_size_in_expectation():
    """The expected I1 size over all seed sets of N = 400: the mean number of alternatives
    per base x 400. The method reports 22,640; swaps to and from none pairs give 31,698."""
    grid = read_nli_xy(SHARED_NLI_XY)
    for swap, expected in (("swap_pair_reverse", 22623), ("swap_pair_flip", 31698)):
        intervention = get(swap)
        total = sum(len(intervention.apply(e, seed=0, pool=grid).examples) for e in grid.examples)
        assert round(total * 400 / len(grid.examples)) == expected


def test_the_intervention_registry_loads_in_a_fresh_interpreter():
    """Discovering the interventions first (as a natural-logic run does) once failed: the
    attractor interventions and the distractors generator imported each other."""
    import subprocess
    import sys

    code = "from faithprobe.interventions import get; get('swap_pair_flip'); print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]
