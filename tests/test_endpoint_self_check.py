"""The endpoint self-check (``subjects/endpoint/self_check.py``) against faithprobe's test
server acting out each known quirk of third-party servers (``serving/quirks.py``): the
plain server passes, each server whose numbers would be wrong is refused in one line naming
the check, what it saw and the fallback, and a passed check is kept in the cache and
recorded in run.json."""

from __future__ import annotations

from types import SimpleNamespace

import openai
import pytest
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.requests import LetterChoiceRequest
from faithprobe.serving import OpenAIServer
from faithprobe.serving.quirks import QUIRKS, Quirks
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.cached_subject import CachedSubject
from faithprobe.subjects.endpoint import self_check
from faithprobe.subjects.endpoint.self_check import (
    CHAT,
    COMPLETIONS,
    SelfCheckFailed,
    _Saw,
    echoed_value,
    greedy_token,
    top_difference,
)
from test_openai_subject import SCORE_REQUESTS, remote, results, subject_info, suite_run

LETTERS = LetterChoiceRequest("Where does Alice live?\nA. Paris\nB. Rome\nAnswer:", "AB")


def quirky(subject, *names: str, **kwargs) -> OpenAIServer:
    return OpenAIServer(subject, quirks=Quirks(names), **kwargs)


def test_the_plain_server_passes_both_checks_and_scores_as_the_local_model(tiny_chat_llama):
    with OpenAIServer(tiny_chat_llama) as server:
        client = remote(server)
        got = client.answer([*SCORE_REQUESTS, LETTERS])
    want = tiny_chat_llama.answer(SCORE_REQUESTS)
    for g, w in zip(got, want, strict=False):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-4)
    checks = client.describe()["self_check"]
    assert set(checks) == {COMPLETIONS, CHAT}
    for record in checks.values():
        assert record["passed"] and record["compared"] >= 1
        assert record["largest_difference"] <= record["tolerance"]
    # a completions probe is two requests, a chat probe one
    assert checks[COMPLETIONS]["requests"] == 2 * len(self_check.PROBES)
    assert checks[CHAT]["requests"] == len(self_check.PROBES)


@pytest.mark.parametrize(
    ("quirk", "saw"),
    [
        ("echo-shifted", r"more than 0.2 apart|no probe's generated token"),
        ("offset-minus-one", r"text_offset \[-1, -1"),
        ("other-tokenizer", r"more than 0.2 apart|no probe's generated token"),
    ],
)
def test_a_server_whose_echo_is_wrong_is_refused_before_any_score(tiny_chat_llama, quirk, saw):
    with quirky(tiny_chat_llama, quirk) as server:
        client = remote(server)
        with pytest.raises(SelfCheckFailed) as refused:
            client.answer(SCORE_REQUESTS)
        sent = sum(server.hits.values())
    line = str(refused.value)
    assert "\n" not in line and line.startswith("openai:tiny: the endpoint failed")
    assert "completions self-check" in line and "api=chat" in line
    assert client.describe()["self_check"][COMPLETIONS]["passed"] is False
    assert sent <= 2 * len(self_check.PROBES)  # the check's requests only: no candidate asked
    with pytest.raises(SelfCheckFailed):  # and not asked again: refused at once
        client.answer(SCORE_REQUESTS[:1])


def test_the_shifted_echo_is_what_llama_cpp_python_returns(tiny_chat_llama):
    """The quirk as llama-cpp-python acts it: each echoed value is log p(token i | tokens up
    to i), the generated token has no entry."""
    prompt = "Alice lives in Paris"
    ids = tiny_chat_llama.prompt_ids(prompt)
    with quirky(tiny_chat_llama, "echo-shifted") as server:
        client = openai.OpenAI(base_url=server.url, api_key="none")
        reply = client.completions.create(model="tiny", prompt=prompt, echo=True, logprobs=1,
                                          max_tokens=1, temperature=0)  # fmt: skip
    values = reply.choices[0].logprobs.token_logprobs
    assert len(values) == len(ids) and values[0] is None
    for i in range(1, len(ids)):
        want = tiny_chat_llama.token_logprobs(ids[: i + 1] + [ids[i]])[-1]
        assert values[i] == pytest.approx(want, abs=1e-4)


