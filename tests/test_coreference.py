"""Coreference: resolvers, selection, imported and generated counterfactuals."""

from __future__ import annotations

import json

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Span as SpacySpan

from faithprobe.coreference import FallbackResolver, SpacyResolver, select_coreference
from faithprobe.coreference.counterfactuals import read_coref_counterfactuals
from faithprobe.coreference.selection import MULTI_SPAN, NO_CLUSTER, NOT_SPAN
from faithprobe.errors import DataError, ModelError
from faithprobe.interventions import get
from faithprobe.interventions.coreference import NAME, NOT_A_PERSON, UNSUPPORTED
from faithprobe.records import UNKNOWN, QAExample

TEXT = (
    "Frankie Bono arrives in New York. Bono meets an old friend. "
    "Later Frankie buys a gun and he hides it."
)


def mentions(text: str, clusters) -> list[list[str]]:
    return [[text[s:e] for s, e in c] for c in clusters]


@pytest.fixture(scope="module")
def fallback():
    return FallbackResolver()


def test_fallback_groups_full_name_surname_first_name_and_pronoun(fallback):
    found = mentions(TEXT, fallback.clusters(TEXT))
    assert ["Frankie Bono", "Bono", "Frankie", "he"] in found
    assert fallback.name == "fallback-rule"


def test_fallback_pronoun_needs_a_person_in_this_or_the_previous_sentence(fallback):
    text = "Anna Berg sings. The choir rests. The hall is quiet. She leaves. Anna Berg returns."
    found = mentions(text, fallback.clusters(text))
    assert found == [["Anna Berg", "Anna Berg"]]


def test_fallback_ambiguous_first_name_claims_nothing(fallback):
    text = "John Smith met John Doe. John Smith left, and later John came back."
    found = mentions(text, fallback.clusters(text))
    assert ["John Smith", "John Smith"] in found
    assert not any("John" in c for c in found)


def test_fallback_case_sensitive_whole_words(fallback):
    text = "Mary Rose met Tom Hale. Rosemary and the rose garden waited. Mary Rose smiled."
    found = mentions(text, fallback.clusters(text))
    assert ["Mary Rose", "Mary Rose"] in found
    assert all("rose" not in m and "Rosemary" not in m for c in found for m in c)


def fake_pipeline(with_coref: bool = True) -> Language:
    nlp = spacy.blank("en")
    name = "fake_coref" if with_coref else "fake_other"

    @Language.component(name)
    def component(doc):
        if with_coref:
            doc.spans["coref_clusters_1"] = [SpacySpan(doc, 0, 2), SpacySpan(doc, 5, 6)]
        return doc

    nlp.add_pipe(name)
    return nlp


def test_spacy_resolver_reads_span_groups():
    resolver = SpacyResolver(fake_pipeline(), name="fake")
    text = "Ada Lovelace wrote notes . She published them ."
    assert mentions(text, resolver.clusters(text)) == [["Ada Lovelace", "She"]]
    assert resolver.name == "fake"


def test_spacy_resolver_without_coref_component_is_a_clear_error():
    with pytest.raises(ModelError, match="no coreference component"):
        SpacyResolver(fake_pipeline(with_coref=False))


def qa(qid, question, answer, context=TEXT) -> QAExample:
    return QAExample(qid, context, question, (answer,), answer_starts=(context.index(answer),))


def test_selection_keeps_clustered_answers_and_counts_the_rest(fallback):
    examples = [
        qa("a", "Who hides a gun?", "Frankie Bono"),
        qa("b", "Where does he arrive?", "New York"),
        QAExample("c", TEXT, "Unknown?", (UNKNOWN,), answer_type=UNKNOWN),
        QAExample(
            "d",
            TEXT,
            "Who?",
            ("Bono", "Frankie"),
            answer_starts=(34, 64),
            features={"multi_span": True},
        ),  # fmt: skip
    ]
    selection = select_coreference(examples, fallback)
    assert [e.id for e in selection.kept] == ["a"]
    kept = selection.kept[0]
    assert kept.features["resolver"] == "fallback-rule"
    assert [TEXT[s:e] for s, e in kept.features["cluster"]][:2] == ["Frankie Bono", "Bono"]
    assert selection.dropped == {NO_CLUSTER: 1, NOT_SPAN: 1, MULTI_SPAN: 1}


# ---- imported counterfactuals ------------------------------------------------------------

CF_CONTEXT = "Frankie buys a gun. It is not Frankie but another person, Dana Pellow, who hides it."


def cf_record(**changes) -> dict:
    """A good record with ``changes``; a change to None leaves the field out."""
    record = {
        "id": "cf-1",
        "original_id": "q1",
        "context": CF_CONTEXT,
        "question": "What is the first name of the person who hides it?",
        "answer": "Dana",
        "answer_start": CF_CONTEXT.index("Dana"),
        "inserted": CF_CONTEXT[CF_CONTEXT.index("It is") :],
    }
    return {k: v for k, v in {**record, **changes}.items() if v is not None}


