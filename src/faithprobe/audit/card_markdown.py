"""``card.md``: the faithfulness card as a Markdown section that pastes into a Hugging Face
model card or a README, written beside ``index.html`` from the same view
(:func:`faithprobe.audit.card_page.card_view`).

It opens with a level-2 heading, to sit under the model card's own title, and uses GitHub's
tables. Every text that comes from the audit (model names, titles, reasons, paths) goes
through :func:`faithprobe.markdown.text`, so a name such as ``a|b<script>`` stays inside its table cell and
renders no HTML; the command goes in a fenced block that no line of it can close. It holds
no links: a relative link would not resolve on the Hub, so the docs are named instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faithprobe.markdown import code_block, table, text
from faithprobe.metrics.verdict import VERDICTS
from faithprobe.report.tables import DASH

HEADING = "## Faithfulness (faithprobe)"


def render_markdown(view: Mapping[str, Any]) -> str:
    """The card as a Markdown section (module docstring)."""
    models = [m["name"] for m in view["models"]]
    lines = [HEADING, "", _reading(view), "", "### Verdicts", "", *_verdicts(view, models), ""]
    lines += [f"Not on this card: {text(f['name'])}: {text(f['reason'])}" for f in view["failed"]]
    lines += [""] if view["failed"] else []
    lines += [_summary(view, models), "", "### Headline effects", "", *_effects(view, models)]
    if len(models) > 1:
        lines += ["", "### Differences between models", "", *_differences(view)]
    lines += ["", "### How this was measured", "", *_measured(view)]
    return "\n".join(lines) + "\n"


def _reading(view: Mapping[str, Any]) -> str:
    """How to read a verdict, in one paragraph."""
    level = view["level"]
    looks = (view["comparisons"] or {}).get("looks", 1)
    spent = (f" The {text(view['budget']['name'])} budget looked at each step up to {looks} "
             f"times, so its intervals are read at {level} rather than 95%."
             if looks > 1 else "")  # fmt: skip
    return (
        f"Each headline effect's {level} interval is read against its faithful region "
        "(*faithful if*): **faithful** when the whole interval lies inside it, **unfaithful** "
        "when it lies wholly outside, **inconclusive** when it crosses the edge. A step is "
        "faithful when all its effects are, unfaithful when one lies outside after Holm's "
        "correction over the step's effects. A model that does not beat the best constant "
        "answer on a step's own items by the step's margin (*competence*) is **not "
        f"assessable** there.{spent} The rule in full and every number: faithprobe's "
        "documentation, docs/audit.md."
    )


def _verdicts(view: Mapping[str, Any], models: Sequence[str]) -> list[str]:
    """A row per step and model: the verdict, how the model answered, the competence and the
    constant baseline."""
    rows = []
    for s in view["steps"]:
        for m in models:
            if s["status"] != "ran":
                skipped = f"skipped: {text(s['reason'])}"
                rows.append([text(s["step"]), text(m), skipped, DASH, DASH, DASH])
                continue
            verdict = s["verdicts"].get(m)
            mode = DASH
            if verdict is None:
                why = next((k["reason"] for k in s["skipped_models"] if k["name"] == m), "")
                said = f"not run: {text(why)}" if why else "not run"
            else:
                said = f"**{text(verdict)}**"
                mode = text((s.get("answer_modes") or {}).get(m, DASH))
            rows.append([text(s["step"]), text(m), said, mode,
                         *_competence(s["competence"].get(m))])  # fmt: skip
    header = ["step", "model", "verdict", "answered by", "competence [95% CI]",
              "best constant answer"]  # fmt: skip
    return table(header, rows)


def _competence(cell: Mapping[str, Any] | None) -> list[str]:
    """A model's competence on a step and the constant baseline beside it."""
    if cell is None:
        return [DASH, DASH]
    return [text(cell["text"]), f"{text(cell['baseline'])}, margin {text(cell['margin'])}"]


def _summary(view: Mapping[str, Any], models: Sequence[str]) -> str:
    """Per model, how many steps got each verdict."""
    said = [
        f"{text(m)}: " + ", ".join(f"{text(view['summary'][m][v])} {v}" for v in VERDICTS)
        for m in models
    ]
    return "Steps per verdict: " + "; ".join(said)


def _effects(view: Mapping[str, Any], models: Sequence[str]) -> list[str]:
    """A row per step, headline effect and model."""
    rows = [
        [text(s["step"]), text(e["title"]), text(m), text(c["text"]), text(e["region"]),
         text(c["n"]), text(c["verdict"])]
        for s in view["steps"] if s["status"] == "ran"
        for e in s["effects"]
        for m in models if (c := e["cells"].get(m))
    ]  # fmt: skip
    if not rows:
        return ["No headline effect was estimated."]
    header = ["step", "effect", "model", f"estimate [{view['level']} CI]", "faithful if", "n",
              "verdict"]  # fmt: skip
    return table(header, rows)


def _differences(view: Mapping[str, Any]) -> list[str]:
    """Each effect's difference between two models, with its test."""
    rows = [
        [text(s["step"]), text(e["title"]), text(d["pair"]),
         text(d["text"] + ("" if d["paired"] else " (unpaired)")), text(d["p"]),
         "yes" if d["supported"] else "no"]
        for s in view["steps"] if s["status"] == "ran"
        for e in s["effects"]
        for d in e["differences"]
    ]  # fmt: skip
    if not rows:
        return ["No effect was measured on two models."]
    comparisons = view["comparisons"]
    intro = (
        "Each difference b − a is tested paired over the items both models answered (a "
        "cluster bootstrap drawing the same clusters for both)"
        + (f"; {text(comparisons['rule'])}." if comparisons else ".")
    )
    header = ["step", "effect", "b − a", "estimate [95% CI]", "adjusted p", "supported"]
    return [intro, "", *table(header, rows)]


def _measured(view: Mapping[str, Any]) -> list[str]:
    """The command, budget, seed, models, data per step, versions and date."""
    versions = dict(view["versions"])
    ordered = [("faithprobe", versions.pop("faithprobe", DASH)), *versions.items()]
    budget = view["budget"]
    models = "; ".join(
        f"{text(m['name'])} (--model {text(m['spec'])}, fingerprint {text(m['fingerprint'])})"
        for m in view["models"]
    )
    return [
        "The command:",
        "",
        *code_block(view["command"], "bash"),
        "",
        f"- **budget**: {text(budget['name'])} ({text(budget['description'])})",
        f"- **seed**: {text(view['seed'])}",
        f"- **models**: {models}",
        "- **data**:",
        *(f"  - {text(s['step'])}: {text(s['data_text'] or 'skipped')}" for s in view["steps"]),
        "- **versions**: " + ", ".join(f"{text(k)} {text(v)}" for k, v in ordered),
        f"- **finished**: {text(view['finished'])}",
    ]
