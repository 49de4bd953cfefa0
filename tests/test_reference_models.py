"""Reference models with planted behaviour (``--model ref:NAME``): every reference answers
every request kind the suites send; the reader answers from the annotations of the example
it is shown, as each method says a faithful model would; the degenerate ones never read the
example; an unknown name and the Ray executor are refused; a CLI run goes end to end."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pandas as pd
import pytest
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.errors import ModelError, UsageError
from faithprobe.interventions.deletion import truncate_remove
from faithprobe.metrics.alignment import saliency_test
from faithprobe.multiple_choice_prompts import LETTERS, LetterPrompt
from faithprobe.records import (
    ENTAILMENT,
    NLI_LABELS,
    NON_ENTAILMENT,
    UNKNOWN,
    ChoiceExample,
    ClozeExample,
    NLIExample,
    QAExample,
)
from faithprobe.reference_models import REFERENCES, ReferenceSubject
from faithprobe.requests import (
    ANSWER_KINDS,
    AnswerKindRequest,
    CandidateScoreRequest,
    CandidateScores,
    LetterChoiceRequest,
    SaliencyRequest,
    SpanAnswer,
    SpanAnswerRequest,
    TextPairRequest,
    TokenSaliency,
)
from faithprobe.runner import answer_all
from faithprobe.saliency.partitions import Word, comparison_partition, token_partition
from faithprobe.subjects import load_subject, parse_model
from faithprobe.suite_protocol import get_suite

DEGENERATE = [n for n in REFERENCES if n not in ("reader", "memoriser")]

CLOZE = ClozeExample(
    "cloze",
    "Jack lives in Indonesia and has visited Chile. The capital of Jack's country is",
    "Jakarta",
    ("Paris", "Santiago", "Jakarta", "Warsaw"),
    ".",
)
CHOICE = ChoiceExample("mc", "Where would you keep milk?", ("shelf", "fridge", "oven"), 1)
NLI = NLIExample(
    "nli",
    "Some dogs bark.",
    "Some animals bark.",
    NON_ENTAILMENT,  # a wrong label: the reader must read the features, not this
    {"monotonicity": "up", "relation": "leq"},
)
STORY = "Ann lives in Oslo. She works as a baker. Her brother Tom lives in Rome."
SENTENCES = ((0, 18), (19, 40), (41, 71))
QA = QAExample(
    "qa",
    STORY,
    "Where does Tom live?",
    ("Rome",),
    answer_starts=(66,),
    rationale=((41, 71),),
    features={"sentences": SENTENCES},
)
YES_NO = QAExample(
    "yn", STORY, "Does Tom live in Rome?", ("yes",), "yes", rationale=((41, 71),),
    features={"sentences": SENTENCES},
)  # fmt: skip
COMPARISON = QAExample(
    "cmp",
    "Maria was born in 1984 and Tom in 1963.",
    "Who was born later, Maria or Tom?",
    ("Maria",),
    answer_starts=(0,),
    rationale=((0, 39),),
    features={"comparative_span": (13, 18)},
)


def requests_for(example) -> list:
    """The requests the suites make of a reference model for ``example``."""
    if isinstance(example, ClozeExample):
        return [CandidateScoreRequest(example.context, example.candidates, example.suffix)]
    if isinstance(example, ChoiceExample):
        return [CandidateScoreRequest(f"Q: {example.prompt}\nA:", example.choices)]
    if isinstance(example, NLIExample):
        return [TextPairRequest(example.premise, example.hypothesis, NLI_LABELS)]
    if example.answer_type in ("yes", "no"):
        return [AnswerKindRequest(example.question, example.context)]
    return [
        SpanAnswerRequest(example.question, example.context),
        SaliencyRequest(example.question, example.context, "ig", 8),
        SaliencyRequest(example.question, example.context, "occlusion"),
    ]


def ask(name: str, *examples) -> list:
    """``ref:name``'s answers to the requests of ``examples``, each shown its example."""
    subject = ReferenceSubject(name)
    shown = {r: e for e in examples for r in requests_for(e)}
    subject.read_examples(shown)
    return subject.answer(list(shown))


def choice(scores: CandidateScores) -> int:
    return scores.logprobs.index(max(scores.logprobs))


def is_flat(scores: CandidateScores) -> bool:
    return max(scores.logprobs) - min(scores.logprobs) < 1e-12


