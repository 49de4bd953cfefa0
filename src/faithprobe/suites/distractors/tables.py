"""Tables of the ``distractors`` suite's report: the headline, one table per metric and
view (a curve per subject x setting x attractor type, a column per number of attractors),
base accuracy and competence, the card's one-attractor effects and fact-swap drop, tests
and the dataset's conditions. They select, pivot and format what
``metrics.json`` holds; nothing is estimated here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from faithprobe.metrics.headline import NEEDS, PROBABILITIES
from faithprobe.metrics.verdict import needs_verdict
from faithprobe.report.table_spec import TableSpec, count, general, interval, or_dash
from faithprobe.report.tables import (
    DASH,
    Ordering,
    Table,
    fmt_count,
    fmt_estimate,
    fmt_general,
    fmt_interval,
    fmt_number,
    is_missing,
    order_rows,
    subject_order,
)

SETTINGS = ("single", "multi")
ATTRACTOR_TYPES = ("B", "T", "unrelated")
POSITIONS = ("all", "after", "between", "later")
N_ATTRACTORS = (0, 1, 2, 3)
METRICS = ("accuracy", "relative_probability")
VIEWS = ("main", "pooled", "by_position", "by_item_set", "filler", "all_items")

# Placeholder values that mean "not split along this dimension".
GENERIC = ("all", "none")

ESTIMATE_COLUMNS = [
    "view",
    "metric",
    "subject",
    "setting",
    "attractor_type",
    "n_attractors",
    "position",
    "item_set",
    "n_filler",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "n_clusters",
    "method",
]
# Dimensions besides subject/setting/attractor_type/n_attractors a view may split by.
EXTRA_DIMS = ("position", "item_set", "n_filler")

METRIC_TITLES = {"accuracy": "Accuracy", "relative_probability": "Relative probability"}
VIEW_TITLES = {
    "main": "main view: attractors after the critical fact (the method's Figure 1)",
    "pooled": "pooled over attractor positions",
    "by_position": "by attractor position",
    "by_item_set": "by item set",
    "filler": "by amount of filler",
    "all_items": "all items (not only those answered correctly in the base context)",
}

# Reading order: subjects as listed, single before multi, B, T, unrelated...
ORDERING = Ordering(
    columns=(
        "view",
        "metric",
        "subject",
        "setting",
        "attractor_type",
        "item_set",
        "position",
        "n_filler",
        "n_attractors",
    ),
    preferred={
        "view": VIEWS,
        "metric": METRICS,
        "setting": SETTINGS,
        "attractor_type": ATTRACTOR_TYPES,
        "position": POSITIONS,
    },
)


# --------------------------------------------------------------------------- estimates


def _numeric(df: pd.DataFrame, cols: Iterable[str]) -> pd.DataFrame:
    for c in cols:
        if c in df.columns:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    return df


def estimates_frame(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """``metrics["estimates"]`` as a DataFrame with a fixed set of columns (nulls → NaN)."""
    df = pd.DataFrame(list(metrics.get("estimates", [])))
    for c in ESTIMATE_COLUMNS:
        if c not in df.columns:
            df[c] = pd.Series(dtype="object")
    df = df[ESTIMATE_COLUMNS + [c for c in df.columns if c not in ESTIMATE_COLUMNS]].copy()
    df["position"] = df["position"].fillna("all")
    df["item_set"] = df["item_set"].fillna("all")
    df["n_filler"] = pd.to_numeric(df["n_filler"], errors="coerce").fillna(0).astype("int64")
    df["n_attractors"] = pd.to_numeric(df["n_attractors"], errors="coerce").astype("Int64")
    return _numeric(df, ["value", "ci_low", "ci_high"])


def select(est: pd.DataFrame, metric: str, view: str) -> pd.DataFrame:
    return est[(est["metric"] == metric) & (est["view"] == view)].copy()


def attractors_column(n: int) -> str:
    """The heading of the column of ``n`` attractors."""
    return f"{n} attractor{'' if n == 1 else 's'}"


def with_n(shown: str, n: Any) -> str:
    """A cell's text followed by the number of pairs it rests on (``0.93 [0.88, 0.96]
    n=120``); a cell without an estimate stays "–"."""
    return shown if shown == DASH or is_missing(n) else f"{shown} n={int(n)}"


def broadcast_generic(df: pd.DataFrame, dim: str) -> pd.DataFrame:
    """Copy rows whose ``dim`` is a placeholder ("all"/"none") to every concrete value.

    Base estimates (n_attractors = 0) are not split by, say, position; repeating them for
    each position lets every curve start at 0 attractors.
    """
    if df.empty or dim not in df.columns:
        return df
    generic = df[dim].isin(GENERIC)
    concrete = [v for v in df.loc[~generic, dim].unique()]
    if not generic.any() or not concrete:
        return df
    copies = [df.loc[generic].assign(**{dim: v}) for v in concrete]
    return pd.concat([df.loc[~generic], *copies], ignore_index=True)


def split_dims(df: pd.DataFrame) -> list[str]:
    """The extra dimensions (position, item_set, n_filler) along which ``df`` varies."""
    return [d for d in EXTRA_DIMS if d in df.columns and df[d].nunique(dropna=False) > 1]


def curve_table(
    est: pd.DataFrame, metric: str, view: str, subjects: Sequence[str] = (), zero_point: str = ""
) -> Table | None:
    """One row per curve (subject × setting × attractor type [× split]), one column per n."""
    rows = select(est, metric, view)
    if rows.empty:
        return None
    data = order_rows(rows.drop(columns=["view", "metric"]), subjects, ORDERING)

    shown = rows
    for dim in EXTRA_DIMS:
        shown = broadcast_generic(shown, dim)
    dims = split_dims(shown)
    index = ["subject", "setting", "attractor_type", *dims]
    shown = shown.drop_duplicates(subset=[*index, "n_attractors"], keep="first").copy()
    shown["cell"] = [
        with_n(fmt_estimate(v, lo, hi, metric), n)
        for v, lo, hi, n in zip(
            shown["value"], shown["ci_low"], shown["ci_high"], shown["n"], strict=True
        )  # fmt: skip
    ]
    if NEEDS in shown:  # a model whose letter answers gave no probabilities
        shown.loc[shown[NEEDS].notna(), "cell"] = needs_verdict(PROBABILITIES)
    ns = sorted(int(n) for n in shown["n_attractors"].dropna().unique())
    wide = shown.pivot(index=index, columns="n_attractors", values="cell").reset_index()
    wide.columns = [c if c in index else attractors_column(int(c)) for c in wide.columns]
    wide = order_rows(wide, subjects, ORDERING)
    wide = wide[[*index, *[attractors_column(n) for n in ns]]].fillna(DASH)
    wide = wide.rename(columns={"attractor_type": "attractor type"})

    name = f"{metric}_{view}"
    title = f"{METRIC_TITLES.get(metric, metric)} — {VIEW_TITLES.get(view, view)}"
    note = (
        "Columns: number of attractors. Cells: estimate [95% confidence interval] n=pairs it "
        "rests on (the interval resamples their base items)."
    )
    if view != "filler":
        note += zero_point

    if metric == "relative_probability":
        note += (
            " Relative probability is P(target | attractors) / P(target | base), geometric mean."
        )
    return Table(name=name, title=title, data=data, display=wide, note=note)


def summary_table(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """The headline table: view "main", one row per subject × setting × attractor type.

    Columns: accuracy at 0, 1, 2 and 3 attractors as "0.93 [0.88, 0.96] n=120" (the pairs
    it rests on) and the mean relative probability at one attractor ("0.40 n=120"). Cells
    without an estimate show "–". If the main view holds several filler amounts, the
    smallest is shown.
    """
    subjects = subject_order(metrics)
    est = estimates_frame(metrics)
    main = est[est["view"] == "main"]
    main = main.sort_values("n_filler", kind="stable")
    for dim in ("position", "item_set"):
        main = broadcast_generic(main, dim)
    main = main.drop_duplicates(
        subset=["metric", "subject", "setting", "attractor_type", "n_attractors"], keep="first"
    )
    columns = [
        "subject",
        "setting",
        "type",
        *[attractors_column(n) for n in N_ATTRACTORS],
        "rel. prob. (1 attractor)",
    ]
    keys = main[["subject", "setting", "attractor_type"]].drop_duplicates()
    keys = order_rows(keys, subjects, ORDERING)
    cells: dict[tuple, str] = {}
    for r in main.itertuples(index=False):
        n = None if is_missing(r.n_attractors) else int(r.n_attractors)
        key = (r.subject, r.setting, r.attractor_type, r.metric, n)
        if r.metric == "accuracy":
            cells[key] = with_n(fmt_estimate(r.value, r.ci_low, r.ci_high, "accuracy"), r.n)
        elif isinstance(getattr(r, NEEDS, None), str):
            cells[key] = needs_verdict(PROBABILITIES)
        else:
            cells[key] = with_n(fmt_number(r.value, r.metric), r.n)
    out = []
    for subject, setting, atype in keys.itertuples(index=False):
        row = [subject, setting, atype]
        row += [cells.get((subject, setting, atype, "accuracy", n), DASH) for n in N_ATTRACTORS]
        row.append(cells.get((subject, setting, atype, "relative_probability", 1), DASH))
        out.append(row)
    table = pd.DataFrame(out, columns=columns)
    empty = [
        attractors_column(n)
        for n in N_ATTRACTORS
        if n and (table[attractors_column(n)] == DASH).all()
    ]
    return table.drop(columns=empty)


# --------------------------------------------------------------------------- other tables


def _rate_frame(metrics: Mapping[str, Any], key: str) -> pd.DataFrame | None:
    """``metrics[key]`` (rows with a rate and its interval) in reading order, or None."""
    rows = list(metrics.get(key, []))
    if not rows:
        return None
    return order_rows(
        _numeric(pd.DataFrame(rows), ["value", "ci_low", "ci_high"]),
        subject_order(metrics),
        ORDERING,
    )


def zero_point_note(metrics: Mapping[str, Any]) -> str:
    """How to read the n = 0 column, from ``metrics["zero_point"]``."""
    zero = metrics.get("zero_point") or {}
    if zero.get("items") == "padded":
        return (
            f" n=0: the no-attractor items padded with {zero.get('n_padding')} neutral "
            "sentence(s) after the critical fact (option filler), as long as an item with "
            "attractors; a drop from n=0 to n=1 is the attractors' effect, not length's."
        )
    return (
        " n=0: the base items themselves, which competent views count only when answered "
        "correctly (1.0 by construction; run with -o filler=K for an informative n=0)."
    )


def _rates(data: pd.DataFrame) -> pd.DataFrame:
    """A frame of rows with a rate and its interval, the rate's columns numeric."""
    return _numeric(data, ["value", "ci_low", "ci_high"])