def test_top_logprobs_null_fails_the_chat_check_and_letters_from_replies_run(tiny_chat_llama):
    """A proxy's top_logprobs null (LiteLLM): candidate scores do not read them (that check
    passes), letter probabilities do (refused, naming letter_probabilities=false), and the
    letters parsed from replies need no check."""
    with quirky(tiny_chat_llama, "top-logprobs-null") as server:
        client = remote(server)
        client.answer(SCORE_REQUESTS[:1])
        with pytest.raises(SelfCheckFailed, match=r"chat self-check.*no top_logprobs \(null\).*"
                           r"letter_probabilities=false"):  # fmt: skip
            client.answer([LETTERS])
        parsed = remote(server, letter_probabilities=False)
        (answer,) = parsed.answer([LETTERS])
    assert answer.logprobs is None and answer.text
    assert parsed.fingerprint != client.fingerprint


def test_max_tokens_zero_is_never_sent(tiny_chat_llama):
    """llama-cpp-python reads max_tokens=0 as 'until the context is full': scores ask for
    one token, which is dropped, so such a server scores as the local model does."""
    with quirky(tiny_chat_llama, "zero-unlimited") as server:
        client = remote(server)
        got = client.answer(SCORE_REQUESTS)
        usage = client.usage()
    for g, w in zip(got, tiny_chat_llama.answer(SCORE_REQUESTS), strict=True):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-4)
    scored = sum(len(r.candidates) for r in SCORE_REQUESTS)
    checked = client.describe()["self_check"][COMPLETIONS]["requests"]
    assert usage["requests"] == scored + checked
    assert usage["completion_tokens"] <= scored + checked  # one token a request at most


def test_a_passed_check_is_kept_in_the_cache_and_recorded_in_run_json(
    tiny_chat_llama, tiny_chat_server, tmp_path
):
    cache = AnswerCache(tmp_path / "answers.sqlite")
    first = remote(tiny_chat_server)
    CachedSubject(first, cache).answer(SCORE_REQUESTS[:1])
    kept = self_check.stored(cache, first.fingerprint, COMPLETIONS)
    assert kept is not None and kept.passed
    again = remote(tiny_chat_server)
    CachedSubject(again, cache).answer(SCORE_REQUESTS[1:2])
    assert again.usage()["requests"] == len(SCORE_REQUESTS[1].candidates)  # no check asked
    assert again.describe()["self_check"][COMPLETIONS] == kept.record()
    cache.close()

    folder = suite_run(tmp_path, "run", remote(tiny_chat_server), limit=2)
    recorded = subject_info(folder)["self_check"][COMPLETIONS]
    assert recorded["passed"] and recorded["tolerance"] == self_check.TOLERANCE
    rerun = suite_run(tmp_path, "run", remote(tiny_chat_server), limit=2)  # all cached
    assert subject_info(rerun)["usage"]["requests"] == 0
    assert subject_info(rerun)["self_check"][COMPLETIONS] == recorded
    assert len(results(rerun)) == len(results(folder))