@pytest.mark.parametrize("name", list(REFERENCES))
def test_every_reference_answers_every_request_kind(name):
    subject = load_subject(f"ref:{name}")
    assert subject.accepts == {
        "candidate-scores", "text-pair-classes", "span-answer", "answer-kind", "saliency",
        "letter-choice",
    }  # fmt: skip
    assert not subject.cacheable and subject.fingerprint == ReferenceSubject(name).fingerprint
    answers = ask(name, CLOZE, CHOICE, NLI, QA, YES_NO)
    kinds = [type(a) for a in answers]
    assert kinds == [CandidateScores] * 3 + [SpanAnswer, TokenSaliency, TokenSaliency] + [
        CandidateScores
    ]
    cloze, mc, nli, span, ig, occlusion, kind = answers
    assert len(cloze.logprobs) == 4 and len(mc.logprobs) == 3 and len(nli.logprobs) == 2
    assert len(kind.logprobs) == len(ANSWER_KINDS)
    for scores in (cloze, mc, nli, kind):
        assert math.isclose(sum(math.exp(x) for x in scores.logprobs), 1.0, rel_tol=1e-9)
    if span.start >= 0:
        assert QA.context[span.start : span.end] == span.text
    assert set(ig.summaries) == {"l2", "l1", "dot"} and not occlusion.summaries
    assert len(ig.tokens) == len(ig.offsets) == len(ig.saliency)
    assert ig.offsets[0][0] == 0 and ig.offsets[-1][0] == 1  # question words, then context


@pytest.mark.parametrize("name", list(REFERENCES))
def test_asked_by_letter_a_reference_names_the_option_its_scores_choose(name):
    """A letter choice carrying its scoring request is answered as that request is scored:
    the chosen option's letter, a reply naming none where the scores are flat, and the
    scores as the letters' log-probabilities only when top_logprobs are asked for."""
    examples = (CLOZE, CHOICE, NLI)
    scored = ask(name, *examples)
    for top in (20, 0):
        letters = {}
        for example in examples:
            (scoring,) = requests_for(example)
            options = getattr(scoring, "candidates", None) or getattr(scoring, "labels", ())
            prompt = LetterPrompt().render("?", options)
            letters[LetterChoiceRequest(prompt, LETTERS[: len(options)], top_logprobs=top,
                                        scoring=scoring)] = example  # fmt: skip
        subject = ReferenceSubject(name)
        subject.read_examples(letters)
        for (request, example), got, scores in zip(
            letters.items(), subject.answer(list(letters)), scored, strict=True
        ):
            named = LetterPrompt.parse(got.text, tuple(request.letters))
            assert named == (None if is_flat(scores) else choice(scores)), (name, example.id)
            assert got.logprobs == (scores.logprobs if top else None)


def test_reader_chooses_the_target_whatever_the_attractors():
    (scores,) = ask("reader", CLOZE)
    assert CLOZE.candidates[choice(scores)] == "Jakarta"
    others = [x for i, x in enumerate(scores.logprobs) if i != choice(scores)]
    assert max(others) == min(others)  # the attractors get no more than any other candidate
    with pytest.raises(UsageError, match="shown no example, not a ClozeExample or"):
        ReferenceSubject("reader").answer(requests_for(CLOZE))  # the runner shows examples
    (nearest,) = ask("nearest", CLOZE)
    assert CLOZE.candidates[choice(nearest)] == "Santiago"  # Chile stands nearer the blank


def test_reader_answers_the_gold_span_and_abstains_once_the_rationale_is_gone():
    span = ask("reader", QA)[0]
    assert (span.text, span.start) == ("Rome", 66) and span.score > span.null_score
    deleted = truncate_remove(QA).example  # the answer is re-inserted at the end of the text
    assert deleted.context.endswith("Rome") and not deleted.rationale
    gone = ask("reader", deleted)[0]
    assert (gone.start, gone.end) == (-1, -1) and gone.null_score > gone.score


def test_reader_yes_no_follows_the_story_and_abstains_without_support():
    kinds = dict(zip(ANSWER_KINDS, range(4), strict=True))
    assert choice(ask("reader", YES_NO)[0]) == kinds["yes"]
    negated = replace(YES_NO, answers=("no",), answer_type="no", features={
        **YES_NO.features, "gold": "no"})  # fmt: skip
    assert choice(ask("reader", negated)[0]) == kinds["no"]
    deleted = truncate_remove(YES_NO).example
    assert choice(ask("reader", deleted)[0]) == kinds[UNKNOWN]


def test_reader_nli_label_comes_from_the_natural_logic_features():
    assert NLI_LABELS[choice(ask("reader", NLI)[0])] == ENTAILMENT  # (leq, up)
    down = replace(NLI, features={"monotonicity": "down", "relation": "leq"})
    assert NLI_LABELS[choice(ask("reader", down)[0])] == NON_ENTAILMENT
    challenge = replace(NLI, features={"source": "help"}, label=ENTAILMENT)
    assert NLI_LABELS[choice(ask("reader", challenge)[0])] == ENTAILMENT
    assert is_flat(ask("reader", replace(challenge, label=None))[0])


def test_reader_multiple_choice_is_flat_when_no_choice_is_right():
    assert choice(ask("reader", CHOICE)[0]) == 1
    probe = replace(CHOICE, prompt="", label=None, features={"pseudo_label": 1})
    assert is_flat(ask("reader", probe)[0])