def _rate(r: Mapping[str, Any]) -> str:
    return fmt_estimate(r.get("value"), r.get("ci_low"), r.get("ci_high"))


def _counted_note(records: Sequence[Mapping[str, Any]]) -> str:
    if {r["rule"] for r in records} == {"shared"}:
        return (
            "Rule shared (-o competent=shared): every model is estimated on the same items, "
            "those all models of the run answer correctly without attractors (the method's "
            "filter), so their curves compare like for like."
        )
    return (
        "Rule each (the default): every model is estimated on its own competent items; "
        "run with -o competent=shared to compare models on one item set."
    )


COMPETENT_SET = TableSpec(
    "competent_set",
    "Items counted in the competent views",
    {
        "subject": or_dash("subject"),
        "rule": or_dash("rule"),
        "base items": count("n_base"),
        "own competent": count("n_own_competent"),
        "counted": count("n_counted"),
        "share counted": _rate,
    },
    ordering=ORDERING,
    trim=_rates,
    note=_counted_note,
)

BASE_ACCURACY = TableSpec(
    "base_accuracy",
    "Base items answered correctly (the rest are dropped)",
    {
        "subject": or_dash("subject"),
        "item set": or_dash("item_set"),
        "base items": lambda r: fmt_count(r.get("n_base")),
        "competent": lambda r: fmt_count(r.get("n_competent")),
        "dropped": lambda r: fmt_count(r.get("n_dropped")),
        "competence rate": _rate,
        "method": or_dash("method"),
    },
    ordering=ORDERING,
    trim=_rates,
    note="Only pairs whose base item the subject answers correctly enter the estimates.",
)