def write(tmp_path, records) -> str:
    path = tmp_path / "cf.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


ORIGINAL = QAExample(
    "q1", "Frankie buys a gun and hides it.", "Who?", ("Frankie",), answer_starts=(0,)
)


def test_importer_reads_a_good_file(tmp_path):
    path = write(tmp_path, [cf_record(), cf_record(id="cf-2", inserted=None)])
    examples = read_coref_counterfactuals(path, originals=[ORIGINAL])
    assert [e.id for e in examples] == ["cf-1", "cf-2"]
    assert examples[0].answers == ("Dana",)
    assert examples[0].features["original_id"] == "q1"
    assert examples[0].features["generated"] is False


@pytest.mark.parametrize(
    ("records", "line", "field"),
    [
        ([cf_record(), cf_record()], 2, "id"),
        ([cf_record(answer_start=3)], 1, "answer_start"),
        ([cf_record(answer_start=-1)], 1, "answer_start"),
        ([cf_record(inserted="Nobody said this.")], 1, "inserted"),
        ([cf_record(question="")], 1, "question"),
        ([cf_record(answer=None)], 1, "answer"),
        ([cf_record(answer_start="5")], 1, "answer_start"),
        ([cf_record(original_id="q9")], 1, "original_id"),
        ([cf_record(context="Dana hides it.", answer_start=0, inserted=None)], 1, "context"),
    ],
)
def test_importer_names_file_line_and_field(tmp_path, records, line, field):
    path = write(tmp_path, records)
    with pytest.raises(DataError) as err:
        read_coref_counterfactuals(path, originals=[ORIGINAL])
    assert (err.value.path, err.value.record, err.value.field) == (str(path), f"line {line}", field)


# ---- generated counterfactuals -----------------------------------------------------------

STORY = "Frankie Bono arrives in New York. He buys a revolver. Later he leaves the city."


@pytest.mark.parametrize(
    ("question", "answer", "part"),
    [
        ("What is the first name of the person who buys a revolver?", "Frankie", "first"),
        ("What was the last name of the man that buys a revolver?", "Bono", "last"),
        ("What's the full name of the person who buys a revolver?", "Frankie Bono", "full"),
        ("What is the name of the character who buys a revolver?", "Frankie Bono", "full"),
    ],
)
def test_generator_inserts_a_sentence_that_makes_a_new_person_the_answer(question, answer, part):
    example = qa("q", question, answer, context=STORY)
    outcome = get(NAME).apply(example, seed=3)
    cf = outcome.example
    assert cf is not None and outcome.reason is None
    sentence = cf.features["inserted"]
    first, last = sentence.split(", ")[1].split()
    copula = "was" if question.startswith("What was") else "is"
    head, rel = question.split(" name of the ")[1].split()[:2]
    assert sentence == (
        f"It {copula} not {answer} but another {head}, {first} {last}, {rel} buys a revolver."
    )
    # right after the sentence holding the answer; the old text is all still there
    assert cf.context == STORY.replace("York. ", f"York. {sentence} ", 1)
    expected = {"first": first, "last": last, "full": f"{first} {last}"}[part]
    assert cf.answers == (expected,)
    start = cf.answer_starts[0]
    assert cf.context[start : start + len(expected)] == expected
    s, e = cf.features["inserted_span"]
    assert cf.context[s:e] == sentence and s <= start < e
    assert cf.features["generated"] is True and cf.features["variant"] == "CF"
    assert cf.features["original_id"] == "q" and cf.id == "q/cf"
    assert first not in STORY and last not in STORY


def test_generator_skips_unsupported_questions_with_a_reason():
    cases = {
        "Who buys a revolver?": (UNSUPPORTED, None),
        "What are the first names of the people who buy revolvers?": (UNSUPPORTED, None),
        "What is the name of the city that Frankie arrives in?": (NOT_A_PERSON, "city"),
    }
    for question, (reason, detail) in cases.items():
        outcome = get(NAME).apply(qa("q", question, "New York", context=STORY), seed=0)
        assert outcome.examples == () and (outcome.reason, outcome.detail) == (reason, detail)


def test_generator_is_deterministic_per_seed_and_moves_the_cluster(fallback):
    question = "What is the first name of the person who buys a revolver?"
    example = select_coreference([qa("q", question, "Frankie Bono", context=STORY)], fallback)
    original = example.kept[0]
    intervention = get("coreference_counterfactual")
    runs = [intervention.apply(original, seed=s).examples[0] for s in (1, 1, 2, 3, 4)]
    assert runs[0].context == runs[1].context
    assert len({r.features["inserted"] for r in runs}) > 1
    cf = runs[0]
    shift = len(cf.features["inserted"]) + 1
    words = [cf.context[s:e] for s, e in cf.features["cluster"]]
    assert words == [STORY[s:e] for s, e in original.features["cluster"]]
    assert cf.features["cluster"][-1][0] == original.features["cluster"][-1][0] + shift
