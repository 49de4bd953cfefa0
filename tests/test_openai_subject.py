"""Models behind OpenAI-compatible endpoints (the ``openai:`` backend), against faithprobe's
own test server serving a tiny random Llama: same answers as the local model, faults
survived, interrupted runs resumed from the cache, clear errors, and no API key on disk."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from faithprobe import runner as runner_module
from faithprobe.cli import app
from faithprobe.errors import ModelError, UsageError
from faithprobe.report import run_to_folder as run
from faithprobe.requests import CandidateScoreRequest, Generation, GenerationRequest
from faithprobe.runner import RunConfig
from faithprobe.serving import Faults, OpenAIServer
from faithprobe.subjects import load_subject
from faithprobe.subjects.cached_subject import CachedSubject
from faithprobe.subjects.endpoint.subject import EndpointConfig, OpenAISubject
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.urls import public_url, redact_command
from test_generation import PROMPT, Scripted, ids

KEY = "sk-faithprobe-DISTINCTIVE-7f3a9c1e"


def remote(server: OpenAIServer, **settings) -> OpenAISubject:
    """A client of ``server`` with short timeouts and backoffs (tests do not wait long)."""
    defaults = {"timeout": 5.0, "backoff": 0.01, "max_backoff": 0.05}
    return OpenAISubject(server.model_name, EndpointConfig(server.url, **{**defaults, **settings}))


def suite_run(tmp_path: Path, name: str, subject, limit: int = 6, **kwargs) -> Path:
    config = RunConfig(
        suite="distractors",
        limit=limit,
        out=tmp_path / name,
        cache_dir=tmp_path / f"cache-{name}",
        **kwargs,
    )
    return run(config, subjects=[subject])


def results(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / "results.parquet")


def subject_info(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text())["subjects"][0]


# -- (a) the same answers as the local model ---------------------------------------------

SCORE_REQUESTS = [
    CandidateScoreRequest("Alice lives in", ("Paris", "London Town", "Rome")),
    CandidateScoreRequest("Alice lives in the city of", ("Paris", "Rome"), suffix=" today."),
    CandidateScoreRequest("Who is there?\n", ("Bob", "nobody at all")),  # no separating space
]
GENERATION_REQUESTS = [
    GenerationRequest("Alice lives in", 8),
    GenerationRequest("Bob said that", 6, stop=("e", "\n")),
    GenerationRequest("Bob said that", 0),
    GenerationRequest("Where does Alice live?", 6, chat=True),
    GenerationRequest("Where does Alice live?", 6, stop=("a",), chat=True),
]


def test_scores_and_generations_equal_the_local_model(tiny_chat_llama, tiny_chat_server):
    subject = remote(tiny_chat_server)
    requests = SCORE_REQUESTS + GENERATION_REQUESTS
    before = sum(tiny_chat_server.hits.values())
    answered, expected = subject.answer(requests), tiny_chat_llama.answer(requests)
    for got, want in zip(answered, expected, strict=True):
        if isinstance(want, Generation):
            assert got == want
        else:
            assert got.n_tokens == want.n_tokens
            assert got.logprobs == pytest.approx(want.logprobs, abs=1e-4)
    calls = sum(len(r.candidates) for r in SCORE_REQUESTS) + 4  # max_new_tokens=0: no call
    calls += subject.describe()["self_check"]["completions"]["requests"]
    usage = subject.usage()
    assert usage["requests"] == usage["http_requests"] == calls
    assert sum(tiny_chat_server.hits.values()) - before == calls
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_token_logprobs_sum_to_the_candidate_score(tiny_chat_llama):
    context, candidate = (
        tiny_chat_llama.prompt_ids("Alice lives in"),
        tiny_chat_llama.tokenizer(" London Town").input_ids,
    )
    values = tiny_chat_llama.token_logprobs(context + candidate)
    assert values[0] is None and len(values) == len(context) + len(candidate)
    (score,) = tiny_chat_llama.answer([CandidateScoreRequest("Alice lives in", ("London Town",))])
    assert sum(values[len(context) :]) == pytest.approx(score.logprobs[0], abs=1e-4)


def test_stop_rule_is_the_local_one(tiny_tokenizer):
    """A reply opening with a newline is not cut before it says anything; it is cut at the
    next stop string and keeps its leading white space, as the local model does."""
    tok = tiny_tokenizer
    reply = ids(tok, "\nParis is nice\nLondon\nRome")
    seq = tok(PROMPT).input_ids + reply
    scripted = HFCausal(Scripted(seq, len(tok), tok.eos_token_id), tok, name="scripted")
    request = GenerationRequest(PROMPT, 30)
    with OpenAIServer(scripted) as s:
        (got,) = remote(s).answer([request])
    assert got == scripted.answer([request])[0]
    assert got.text == "\nParis is nice" and got.n_tokens < len(reply)


def test_echoed_offsets_that_count_a_special_token_are_shifted(tiny_chat_llama, tiny_chat_server):
    """Some servers count ``<s>`` in ``text_offset``; the echoed tokens show it."""
    subject = remote(tiny_chat_server)
    prompt = "Alice lives in Paris"
    logprobs = SimpleNamespace(
        tokens=["<s>", "Alice", " lives", " in", " Paris"],
        token_logprobs=[None, -1.0, -2.0, -3.0, -4.0],
        text_offset=[0, 3, 8, 14, 17],
    )
    assert subject._span_logprob(logprobs, len("Alice lives in"), prompt, "Paris") == (-4.0, 1)
    plain = SimpleNamespace(
        tokens=logprobs.tokens[1:],
        token_logprobs=[None, -2.0, -3.0, -4.0],
        text_offset=[0, 5, 11, 14],
    )
    assert subject._span_logprob(plain, len("Alice lives"), prompt, "in Paris") == (-7.0, 2)


def test_echoed_offsets_that_locate_nothing_are_refused(tiny_chat_server):
    """SGLang echoes the prompt's log-probabilities with every ``text_offset`` -1: the
    candidate's tokens cannot be found, so the reply is refused, not guessed from."""
    subject = remote(tiny_chat_server)
    prompt = "Alice lives in Paris"
    sglang = SimpleNamespace(
        tokens=["Alice", " lives", " in", " Paris"],
        token_logprobs=[None, -2.0, -3.0, -4.0],
        text_offset=[-1, -1, -1, -1],
    )
    with pytest.raises(ModelError, match=r"no usable text_offset .*SGLang gives -1.*api=chat"):
        subject._span_logprob(sglang, len("Alice lives in"), prompt, "Paris")
    shuffled = SimpleNamespace(**{**vars(sglang), "text_offset": [0, 5, 3, 14]})
    with pytest.raises(ModelError, match="no usable text_offset"):
        subject._span_logprob(shuffled, len("Alice lives in"), prompt, "Paris")


