"""``card.md``: the faithfulness card as a Markdown section for a model card, written beside
``index.html`` by every audit and rebuilt by ``faithprobe report AUDIT_FOLDER``; read back
through markdown-it-py (CommonMark with GitHub's tables) as the Hub would render it."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import product
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe.audit.card_markdown import HEADING, code_block, text
from faithprobe.audit.card_metrics import card_metrics
from faithprobe.audit.execute import AuditConfig, audit
from faithprobe.audit.plan import AUTO, check_budget
from faithprobe.cli import app
from faithprobe.metrics.sequential import LOOKS
from faithprobe.subjects.hf.causal import HFCausal
from test_audit import TINY_STEPS

runner = CliRunner()
HOSTILE = "a|b<script>*x*"  # a model name that would break a table and inject a tag
STEPS = ("distractors", "faithfulness-negation", "faithfulness-deletion")
VERDICT_HEADER = ["step", "model", "verdict", "answered by", "competence [95% CI]",
                  "best constant answer"]  # fmt: skip
SAMPLE = "sample shipped with faithprobe:"


@pytest.fixture(scope="module")
def source(tmp_path_factory, tiny_llama, tiny_gpt2, tiny_tokenizer) -> Path:
    """A real audit of two tiny causal LMs, the second under :data:`HOSTILE`, on two steps
    that generate their data and one read from the shipped SQuAD sample (no data folder
    holds SQuAD, and the budget is small)."""
    tmp = tmp_path_factory.mktemp("card")
    subjects = [HFCausal(tiny_llama, tiny_tokenizer, name="lm"),
                HFCausal(tiny_gpt2, tiny_tokenizer, name=HOSTILE)]  # fmt: skip
    steps = [s for s in TINY_STEPS if s.name in STEPS]
    config = AuditConfig(models=[], out=tmp / "audit", cache_dir=tmp / "cache", steps=steps,
                         command="faithprobe audit --model lm --budget small")  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAITHPROBE_DATA", str(tmp / "no-data"))
        return audit(config, subjects=subjects)


@pytest.fixture
def folder(tmp_path, source) -> Path:
    """A copy of the audit's card files, to rebuild or damage."""
    (tmp_path / "audit").mkdir()
    for name in ("metrics.json", "run.json", "index.html", "card.md"):
        (tmp_path / "audit" / name).write_bytes((source / name).read_bytes())
    return tmp_path / "audit"


def parse(markdown: str) -> list:
    return MarkdownIt("commonmark").enable("table").parse(markdown)


def cell_text(inline) -> str:
    """A cell as a reader sees it: its text, escapes resolved, markup dropped."""
    return "".join(c.content for c in inline.children if c.type not in ("softbreak",))


