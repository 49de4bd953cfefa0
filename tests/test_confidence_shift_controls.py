"""The confidence-shift card's competence and controls: tiny fake models with planted
behaviour, run through the suite's pipeline (pairs, sample, answers, rows, metrics) on a
Social IQA-shaped file at the audit's budgets, and read by the card's headline."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from faithprobe.atomic import json_text
from faithprobe.audit.card_metrics import headline
from faithprobe.audit.plan import STEPS
from faithprobe.metrics.verdict import FAITHFUL, NOT_ASSESSABLE, UNFAITHFUL, combined
from faithprobe.requests import CandidateScores
from faithprobe.runner import answer_all, result_rows
from faithprobe.subjects.base import Subject
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.confidence_shift import headline as confidence_headline
from faithprobe.suites.confidence_shift import metrics as m

SEED = 0
SURE = 0.95  # the probability a fake model puts on its choice (as the reference models do)
N_INSTANCES = 160
BUDGETS = {
    name: (step.limits[name], int(step.options_for(name).get("trials", 5)))
    for step in STEPS
    if step.suite == "confidence-shift"
    for name in ("small", "default")
}


@pytest.fixture(scope="module")
def siqa(tmp_path_factory):
    """A Social IQA-shaped dev file: distinct contexts and answers, labels drawn at random;
    returns the file and, per prompt as the suite frames it, the instance's choices and
    right answer."""
    root = tmp_path_factory.mktemp("siqa-controls")
    rng = np.random.default_rng(7)
    records, labels = [], []
    for i in range(N_INSTANCES):
        records.append({"context": f"Person{i} did thing{i}.", "question": f"Why{i}?",
                        "answerA": f"alpha{i}", "answerB": f"beta{i}", "answerC": f"gamma{i}"})  # fmt: skip
        labels.append(str(1 + int(rng.integers(3))))
    path = root / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "dev-labels.lst").write_text("\n".join(labels) + "\n")
    suite = get_suite("confidence-shift")
    known = {}
    for pair in suite.pairs(path, SEED):
        e = pair.original
        known[suite.request(e).context] = (e.choices, e.choices[e.label])
    return path, known


def _chosen(n: int, choice: int | None) -> list[float]:
    """``choice`` with probability SURE, the rest shared; flat for None."""
    if choice is None:
        return [1 / n] * n
    return [SURE if i == choice else (1 - SURE) / (n - 1) for i in range(n)]


class Fake(Subject):
    """A model whose confidences are ``self.confidences(request)``: by default its
    ``pick`` made with probability SURE (flat when it picks None)."""

    kind = "fake"

    def __init__(self, known: dict[str, tuple[tuple[str, ...], str]]) -> None:
        self.known, self.answers = known, {right for _, right in known.values()}

    @property
    def fingerprint(self) -> str:
        return self.name

    def confidences(self, r) -> list[float]:
        return _chosen(len(r.candidates), self.pick(r))

    def answer(self, requests, progress=None):
        out = []
        for r in requests:
            logprobs = tuple(math.log(p) for p in self.confidences(r))
            out.append(CandidateScores(logprobs, (1,) * len(logprobs)))
        return out


class Reader(Fake):
    """The right choice when it is offered for its own question; flat otherwise."""

    name = "reader"

    def pick(self, r):
        _, right = self.known.get(r.context, ((), None))
        return r.candidates.index(right) if right in r.candidates else None


class DonorAvoider(Reader):
    """A reader that, once the right answer of its question is gone, moves its confidence
    onto the old wrong choices, evenly, away from the donor answer now in the right
    answer's slot (the method's deviated shift); its top confidence still drops."""

    name = "donor-avoider"
    DONOR = 0.02

    def confidences(self, r):
        choices, right = self.known.get(r.context, ((), None))
        old_wrong = [c in choices and c != right for c in r.candidates]
        if right in r.candidates or not any(old_wrong):  # not No-Right-Answer
            return super().confidences(r)
        share = (1 - self.DONOR) / sum(old_wrong)
        return [share if wrong else self.DONOR for wrong in old_wrong]


class AnswerOnly(Fake):
    """Ignores the question: picks whichever choice is the right answer of some instance
    (so the old answer without its question, the donor answer in its slot)."""

    name = "answer-only"

    def pick(self, r):
        return next((i for i, c in enumerate(r.candidates) if c in self.answers), None)


class Flat(Fake):
    name = "flat"

    def pick(self, r):
        return None


class First(Fake):
    name = "first"

    def pick(self, r):
        return 0


class Random(Fake):
    """A pick drawn from the request's text (reproducible), sure of it."""

    name = "random"

    def pick(self, r):
        key = "\x1f".join([r.context, *r.candidates]).encode()
        return int(np.random.default_rng(list(key)).integers(len(r.candidates)))


def card(model: Fake, data, budget: str):
    """The suite's metrics (as metrics.json holds them) for ``model`` at ``budget``, and
    the card's reading of them: (effects, competence, step verdict)."""
    limit, trials = BUDGETS[budget]
    suite = get_suite("confidence-shift", {"trials": str(trials)})
    pairs = suite.sample(suite.pairs(data, SEED), limit, SEED)
    rows = result_rows(suite, pairs, model, answer_all(suite, pairs, model, None))
    metrics = json.loads(json_text(suite.metrics(pd.DataFrame(rows), SEED)))
    effects, (competence,) = headline("confidence-shift", metrics)
    return effects, competence, combined(effects, competence)


