"""``faithprobe serve``: a local causal LM behind the OpenAI-compatible test server.

The options are declared as named types first, so the command reads as what it does: check
every option and the address, load the model, serve until Ctrl-C. The server (and torch
with it) is imported when the command runs, not when the CLI starts."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from faithprobe.console import log, user_errors
from faithprobe.errors import UsageError, excerpt
from faithprobe.numbers import DAY, HOUR, number_option
from faithprobe.serving.api_key import key_problem

Model = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="a causal LM: 'embedded' (or embedded:NAME), gguf:FILE.gguf, a local folder "
        "or a Hugging Face id",
    ),
]
Host = Annotated[str, typer.Option(help="address to listen on")]
Port = Annotated[int, typer.Option(min=0, max=65535, help="port (0: a free one)")]
Name = Annotated[
    str | None, typer.Option(help="the model name clients ask for (default: --model as given)")
]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option(help="require the key held by this environment variable (default: none)"),
]
ChatOnly = Annotated[
    bool, typer.Option("--chat-only", help="serve chat completions only (404 on completions)")
]
FaultRate = Annotated[
    float, number_option(0, 1, help="fraction of requests that get an injected fault (seeded)")
]
FailFirst = Annotated[
    int,
    number_option(
        0, 1_000_000, int, help="the first N requests get faults, cycling through the kinds"
    ),
]
FaultKinds = Annotated[
    str, typer.Option(help="comma-separated faults to inject: 429, 500, drop, slow")
]
SlowSeconds = Annotated[
    float, number_option(0, DAY, help="how long a 'slow' fault waits before answering")
]
FaultSeed = Annotated[int, typer.Option(help="seed of the fault draws")]
MaxTokens = Annotated[
    int, typer.Option(min=0, help="most new tokens per prompt (the context caps them too)")
]
TimeBudget = Annotated[
    float,
    number_option(
        0.1,
        DAY,
        help="seconds a request may take from its first byte, reading, scoring and "
        "generating included: generation stops then, and a prompt still being read or "
        "scored, or still waiting for the model, gets 503",
    ),
]
MaxBodyBytes = Annotated[int, typer.Option(min=0, help="largest request body (413 above it)")]
ReadTimeout = Annotated[
    float,
    number_option(
        0.1,
        HOUR,
        help="seconds each wait for a client's bytes may last (an idle connection is closed then)",
    ),
]
ReadDeadline = Annotated[
    float,
    number_option(
        0.1,
        DAY,
        help="seconds a request's line, headers and body may take to arrive in all, from "
        "its first byte (a client trickling bytes is cut off: 408)",
    ),
]
MaxConnections = Annotated[
    int,
    number_option(
        1,
        4096,
        int,
        help="connections served at once, a thread each, taken with a connection's first "
        "request that has the key; one more is answered 503 and closed. Connections "
        "without one yet wait apart (4 per slot, at least 64; the longest waiting is "
        "closed for a new one), so idle or slow clients cannot hold the slots",
    ),
]


def serve(
    model: Model = "embedded",
    host: Host = "127.0.0.1",
    port: Port = 8000,
    name: Name = None,
    api_key_env: ApiKeyEnv = None,
    chat_only: ChatOnly = False,
    fault_rate: FaultRate = 0.0,
    fail_first: FailFirst = 0,
    fault_kinds: FaultKinds = "429,500,drop,slow",
    slow_seconds: SlowSeconds = 5.0,
    fault_seed: FaultSeed = 0,
    max_tokens: MaxTokens = 512,
    time_budget: TimeBudget = 60.0,
    max_body_bytes: MaxBodyBytes = 1 << 20,
    read_timeout: ReadTimeout = 10.0,
    read_deadline: ReadDeadline = 30.0,
    max_connections: MaxConnections = 32,
) -> None:
    """Serve a local causal LM through the OpenAI API (/v1/completions with echo, logprobs
    and token-id prompts, /v1/chat/completions, /v1/models, streaming), greedily, for the
    openai: backend and other OpenAI clients (lm-eval's local-completions and
    local-chat-completions)."""
    from faithprobe.serving.connections import check_address
    from faithprobe.serving.limits import Limits
    from faithprobe.serving.openai_server import Faults, OpenAIServer

    with user_errors("the server stopped"):
        kinds = tuple(k.strip() for k in fault_kinds.split(",") if k.strip())
        faults = Faults(
            first=tuple(kinds[i % len(kinds)] for i in range(fail_first)) if kinds else (),
            rate=fault_rate,
            kinds=kinds,
            slow_seconds=slow_seconds,
            seed=fault_seed,
        )
        limits = Limits(
            max_tokens=max_tokens,
            seconds=time_budget,
            body_bytes=max_body_bytes,
            read_seconds=read_timeout,
            request_read_seconds=read_deadline,
            connections=max_connections,
        )
        key = _api_key(api_key_env)
        spec = _local_model(model)
        check_address(host, port)  # everything checked before the model is loaded
        subject = _causal_lm(spec, model)
        try:
            server = OpenAIServer(
                subject,
                host=host,
                port=port,
                model_name=name or model,
                faults=faults,
                api_key=key,
                chat_only=chat_only,
                limits=limits,
            )
        except OSError as err:  # taken since it was checked
            raise UsageError(f"--port {port}: cannot listen there: {err.strerror or err}") from None
        served = name or model
        log(f"serving {served} at {server.url} (Ctrl-C stops)")
        log(f"try: faithprobe run distractors --model openai:{served} --base-url {server.url}")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            log("stopped")


def _api_key(variable: str | None) -> str | None:
    """The key clients must send: the value of ``variable``, or none when it is not given."""
    if variable is None:
        return None
    if not variable.strip():  # not "no key": serving open by mistake is the risk
        raise UsageError(
            "--api-key-env '': name the environment variable holding the key (leave "
            "the option out to serve without a key)"
        )
    key = os.environ.get(variable)
    if key is None:
        raise UsageError(f"--api-key-env {excerpt(variable)}: that variable is not set")
    if problem := key_problem(key):
        raise UsageError(
            f"--api-key-env {excerpt(variable)}: the key in that variable {problem}; set it to "
            "the key clients send (Authorization: Bearer KEY)"
        )
    return key


def _local_model(model: str):
    """The spec of ``--model``, read before anything loads: an endpoint or a reference (no
    weights here) is refused."""
    from faithprobe.subjects import BACKENDS, parse_model
    from faithprobe.subjects.backends import DEFAULT_HUB, backend_name

    backend = BACKENDS.get(backend_name(model) or DEFAULT_HUB)
    if not (backend.hub or backend.identity):
        raise UsageError(f"--model {excerpt(model)}: serve needs a local causal LM")
    return parse_model(model)


def _causal_lm(spec, model: str):
    """The model ``spec`` names, loaded; it must be a causal LM."""
    from faithprobe.subjects import load_subject
    from faithprobe.subjects.hf.causal import HFCausal

    subject = load_subject(spec)
    if not isinstance(subject, HFCausal):
        raise UsageError(f"{model}: serve needs a causal LM, not a {subject.kind} model")
    return subject