# -- (b) faults: retried, and the results do not change ----------------------------------


def test_a_suite_survives_faults_with_identical_results(tiny_chat_server, tmp_path):
    clean = suite_run(tmp_path, "clean", remote(tiny_chat_server))
    faults = Faults(first=("429", "500", "drop", "slow", "429"), rate=0.1, seed=3, slow_seconds=1.5)
    tiny_chat_server.inject(faults)
    try:
        faulty = suite_run(tmp_path, "faulty", remote(tiny_chat_server, timeout=1.0))
    finally:
        tiny_chat_server.inject(Faults())
    pd.testing.assert_frame_equal(results(faulty), results(clean))
    usage, clean_usage = subject_info(faulty)["usage"], subject_info(clean)["usage"]
    assert usage["rate_limited"] >= 2 and usage["server_errors"] >= 1
    assert usage["timeouts"] >= 1 and usage["connection_errors"] >= 1
    assert usage["retries"] == usage["http_requests"] - usage["requests"] > 5
    assert usage["requests"] == clean_usage["requests"]
    assert usage["prompt_tokens"] == clean_usage["prompt_tokens"]


def test_backoff_is_exponential_capped_jittered_and_honours_retry_after(tiny_chat_server):
    subject = remote(tiny_chat_server, backoff=0.5, max_backoff=3.0)
    for attempt, full in enumerate((0.5, 1.0, 2.0, 3.0, 3.0)):
        waits = [subject.delay(attempt) for _ in range(50)]
        assert all(full / 2 <= w <= full for w in waits)
        assert len(set(waits)) > 1  # jittered
    assert subject.delay(0, retry_after=2.5) == 2.5
    assert subject.delay(0, retry_after=100) == 3.0  # capped too