def _competence_note(records: Sequence[Mapping[str, Any]]) -> str:
    return (
        "The best constant answer is always the same word or always the same position "
        f"in the candidate set; a model whose excess over it is not above "
        f"{fmt_general(records[0].get('margin'))} (one-sided test) is not assessable on the "
        "card."
    )


# Accuracy on the base items against the best constant answer (the card's competence).
COMPETENCE = TableSpec(
    "competence",
    "Competence: accuracy on the base items against the best constant answer",
    {
        "subject": or_dash("subject"),
        "accuracy": _rate,
        "best constant": lambda r: f"{r['baseline_answer']}: {fmt_general(r['baseline'], '.3f')}",
        "excess [CI]": interval("excess"),
        "p (excess > margin)": general("p_value"),
        "competent": general("competent"),
    },
    ordering=ORDERING,
    trim=_rates,
    note=_competence_note,
)


def _drops_table(
    metrics: Mapping[str, Any],
    key: str,
    labels: Sequence[str],
    counts: Mapping[str, str],
    title: str,
    note: str,
) -> Table | None:
    """The table ``key`` of card effects (paired differences over base items, one row per
    ``metrics[key]`` record, without its per-unit numbers: metrics.json only): the
    ``labels`` columns as they are, the difference with its interval, base items, the
    ``counts`` columns (column -> header) and the note."""
    data = _rate_frame(metrics, key)
    if data is None:
        return None
    data = data.drop(columns="units", errors="ignore")
    records = data.to_dict("records")
    display = pd.DataFrame(
        {
            **{c: data[c] for c in labels},
            "difference [CI]": [
                fmt_estimate(r["value"], r["ci_low"], r["ci_high"]) for r in records
            ],
            "base items": data["n_clusters"].map(fmt_count),
            **{header: data[c].map(fmt_count) for c, header in counts.items()},
            "note": data["note"],
        }
    ).fillna(DASH)
    return Table(name=key, title=title, data=data, display=display, note=note)


