"""Numbers checked once (:mod:`faithprobe.numbers`): NaN, the infinities and values out of
the declared range are refused at parse, in one line giving the range, in typer options
and in backend settings alike; the declarations carry the range, so ``--help`` and
``faithprobe list`` show it. And a setting given under its two names with two values is
refused rather than one silently winning."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe.cli import _model_specs, app
from faithprobe.errors import ModelError, UsageError
from faithprobe.options import bounds, describe, option, parse
from faithprobe.subjects.endpoint.settings import EndpointConfig

runner = CliRunner()
ENDPOINT = ["run", "distractors", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1"]
KEYED = {"OPENAI_API_KEY": "sk-test"}


@dataclass(frozen=True)
class Ranged:
    share: float = option(0.5, "a share", range=(0, 1))
    free: float = option(1.0, "any number")
    counts: tuple[int, ...] = option((1,), "counts", range=(1, 10))


@pytest.mark.parametrize(
    ("key", "raw", "words"),
    [
        ("share", "nan", "from 0 to 1"),
        ("share", "-inf", "from 0 to 1"),
        ("share", "1.5", "from 0 to 1"),
        ("free", "inf", "any finite number"),
        ("free", "1e999", "any finite number"),
        ("counts", "2,11", "from 1 to 10"),
    ],
)
def test_a_declared_option_refuses_what_is_not_in_its_range(key, raw, words):
    with pytest.raises(UsageError, match=f"option {key}=.*: expected a number {words}"):
        parse(Ranged, {key: raw}, "x")


def test_the_range_is_listed_and_the_bounds_are_taken():
    assert parse(Ranged, {"share": "1", "counts": "1,10"}, "x") == Ranged(1.0, 1.0, (1, 10))
    listed = {name: text for name, _, text in describe(Ranged)}
    assert listed["share"].endswith("; from 0 to 1") and listed["counts"].endswith("; from 1 to 10")
    assert bounds(Ranged, "share") == (0, 1) and bounds(Ranged, "free") == (None, None)


def test_a_library_caller_meets_the_same_check():
    with pytest.raises(UsageError, match="option backoff=nan: expected a number from 0 to 3600"):
        EndpointConfig(backoff=float("nan"))


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("timeout=nan", "option timeout=nan: expected a number from 0.001 to 86400"),
        ("timeout=inf", "option timeout=inf: expected a number from 0.001 to 86400"),
        ("timeout=0", "from 0.001 to 86400"),
        ("backoff=nan", "option backoff=nan: expected a number from 0 to 3600"),
        ("max_backoff=-1", "option max_backoff=-1"),
        ("concurrency=100000000", "option concurrency=100000000: expected a number from 1 to"),
        ("max_retries=-1", "option max_retries=-1: expected a number from 0 to 100"),
    ],
)
def test_an_endpoint_setting_out_of_range_is_refused_at_parse(
    tmp_path, monkeypatch, setting, words
):
    monkeypatch.chdir(tmp_path)
    refused([*ENDPOINT, "--model-option", setting], watch=[tmp_path], expect=[words], env=KEYED)


@pytest.mark.parametrize(
    ("args", "option_name", "words"),
    [
        (["data", "fetch", "squad", "--timeout", "inf"], "--timeout", "from 0.01 to 3600"),
        (["data", "fetch", "squad", "--timeout", "nan"], "--timeout", "from 0.01 to 3600"),
        (["serve", "--read-timeout", "inf"], "--read-timeout", "from 0.1 to 3600"),
        (["serve", "--time-budget", "nan"], "--time-budget", "from 0.1 to 86400"),
        (["serve", "--fault-rate", "-0.1"], "--fault-rate", "from 0 to 1"),
        (["serve", "--max-connections", "100000"], "--max-connections", "from 1 to 4096"),
        (["serve", "--fail-first", "1e12"], "--fail-first", "expected an integer"),
        ([*ENDPOINT, "--timeout", "inf"], "--timeout", "from 0.001 to 86400"),
        ([*ENDPOINT, "--concurrency", "0"], "--concurrency", "from 1 to 1024"),
        (
            ["run", "distractors", "--executor", "ray", "--gpus-per-worker", "inf"],
            "--gpus-per-worker",
            "from 0 to 1024",
        ),
    ],
)
def test_a_number_option_out_of_range_is_refused_at_parse(
    tmp_path, monkeypatch, args, option_name, words
):
    monkeypatch.chdir(tmp_path)
    refused(args, watch=[tmp_path], expect=[f"'{option_name}'", words])


def test_the_ranges_show_in_help_and_in_list():
    shown = runner.invoke(app, ["data", "fetch", "--help"], terminal_width=200).output
    assert "0.01<=x<=3600" in shown
    listed = runner.invoke(app, ["list"], terminal_width=300).output
    assert "from 1 to 1024" in listed and "from 0.001 to 86400" in listed


def test_a_named_key_variable_that_is_not_set_is_refused(monkeypatch):
    monkeypatch.delenv("NO_SUCH_VAR_46", raising=False)
    with pytest.raises(ModelError, match="api_key_env 'NO_SUCH_VAR_46' names a variable"):
        _model_specs(["openai:m"], ["api_key_env=NO_SUCH_VAR_46", "base_url=http://h:1/v1"])
    monkeypatch.setenv("NO_SUCH_VAR_46", "sk-x")
    spec = _model_specs(["openai:m"], ["api_key_env=NO_SUCH_VAR_46", "base_url=http://h:1/v1"])
    assert spec[0].settings.api_key("m") == "sk-x"


def test_a_setting_under_two_names_with_two_values_is_refused(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with pytest.raises(UsageError, match="--model-option base_url=.* and --base-url .* disagree"):
        _model_specs(["openai:m"], ["base_url=http://a:1/v1"], base_url="http://b:1/v1")
    with pytest.raises(UsageError, match="REDACTED"):
        _model_specs(["openai:m"], ["base_url=http://u:secret@a:1/v1"], base_url="http://b:1/v1")
    same = _model_specs(["openai:m"], ["base_url=http://a:1/v1"], base_url="http://a:1/v1")
    assert same[0].settings.base_url == "http://a:1/v1"


@pytest.mark.parametrize("field", ["seconds", "read_seconds", "request_read_seconds"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0])
def test_the_server_limits_refuse_a_time_that_is_not_finite_and_positive(field, value):
    from faithprobe.serving import Limits

    with pytest.raises(UsageError, match="finite and > 0 s"):
        Limits(**{field: value})
