"""The report of the ``faithfulness`` suite, after Chaturvedi et al.: EM, F1 and unk% per
dataset variant (their Tables 4–6) with n and the items each deletion dropped, the same
split by gold answer kind, the drop reasons, how often a model did what a faithful
model does, Org/Mod/Comb-Acc of the negation pairs (Table 10) and the predicate–argument
probe's accuracies and formatting flip rates (Table 12). Every number is read from
``metrics.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from faithprobe.metrics.qa_scores import NEGATION_LABELS
from faithprobe.multiple_choice_prompts import command_line_template
from faithprobe.report.example_columns import ExampleColumn, answers_text, expectation_met
from faithprobe.report.table_spec import (
    POINTS,
    TableSpec,
    count,
    general,
    percent,
    signed_points,
    value,
    without_units,
)
from faithprobe.report.tables import (
    DASH,
    Ordering,
    Table,
    fmt_count,
    fmt_general,
    fmt_percent,
    interval_text,
    order_rows,
    subject_order,
)
from faithprobe.report.views import (
    ExampleRows,
    ReportView,
    SectionSpec,
    answered,
    metric_frame,
    percent_text,
)

VARIANT_ORDER = ("OS", "TS", "TS-R", "TS-R+Aug", "OS-R", "OS-R+Aug")
COLUMNS = {"em": "EM", "f1": "F1", "contains": "contains", "unk": "unk%", "empty": "empty%"}
# Reading order of the rows of metrics.json: by metric (alphabetically), then subject.
ORDERING = Ordering(columns=("metric", "subject"))


def _variant_rank(v: str) -> int:
    return VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER)


def _pivot(data: pd.DataFrame, metrics: Mapping[str, Any], keys: Sequence[str]) -> pd.DataFrame:
    """One row per (subject, ``keys``): EM, F1, unk% columns, n, items dropped."""
    dropped = {r["variant"]: r["dropped"] for r in metrics.get("sizes") or []}
    rows = []
    for key, g in data.groupby(["subject", *keys], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        by = {r["metric"]: r for r in g.to_dict("records")}
        first = next(iter(by.values()))
        row = dict(zip(["subject", *keys], key, strict=True))
        row.update({label: percent_text(by.get(metric, {})) for metric, label in COLUMNS.items()})
        row["n"] = fmt_count(first.get("n"))
        row["passages"] = fmt_count(first.get("n_clusters"))
        row["dropped"] = fmt_count(dropped.get(row["variant"]))
        rows.append(row)
    out = pd.DataFrame(rows)
    out["_v"] = out["variant"].map(_variant_rank)
    out = order_rows(out, subject_order(metrics), ORDERING)
    return out.sort_values(["subject", "_v"], kind="stable").drop(columns="_v")


NOTE = (
    "EM, F1, contains, unk% and empty% in percent with 95% intervals (bootstrap resampling "
    "passages). EM/F1/contains are always against the original gold answers and an "
    "abstention is scored as 'unknown', so after TS-R/OS-R a faithful model scores low "
    "EM/F1 and high unk%. contains = a gold answer occurs in the answer (fair to models "
    "that answer in sentences); empty% = replies with no answer that are not abstentions. "
    "n = items answered; dropped = items the deletion could not make (see the drops table)."
)


def _scores(name: str, title: str, *by: str, note: str) -> TableSpec:
    """A table of the scores per variant (and per ``by``, where given): :func:`_pivot`;
    the items dropped are a column only per variant alone, the level they are counted at."""

    def display(data: pd.DataFrame, metrics: Mapping[str, Any]) -> pd.DataFrame:
        shown = _pivot(data, metrics, ("variant", *by))
        return shown.drop(columns="dropped") if by else shown

    return TableSpec(name, title, ordering=ORDERING, display=display, note=note)


SCORES = _scores("scores", "EM, F1 and unk% per variant (the method's Tables 4–6)", note=NOTE)
SCORES_BY_ANSWER_KIND = _scores(
    "scores_by_answer_kind",
    "By gold answer kind (yes/no questions vs the rest)",
    "answer_kind",
    note="Language models that can score decide yes/no questions by comparing the "
    "log-likelihoods of ' yes' and ' no' and so never abstain on them; models that can "
    "only generate answer them in words (see the replies table); extractive models with "
    "an answer-kind head (faithprobe train qa --answer-kind) answer them yes, no or "
    "unknown with it; extractive models without an answer-kind head can only answer "
    "them with a span.",
)
SCORES_BY_REINSERTION = _scores(
    "scores_by_reinsertion",
    "After TS-R / OS-R, by what took the deleted support's place",
    "reinserted",
    note="A model that says unknown only after a bare re-inserted answer, not when the "
    "answer is still in the text or comes back inside a generated sentence, has learned "
    "the re-insertion, not the missing support.",
)


def sizes_table(metrics: Mapping[str, Any]) -> Table | None:
    data = pd.DataFrame(metrics.get("sizes") or [])
    if data.empty:
        return None
    display = data.copy()
    for col in ("items", "answered", "dropped"):
        display[col] = display[col].map(fmt_count)
    return Table("sizes", "Variants: items, answered, dropped", data, display)


def drops_table(metrics: Mapping[str, Any]) -> Table | None:
    data = pd.DataFrame(metrics.get("drops") or [])
    if data.empty:
        return None
    display = data.assign(count=data["count"].map(fmt_count))
    return Table(
        "drops",
        "Items dropped per variant and reason",
        data,
        display,
        note="Dropped items are not sent to any model; they are listed in results.parquet "
        "with the reason (column 'dropped_reason').",
    )


def differences_table(metrics: Mapping[str, Any]) -> Table | None:
    data = pd.DataFrame(metrics.get("differences") or [])
    if data.empty:
        return None
    display = pd.DataFrame(
        {
            "subject": data["subject"],
            "minus": data["reference"],
            "variant": data["variant"],
            "metric": data["metric"].map(COLUMNS),
            "difference": [
                interval_text(r["difference"], r["ci_low"], r["ci_high"], POINTS, blank=None)
                for r in data.to_dict("records")
            ],
            "p (Wilcoxon)": data["p_value"].map(lambda p: fmt_general(p, ".2g")),
            "items": data["items"].map(fmt_count),
            "passages": data["n"].map(fmt_count),
        }
    )
    display["_v"] = display["variant"].map(_variant_rank)
    display = display.sort_values(["subject", "_v"], kind="stable").drop(columns="_v")
    return Table(
        "differences",
        "Each model against the first (e.g. IBT minus OT), on the items both answered",
        data,
        display,
        note="Differences in percentage points: the mean over passages of the per-passage "
        "difference (so passages weigh equally), with a 95% bootstrap interval; p from a "
        "Wilcoxon signed-rank test of those per-passage differences.",
    )


EXPECTATION = TableSpec(
    "expectation",
    "Did what a faithful model does",
    {
        "subject": value("subject"),
        "variant": value("variant"),
        "as a faithful model (%)": percent(),
        "n": count("n"),
    },
    ordering=ORDERING,
    note="OS and TS: gave the gold answer (EM > 0, or the right yes/no); TS-R and OS-R: "
    "answered unknown. Wilson intervals.",
)


def negation_table(metrics: Mapping[str, Any]) -> Table | None:
    data = metric_frame(metrics, "negation", ORDERING)
    if data.empty:
        return None
    rows = []
    for (subject, kind), g in data.groupby(["subject", "negation"], sort=False):
        by = {r["metric"]: r for r in g.to_dict("records")}
        row = {"subject": subject, "negation": kind}
        row.update({label: percent_text(by.get(k, {})) for k, label in NEGATION_COLUMNS.items()})
        row["n"] = fmt_count(by["org_acc"]["n"])
        rows.append(row)
    return Table(
        "negation",
        "Negation: Org-Acc, Mod-Acc, Comb-Acc (the method's Table 10)",
        data,
        pd.DataFrame(rows),
        note="Over the items with a NEG variant: Org-Acc = right on the original story (OS), "
        "Mod-Acc = right on the negated one (gold: the flipped answer), Comb-Acc = both. "
        "no% = share of 'no' answers on each side (abstentions, hedges and refusals are "
        "wrong and count in every denominator; see the replies table). "
        "Percent, Wilson 95% intervals. negation = edit-file (hand-written edits), "
        "rule-based (the rule negator) or all.",
    )


def _constant(answer: Any) -> str:
    """A constant answer's key as a reader reads it (``text:no`` -> ``no``)."""
    return str(answer).removeprefix("text:")


