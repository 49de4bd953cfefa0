"""The deletion variants of a QA question (Chaturvedi et al.): what the ``faithfulness``
suite asks, ``faithprobe train qa`` trains on and the representation analysis compares.

=========  =============================  ================  ==========================
variant    intervention                   data              a faithful model answers
=========  =============================  ================  ==========================
``OS``     ``none`` (the original story)  all               the gold answer
``TS``     ``truncate_story``             SQuAD, CoQA       the gold answer
``TS-R``   ``truncate_remove_rationale``  SQuAD, CoQA       *unknown*
``OS-R``   ``remove_support``             HotpotQA          *unknown*
=========  =============================  ================  ==========================

The ``+Aug`` variants (TS-R / OS-R with a generated sentence in place of the bare
re-inserted answer) are made by the suite, which has the model that writes the sentences.
"""

from __future__ import annotations

from dataclasses import replace

from faithprobe.expectations import ANSWER_UNCHANGED
from faithprobe.interventions import Pair, get
from faithprobe.qa.questions import is_hotpot
from faithprobe.records import UNKNOWN, QAExample
from faithprobe.sentences import DEFAULT_SPLITTER

ORIGINAL = "OS"
# variant -> deletion intervention, per data source
DELETIONS = {"TS": "truncate_story", "TS-R": "truncate_remove_rationale"}
HOTPOT_DELETIONS = {"OS-R": "remove_support"}
VARIANTS = (ORIGINAL, "TS", "TS-R", "TS-R+Aug", "OS-R", "OS-R+Aug")


def deletion_pair(
    example: QAExample, variant: str, name: str, *, splitter: str = DEFAULT_SPLITTER, **params
) -> Pair:
    """The pair (``example``, its ``variant`` made by the deletion ``name`` with sentences
    from ``splitter``; HotpotQA keeps its own sentences); a variant the deletion cannot make
    is the original marked ``dropped`` with the reason (same id: nothing new is asked)."""
    deletion = get(name)
    splitter = None if is_hotpot(example) else splitter
    # a deletion draws nothing at random: any seed makes the same text
    outcome = deletion.apply(example, seed=0, splitter=splitter, **params)
    changed = outcome.example_or_dropped(example, variant)
    return Pair(example, changed, name, deletion.expectation, pair_id=f"{variant}:{example.id}")


def variant_pairs(example: QAExample, *, splitter: str = DEFAULT_SPLITTER) -> list[Pair]:
    """The identity pair (``OS``) of ``example`` and one pair per deletion of its data
    source (see the module docstring)."""
    expected = UNKNOWN if example.answer_type == UNKNOWN else "answer"
    same = replace(
        example, features={**example.features, "variant": ORIGINAL, "expected": expected}
    )
    out = [Pair(example, same, "none", ANSWER_UNCHANGED, pair_id=f"{ORIGINAL}:{example.id}")]
    deletions = HOTPOT_DELETIONS if is_hotpot(example) else DELETIONS
    for variant, name in deletions.items():
        out.append(deletion_pair(example, variant, name, splitter=splitter))
    return out
