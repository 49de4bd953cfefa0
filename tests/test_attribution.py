"""Token saliency (Integrated Gradients, Occlusion) on tiny BERT question-answering models:
a random one, and one whose start logit depends on a single token."""

from __future__ import annotations

import math

import pytest
import torch

from faithprobe.errors import ModelError
from faithprobe.saliency.words import aggregate, shares, tokens_of_words
from faithprobe.subjects.hf.attribution import IntegratedGradients, Occlusion, SaliencyRequest
from test_hf_qa import CONTEXT, QUESTION, _marked_qa, _random_qa

REQUEST = SaliencyRequest(QUESTION, CONTEXT)


@pytest.fixture(scope="module")
def random_qa(tiny_pair_tokenizer):
    return _random_qa(tiny_pair_tokenizer)


def test_ig_completeness(random_qa, tiny_pair_tokenizer):
    ig = IntegratedGradients(random_qa, tiny_pair_tokenizer, n_steps=100, internal_batch_size=50)
    enc = ig.encode(REQUEST)
    with torch.no_grad():
        logits = ig.start_logits(enc.ids, enc.types)[0]
        target = ig.target(enc, logits)
        f_input = float(logits[target])
        f_baseline = float(ig.target_logit(ig.baseline_ids(enc), enc.types, target)[0])
    attributions, delta = ig.token_attributions(enc, target)
    assert attributions.shape == (enc.ids.shape[1], 32)
    total = float(attributions.sum())
    assert abs(f_input - f_baseline) > 0.1  # the test means something
    assert total == pytest.approx(f_input - f_baseline, rel=1e-2)
    assert delta == pytest.approx(total - (f_input - f_baseline), abs=1e-4)

    (result,) = ig.attribute([REQUEST])
    assert result.target == target and result.target_logit == pytest.approx(f_input)
    assert result.offsets[target][0] == 1  # the predicted start lies in the context
    torch.testing.assert_close(torch.tensor(result.saliency), attributions.norm(dim=-1))
    assert result.method == "integrated-gradients"
    assert (
        result.settings["n_steps"] == 100
        and result.settings["baseline"] == tiny_pair_tokenizer.mask_token
    )


def test_results_do_not_depend_on_batch_size(random_qa, tiny_pair_tokenizer):
    requests = [REQUEST, SaliencyRequest("Who lives in Finland?", CONTEXT)]

    def saliencies(attributor):
        return torch.tensor([s for r in attributor.attribute(requests) for s in r.saliency])

    ig = [
        saliencies(
            IntegratedGradients(random_qa, tiny_pair_tokenizer, n_steps=12, internal_batch_size=b)
        )
        for b in (1, 5, 12)
    ]
    occ = [saliencies(Occlusion(random_qa, tiny_pair_tokenizer, batch_size=b)) for b in (3, 64)]
    for other in ig[1:]:
        torch.testing.assert_close(other, ig[0], atol=1e-5, rtol=1e-4)
    for other in occ[1:]:
        torch.testing.assert_close(other, occ[0], atol=1e-5, rtol=1e-4)


def test_occlusion_equals_a_per_token_loop(random_qa, tiny_pair_tokenizer):
    occ = Occlusion(random_qa, tiny_pair_tokenizer, batch_size=8)
    (result,) = occ.attribute([REQUEST])
    enc = occ.encode(REQUEST)
    expected = []
    with torch.no_grad():
        for i, offset in enumerate(enc.offsets):
            if offset is None:
                expected.append(0.0)
                continue
            occluded = enc.ids.clone()
            occluded[0, i] = tiny_pair_tokenizer.mask_token_id
            logit = occ.target_logit(occluded, enc.types, result.target)
            expected.append(result.target_logit - float(logit[0]))
    torch.testing.assert_close(
        torch.tensor(result.saliency), torch.tensor(expected), atol=1e-5, rtol=1e-4
    )
    assert any(abs(s) > 1e-3 for s in result.saliency)


def test_only_the_token_the_start_depends_on_is_salient(tiny_pair_tokenizer):
    # the start logit of a token depends on that token alone; only "ĠParis" has one
    model = _marked_qa(tiny_pair_tokenizer, "ĠParis", "ĠParis")
    for attributor in (
        Occlusion(model, tiny_pair_tokenizer),
        IntegratedGradients(model, tiny_pair_tokenizer, n_steps=20),
    ):
        (result,) = attributor.attribute([REQUEST])
        assert result.tokens[result.target] == "ĠParis"
        salient = [i for i, s in enumerate(result.saliency) if abs(s) > 1e-4]
        assert salient == [result.target], attributor.method
        assert result.saliency[result.target] > 1.0


def test_special_tokens_get_no_saliency_and_offsets_point_into_the_texts(
    random_qa, tiny_pair_tokenizer
):
    # a question longer than half the window is cut from the left: offsets still point
    # into the request's question
    question = "Where does the one who is called Henry live now? " * 4 + QUESTION
    request = SaliencyRequest(question, CONTEXT * 3)
    for attributor in (
        Occlusion(random_qa, tiny_pair_tokenizer, max_length=64),
        IntegratedGradients(random_qa, tiny_pair_tokenizer, max_length=64, n_steps=4),
    ):
        (result,) = attributor.attribute([request])
        assert result.truncated and len(result.tokens) == 64
        special = [i for i, o in enumerate(result.offsets) if o is None]
        assert [result.tokens[i] for i in special] == ["<s>", "</s>", "</s>"]
        assert all(result.saliency[i] == 0.0 for i in special)
        texts = {0: request.question, 1: request.context}
        ids = attributor.encode(request).ids[0].tolist()
        for token_id, offset in zip(ids, result.offsets, strict=True):
            if offset is not None:
                sequence, start, end = offset
                assert texts[sequence][start:end] == tiny_pair_tokenizer.decode([token_id])
        question_spans = [s for s in result.spans(0) if s is not None]
        assert question_spans[-1] == (len(question) - 1, len(question))  # the "?"
        assert question_spans[0][0] > 0  # cut from the left


def test_refuses_models_it_cannot_attribute(random_qa, tiny_pair_tokenizer):
    import copy

    with pytest.raises(ModelError, match="float32"):
        Occlusion(copy.deepcopy(random_qa).double(), tiny_pair_tokenizer)
    with pytest.raises(ValueError, match="n_steps"):
        IntegratedGradients(random_qa, tiny_pair_tokenizer, n_steps=0)


def test_tokens_of_words_and_aggregation():
    # "Henry's capital" -> Hen|ry|'s, Ġcap|ital ; a special token, and a token of the
    # other text (None); offsets of "Ġcap" include the space
    offsets = [None, (0, 3), (3, 5), (5, 7), (7, 11), (11, 15), None, (15, 15)]
    words = [(0, 7), (8, 15), (20, 25)]
    groups = tokens_of_words(offsets, words)
    assert groups == [[1, 2, 3], [4, 5], []]
    assert tokens_of_words(offsets, [(4, 9)]) == [[2, 3, 4]]  # straddles two words

    saliency = [0.0, 1.0, 2.0, 3.0, -4.0, 1.0, 0.0, 0.0]
    assert aggregate(saliency, groups[:2]) == [6.0, -3.0]
    assert aggregate(saliency, groups[:2], "mean") == [2.0, -1.5]
    assert aggregate(saliency, groups[:2], "max") == [3.0, 1.0]
    assert math.isnan(aggregate(saliency, groups, "max")[2])
    assert shares(saliency, groups) == [6 / 11, 5 / 11, 0.0]
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate(saliency, groups, "median")