def tables(markdown: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every table: its header cells and its rows of cells, as rendered."""
    found, rows = [], None
    for token in parse(markdown):
        if token.type == "table_open":
            rows = []
        elif token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows is not None:
            rows[-1].append(cell_text(token))
        elif token.type == "table_close":
            found.append((rows[0], rows[1:]))
            rows = None
    return found


def rebuild(folder: Path) -> str:
    res = runner.invoke(app, ["report", str(folder)])
    assert res.exit_code == 0, res.output
    return (folder / "card.md").read_text()


def edit(path: Path, change: Callable[[dict], object]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_an_audit_writes_card_md_as_a_section_with_a_row_per_step_and_model(source):
    markdown = (source / "card.md").read_text()
    metrics = json.loads((source / "metrics.json").read_text())
    assert markdown.startswith(HEADING + "\n")
    assert not any(line.startswith("# ") for line in markdown.splitlines())  # no title of its own
    verdicts, effects, differences = tables(markdown)
    header, rows = verdicts
    assert header == VERDICT_HEADER
    assert [r[:2] for r in rows] == [list(p) for p in product(STEPS, ["lm", HOSTILE])]
    by_step = {s["step"]: s for s in metrics["steps"]}
    assert [r[2] for r in rows] == [by_step[s]["verdicts"][m] for s, m in
                                    product(STEPS, ["lm", HOSTILE])]  # fmt: skip
    # how each model answered: candidates scored; yes/no questions scored, others generated
    modes = {r[0]: r[3] for r in rows if r[1] == "lm"}
    assert modes["distractors"] == "candidate scores"
    assert set(modes["faithfulness-deletion"].split(" + ")) <= {"candidate scores",
                                                                 "generated answers"}  # fmt: skip
    header, rows = effects
    assert header == ["step", "effect", "model", "estimate [95% CI]", "faithful if", "n", "verdict"]
    assert [r[:3] for r in rows] == [[e["step"], e["title"], e["subject"]] for e in
                                     sorted(metrics["effects"], key=_card_order(metrics))]  # fmt: skip
    header, rows = differences
    assert header == ["step", "effect", "b − a", "estimate [95% CI]", "adjusted p", "supported"]
    assert len(rows) == len(metrics["differences"]) > 0
    assert {r[2] for r in rows} == {f"{HOSTILE} − lm"}


def _card_order(metrics: dict) -> Callable[[dict], tuple]:
    """Effects in the card's order: by step, then effect, then model."""
    steps = [s["step"] for s in metrics["steps"]]
    keys = list(dict.fromkeys(e["key"] for e in metrics["effects"]))
    models = [m["name"] for m in metrics["models"]]
    return lambda e: (steps.index(e["step"]), keys.index(e["key"]), models.index(e["subject"]))


def test_a_hostile_model_name_stays_in_its_cell_and_renders_no_tag(source):
    markdown = (source / "card.md").read_text()
    tokens = parse(markdown)
    everything = tokens + [c for t in tokens if t.children for c in t.children]
    assert not [t for t in everything if t.type in ("html_inline", "html_block")]
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<script" not in html and "a|b&lt;script&gt;*x*" in html
    for header, rows in tables(markdown):
        assert all(len(r) == len(header) for r in rows)
    rows = tables(markdown)[0][1]
    assert [r[1] for r in rows].count(HOSTILE) == len(STEPS)
    assert text("x\n## y | `z` [a](b)") == "x \\#\\# y \\| \\`z\\` \\[a\\](b)"


def test_the_command_is_shown_verbatim_whatever_backticks_it_holds():
    block = code_block("run ```` --out `x`\n```", "bash")
    assert block[0] == "`````bash" and block[-1] == "`````"
    rendered = MarkdownIt("commonmark").parse("\n".join(block))
    assert [t.content for t in rendered if t.type == "fence"] == ["run ```` --out `x`\n```\n"]


def test_the_card_names_a_shipped_sample_and_the_versions(source):
    markdown = (source / "card.md").read_text()
    record = {s["step"]: s for s in json.loads((source / "metrics.json").read_text())["steps"]}
    deletion = record["faithfulness-deletion"]
    assert deletion["data_source"] == "sample" and "SQuAD 1.1 dev" in deletion["data_set"]
    said = f"{SAMPLE} {deletion['data_set']} ({deletion['data_license']})"
    assert f"- faithfulness-deletion: {said}" in markdown
    assert "- distractors: generated by the suite" in markdown
    assert "faithprobe audit --model lm --budget small\n" in markdown
    assert "- **versions**: faithprobe " in markdown and "docs/audit.md" in markdown


def test_an_auto_budget_card_says_the_level_it_reads_at(folder, source):
    """The card of the same steps read as the auto budget reads them (4 looks)."""
    run = json.loads((folder / "run.json").read_text())
    runs = [{**r, "metrics": json.loads((source / r["folder"] / "metrics.json").read_text())}
            for r in run["steps"]]  # fmt: skip
    metrics = card_metrics(runs, run["models"], budget=check_budget(AUTO), seed=0, looks=LOOKS)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    markdown = rebuild(folder)
    assert tables(markdown)[1][0][3] == "estimate [98.75% CI]"
    assert "read at 98.75% rather than 95%" in markdown
    assert "supported: adjusted p \\< 0.0125" in markdown
    assert tables(markdown)[0][0] == VERDICT_HEADER  # competence stays at 95%


def test_report_rebuilds_a_deleted_card_identically(folder):
    before = {name: (folder / name).read_bytes() for name in ("card.md", "index.html")}
    (folder / "card.md").unlink()
    (folder / "index.html").unlink()
    res = runner.invoke(app, ["report", str(folder)])
    assert res.exit_code == 0, res.output
    assert "card.md" in res.stderr
    assert {name: (folder / name).read_bytes() for name in before} == before


def test_a_skipped_step_or_model_is_a_row_with_its_reason(folder):
    """As the audit records them: a step without its data, a model that cannot answer one."""

    def skip(doc: dict) -> None:
        doc["steps"][1] = {**{k: doc["steps"][1][k] for k in ("step", "suite", "question")},
                           "status": "skipped", "reason": "needs <NLI-XY>", "verdicts": {}}  # fmt: skip
        doc["steps"][2]["verdicts"].pop(HOSTILE)
        doc["steps"][2]["skipped_models"] = [{"name": HOSTILE, "reason": "no *spans*"}]
        for name in ("effects", "competence"):
            doc[name] = [r for r in doc[name] if r["step"] != STEPS[1]
                         and (r["step"], r["subject"]) != (STEPS[2], HOSTILE)]  # fmt: skip
        doc["differences"] = [d for d in doc["differences"] if d["step"] == STEPS[0]]

    edit(folder / "metrics.json", skip)
    rows = tables(rebuild(folder))[0][1]
    assert [r[2:] for r in rows[2:4]] == [["skipped: needs <NLI-XY>", "–", "–", "–"]] * 2
    assert rows[5][2:] == ["not run: no *spans*", "–", "–", "–"]
    assert rows[4][3] != "–" and rows[4][4] != "–"  # the other model's mode and competence


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (lambda d: d["steps"][0]["verdicts"].update(lm=3), ("steps[0]", "'verdicts'")),
        (lambda d: d["competence"][0].pop("baseline"), ("competence[0]", "'baseline'")),
        (lambda d: d["differences"][0].update(supported="yes"), ("differences[0]", "'supported'")),
        (lambda d: d["summary"].pop("lm"), ("summary", "'lm'")),
        (lambda d: d["effects"][0].update(value="0.3"), ("effects[0]", "'value'")),  # compare's
        (lambda d: d["models"].append(dict(d["models"][0])), ("models[2]", "listed twice")),
        (lambda d: d.update(comparisons={"looks": "4"}), ("comparisons", "'rule'")),
        (lambda d: d["steps"][2].update(data_source=["sample"]), ("steps[2]", "'data_source'")),
    ],
    ids=[
        "verdict-number",
        "no-baseline",
        "supported-text",
        "no-summary",
        "value-text",
        "model-twice",
        "comparisons-bad",
        "data-source-list",
    ],  # fmt: skip
)
def test_report_refuses_a_damaged_metrics_json_in_one_line_writing_nothing(folder, change, expect):
    edit(folder / "metrics.json", change)
    (folder / "card.md").unlink()
    refused(["report", str(folder)], watch=[folder], expect=("metrics.json", *expect))


def test_report_refuses_a_damaged_run_json_and_merging_an_audit(folder, tmp_path):
    edit(folder / "run.json", lambda d: d.update(versions=["faithprobe"]))
    refused(["report", str(folder)], watch=[folder], expect=("not a faithprobe run folder",))
    edit(folder / "run.json", lambda d: d.update(versions={"faithprobe": "x"}, command=["a"]))
    refused(["report", str(folder)], watch=[folder], expect=("run.json", "'command'"))
    refused(["report", str(folder), str(folder), "--out", str(tmp_path / "m")],
            watch=[tmp_path], expect=("audit folder", "alone"))  # fmt: skip
