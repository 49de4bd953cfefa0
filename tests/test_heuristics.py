"""Heuristic QA baselines: selectors, answer types, extractors, runner, CLI.

spaCy's small English model is used (installed, no download); the embedded MiniLM encodes a
handful of sentences only.
"""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from faithprobe.baseline.scoring import score_rows, scores
from faithprobe.cli import app
from faithprobe.datasets.qa_formats import read_qa
from faithprobe.heuristics.answer_types import NUMERIC, wh_answer_types
from faithprobe.heuristics.encoder import EncoderSelector, MiniLMEncoder
from faithprobe.heuristics.extraction import NounChunk, TypedEntity, WholeSentence
from faithprobe.heuristics.predict import predict, sample
from faithprobe.heuristics.selection import (
    FirstSentence,
    lcs_length,
    longest_common_subsequence,
    token_overlap,
)
from faithprobe.parsing import parser
from faithprobe.report.heuristics import scores_table

ROCKEFELLER = [
    "The weather was cold that year.",
    "John D. Rockefeller founded the University of Chicago in 1890.",
    "Chicago is a large city.",
]


def test_overlap_picks_the_sentence_sharing_most_content_words():
    question = "Who founded the University of Chicago?"
    assert token_overlap().select(question, ROCKEFELLER) == 1
    assert longest_common_subsequence().select(question, ROCKEFELLER) == 1


def test_lcs_rewards_word_order_and_ties_go_to_the_earlier_sentence():
    sentences = ["The dog chased the cat.", "The cat chased the dog."]
    question = "Which cat chased a dog?"
    assert token_overlap().select(question, sentences) == 0  # 3 words each: a tie
    assert longest_common_subsequence().select(question, sentences) == 1
    assert lcs_length(list("abcbdab"), list("bdcaba")) == 4


def test_first_sentence_and_questions_without_content_words():
    assert FirstSentence().select("Who founded it?", ROCKEFELLER) == 0
    assert token_overlap().select("Who was it?", ROCKEFELLER) == 0  # all score 0
    with pytest.raises(ValueError):
        FirstSentence().select("Who?", [])


def test_encoder_selects_by_meaning_normalises_and_caches():
    encoder = MiniLMEncoder(batch_size=1)
    selector = EncoderSelector(encoder)
    sentences = ["The stock market fell sharply on Monday.", "Dogs are animals that bark."]
    assert selector.select("Which animal barks?", sentences) == 1
    assert selector.select_many(["What happened to share prices?"], [sentences]) == [0]
    assert len(selector._cache) == 1
    one = encoder.encode(sentences)
    assert np.allclose(np.linalg.norm(one, axis=1), 1, atol=1e-5)
    assert np.allclose(MiniLMEncoder(batch_size=8).encode(sentences), one, atol=1e-5)


@pytest.mark.parametrize(
    ("question", "types"),
    [
        ("Who wrote Hamlet?", {"PERSON", "ORG", "NORP"}),
        ("In what year did the war end?", {"DATE"}),
        ("When did the war end?", {"DATE", "TIME"}),
        ("Where is the Eiffel Tower?", {"GPE", "LOC", "FAC"}),
        ("How many moons has Mars?", NUMERIC),
        ("How much did it cost?", NUMERIC),
        ("Which river flows through Paris?", None),
        ("How long did it last?", None),
        ("Name the largest river.", None),
    ],
)
def test_wh_word_map(question, types):
    assert wh_answer_types(question) == (None if types is None else frozenset(types))


@pytest.fixture(scope="module")
def obama():
    return parser()("Barack Obama was born in Honolulu in 1961.")[:]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where was Barack Obama born?", "Honolulu"),
        ("When was Barack Obama born?", "1961"),
        ("Who was born in Honolulu in 1961?", "Barack Obama"),
        # no number in the sentence: the first noun chunk the question does not name
        ("How many children did Barack Obama have?", "Honolulu"),
    ],
)
def test_typed_entity_extractor(obama, question, answer):
    assert TypedEntity().extract(question, obama) == answer


def test_extractors_are_pluggable_and_fall_back(obama):
    places = TypedEntity(answer_types=lambda q: frozenset({"GPE"}))
    assert places.extract("What do we know about him?", obama) == "Honolulu"
    assert NounChunk().extract("Where was Barack Obama born?", obama) == "Honolulu"
    he_left = parser()("He left.")[:]
    assert NounChunk().extract("Who left?", he_left) == "He left."  # "He": no content word
    assert WholeSentence().extract("Who left?", he_left) == "He left."


def _squad(path):
    contexts = [
        (
            "Marie Curie was born in Warsaw. She won the Nobel Prize in 1903.",
            [("q1", "Where was Marie Curie born?", "Warsaw"),
             ("q2", "When did she win the Nobel Prize?", "1903")],
        ),
        (
            "The Amazon is a river in South America. It is the largest river by discharge.",
            [("q3", "Which continent is the Amazon in?", "South America")],
        ),
    ]  # fmt: skip
    paragraphs = [
        {
            "context": context,
            "qas": [
                {"id": i, "question": q, "answers": [{"text": a, "answer_start": context.index(a)}]}
                for i, q, a in qas
            ],
        }
        for context, qas in contexts
    ]
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": paragraphs}]}))
    return path


