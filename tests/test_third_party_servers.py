"""faithprobe as the client of servers no one here wrote, where they install: llama-cpp-python's
OpenAI-compatible server (``pip install 'llama-cpp-python[server]'``, on the embedded
SmolLM2 GGUF) and LiteLLM's proxy (``litellm[proxy]``, its ``litellm`` command found on the
PATH or named by ``$FAITHPROBE_LITELLM``) in front of faithprobe's test server.

Each test skips where its server is absent (``make test`` installs neither: llama-cpp-python
builds llama.cpp from source); ``make third-party-servers`` installs both and runs these
tests. Every server listens on a port chosen at run time and is stopped by the test.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faithprobe.requests import LetterChoiceRequest
from faithprobe.serving import OpenAIServer
from faithprobe.serving.quirks import Quirks
from faithprobe.subjects.endpoint.self_check import (
    CHAT,
    COMPLETIONS,
    TOLERANCE,
    SelfCheckFailed,
)
from faithprobe.subjects.endpoint.subject import EndpointConfig, OpenAISubject
from test_openai_subject import SCORE_REQUESTS

pytestmark = pytest.mark.third_party
LITELLM_ENV = "FAITHPROBE_LITELLM"
STARTED = re.compile(r"Uvicorn running on (http://[\d.]+:\d+)")
LETTERS = LetterChoiceRequest(
    "Which city is the capital of France?\nA. Rome\nB. Paris\nC. Berlin\nAnswer:", "ABC"
)


def _client(url: str, model: str, **settings) -> OpenAISubject:
    config = EndpointConfig(url, timeout=300.0, max_retries=1, backoff=0.1, **settings)
    return OpenAISubject(model, config)


def _served(command: list[str], log: Path, seconds: float = 600.0, **popen):
    """Start ``command`` (a server that logs uvicorn's start line) and return (process, its
    base URL); the test stops it."""
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, **popen)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := STARTED.search(log.read_text(errors="replace")):
            return proc, f"{found.group(1)}/v1"
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    proc.kill()
    proc.wait()
    pytest.fail(f"{command[0]} did not start:\n{log.read_text(errors='replace')[-2000:]}")


def _stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def llama_cpp_server(tmp_path_factory):
    """llama-cpp-python's server on the embedded SmolLM2 GGUF, as its users start it."""
    needed = ("llama_cpp", "uvicorn", "sse_starlette", "starlette_context")  # [server]'s
    if any(importlib.util.find_spec(package) is None for package in needed):
        pytest.skip("llama-cpp-python's server is not installed (make third-party-servers)")
    from faithprobe.subjects.gguf.embedded import embedded_model, gguf_path

    model = embedded_model()
    if not model.installed:
        pytest.skip("the embedded model's package is not installed")
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path(model)),
               "--model_alias", "smollm2", "--logits_all", "true", "--n_ctx", "2048",
               "--host", "127.0.0.1", "--port", "0"]  # fmt: skip
    proc, url = _served(command, tmp_path_factory.mktemp("llama") / "server.log")
    yield url
    _stop(proc)


def test_llama_cpp_python_completions_are_refused_by_the_self_check(llama_cpp_server):
    """Its echo reads each token's value from the logits of the next position (SmolLM2's
    tokenizer adds no start token): the first probe shows it, and nothing is scored."""
    client = _client(llama_cpp_server, "smollm2")
    with pytest.raises(SelfCheckFailed) as refused:
        client.answer(SCORE_REQUESTS[:1])
    line = str(refused.value)
    assert "completions self-check" in line and f"more than {TOLERANCE} apart" in line
    assert "api=chat" in line
    assert client.usage()["requests"] == 2  # the first probe: generate, then echo


def test_llama_cpp_python_answers_letters_in_chat(llama_cpp_server):
    client = _client(llama_cpp_server, "smollm2", api="chat")
    (answer,) = client.answer([LETTERS])
    check = client.describe()["self_check"][CHAT]
    assert check["passed"] and check["compared"] == 3
    assert answer.logprobs is not None and any(v is not None for v in answer.logprobs)


@pytest.fixture(scope="module")
def litellm_command():
    found = os.environ.get(LITELLM_ENV) or shutil.which("litellm")
    if not found:
        pytest.skip(
            f"LiteLLM's proxy is not installed (make third-party-servers, or ${LITELLM_ENV})"
        )
    return found


def _proxy(litellm: str, backend: OpenAIServer, folder: Path):
    """LiteLLM's proxy serving ``backend``'s model under the same name, through its
    OpenAI-compatible provider (``openai/``), as a proxy in front of vLLM is configured."""
    config = folder / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: {backend.model_name}\n"
        "    litellm_params:\n"
        f"      model: openai/{backend.model_name}\n"
        f"      api_base: {backend.url}\n"
        "      api_key: none\n"
    )
    command = [litellm, "--config", str(config), "--host", "127.0.0.1", "--port", "0"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # no network look-up
    return _served(command, folder / "litellm.log", cwd=folder, env=env)


def test_litellm_proxy_in_front_of_faithprobe_serve(tiny_chat_llama, litellm_command, tmp_path):
    """Through the proxy the scores are the local model's, both self-checks pass; the same
    proxy in front of a server whose echo is shifted is refused."""
    with OpenAIServer(tiny_chat_llama) as backend:
        proc, url = _proxy(litellm_command, backend, tmp_path)
        try:
            client = _client(url, backend.model_name)
            got = client.answer([*SCORE_REQUESTS, LETTERS])
        finally:
            _stop(proc)
    for g, w in zip(got, tiny_chat_llama.answer(SCORE_REQUESTS), strict=False):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-4)
    checks = client.describe()["self_check"]
    assert checks[COMPLETIONS]["passed"] and checks[CHAT]["passed"]

    with OpenAIServer(tiny_chat_llama, quirks=Quirks(("echo-shifted",))) as backend:
        proc, url = _proxy(litellm_command, backend, tmp_path)
        try:
            with pytest.raises(SelfCheckFailed, match="completions self-check"):
                _client(url, backend.model_name).answer(SCORE_REQUESTS[:1])
        finally:
            _stop(proc)
