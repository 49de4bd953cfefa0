"""The natural-logic step's verdict, earned only by reading: a reader (the label from
monotonicity x relation) is faithful, and models that ignore the input (a constant label, a
random label) or read words, not logic (entailment iff every hypothesis word is in the
premise) are never faithful -- at the audit's default budget and at the minimum
the intervals need (MIN_BASES), through the whole suite with fake classifiers, on a
synthetic grid and on the shared one."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from faithprobe.audit.card_metrics import headline
from faithprobe.datasets.nli_xy import read_nli_xy
from faithprobe.metrics.verdict import FAITHFUL, NOT_ASSESSABLE, UNFAITHFUL, combined
from faithprobe.records import ENTAILMENT
from faithprobe.requests import CandidateScores, TextPairRequest
from faithprobe.runner import RunConfig, run
from faithprobe.subjects.base import Subject
from faithprobe.suites.natural_logic import SUITE
from faithprobe.suites.natural_logic.intervals import MIN_BASES

DEFAULT_BUDGET = SUITE.audit[0].limits["default"]  # the audit's default budget, in bases
CONTEXTS = {
    "up": ["A man saw a x.", "Some women liked a x.", "The boy fed a x.", "A girl drew a x."],
    "down": ["No man saw a x.", "Nobody liked a x.", "No girl drew a x.", "Never did he see a x."],
    "neither": ["Exactly two men saw a x."],
}
# (x, y, relation); each pair is also used reversed. "brown dog" <= "dog": every word of
# "dog" is in "brown dog", so word overlap says entailment whatever the context says
PAIRS = [
    ("dog", "animal", "leq"), ("rose", "flower", "leq"), ("oak", "tree", "leq"),
    ("sparrow", "bird", "leq"), ("brown dog", "dog", "leq"), ("old car", "car", "leq"),
    ("cat", "table", "none"),
]  # fmt: skip


def write_grid(folder):
    folder.mkdir(parents=True)
    rows = [
        f"T\t{text}\t\t{mono}\t\t\tx\t\t\t\n" for mono, texts in CONTEXTS.items() for text in texts
    ]
    (folder / "contexts.tsv").write_text(
        "source\tcontext\tintervened\tmonotonicity\toperator\tdistractor operator\t"
        "singular\tmass\tplural\tplace\n" + "".join(rows)
    )
    (folder / "insertions.tsv").write_text(
        "source\tx_grammar\tx\ty\ty_grammar\tinsertion_rel\n"
        + "".join(f"T\ts\t{x}\t{y}\ts\t{rel}\n" for x, y, rel in PAIRS)
    )
    return folder


class FakeNLI(Subject):
    """A two-class NLI classifier answering from ``decide(premise, hypothesis)``."""

    kind = "fake-nli"
    accepts = frozenset({TextPairRequest.kind})

    def __init__(self, name, decide):
        self.name, self.decide = name, decide

    @property
    def fingerprint(self) -> str:
        return f"fake-nli-{self.name}"

    def answer(self, requests, progress=None):
        out = []
        for r in requests:
            entails = self.decide(r.first, r.second)
            out.append(CandidateScores((0.0, -5.0) if entails else (-5.0, 0.0), (1, 1)))
        if progress:
            progress(len(requests))
        return out


def _words(text: str) -> set[str]:
    return set(text.lower().rstrip(".").split())


def subjects(gold: dict[tuple[str, str], str]) -> list[Subject]:
    coin = lambda p, h: hashlib.sha256(f"{p}|{h}".encode()).digest()[0] % 2 == 0  # noqa: E731
    return [
        FakeNLI("reader", lambda p, h: gold[p, h] == ENTAILMENT),
        FakeNLI("constant", lambda p, h: False),
        FakeNLI("random", coin),
        FakeNLI("overlap", lambda p, h: _words(h) <= _words(p)),
    ]


SHARED_NLI_XY = Path(__file__).resolve().parents[2] / "shared" / "data" / "nli-xy"


@pytest.fixture(scope="module", params=["synthetic", "shared"])
def verdicts(request, tmp_path_factory):
    """The step's verdict per model (and its competence and effects) at each budget, on a
    synthetic grid and on the shared NLI-XY grid (skipped where it is absent)."""
    if request.param == "shared":
        if not SHARED_NLI_XY.is_dir():
            pytest.skip("../shared/data/nli-xy not present")
        grid_dir = SHARED_NLI_XY
    else:
        grid_dir = write_grid(tmp_path_factory.mktemp("controls") / "nli-xy")
    gold = {(e.premise, e.hypothesis): e.label for e in read_nli_xy(grid_dir).examples}
    out = {}
    for bases in (MIN_BASES, DEFAULT_BUDGET):
        config = RunConfig(
            suite="natural-logic",
            data=grid_dir,
            limit=bases,
            out=tmp_path_factory.mktemp(f"run{bases}"),
            cache=False,
            # the seed set's first bases (what --limit keeps) without pairing 400 of them
            options={"challenge": "none", "bases": bases},
        )
        effects, competences = headline(
            "natural-logic", run(config, subjects=subjects(gold)).metrics
        )
        for c in competences:
            found = [e for e in effects if e.subject == c.subject]
            out[bases, c.subject] = (combined(found, c), c, found)
    return out


@pytest.mark.parametrize("bases", [MIN_BASES, DEFAULT_BUDGET])
def test_the_reader_is_faithful(verdicts, bases):
    verdict, competence, effects = verdicts[bases, "reader"]
    assert competence.value == 1 and competence.competent
    assert len(effects) == 4 and all(e.n == bases for e in effects)
    assert verdict == FAITHFUL, [(e.key, e.value, e.ci_low, e.ci_high) for e in effects]


@pytest.mark.parametrize("bases", [MIN_BASES, DEFAULT_BUDGET])
@pytest.mark.parametrize("model", ["constant", "random"])
def test_a_model_ignoring_the_input_is_never_faithful(verdicts, bases, model):
    verdict, competence, effects = verdicts[bases, model]
    assert verdict != FAITHFUL
    assert verdict == NOT_ASSESSABLE and not competence.competent
    # and without the competence check its effects alone would not call it faithful
    assert combined(effects) != FAITHFUL


@pytest.mark.parametrize("bases", [MIN_BASES, DEFAULT_BUDGET])
def test_word_overlap_is_unfaithful_or_not_assessable(verdicts, bases):
    verdict, _, effects = verdicts[bases, "overlap"]
    assert verdict in (UNFAITHFUL, NOT_ASSESSABLE)
    # the context seldom changes which words the hypothesis shares: TCE - DCE about 0 there
    (delta,) = [e for e in effects if e.key == "delta_context"]
    assert abs(delta.value) < 0.05 and delta.ci_low <= 0 and delta.verdict != FAITHFUL
