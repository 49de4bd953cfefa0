"""The shared prefix of HotpotQA dev (distractor; the first 103 questions, official format)
through the faithfulness suite's deletions and the representation analysis's items."""

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from faithprobe.datasets.qa import read_qa
from faithprobe.qa.deletions import variant_pairs
from faithprobe.representations.analysis import read_items
from faithprobe.suites.faithfulness.metrics import NOT_A_SPAN, reinserted

SHARED_HOTPOT = (
    Path(__file__).resolve().parents[2]
    / "shared" / "data" / "hotpotqa" / "hotpot_dev_distractor_v1_first103.json"
)  # fmt: skip
absent = pytest.mark.skipif(not SHARED_HOTPOT.is_file(), reason="../shared/data/hotpotqa absent")


@absent
def test_every_question_gets_an_os_r_and_only_span_answers_come_back():
    examples = read_qa(SHARED_HOTPOT)
    assert len(examples) == 103
    assert Counter(e.features["type"] for e in examples) == {"bridge": 82, "comparison": 21}
    assert Counter(e.answer_type for e in examples) == {"span": 91, "no": 7, "yes": 5}
    os_r = [variant_pairs(e)[1].intervened for e in examples]
    assert not any(x.features.get("dropped") for x in os_r)
    rows = pd.DataFrame(
        {
            "variant": [x.features["variant"] for x in os_r],
            "appended": [x.features.get("appended") for x in os_r],
            "answer_type": [e.answer_type for e in examples],
        }
    )
    # the yes/no answers are not re-inserted, and not "still in the text" either
    assert Counter(rows.apply(reinserted, axis=1)) == {
        "bare answer": 58,
        "nothing: the answer is still in the text": 33,
        NOT_A_SPAN: 12,
    }


@absent
def test_representation_items_compare_os_with_os_r_for_every_question():
    read = read_items(SHARED_HOTPOT, limit=None)
    assert len(read.items) == 103 and read.drops == []
    assert all(list(item.variants) == ["OS-R"] for item in read.items)