def _competence_note(records: Sequence[Mapping[str, Any]]) -> str:
    return (
        f"A model whose accuracy does not exceed the best constant answer's on the same "
        f"items by more than {fmt_percent(records[0]['margin'], '.0f')} points (one-sided "
        "test at 5%, paired bootstrap over stories or passages) is not assessable on the "
        "card. Percent; excess in percentage points. Deletion runs: exact match on OS "
        "(the constant answers are the items' own gold answers); the probe: yes/no on the "
        "original stories, original question form."
    )


# Accuracy on the original items against the best constant answer (the card's competence:
# a model that does not beat it is not assessable).
COMPETENCE = TableSpec(
    "competence",
    "Competence: accuracy on the original items against the best constant answer",
    {
        "subject": value("subject"),
        "measured": value("metric"),
        "accuracy": percent(),
        "best constant answer": lambda r: (
            f"{_constant(r['baseline_answer'])}: {fmt_percent(r['baseline'])}"
        ),
        "excess": signed_points("excess"),
        "p (excess > margin)": general("p_value", ".2g"),
        "competent": lambda r: {True: "yes", False: "no"}[r["competent"]],
        "n": count("n"),
    },
    ordering=ORDERING,
    note=_competence_note,
)


CONTROLLED_LABELS = {
    "negation_excess": ("accuracy on negated stories", "best constant answer"),
    "formatting_flips": ("answers flipped", "a constant answer"),
    "unknown_gain": ("unknown after the deletion", "unknown on OS"),
    "comb_acc_excess": ("Comb-Acc", "best constant answer"),
}