def test_retries_end_in_one_clear_error_and_client_errors_are_not_retried(
    tiny_chat_llama, tiny_chat_server
):
    request = [CandidateScoreRequest("Alice lives in", ("Paris",))]
    tiny_chat_server.inject(Faults(first=("500",) * 5))
    try:
        subject = remote(tiny_chat_server, max_retries=2)
        with pytest.raises(ModelError, match=r"failed after 3 attempts: HTTP 500"):
            subject.answer(request)
        assert subject.usage()["http_requests"] == 3
    finally:
        tiny_chat_server.inject(Faults())
    wrong = OpenAISubject("no-such-model", EndpointConfig(tiny_chat_server.url, backoff=0.01))
    with pytest.raises(ModelError, match="HTTP 404.*check the model name"):
        wrong.answer(request)
    assert wrong.usage()["http_requests"] == 1


# -- (c) an interrupted run resumes from the cache ----------------------------------------


class Interrupt(Exception):
    pass


def test_an_interrupted_run_resumes_without_repeating_requests(
    tiny_chat_server, tmp_path, monkeypatch
):
    # small cache chunks, so that the interrupted run has cached some answers but not all
    monkeypatch.setattr(
        runner_module, "CachedSubject", functools.partial(CachedSubject, chunk_size=8)
    )
    straight = suite_run(tmp_path, "straight", remote(tiny_chat_server))
    full = subject_info(straight)["usage"]["http_requests"]
    n_requests = subject_info(straight)["computed_requests"]
    assert n_requests > 8

    def stop_after_first_chunk(description, total):
        def advance(k):
            if k:
                raise Interrupt

        return advance

    config = RunConfig(
        suite="distractors", limit=6, out=tmp_path / "resumed", cache_dir=tmp_path / "cache"
    )
    first = remote(tiny_chat_server)
    with pytest.raises(Interrupt):
        run(config, subjects=[first], progress=stop_after_first_chunk)
    assert not (tmp_path / "resumed").exists()
    interrupted = first.usage()["http_requests"]
    assert 0 < interrupted < full

    hits = sum(tiny_chat_server.hits.values())
    resumed = run(config, subjects=[remote(tiny_chat_server)])
    info = subject_info(resumed)
    assert info["cached_requests"] == 8 and info["computed_requests"] == n_requests - 8
    assert info["usage"]["http_requests"] == full - interrupted  # nothing asked twice
    assert sum(tiny_chat_server.hits.values()) - hits == full - interrupted
    pd.testing.assert_frame_equal(results(resumed), results(straight))

    again = run(config, subjects=[remote(tiny_chat_server)])
    assert subject_info(again)["usage"]["http_requests"] == 0
    assert sum(tiny_chat_server.hits.values()) - hits == full - interrupted


# -- (d) a chat-only endpoint -------------------------------------------------------------


