"""CoQA read as the faithfulness method's code reads it (``-o coqa_rules=method``): its
wider yes/no spellings become yes/no items with the plain word as gold, and the history
skips turns answered unknown; the default reading is unchanged."""

from __future__ import annotations

import json

from faithprobe.datasets.coqa import read_coqa

STORY = "Mara kept bees behind the old mill. She sold the honey at the market on Fridays."
TURNS = [  # (question, free-text answer, rationale)
    ("Did Mara keep goats?", "Not really", "Mara kept bees"),
    ("What was her dog called?", "unknown", None),
    ("Where did she keep bees?", "behind the old mill", "behind the old mill"),
    ("Did she sell honey?", "yese", "She sold the honey"),
]


def _doc(tmp_path):
    questions, answers = [], []
    for turn, (q, a, rationale) in enumerate(TURNS, start=1):
        questions.append({"turn_id": turn, "input_text": q})
        start = STORY.find(rationale) if rationale else -1
        end = start + len(rationale) if rationale else -1
        answers.append({"turn_id": turn, "input_text": a, "span_start": start,
                        "span_end": end, "span_text": rationale or "unknown"})  # fmt: skip
    path = tmp_path / "coqa.json"
    story = {"id": "s1", "story": STORY, "questions": questions, "answers": answers}
    path.write_text(json.dumps({"version": "1.0", "data": [story]}))
    return path


def test_the_method_reads_more_yes_no_answers_and_skips_unknown_history(tmp_path):
    path = _doc(tmp_path)
    ours = {e.features["turn"]: e for e in read_coqa(path)}
    method = {e.features["turn"]: e for e in read_coqa(path, rules="method")}
    assert [ours[t].answer_type for t in (1, 2, 4)] == ["free", "unknown", "free"]
    assert [method[t].answer_type for t in (1, 2, 4)] == ["no", "unknown", "yes"]
    assert (method[1].answers[0], method[1].features["input_text"]) == ("no", "Not really")
    assert ours[1].answers[0] == "Not really" and "input_text" not in ours[1].features
    # turn 4's two previous turns: ours counts the unknown one, the method skips it
    assert [q for q, _ in ours[4].history] == [TURNS[1][0], TURNS[2][0]]
    assert [q for q, _ in method[4].history] == [TURNS[0][0], TURNS[2][0]]
    assert method[4].history[0][1] == "no"
    assert ours[3].answers == method[3].answers and ours[3].answer_type == "span"


def test_the_suite_takes_the_option_and_records_it(tmp_path):
    import pandas as pd
    from typer.testing import CliRunner

    from faithprobe.cli import app

    out = tmp_path / "run"
    args = ["run", "faithfulness", "--data", str(_doc(tmp_path)), "--model", "ref:reader",
            "-o", "coqa_rules=method", "--out", str(out), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert json.loads((out / "run.json").read_text())["options"]["coqa_rules"] == "method"
    rows = pd.read_parquet(out / "results.parquet")
    original = rows[rows["variant"] == "OS"].set_index("original_id")
    assert original.loc["coqa-s1-1", "answer_type"] == "no"