def test_runner_scores_every_heuristic(tmp_path):
    examples = read_qa(_squad(tmp_path / "tiny.json"))
    selectors = [FirstSentence(), token_overlap()]
    predictions = score_rows(predict(examples, selectors=selectors))
    expected = {f"{s}+{e}" for s in ("first", "overlap", "oracle")
                for e in ("entity", "noun-chunk", "sentence")}  # fmt: skip
    assert set(predictions["heuristic"]) == expected
    assert (predictions.groupby("heuristic").size() == 3).all()
    rows = predictions.set_index(["heuristic", "original_id"])
    assert rows.loc[("overlap+entity", "squad-q2"), "prediction"] == "1903"
    assert rows.loc[("first+entity", "squad-q3"), "prediction"] == "South America"
    assert not rows.loc[("first+sentence", "squad-q2"), "answer_sentence"]

    table = scores(predictions, seed=0).set_index(["heuristic", "metric"])
    # first+sentence: "Marie Curie was born in Warsaw." vs "Warsaw": P 1/6, R 1 -> 2/7;
    # q2's first sentence shares nothing with "1903"; "amazon is river in south america"
    # vs "south america": P 2/6, R 1 -> 1/2
    assert table.loc[("first+sentence", "f1"), "value"] == pytest.approx((2 / 7 + 0 + 0.5) / 3)
    assert table.loc[("first+sentence", "em"), "value"] == 0
    assert table.loc[("oracle+entity", "em"), "value"] == 1
    assert table.loc[("first+entity", "sentence"), "value"] == pytest.approx(2 / 3)
    assert table.loc[("oracle+entity", "em"), "n_clusters"] == 2
    shown = scores_table(scores(predictions)).display
    assert list(shown.columns) == ["heuristic", "EM", "F1", "answer sentence", "n", "passages"]


def test_sample_is_seeded_and_keeps_file_order(tmp_path):
    examples = read_qa(_squad(tmp_path / "tiny.json"))
    two = sample(examples, 2, seed=0)
    assert len(two) == 2 and two == sample(examples, 2, seed=0)
    assert [e.id for e in two] == [e.id for e in examples if e in two]
    assert sample(examples, None, seed=0) == examples


runner = CliRunner()


def test_cli_writes_tables_and_predictions(tmp_path):
    data, out = _squad(tmp_path / "tiny.json"), tmp_path / "out"
    res = runner.invoke(app, ["baseline", "heuristics", "--data", str(data), "--out", str(out)])
    assert res.exit_code == 0, res.output
    for name in ("predictions.parquet", "scores.csv", "scores.md"):
        assert (out / name).is_file()
    assert len(pd.read_parquet(out / "predictions.parquet")) == 15 * 3
    assert "encoder+entity" in res.output and "oracle+sentence" in res.output
    # its own folder is replaced whole (run.json says faithprobe wrote it); a user's is not
    args = ["baseline", "heuristics", "--data", str(data), "--limit", "2"]
    assert runner.invoke(app, [*args, "--out", str(out)]).exit_code == 0
    assert len(pd.read_parquet(out / "predictions.parquet")) == 15 * 2
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "scores.md").write_text("my scores\n")
    res = runner.invoke(app, [*args, "--out", str(mine)])
    assert res.exit_code == 2 and "not a faithprobe run folder" in res.stderr, res.output
    assert (mine / "scores.md").read_text() == "my scores\n"
    assert runner.invoke(app, [*args, "--out", str(mine), "--force"]).exit_code == 0
    assert (mine / "scores.md").read_text() != "my scores\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "missing.json"], "missing.json"),
        (["--data", "tiny.json", "--splitter", "nltk"], "unknown sentence splitter"),
        (["--data", "broken.json"], "not valid JSON"),
        (["--data", "coqa.json"], "paragraphs"),
    ],
)
def test_cli_bad_arguments_exit_2(tmp_path, args, message):
    _squad(tmp_path / "tiny.json")
    (tmp_path / "broken.json").write_text("{")
    (tmp_path / "coqa.json").write_text('{"data": [{"story": "A story.", "questions": []}]}')
    args = [str(tmp_path / a) if a.endswith(".json") else a for a in args]
    res = runner.invoke(app, ["baseline", "heuristics", *args, "--out", str(tmp_path / "o")])
    shown = " ".join(res.output.split())  # rich wraps long lines
    assert res.exit_code == 2
    assert "error:" in shown and message in shown and "Traceback" not in shown
    assert not (tmp_path / "o").exists()


def test_a_heuristic_answers_span_requests_as_a_subject(tmp_path):
    from faithprobe.errors import ModelError
    from faithprobe.heuristics.subject import HeuristicSubject
    from faithprobe.requests import SpanAnswerRequest
    from faithprobe.subjects import load_subject

    examples = read_qa(_squad(tmp_path / "tiny.json"))
    subject = load_subject("heuristic:overlap+entity")
    assert isinstance(subject, HeuristicSubject) and subject.name == "heuristic:overlap+entity"
    requests = [SpanAnswerRequest(e.question, e.context) for e in examples]
    answers = subject.answer(requests)
    expected = predict(examples, selectors=[token_overlap()], extractors=[TypedEntity()])
    expected = expected[expected["heuristic"] == "overlap+entity"]
    assert [a.text for a in answers] == list(expected["prediction"])
    for request, a in zip(requests, answers, strict=True):
        assert request.context[a.start : a.end] == a.text and a.start >= 0
    assert answers[1].text == "1903"
    assert subject.fingerprint != load_subject("heuristic:first+entity").fingerprint
    with pytest.raises(ModelError, match="selectors first, overlap, lcs, encoder"):
        load_subject("heuristic:overlap")