def test_chat_only_endpoint_asked_for_scores_is_one_clear_error(tiny_chat_llama, tmp_path):
    with OpenAIServer(tiny_chat_llama, chat_only=True) as s:
        chat = remote(s, api="chat")
        with pytest.raises(
            UsageError, match=r"\(openai-chat\) cannot answer candidate-scores"
        ) as err:
            suite_run(tmp_path, "chat", chat, options={"answer": "scores"})
        assert "need" in str(err.value) and "completions" in str(err.value)
        with pytest.raises(UsageError, match="chat generation requests only"):
            chat.answer([GenerationRequest("Alice lives in", 3)])
        assert sum(s.hits.values()) == 0  # refused before any request
        (reply,) = chat.answer([GenerationRequest("Where does Alice live?", 4, chat=True)])
        assert (
            reply
            == tiny_chat_llama.answer([GenerationRequest("Where does Alice live?", 4, chat=True)])[
                0
            ]
        )
        # forgetting --api chat: the 404 says what to do
        with pytest.raises(ModelError, match="404.*--api chat"):
            remote(s).answer(SCORE_REQUESTS[:1])


# -- (e) the API key is used but never written --------------------------------------------


def test_the_api_key_is_never_written(tiny_chat_llama, tmp_path, monkeypatch):
    monkeypatch.setenv("FAITHPROBE_TEST_KEY", KEY)
    with OpenAIServer(tiny_chat_llama, api_key=KEY) as s:
        subject = remote(s, api_key_env="FAITHPROBE_TEST_KEY")
        folder = suite_run(tmp_path, "keyed", subject)  # the server refuses other keys
        monkeypatch.setenv("FAITHPROBE_TEST_KEY", KEY[::-1])
        with pytest.raises(ModelError, match=r"HTTP 401.*\$FAITHPROBE_TEST_KEY") as err:
            remote(s, api_key_env="FAITHPROBE_TEST_KEY").answer(SCORE_REQUESTS[:1])
    assert KEY[::-1] not in str(err.value)
    assert subject_info(folder)["usage"]["requests"] > 0
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "answers.sqlite" for p in files) and any(
        p.name == "run.json" for p in files
    )
    for path in files:
        data = path.read_bytes()
        for form in (KEY, KEY[3:], KEY.encode("utf-16-le").decode("latin-1")):
            assert form.encode("latin-1") not in data, path
    for text in (subject.fingerprint, json.dumps(subject.describe()), json.dumps(subject.usage())):
        assert KEY not in text
    assert subject._redact(f"bad key {KEY}") == "bad key <redacted>"


def test_public_url_drops_credentials():
    assert public_url("https://user:secret@host:8000/v1/?key=x#y") == "https://host:8000/v1"


# -- wiring: --model openai:..., the CLI ---------------------------------------------------


