"""A report view is a declaration (:class:`faithprobe.report.views.ReportView`): its table
makers in order, the headline among them, sections by table name, and the example rows
one generic draw picks."""

from __future__ import annotations

import pandas as pd

from faithprobe.report.example_columns import ExampleColumn
from faithprobe.report.tables import Table
from faithprobe.report.views import ExampleRows, ReportView, SectionSpec


def _table(name: str) -> Table:
    return Table(name, name.title(), pd.DataFrame({"x": [1]}), pd.DataFrame({"x": ["1"]}), "n")


class View(ReportView):
    table_makers = (
        lambda m: _table("scores"),
        lambda m: None,  # a table the metrics do not allow
        lambda m: [_table("acc_a"), _table("other")],
        lambda m: {"acc_b": _table("acc_b")},
    )
    headline = ("missing", "scores")
    layout = (
        SectionSpec("curves", "Curves", ("acc_*",), lead=lambda m: f"{m['n']} items"),
        SectionSpec("rest", "Rest", ("other", "absent"), when=lambda m: m["n"] > 1),
    )


def test_tables_come_in_the_makers_order_after_the_headline():
    tables = View.tables({})
    assert list(tables) == ["summary", "scores", "acc_a", "other", "acc_b"]
    assert (tables["summary"].title, tables["summary"].note) == ("Headline", "n")
    assert View.summary({}).equals(tables["scores"].display)


def test_sections_name_their_tables_and_may_depend_on_the_metrics():
    tables = View.tables({})
    (curves,) = View.sections(tables, {"n": 1})
    assert [t.name for t in curves.tables] == ["acc_a", "acc_b"] and curves.lead == "1 items"
    rest = View.sections(tables, {"n": 2})[1]
    assert [t and t.name for t in rest.tables] == ["other", None] and rest.empty


def test_example_rows_draw_ids_evenly_per_stratum_and_show_all_their_rows():
    results = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(12) for _ in (0, 1)],
            "original_id": [f"o{i // 2}" for i in range(12) for _ in (0, 1)],
            "subject": ["a", "b"] * 12,
            "set": [("I0", "I1", "I2")[i % 3] for i in range(12) for _ in (0, 1)],
            "dropped_reason": [None] * 24,
        }
    )
    spec = ExampleRows((ExampleColumn("pair_id", "pair"), ExampleColumn("subject")),
                       per="set", n=4, sort=("set", "pair_id"))  # fmt: skip
    shown = spec.examples(results, seed=0, subjects=["b", "a"]).frame
    assert len(shown) == 2 * 3 * 2  # 4 // 2 subjects = 2 pairs per set, both subjects each
    sets = dict(zip(results["pair_id"], results["set"], strict=True))
    assert shown["pair_id"].map(sets).value_counts().to_dict() == {"I0": 4, "I1": 4, "I2": 4}
    assert list(shown["subject"][:2]) == ["b", "a"]  # the run's order, then by set and pair
    by_item = ExampleRows((ExampleColumn("original_id"),), draw="original_id", n=8)
    picked = by_item.examples(results, seed=0, subjects=["a", "b"]).frame
    assert picked["original_id"].nunique() == 2 and len(picked) == 8  # 2 pairs x 2 subjects
    assert by_item.examples(results, seed=0, subjects=["a", "b"]).frame.equals(picked)
    assert spec.examples(results.iloc[:0], seed=0, subjects=[]).frame.empty
