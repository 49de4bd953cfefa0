"""The shared prefix of HotpotQA dev (distractor; the first 103 questions, official format)
through the faithfulness suite's deletions and the representation analysis's items."""

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from faithprobe.datasets.qa_formats import read_qa
from faithprobe.interventions.deletion import NOTHING_LEFT
from faithprobe.interventions.deletion_variants import variant_pairs
from faithprobe.qa.answers import occurs
from faithprobe.representations.analysis import read_items
from faithprobe.suites.faithfulness.metrics import NOT_A_SPAN, reinserted

SHARED_HOTPOT = (
    Path(__file__).resolve().parents[2]
    / "shared" / "data" / "hotpotqa" / "hotpot_dev_distractor_v1_first103.json"
)  # fmt: skip
absent = pytest.mark.skipif(not SHARED_HOTPOT.is_file(), reason="../shared/data/hotpotqa absent")


@absent
def test_os_r_drops_only_all_support_contexts_and_only_span_answers_come_back():
    examples = read_qa(SHARED_HOTPOT)
    assert len(examples) == 103
    assert Counter(e.features["type"] for e in examples) == {"bridge": 82, "comparison": 21}
    assert Counter(e.answer_type for e in examples) == {"span": 91, "no": 7, "yes": 5}
    os_r = [variant_pairs(e)[1].intervened for e in examples]
    # a paragraph whose sentences are all supporting facts goes with its title, so the
    # questions whose whole context is supporting facts have no text left: dropped
    all_support = [set(e.rationale) == set(e.features["sentences"]) for e in examples]
    dropped = [x.features.get("dropped") for x in os_r]
    assert [reason == NOTHING_LEFT for reason in dropped] == all_support
    assert Counter(dropped) == {None: 95, NOTHING_LEFT: 8}
    made = [(e, x) for e, x in zip(examples, os_r, strict=True) if not x.features.get("dropped")]
    rows = pd.DataFrame(
        {
            "variant": [x.features["variant"] for _, x in made],
            "appended": [x.features.get("appended") for _, x in made],
            "answer_type": [e.answer_type for e, _ in made],
        }
    )
    # the yes/no answers are not re-inserted, and not "still in the text" either
    assert Counter(rows.apply(reinserted, axis=1)) == {
        "bare answer": 61,
        "nothing: the answer is still in the text": 24,
        NOT_A_SPAN: 10,
    }
    # still in the text counts a kept title (it is shown to the model): 14 of the 24
    present = [(e, x) for e, x in made if x.features["answer_present"]]
    in_sentences = [
        any(occurs(a, " ".join(x.context[s:e] for s, e in x.features["sentences"]))
            for a in e.answers)
        for e, x in present
    ]  # fmt: skip
    assert len(present) == 24 and in_sentences.count(False) == 14


@absent
def test_os_r_leaves_no_bare_title_and_appends_the_answer_after_a_sentence():
    for example in read_qa(SHARED_HOTPOT):
        os_r = variant_pairs(example)[1].intervened
        if os_r.features.get("dropped"):
            continue
        text, appended = os_r.context, os_r.features["appended"]
        body = text[: -len(appended) - 1] if appended else text
        for paragraph in body.split("\n\n"):
            title, *lines = paragraph.split("\n")
            assert title in example.features["titles"] and lines, paragraph
        last_sentence_end = os_r.features["sentences"][-1][1]
        assert len(body) == last_sentence_end
        if appended:
            assert text == f"{body} {appended}"


@absent
def test_representation_items_compare_os_with_os_r_where_some_text_is_left():
    read = read_items(SHARED_HOTPOT, limit=None)
    assert len(read.items) == 103
    assert read.drops == [{"variant": "OS-R", "reason": NOTHING_LEFT, "count": 8}]
    assert Counter(tuple(item.variants) for item in read.items) == {("OS-R",): 95, (): 8}