def test_load_subject_and_the_cli_run_against_the_server(tiny_chat_server, tmp_path, monkeypatch):
    monkeypatch.setenv("FAITHPROBE_TEST_KEY", KEY)
    subject = load_subject(f"openai:tiny,base_url={tiny_chat_server.url},api=chat")
    assert isinstance(subject, OpenAISubject) and subject.accepts == {"generation", "letter-choice"}
    with pytest.raises(ModelError, match="openai:MODEL"):
        load_subject("openai:")
    monkeypatch.setenv("OPENAI_BASE_URL", tiny_chat_server.url)
    assert load_subject("openai:tiny").base_url == tiny_chat_server.url
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="set the environment variable OPENAI_API_KEY"):
        load_subject("openai:gpt-4o-mini")
    out = tmp_path / "cli"
    args = ["run", "distractors", "--model", "openai:tiny", "--base-url", tiny_chat_server.url]
    args += ["--limit", "3", "--out", str(out), "--cache-dir", str(tmp_path / "c")]
    args += ["--api-key-env", "FAITHPROBE_TEST_KEY", "--concurrency", "2", "--timeout", "5"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    info = subject_info(out)
    assert info["endpoint"] == tiny_chat_server.url and info["api"] == "completions"
    assert info["usage"]["http_requests"] > 0
    assert KEY not in (out / "run.json").read_text()
    scores = ["-o", "answer=scores", "--api", "chat"]
    res = CliRunner().invoke(app, [*args[:4], "--base-url", tiny_chat_server.url, *scores])
    assert res.exit_code == 2 and "cannot answer candidate-scores" in " ".join(res.output.split())
    res = CliRunner().invoke(app, ["run", "distractors", "--base-url", tiny_chat_server.url])
    assert res.exit_code == 2 and "--base-url is for openai:MODEL" in " ".join(res.output.split())


def test_faithprobe_serve_answers_the_openai_client(tiny_chat_llama, tmp_path):
    folder = tmp_path / "model"
    tiny_chat_llama.model.save_pretrained(folder)
    tiny_chat_llama.tokenizer.save_pretrained(folder)
    command = [sys.executable, "-c", "from faithprobe.cli import app; app()"]
    command += ["serve", "--model", str(folder)]
    command += ["--port", "0", "--name", "tiny"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = ""
        while "serving" not in line:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the server did not start"
        url = line.split(" at ")[1].split()[0]
        (got,) = remote(SimpleNamespace(url=url, model_name="tiny")).answer(SCORE_REQUESTS[:1])
        (want,) = tiny_chat_llama.answer(SCORE_REQUESTS[:1])
        assert got.logprobs == pytest.approx(want.logprobs, abs=1e-4)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_chat_only_endpoint_answers_multiple_choice_by_letter(tiny_chat_llama, tmp_path):
    """confidence-shift against a chat-only endpoint: the choices are asked by letter, and
    the results equal the local model's with -o answer=letter."""
    data = tmp_path / "mc.jsonl"
    rows = [{"prompt": f"Alice lives in town {i}. Where does Alice live?",
             "choices": [f"town {i}", "Paris", "Rome"], "label": 0} for i in range(4)]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def letters(name, subject, options):
        config = RunConfig(suite="confidence-shift", data=data, out=tmp_path / name,
                           cache_dir=tmp_path / f"cache-{name}",
                           options={"trials": "1", **options})  # fmt: skip
        return results(run(config, subjects=[subject]))

    with OpenAIServer(tiny_chat_llama, chat_only=True) as s:
        through_chat = letters("chat", remote(s, api="chat"), {})
    direct = letters("local", tiny_chat_llama, {"answer": "letter"})
    assert set(through_chat["answer_mode"]) == {"letter-probabilities"}
    assert set(direct["answer_mode"]) == {"letter-replies"}
    columns = ["pair_id", "reply", "prediction", "abstained", "original_abstained"]
    pd.testing.assert_frame_equal(through_chat[columns], direct[columns])


def test_credentials_in_the_base_url_never_reach_disk(tiny_chat_server, tmp_path):
    host = tiny_chat_server.url.split("://", 1)[1]
    secret_url = f"http://alice:s3cret-pw@{host}"
    out = tmp_path / "cli"
    args = ["run", "distractors", "--model", "openai:tiny", "--base-url", secret_url,
            "--limit", "2", "--out", str(out), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    run = json.loads((out / "run.json").read_text())
    assert f"--base-url http://REDACTED@{host}" in run["command"]
    for path in out.rglob("*"):
        if path.is_file():
            assert b"s3cret-pw" not in path.read_bytes() and b"alice" not in path.read_bytes()


def test_redacted_commands_keep_their_shape():
    command = redact_command(
        ["faithprobe", "run", "x", "--base-url=https://u:p@h.example/v1?api_key=sk-1&v=2#frag",
         "--base-url", "http://h:8000/v1", "--data", "a:b:c.jsonl"]
    )  # fmt: skip
    assert command == (
        "faithprobe run x --base-url=https://REDACTED@h.example/v1?api_key=REDACTED&v=REDACTED"
        "#REDACTED --base-url http://h:8000/v1 --data a:b:c.jsonl"
    )
    assert "sk-1" not in command and ":p@" not in command


# -- letter choices: the letters' log-probabilities from top_logprobs ----------------------


def test_chat_top_logprobs_are_the_local_models_most_likely_tokens(
    tiny_chat_llama, tiny_chat_server
):
    import openai
    import torch

    client = openai.OpenAI(api_key="none", base_url=tiny_chat_server.url, max_retries=0)
    messages = [{"role": "user", "content": "Where does Alice live?"}]
    response = client.chat.completions.create(
        model=tiny_chat_server.model_name, messages=messages, max_tokens=4, temperature=0,
        logprobs=True, top_logprobs=5,
    )  # fmt: skip
    content = response.choices[0].logprobs.content
    ids = tiny_chat_llama.chat_ids(messages)
    tokens, _ = tiny_chat_llama.greedy(ids, 4)
    assert len(content) == len(tokens) > 0
    with torch.no_grad():
        logits = tiny_chat_llama.model(torch.tensor([ids + tokens])).logits[0]
    for j, entry in enumerate(content):
        want = torch.log_softmax(logits[len(ids) + j - 1].float(), -1).topk(5)
        got = entry.top_logprobs
        assert [a.token for a in got] == [tiny_chat_llama.decode([i]) for i in want.indices]
        assert [a.logprob for a in got] == pytest.approx(want.values.tolist(), abs=1e-5)
        assert got[0].logprob == pytest.approx(entry.logprob, abs=1e-5)  # greedy: the top one
    with pytest.raises(openai.BadRequestError, match="top_logprobs must be at most 20"):
        client.chat.completions.create(model=tiny_chat_server.model_name, messages=messages,
                                       logprobs=True, top_logprobs=21, temperature=0)  # fmt: skip
    with pytest.raises(openai.BadRequestError, match="top_logprobs needs logprobs"):
        client.chat.completions.create(model=tiny_chat_server.model_name, messages=messages,
                                       top_logprobs=3, temperature=0)  # fmt: skip


def _token(text, logprob=-1.0, top=()):
    alternatives = [SimpleNamespace(token=t, logprob=v) for t, v in top]
    return SimpleNamespace(token=text, logprob=logprob, top_logprobs=alternatives)


def test_letter_logprobs_are_read_at_the_first_letter_position():
    from faithprobe.subjects.endpoint.subject import letter_logprobs

    tokens = [
        _token(" ", top=[(" ", -0.1), ("B", -3.0)]),  # white space: skipped
        _token("(", top=[("(", -0.1)]),  # an opening bracket: skipped
        _token("B", top=[("B", -0.5), (" B", -1.5), ("A", -2.0), ("The", -0.9), ("D", -4.0)]),
        _token(")", top=[(")", -0.1)]),
    ]
    a, b, c = letter_logprobs(tokens, "ABC")
    assert a == pytest.approx(-2.0) and c is None  # C is not among the alternatives
    assert b == pytest.approx(np.logaddexp(-0.5, -1.5))  # "B" and " B" are one letter
    assert letter_logprobs([_token("B")], "ABC") is None  # no alternatives given
    assert letter_logprobs([], "ABC") is None


def test_a_chat_endpoint_answers_letter_choices_with_the_letters_log_probabilities(
    tiny_chat_llama, tiny_chat_server
):
    from faithprobe.requests import LetterChoiceRequest
    from faithprobe.subjects.endpoint.subject import letter_logprobs

    prompt = "Question: Where?\nA. Paris\nB. Rome\nC. Oslo\nAnswer with the letter."
    request = LetterChoiceRequest(prompt, "ABC", 6, ("\n",), top_logprobs=20)
    (got,) = remote(tiny_chat_server, api="chat").answer([request])
    (generated,) = tiny_chat_llama.answer([GenerationRequest(prompt, 6, ("\n",), chat=True)])
    assert (got.text, got.n_tokens) == (generated.text, generated.n_tokens)
    import openai

    client = openai.OpenAI(api_key="none", base_url=tiny_chat_server.url, max_retries=0)
    response = client.chat.completions.create(
        model=tiny_chat_server.model_name, messages=[{"role": "user", "content": prompt}],
        max_tokens=6, temperature=0, logprobs=True, top_logprobs=20,
    )  # fmt: skip
    assert got.logprobs == letter_logprobs(response.choices[0].logprobs.content, "ABC")