def _control(r: Mapping[str, Any]) -> str:
    """What a model ignoring its input gets on the effect's items (its constant answer named)."""
    answer = r.get("constant_answer")
    named = f" ({_constant(answer)})" if isinstance(answer, str) else ""
    return f"{CONTROLLED_LABELS[r['effect']][1]}{named}: {fmt_percent(r['control'])}"


# Each effect the card judges, against what a model ignoring its input gets on the same
# items; the per-unit numbers stay in metrics.json.
CONTROLLED = TableSpec(
    "controlled",
    "The card's effects, each against what a model ignoring its input gets",
    {
        "subject": value("subject"),
        "effect": value("effect"),
        "variant": value("variant"),
        "measured": lambda r: f"{CONTROLLED_LABELS[r['effect']][0]}: {fmt_percent(r['measured'])}",
        "control": _control,
        "difference": signed_points(),
        "n": count("n"),
        "clusters": count("n_clusters"),
    },
    ordering=ORDERING,
    trim=without_units,
    note="Percent; difference = measured minus control in percentage points, with a 95% "
    "paired cluster bootstrap interval over stories or passages (the same items for "
    "both). A constant answer, always saying unknown, or never, gains 0 on every row.",
)


PA_FORMS = {"original": "Org-Acc", "paraphrase": "Mod-Acc", "control": "New-Acc"}
REPLY_KEYS = ("variant", "answer_kind", "form", "answer_mode")
REPLY_ORDERING = Ordering(
    columns=("subject", "answer_mode", "answer_kind", "variant", "form"),
    preferred={"variant": (*VARIANT_ORDER, "NEG", "original", "space", "newline", "negated"),
               "form": tuple(PA_FORMS)},
)  # fmt: skip


def replies_table(metrics: Mapping[str, Any]) -> Table | None:
    """How the replies were read: one row per subject x variant (x answer kind or question
    form) x the way the model was asked, one column per reply kind (count and share)."""
    data = metric_frame(metrics, "reply_kinds", REPLY_ORDERING)
    if data.empty:
        return None
    keys = ["subject", *(k for k in REPLY_KEYS if k in data.columns)]
    kinds = list(dict.fromkeys(data["kind"]))
    rows = []
    for key, g in data.groupby(keys, sort=False):
        row = dict(zip(keys, key, strict=True))
        by = {r["kind"]: r for r in g.to_dict("records")}
        for kind in kinds:
            r = by.get(kind)
            row[kind] = DASH if r is None else f"{fmt_count(r['count'])} ({percent_text(r)})"
        row["n"] = fmt_count(g["n"].iloc[0])
        rows.append(row)
    display = pd.DataFrame(rows).rename(columns={"answer_mode": "asked by"})
    return Table(
        "reply_kinds",
        "How the replies were read: answers, abstentions, hedges, refusals",
        data,
        display,
        note=REPLIES_NOTE,
    )