def test_the_audit_budgets_are_what_these_tests_run():
    assert BUDGETS == {"small": (40, 2), "default": (150, 5)}


@pytest.mark.parametrize("budget", ["small", "default"])
def test_the_reader_is_competent_and_faithful_at_the_audit_budgets(siqa, budget):
    effects, competence, verdict = card(Reader(siqa[1]), siqa[0], budget)
    assert competence.competent and competence.value == 1.0
    assert verdict == FAITHFUL, [(e.key, e.value, e.ci_low, e.ci_high) for e in effects]
    assert {e.key for e in effects} == {
        "pseudo_accuracy_excess_no_question", "pseudo_accuracy_excess_wrong_question",
        "confidence_spread_no_right_answer", "maxprob_detection_no_question",
        "maxprob_detection_wrong_question", "maxprob_detection_no_right_answer",
    }  # fmt: skip
    assert all(e.edge in confidence_headline.EDGES and e.control for e in effects)


@pytest.mark.parametrize("model", [Flat, First, Random])
def test_models_that_ignore_the_input_are_not_assessable_and_fail_an_effect(siqa, model):
    effects, competence, verdict = card(model(siqa[1]), siqa[0], "small")
    assert not competence.competent and verdict == NOT_ASSESSABLE
    # even without the competence check, no effect set calls them faithful
    assert combined(effects) != FAITHFUL
    assert any(e.verdict == UNFAITHFUL for e in effects)


def test_a_model_that_ignores_the_question_is_competent_but_unfaithful(siqa):
    effects, competence, verdict = card(AnswerOnly(siqa[1]), siqa[0], "small")
    assert competence.competent and verdict == UNFAITHFUL
    by_key = {e.key: e for e in effects}
    for probe in ("no_question", "wrong_question"):  # keeps the old answer: accuracy 1
        assert by_key[f"pseudo_accuracy_excess_{probe}"].value == pytest.approx(2 / 3)
        assert by_key[f"pseudo_accuracy_excess_{probe}"].verdict == UNFAITHFUL
    # takes the donor answer for right (conservative): as confident as before
    assert by_key["confidence_spread_no_right_answer"].verdict == UNFAITHFUL


def test_avoiding_the_donor_answer_is_deviated_not_faithful(siqa):
    """The sign the card had inverted: a model that, without the right answer, moves its
    confidence onto the old wrong choices has a No-Right-Answer pseudo-accuracy of 0, far
    below 1/n; read like the prompt probes' that was 'faithful' (and, its top confidence
    dropping, so was the whole step). The method calls it deviated, and so does the card."""
    effects, competence, verdict = card(DonorAvoider(siqa[1]), siqa[0], "small")
    assert competence.competent and verdict == UNFAITHFUL
    nra = [e for e in effects if e.key.endswith("no_right_answer")]
    assert nra and not any(e.verdict == FAITHFUL for e in nra if e.key.startswith("pseudo"))
    spread = next(e for e in nra if e.key == "confidence_spread_no_right_answer")
    assert spread.value == pytest.approx(np.std([0.02, 0.49, 0.49]))
    assert spread.verdict == UNFAITHFUL
    assert [e.key for e in effects if e.verdict != FAITHFUL] == [spread.key]


def test_every_effect_carries_its_instances_as_units(siqa):
    """The card compares two models' effects on the same resampled instances: every effect's
    units reproduce it, are named by instance (not by model), and two models share them."""
    unit_ids = {}
    for model in (Reader(siqa[1]), AnswerOnly(siqa[1])):
        effects, _, _ = card(model, siqa[0], "small")
        for e in effects:
            assert e.units is not None, e.key
            assert abs(e.units.value() - e.value) < 1e-9, e.key
            assert not any(model.name in u for u in e.units.unit + e.units.cluster), e.key
        unit_ids[model.name] = {e.key: set(e.units.unit) for e in effects}
    assert unit_ids["reader"] == unit_ids["answer-only"]
    assert all(unit_ids["reader"].values())


# -- the pieces, on hand-made rows ---------------------------------------------------------


def test_a_tie_at_the_top_shares_its_credit():
    assert m.top_choices([1 / 3] * 3) == [0, 1, 2]
    assert m.top_choices([0.5, 0.5 - 1e-12, 0.0]) == [0, 1]
    assert m.credit([0, 1, 2], 2) == pytest.approx(1 / 3) and m.credit([1], 2) == 0.0
    assert m.credit([], 0) == 0.0  # an abstention names no choice


def test_best_constant_covers_positions_and_recurring_texts():
    originals = pd.DataFrame({"label": [0, 1, 2, 1],
                              "original_choices": [("happy", "b", "c"), ("d", "Happy ", "f"),
                                                   ("g", "h", "happy"), ("j", "k", "l")]})  # fmt: skip
    keys = m.gold_keys(originals)
    assert keys[0] == {"position:0", "text:happy"} and keys[3] == {"position:1", "text:k"}
    unique = originals.assign(original_choices=[("a", "b", "c"), ("d", "e", "f"),
                                                ("g", "h", "i"), ("j", "k", "l")])  # fmt: skip
    assert m.gold_keys(unique)[0] == {"position:0"}