def test_reader_saliency_is_aligned_by_the_right_reasons_definition():
    span, ig, _ = ask("reader", COMPARISON)
    assert span.text == "Maria"
    question = COMPARISON.question
    words = [
        Word(s, e, question[s:e], "PUNCT" if not question[s].isalnum() else "NOUN")
        for s, e in ((0, 3), (4, 7), (8, 12), (13, 18), (18, 19), (20, 25), (26, 28),
                     (29, 32), (32, 33))
    ]  # fmt: skip
    entities = [(20, 25), (29, 32)]
    partition = token_partition(comparison_partition(words, (13, 18), entities), ig.spans(0))
    assert partition.positive and partition.negative
    assert saliency_test(ig.saliency, partition.positive, partition.negative).passed


@pytest.mark.parametrize("name", DEGENERATE)
def test_degenerate_references_never_read_the_example(name):
    subject = ReferenceSubject(name)
    assert not subject.reads_examples
    flipped = [
        replace(CLOZE, target="Paris"),
        replace(CHOICE, label=0),
        replace(NLI, label=ENTAILMENT, features={"monotonicity": "down", "relation": "leq"}),
        replace(QA, answers=("Oslo",), answer_starts=(13,), rationale=()),
        replace(YES_NO, answers=("no",), answer_type="no"),
    ]
    assert ask(name, CLOZE, CHOICE, NLI, QA, YES_NO) == ask(name, *flipped)


def test_degenerate_behaviours():
    other = replace(CLOZE, context="Emma lives in Poland. The capital of Emma's country is")
    shuffled = replace(other, candidates=("Jakarta", "Warsaw", "Santiago", "Paris"))
    picked = [c.candidates[choice(ask("constant", c)[0])] for c in (CLOZE, other, shuffled)]
    assert len(set(picked)) == 1  # the same string, wherever it stands and whatever the text
    assert choice(ask("first", shuffled)[0]) == 0
    assert CLOZE.candidates[choice(ask("overlap", other)[0])] == "Warsaw"
    unknown_answers = ask("unknown", CLOZE, NLI, QA, YES_NO)
    assert is_flat(unknown_answers[0])
    assert NLI_LABELS[choice(unknown_answers[1])] == NON_ENTAILMENT
    assert unknown_answers[2].start == -1
    assert ANSWER_KINDS[choice(unknown_answers[-1])] == UNKNOWN
    entailed = NLIExample("o", "Some dogs and animals bark.", "Some animals bark.", None)
    assert NLI_LABELS[choice(ask("overlap", entailed)[0])] == ENTAILMENT
    assert NLI_LABELS[choice(ask("overlap", NLI)[0])] == NON_ENTAILMENT  # "animals" is new


def test_random_reference_is_seeded_by_the_request_alone():
    requests = requests_for(CLOZE) + requests_for(QA)
    one = ReferenceSubject("random").answer(requests)
    other = ReferenceSubject("random").answer(requests[::-1])[::-1]
    assert one == other
    again = ReferenceSubject("random").answer(requests_for(replace(CLOZE, context="Other.")))
    assert again[0] != one[0]


def test_an_unknown_reference_is_one_clear_error(tmp_path):
    with pytest.raises(ModelError, match="ref:reader.*ref:overlap"):
        parse_model("ref:oracle")
    res = CliRunner().invoke(app, ["run", "distractors", "--model", "ref:oracle",
                                   "--out", str(tmp_path / "r")])  # fmt: skip
    assert res.exit_code == 2 and "ref:oracle" in res.output and "Traceback" not in res.output


def test_the_runner_shows_the_reader_the_example_behind_extra_requests():
    suite = get_suite("right-reasons", {"saliency": "ig", "ig_steps": "4"})
    pairs = suite.sampled_pairs(None, 2, 0)
    subject = ReferenceSubject("reader")
    answers = answer_all(suite, pairs, subject, None)
    for pair in pairs:
        saliency = answers[(pair.original.id, "ig")]
        start, end = pair.original.features["comparative_span"]
        top = [o for o, v in zip(saliency.offsets, saliency.saliency, strict=True) if v > 0]
        assert top and all(o[0] == 0 and start <= o[1] < end for o in top)
        if not pair.dropped:
            assert answers[pair.intervened.id].text == pair.intervened.answers[0]


def test_cli_run_on_the_reader_end_to_end(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", "distractors", "--model", "ref:reader", "--limit",
                                   "50", "--out", str(out), "--cache-dir", str(tmp_path / "c")])  # fmt: skip
    assert res.exit_code == 0, res.output
    results = pd.read_parquet(out / "results.parquet")
    assert results["correct"].all() and results["competent"].all()
    (entry,) = json.loads((out / "run.json").read_text())["subjects"]
    assert entry["name"] == "ref:reader" and entry["kind"] == "ref"
    assert entry["computed_requests"] > 0 and entry["cached_requests"] == 0
    listed = CliRunner().invoke(app, ["list"])
    assert "ref:reader" in listed.output