REPLIES_NOTE = (
    "Count (percent [95% interval, bootstrap over passages or stories]) of the replies of "
    "each kind. asked by: log-likelihood = ' yes' and ' no' compared (a model that can "
    "score; it cannot abstain), generation / chat = the reply generated (chat: in chat form, "
    "through the model's chat template or a chat API) and read by the rules of "
    "faithprobe.qa.replies (models that can only generate, e.g. chat endpoints, or "
    "yes_no=generate), span = an extractive model's span or null answer, answer-kind head "
    "= an extractive model's yes/no/unknown head (yes/no questions). An abstention "
    "(the reply says the text does not give the answer) is scored as the answer 'unknown'; "
    "on a yes/no question only a yes or no reply has a label, so an abstention, hedge "
    "('not necessarily', 'it depends'), refusal or other reply is neither yes nor no: "
    "wrong in every accuracy and not counted in any share of 'no'."
)


def _pa_rows(data: pd.DataFrame, columns: Mapping[tuple[str, str], str]) -> pd.DataFrame:
    """One row per subject x story variant, one column per (metric, form)."""
    rows = []
    for (subject, key), g in data.groupby(["subject", "variant"], sort=False):
        row = {"subject": subject, "variant": key}
        for (metric, form), label in columns.items():
            r = g[(g["metric"] == metric) & (g["form"] == form)].to_dict("records")
            row[label] = percent_text(r[0]) if r else DASH
        n = g[g["form"] == "original"]["n"]
        row["n per form"] = fmt_count(n.iloc[0]) if len(n) else DASH
        rows.append(row)
    return pd.DataFrame(rows)


NEGATION_COLUMNS = NEGATION_LABELS


def predicate_argument_table(metrics: Mapping[str, Any]) -> Table | None:
    data = metric_frame(metrics, "predicate_argument", ORDERING)
    if data.empty:
        return None
    acc = data[data["metric"].isin(["accuracy", "share_no"])]
    columns = {("accuracy", f): label for f, label in PA_FORMS.items()}
    columns |= {("share_no", f): f"no% ({label})" for f, label in PA_FORMS.items()}
    return Table(
        "predicate_argument",
        "Predicate–argument probe: Org-Acc, Mod-Acc, New-Acc and share of 'no' (Table 12)",
        acc,
        _pa_rows(acc, columns),
        note="Per story variant; Org-Acc = 'Was the car blue?', Mod-Acc = the paraphrase "
        "'Was there a blue car?', New-Acc = the ungrammatical control 'Was the a blue car?'. "
        "Original stories: half the golds are 'no'; negated: two thirds. Percent, 95% "
        "intervals (bootstrap over stories).",
    )


def flip_table(metrics: Mapping[str, Any]) -> Table | None:
    data = metric_frame(metrics, "predicate_argument", ORDERING)
    if data.empty or "flip_rate" not in set(data["metric"]):
        return None
    flips = data[data["metric"] == "flip_rate"]
    columns = {("flip_rate", f): label for f, label in PA_FORMS.items()}
    return Table(
        "formatting_flips",
        "Formatting variants: share of answers that flip",
        flips,
        _pa_rows(flips, columns),
        note="Share of questions whose yes/no answer differs from the answer on the original "
        "story after a trailing space or newline is added (a faithful model: 0). Percent, "
        "95% intervals (bootstrap over stories).",
    )


# --------------------------------------------------------------------------- examples


def _prediction(rows: pd.DataFrame) -> list[str]:
    """The predicted answer, marked where the model said it was unknown."""
    return [
        f"{p} (unknown)" if u else p
        for p, u in zip(rows["prediction"], rows["predicted_unknown"], strict=True)
    ]


