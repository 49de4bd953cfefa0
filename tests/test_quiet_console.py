"""The console of ``run`` and ``audit`` holds faithprobe's own lines only; ``--verbose``
shows the libraries' warnings again.

faithprobe's own lines are what it prints through :mod:`faithprobe.console`: the log lines
(``[1/6] distractors: 343 pairs``, ``audit folder: ...``), the progress bars (drawn once,
when they end, if stderr is not a terminal), errors; and the tables on stdout. So the
commands run in a fresh interpreter whose console writes to a file of its own: whatever
still reaches stderr came from elsewhere (Python's ``warnings``, a library's logger, a bar
of its own) and must not be there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from faithprobe import quiet
from faithprobe.catalog.locate import SAMPLES

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
UNFORESEEN = "a warning no list of faithprobe's names"

# argv: the file faithprobe's console writes to, "provoke" or "as-is", the command line.
# "provoke": the causal LM backend passes and reads the key/value cache by its old name
# (past_key_values), as faithprobe did before transformers 5 renamed it, which makes
# transformers warn (a FutureWarning and a log line); and a FutureWarning no filter names is
# raised on the way. (Patched before the backend is imported, which imports these names.)
PROBE = f"""
import sys, warnings
from faithprobe import console
console.console.file = open(sys.argv[1], "w", encoding="utf-8")
if sys.argv[2] == "provoke":
    from faithprobe.subjects.hf import kv_cache_name

    def old_name(model):
        warnings.warn({UNFORESEEN!r}, FutureWarning)
        return "past_key_values"

    kv_cache_name.cache_argument = old_name
    kv_cache_name.returned_cache = lambda output: output.past_key_values
from faithprobe.cli import app
try:
    app(sys.argv[3:], prog_name="faithprobe")
finally:
    console.console.file.close()
"""


def faithprobe(tmp_path: Path, args: list[str], provoke: bool = False):
    """(Exit status, what reached stderr besides faithprobe's console, what the console
    printed) of ``faithprobe ARGS`` in a fresh interpreter, with no verbosity set in the
    environment and a cache of its own."""
    own = tmp_path / "console.txt"
    env = {k: v for k, v in os.environ.items() if k not in quiet.LIBRARY_VERBOSITY.values()}
    env["FAITHPROBE_DATA"] = str(tmp_path / "no-fetched-data")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(own), "provoke" if provoke else "as-is", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    return done.returncode, done.stderr, own.read_text(encoding="utf-8")


def test_the_causal_backend_gives_the_cache_by_its_current_name(tiny_llama, tiny_tokenizer):
    """Scoring (the per-candidate path, which the packing probe runs) and generation pass
    the key/value cache as transformers 5 names it, which warns at every call passing the
    old name; so does a model whose own forward takes ``**kwargs`` for its base class's."""
    from faithprobe.requests import CandidateScoreRequest, GenerationRequest
    from faithprobe.subjects.hf.causal import HFCausal

    class Passing(type(tiny_llama)):
        def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
            return super().forward(input_ids, attention_mask, position_ids, **kwargs)

    for model in (tiny_llama, Passing(tiny_llama.config).eval()):
        subject = HFCausal(model, tiny_tokenizer, name="t", batch_size=2)
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            subject.answer([CandidateScoreRequest("Alice lives in", ("Paris", "a big city"))])
            subject.answer([GenerationRequest(p, max_new_tokens=3) for p in ("Bob", "Bob is")])
        assert [str(w.message) for w in shown if "past_key_values" in str(w.message)] == []


def test_the_demo_audit_prints_only_faithprobes_own_lines(tiny_llama_dir, tmp_path):
    """The CLI path of ``make demo`` (with ``../shared/data`` where it is) on the tiny
    random Llama."""
    out = tmp_path / "demo"
    args = ["audit", "--model", str(tiny_llama_dir), "--budget", "small", "--out", str(out)]
    args += ["--cache-dir", str(tmp_path / "cache")]
    if SHARED.is_dir():
        args += ["--data-dir", str(SHARED)]
    code, foreign, own = faithprobe(tmp_path, args)
    assert code == 0, own + foreign
    assert foreign == ""
    assert f"audit folder: {out}" in own and "[7/7]" in own