def one_attractor_drops_table(metrics: Mapping[str, Any]) -> Table | None:
    """The card's effects: one related attractor after the fact, and its unrelated control."""
    return _drops_table(
        metrics,
        "one_attractor_drops",
        ("subject", "setting", "effect", "comparison"),
        {},
        title="One attractor after the critical fact: related drop and its unrelated control",
        note="Competent items, no filler, each base item weighing one; paired cluster "
        "bootstrap over base items. related_minus_unrelated = the related drop minus the "
        "unrelated drop on the base items that have both.",
    )


def fact_swaps_note(metrics: Mapping[str, Any]) -> str:
    """How many critical-fact swaps were made, and why the others were not."""
    swaps = (metrics.get("dataset") or {}).get("fact_swaps")
    if not swaps:
        return ""
    not_made = "; ".join(f"{r['reason']} ({r['count']})" for r in swaps["not_made"])
    return f" Swaps made: {swaps['made']}" + (f"; not made: {not_made}." if not_made else ".")


def fact_swap_drops_table(metrics: Mapping[str, Any]) -> Table | None:
    """The card's check that the critical fact is used: the accuracy lost when it is
    swapped for another of its class."""
    return _drops_table(
        metrics,
        "fact_swap_drops",
        ("subject", "comparison"),
        {"n_swapped": "swapped", "n_fact_unasked": "left out"},
        title="Critical fact swapped (France → Chile: the target moves): accuracy lost",
        note="Competent base items, no attractors, each base item weighing one; paired "
        "cluster bootstrap over base items. The first side is the model's accuracy on the "
        "base items that state the swapped-in fact (whether it knows the new target at all); "
        "left out: swaps whose swapped-in fact no base row of the run states. A model that "
        "follows the fact scores about 0, one answering from memory about 1."
        + fact_swaps_note(metrics),
    )