def test_the_cli_refuses_a_quirky_server_in_one_line(tiny_chat_llama, tmp_path):
    with quirky(tiny_chat_llama, "echo-shifted") as server:
        args = ["run", "distractors", "--model", f"openai:tiny,base_url={server.url},timeout=5",
                "--limit", "2", "--out", str(tmp_path / "out"),
                "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    (line,) = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert res.output.rstrip().endswith(line) and "Traceback" not in res.output
    assert "completions self-check" in line and "api=chat" in line
    assert not (tmp_path / "out").exists()


def test_unknown_quirks_are_refused():
    with pytest.raises(UsageError, match="unknown quirks"):
        Quirks(("echo-shifted", "typo"))
    assert set(QUIRKS) >= {"zero-unlimited", "echo-shifted", "top-logprobs-null",
                           "offset-minus-one", "other-tokenizer"}  # fmt: skip


# -- the checks' verdicts on replies written out ----------------------------------------


def _echo(tokens, values, offsets=None):
    if offsets is None:
        offsets = [len("".join(tokens[:i])) for i in range(len(tokens))]
    return SimpleNamespace(tokens=tokens, token_logprobs=values, text_offset=offsets)


TEXT = "The capital of France is Paris"
START = len("The capital of France is")


def test_an_honest_echo_gives_the_tokens_value():
    tokens = ["The", " capital", " of", " France", " is", " Paris"]
    values = [None, -9.0, -0.3, -1.1, -0.7, -0.8]
    assert echoed_value(_echo(tokens, values), TEXT, START, " Paris") == -0.8
    # a special token's text before the prompt, counted in the offsets; one generated after
    assert echoed_value(_echo(["<s>", *tokens, "."], [None, *values, -2.0]), TEXT, START,
                        " Paris") == -0.8  # fmt: skip
    # read back merged or split: not compared
    assert (
        echoed_value(_echo([*tokens[:4], " is Paris"], values[:5]), TEXT, START, " Paris") is None
    )
    assert echoed_value(_echo([*tokens[:5], " Par", "is"], [*values, -3.0]), TEXT, START,
                        " Paris") is None  # fmt: skip


@pytest.mark.parametrize(
    ("echo", "saw"),
    [
        (_echo([], []), "no log-probabilities of the echoed prompt"),
        (_echo(["The", " capital"], [None]), "2 tokens, 1 log-probabilities"),
        (_echo(["The capital of France is Rome"], [None]), "spell 'The capital of France is Rome'"),
        (_echo(["The", " capital of France is Paris"], [None, -1.0], [-1, -1]), r"\[-1, -1\]"),
        (
            _echo(["The capital of France is", " Paris", ".", "\n"], [None, -1.0, -2.0, -3.0]),
            "returned 2 tokens after the prompt",
        ),
        (_echo(["The capital of France is", " Paris"], [None, None]), "no log-probability"),
    ],
)
def test_an_echo_that_fails_says_what_it_saw(echo, saw):
    with pytest.raises(_Saw, match=saw):
        echoed_value(echo, TEXT, START, " Paris")


def test_max_tokens_one_must_give_one_token():
    one = SimpleNamespace(logprobs=_echo([" Paris"], [-0.8]), finish_reason="length")
    assert greedy_token(one) == (" Paris", -0.8)
    ended = SimpleNamespace(logprobs=_echo([], []), finish_reason="stop")
    assert greedy_token(ended) == ("", 0.0)
    ignored = SimpleNamespace(logprobs=_echo([" Paris", "."], [-0.8, -1.0]), finish_reason="length")
    with pytest.raises(_Saw, match="returned 2 tokens and 2 log-probabilities"):
        greedy_token(ignored)


def _token(text, logprob, top):
    return SimpleNamespace(token=text, logprob=logprob,
                           top_logprobs=None if top is None else
                           [SimpleNamespace(token=t, logprob=v) for t, v in top])  # fmt: skip


def test_the_chat_reply_must_be_its_own_top_entry():
    assert top_difference(_token(" B", -0.2, [(" B", -0.2), (" A", -1.9)])) == 0.0
    assert top_difference(_token(" B", -0.70, [(" A", -0.69), (" B", -0.70)])) == 0.0  # a tie
    with pytest.raises(_Saw, match="not the most likely entry"):  # the next position's list
        top_difference(_token(" B", -2.9, [(" the", -0.1), (" B", -2.9)]))
    with pytest.raises(_Saw, match=r"no top_logprobs \(null\)"):
        top_difference(_token(" B", -0.2, None))
    with pytest.raises(_Saw, match="its own top_logprobs entry -1.200"):
        top_difference(_token(" B", -0.2, [(" B", -1.2), (" A", -1.9)]))