EXAMPLE_COLUMNS = (
    ExampleColumn("subject"),
    ExampleColumn("variant"),
    ExampleColumn("question", text=True),
    ExampleColumn("gold", "gold answers", True, lambda rows: rows["answers"].map(answers_text)),
    ExampleColumn("prediction", text=True, values=_prediction),
    ExampleColumn("expected", "a faithful model answers"),
    ExampleColumn("correct", "as it should", values=expectation_met),
)


def _ranked(results: pd.DataFrame) -> pd.DataFrame:
    """The answered rows, with each variant's place in :data:`VARIANT_ORDER`."""
    rows = answered(results)
    return rows.assign(variant_rank=rows["variant"].map(_variant_rank))


REPLIES_LEAD = (
    "A model that can only generate (a chat endpoint) answers every question in words; its "
    "reply is read as yes, no, an answer, an abstention, a hedge, a refusal, other (neither "
    "yes nor no) or empty by the documented phrasings of faithprobe.qa.replies."
)
PROBE_LEAD = (
    "Yes/no questions about generated one-sentence stories, answered by comparing the "
    "log-likelihoods of ' yes' and ' no' (models that can score) or in words (models that "
    "can only generate, and yes_no=generate; see the replies section)."
)


def _probed(metrics: Mapping[str, Any]) -> bool:
    """Whether the run asked the predicate–argument probe (else: deletion on --data)."""
    return bool((metrics.get("options") or {}).get("probe"))


def _deleted(metrics: Mapping[str, Any]) -> bool:
    return not _probed(metrics)


def _summary_title(metrics: Mapping[str, Any]) -> str:
    if _probed(metrics):
        return "predicate–argument probe: accuracy and share of 'no' by question form"
    return "EM, F1 and unk% after deleting the supporting sentences"


def _deletion_lead(metrics: Mapping[str, Any]) -> str:
    options = metrics.get("options") or {}
    # the options as typed; the prompt turns a typed \n into a newline
    template = command_line_template(options["template"]) if "template" in options else DASH
    return (
        "OS = original story; TS = story truncated after the rationale's sentence; TS-R = "
        "TS without the rationale's sentences (a span answer no longer in the text is "
        "appended); OS-R = HotpotQA without its supporting facts. Language models are "
        f"prompted with the template {template!r} (at most "
        f"{options.get('max_new_tokens', DASH)} new tokens)."
    )


class FaithfulnessReport(ReportView):
    summary_title = _summary_title
    table_makers = (
        SCORES,
        differences_table,
        sizes_table,
        drops_table,
        SCORES_BY_ANSWER_KIND,
        SCORES_BY_REINSERTION,
        EXPECTATION,
        negation_table,
        COMPETENCE,
        CONTROLLED,
        predicate_argument_table,
        flip_table,
        replies_table,
    )
    headline = ("scores", "predicate_argument")
    layout = (
        SectionSpec("scores", "Scores per variant", ("scores",), lead=_deletion_lead,
                    when=_deleted),
        SectionSpec("predicate_argument", "Predicate–argument probe",
                    ("predicate_argument", "formatting_flips"), lead=PROBE_LEAD, when=_probed),
        SectionSpec(
            "card", "Competence and the card's effects", ("competence", "controlled"),
            lead="What faithprobe audit judges: accuracy on the original items against the "
            "best constant answer, then each effect against what a model ignoring its input "
            "gets.",
        ),
        SectionSpec("negation", "Negation", ("negation",), when=_deleted),
        SectionSpec("replies", "How the replies were read", ("reply_kinds",),
                    lead=REPLIES_LEAD),
        SectionSpec("drops", "Dropped items", ("sizes", "drops"), when=_deleted),
        SectionSpec("details", "By answer kind and expectation",
                    ("scores_by_answer_kind", "expectation"), when=_deleted),
    )  # fmt: skip
    # a seeded sample of items, shown in every answered variant
    example_rows = ExampleRows(
        EXAMPLE_COLUMNS,
        note="Shaded rows: the model did not do what a faithful model does.",
        pool=_ranked,
        draw="original_id",
        sort=("subject", "original_id", "variant_rank"),
        ordering=ORDERING,
    )