def tests_table(metrics: Mapping[str, Any]) -> Table | None:
    rows = list(metrics.get("tests", []))
    if not rows:
        return None
    data = _numeric(
        pd.DataFrame(rows), ["statistic", "p_value", "q_value", "difference", "ci_low", "ci_high"]
    )
    data = order_rows(data, subject_order(metrics), ORDERING)
    records = data.to_dict("records")
    display = pd.DataFrame(
        {
            "subject": [r.get("subject") for r in records],
            "name": [r.get("name") for r in records],
            "comparison": [r.get("comparison") for r in records],
            "test": [r.get("test") for r in records],
            "statistic": [fmt_general(r.get("statistic")) for r in records],
            "p": [fmt_general(r.get("p_value")) for r in records],
            "difference [CI]": [
                fmt_interval(
                    r.get("difference"), r.get("ci_low"), r.get("ci_high"), blank=is_missing
                )
                for r in records
            ],
            "n": [fmt_count(r.get("n")) for r in records],
        }
    )
    if "q_value" in data.columns:  # multiplicity-adjusted p-values, when the metrics hold them
        display.insert(display.columns.get_loc("p") + 1, "q", data["q_value"].map(fmt_general))
    return Table(name="tests", title="Tests", data=data, display=display.fillna(DASH))


def dataset_table(metrics: Mapping[str, Any]) -> Table | None:
    ds = metrics.get("dataset") or {}
    rows = list(ds.get("by_condition", []))
    if not rows:
        return None
    data = order_rows(pd.DataFrame(rows), subject_order(metrics), ORDERING)
    display = data.rename(
        columns={
            "attractor_type": "attractor type",
            "n_attractors": "attractors",
            "n_filler": "filler",
        }
    ).fillna(DASH)
    note = f"{ds.get('n_pairs', DASH)} pairs built on {ds.get('n_base', DASH)} base items."
    return Table(
        name="dataset",
        title="Dataset: pairs per condition",
        data=data,
        display=display,
        note=note,
        extra={"n_pairs": ds.get("n_pairs"), "n_base": ds.get("n_base")},
    )


def views_table(metrics: Mapping[str, Any]) -> Table | None:
    """How many items each view counted, per subject (``metrics["views"]``)."""
    rows = list(metrics.get("views", []))
    if not rows:
        return None
    data = order_rows(pd.DataFrame(rows), subject_order(metrics), ORDERING)
    display = pd.DataFrame(
        {
            "subject": data["subject"],
            "view": [VIEW_TITLES.get(v, v) for v in data["view"]],
            "attractor items": data["n_items"].map(fmt_count),
            "base items": data["n_base"].map(fmt_count),
            "left out": data["n_left_out"].map(fmt_count),
        }
    )
    return Table(
        name="views",
        title="Items each view counted",
        data=data,
        display=display,
        note="Attractor items (pairs with attractors) and their base items in each view's "
        "curves; left out: the run's other attractor items (other positions or filler "
        "levels, or base items the model gets wrong where only competent items count).",
    )


def build_tables(metrics: Mapping[str, Any]) -> dict[str, Table]:
    """All tables the report shows, by name, in display order."""
    subjects = subject_order(metrics)
    est = estimates_frame(metrics)
    summary = summary_table(metrics)
    zero_note = zero_point_note(metrics)
    tables: dict[str, Table] = {
        "summary": Table(
            name="summary",
            title="Headline: accuracy by number of attractors after the critical fact "
            "(the method's Figure 1)",
            data=order_rows(est[est["view"] == "main"].drop(columns=["view"]), subjects, ORDERING),
            display=summary,
            note="Accuracy at 0–3 attractors as estimate [95% confidence interval] n=pairs it "
            "rests on; rel. prob.: mean relative probability of the target with one attractor. "
            "The pooled table pools every attractor position." + zero_note,
        )
    }
    views = [v for v in VIEWS if v in set(est["view"])]
    views += sorted(set(est["view"].dropna()) - set(VIEWS))
    metric_names = [m for m in METRICS if m in set(est["metric"])]
    metric_names += sorted(set(est["metric"].dropna()) - set(METRICS))
    for metric in metric_names:
        for view in views:
            t = curve_table(est, metric, view, subjects, zero_note)
            if t is not None:
                tables[t.name] = t
    others = (
        COMPETENT_SET,
        BASE_ACCURACY,
        COMPETENCE,
        one_attractor_drops_table,
        fact_swap_drops_table,
        tests_table,
        dataset_table,
        views_table,
    )
    for t in (make(metrics) for make in others):
        if t is not None:
            tables[t.name] = t
    return tables