def test_known_warnings_are_hidden_and_unforeseen_ones_are_not(tiny_llama_dir, tmp_path):
    """transformers' warnings about the old name are hidden (its FutureWarning by its
    filter, its log line by its verbosity); a FutureWarning no filter names still shows."""
    args = ["run", "distractors", "--model", str(tiny_llama_dir), "--limit", "4"]
    args += ["--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache")]
    code, foreign, own = faithprobe(tmp_path, args, provoke=True)
    assert code == 0, own + foreign
    assert f"FutureWarning: {UNFORESEEN}" in foreign
    assert [line for line in foreign.splitlines() if UNFORESEEN not in line] == []


def test_verbose_shows_what_is_hidden(tiny_llama_dir, tmp_path):
    args = ["run", "distractors", "--model", str(tiny_llama_dir), "--limit", "4", "--verbose"]
    args += ["--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache")]
    code, foreign, own = faithprobe(tmp_path, args, provoke=True)
    assert code == 0, own + foreign
    assert "FutureWarning: `past_key_values` is deprecated" in foreign
    assert "[transformers] `past_key_values`/`cache_params` are deprecated" in foreign
    assert f"FutureWarning: {UNFORESEEN}" in foreign


# each known warning as the libraries give it: (message, the module it is attributed to)
SEEN = {
    quiet.KNOWN_WARNINGS[0]: [
        (
            f"`past_key_values` is deprecated and will be removed in version 5.40.0 for "
            f"`{model}.forward`. Use `cache` instead.",
            module,
        )
        for model, module in [
            ("LlamaForCausalLM", "torch.nn.modules.module"),
            ("Gemma3ForCausalLM", "transformers.utils.generic"),
        ]
    ],
}


@pytest.mark.parametrize(
    ("known", "message", "module"),
    [
        pytest.param(known, *seen, id=seen[1])
        for known, examples in SEEN.items()
        for seen in examples
    ],
)
def test_a_known_warning_is_hidden_by_category_module_and_message(known, message, module):
    """The filter hides its warning only: the same message in another category or from
    another module, or another message from its module, still shows; and
    :func:`quiet.restore` lets it through again."""
    other = UserWarning if known.category is not UserWarning else FutureWarning
    others = [(message, other, module), (message, known.category, f"{module}s"),
              (f"{message[:-1]}!", known.category, module)]  # fmt: skip
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        quiet.hush()
        try:
            for text, category, where in [(message, known.category, module), *others]:
                warnings.warn_explicit(text, category, "x.py", 1, module=where)
        finally:
            quiet.restore()
        warnings.warn_explicit(message, known.category, "x.py", 1, module=module)
    assert [str(w.message) for w in shown] == [m for m, _, _ in others] + [message]


def test_every_known_warning_has_an_example():
    assert set(SEEN) == set(quiet.KNOWN_WARNINGS)


@pytest.mark.integration
def test_the_embedded_model_prints_only_faithprobes_own_lines(tmp_path):
    """One step of the demo audit on the embedded model, as ``run`` (an audit cannot be
    limited to one step): the faithfulness suite's generation prefills, continues stored
    beginnings and decodes over the key/value cache, where both of transformers' warnings
    came from."""
    squad = next(p for p in (SHARED, SAMPLES) if (p / "squad").is_dir()) / "squad"
    args = ["run", "faithfulness", "--model", "embedded", "--limit", "4"]
    args += ["--data", str(squad / "dev-v1.1.json")]
    args += ["--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache")]
    code, foreign, own = faithprobe(tmp_path, args)
    assert code == 0, own + foreign
    assert foreign == ""
    assert "run folder:" in own
