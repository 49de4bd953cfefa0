"""The commands other than ``run``'s data readers over a corpus of bad arguments: ``generate``
(empty lists, sizes without bound, --out), ``train`` (inputs, --base, --out, --mix),
``audit`` (budgets, --edge, --time, --max-items, --adjust, --fail-on, --markdown,
--base-url, models), ``run`` (--base-url, -o, models, folders), numbers past any range,
empty and repeated list items and options, Ray addresses and counts, and the rest.

Every case goes through :func:`cli_corpus.refused`: exit 2, one plain ``error:`` line, no
traceback, nothing before it, and no file written or changed under the working folder (the
default --out and cache live there), the model folder and any --out given. Training never
starts: each train case is refused before its data is read. Two tests after the corpus
follow a ``--base-url`` with a query and credentials to an endpoint: the query goes as a
query, and nothing printed shows a credential.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe.cli import app

BIG = "x" * 5_000_000
KEY = "sk-test-0123456789abcdef"  # an API key that must never be printed
URL_SECRETS = ("pa55word", "s3cr3tvalue")  # user info and query value of CREDENTIAL_URL
CREDENTIAL_URL = "ftp://alice:pa55word@example.org/v1?key=s3cr3tvalue"


@dataclass(frozen=True)
class Where:
    """What a case's arguments may point at: ``tmp`` (the working folder, also where
    ``--out`` and caches go) and ``model`` (a tiny causal LM folder)."""

    tmp: Path
    model: Path


@dataclass(frozen=True)
class Case:
    """``make(where)`` writes the inputs and returns the arguments after ``faithprobe``;
    ``expect``: words the error line holds; ``absent``: words it must not hold;
    ``env``: environment changes (None removes a variable)."""

    name: str
    make: Callable[[Where], list[str]]
    expect: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    env: dict[str, str | None] | None = None


# -- inputs ---------------------------------------------------------------------------------


def _text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _folder(path: Path, **files: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def _squad(w: Where) -> Path:
    """A SQuAD file of four one-question articles (enough to split by document)."""
    context = "Anna moved to Paris. She sang."
    start = context.index("Paris")
    data = [
        {"title": f"T{k}", "paragraphs": [{"context": context, "qas": [
            {"id": f"q{k}", "question": "Where did Anna move?",
             "answers": [{"text": "Paris", "answer_start": start}]}]}]}
        for k in range(4)
    ]  # fmt: skip
    return _text(w.tmp / "data" / "squad.json", json.dumps({"version": "1.1", "data": data}))


def _choices(w: Where) -> Path:
    record = {"id": "q1", "prompt": "2+2?", "choices": ["3", "4", "5"], "label": 1}
    return _text(w.tmp / "data" / "mc.jsonl", json.dumps(record) + "\n")


def _nli(w: Where) -> Path:
    record = {"premise": "A dog ran.", "hypothesis": "An animal ran.", "label": "entailment"}
    return _text(w.tmp / "data" / "nli.jsonl", json.dumps(record) + "\n")


def _gen(*args: str) -> Callable[[Where], list[str]]:
    """``generate ARGS --out <tmp>/g.jsonl``."""
    return lambda w: ["generate", *args, "--out", str(w.tmp / "g.jsonl")]


def _gen_out(name: str, out: Callable[[Where], Path]) -> Callable[[Where], list[str]]:
    return lambda w: ["generate", name, "--out", str(out(w))]


TRAIN_QUICK = ("--max-steps", "1")


def _qa(*args: str) -> Callable[[Where], list[str]]:
    """``train qa --strategy ot`` on a tiny SQuAD file, ``--out <tmp>/qa``, then ARGS."""
    return lambda w: ["train", "qa", "--strategy", "ot", "--train", str(_squad(w)),
                      "--out", str(w.tmp / "qa"), *TRAIN_QUICK, *args]  # fmt: skip


def _qa_with(make: Callable[[Where], list[str]]) -> Callable[[Where], list[str]]:
    """As :func:`_qa` with arguments that depend on the folder (later ones win)."""
    return lambda w: [*_qa()(w), *make(w)]


def _mc(*args: str) -> Callable[[Where], list[str]]:
    return lambda w: ["train", "mc", "--train", str(_choices(w)), "--dev", str(_choices(w)),
                      "--out", str(w.tmp / "mc"), *TRAIN_QUICK, *args]  # fmt: skip


def _nli_train(*args: str) -> Callable[[Where], list[str]]:
    return lambda w: ["train", "nli", "--train", str(_nli(w)), "--out", str(w.tmp / "nli"),
                      *TRAIN_QUICK, *args]  # fmt: skip


def _audit(*args: str) -> Callable[[Where], list[str]]:
    """``audit --model <tiny>`` into ``<tmp>/audit``, then ARGS."""
    return lambda w: ["audit", "--model", str(w.model), "--out", str(w.tmp / "audit"), *args]


def _audit_models(*models: str, args: tuple[str, ...] = ()) -> Callable[[Where], list[str]]:
    """``audit`` of ``models`` (no tiny model) into ``<tmp>/audit``."""
    given = [x for m in models for x in ("--model", m)]
    return lambda w: ["audit", *given, "--out", str(w.tmp / "audit"), *args]


def _audit_model(model: Callable[[Where], Path | str]) -> Callable[[Where], list[str]]:
    return lambda w: ["audit", "--model", str(model(w)), "--out", str(w.tmp / "audit")]


def _run(*args: str) -> Callable[[Where], list[str]]:
    """``run distractors --model <tiny> --limit 2`` into ``<tmp>/run``, then ARGS."""
    return lambda w: ["run", "distractors", "--model", str(w.model), "--limit", "2",
                      "--out", str(w.tmp / "run"), *args]  # fmt: skip


def _run_openai(*args: str) -> Callable[[Where], list[str]]:
    """``run distractors --model openai:m --limit 2`` into ``<tmp>/run``, then ARGS."""
    return lambda w: ["run", "distractors", "--model", "openai:m", "--limit", "2",
                      "--out", str(w.tmp / "run"), *args]  # fmt: skip


def _run_model(model: Callable[[Where], str]) -> Callable[[Where], list[str]]:
    return lambda w: ["run", "distractors", "--model", model(w), "--limit", "2",
                      "--out", str(w.tmp / "run")]  # fmt: skip


def _notes(w: Where) -> Path:
    return _text(w.tmp / "notes.txt", "my notes: keep them\n")


def _fifo(w: Where) -> Path:
    """A named pipe (not /dev/null: a command that wrongly replaced it would break the
    machine's /dev/null)."""
    path = w.tmp / "pipe"
    os.mkfifo(path)
    return path


def _no_config(w: Where) -> Path:
    return _folder(w.tmp / "weights", **{"README.md": "weights only"})


def _latin_config(w: Where) -> Path:
    folder = _folder(w.tmp / "latin")
    (folder / "config.json").write_bytes(b'{"model_type": "caf\xe9"}')
    return folder


def _finished_training(w: Where) -> list[str]:
    _folder(w.tmp / "qa", **{"training.json": "{}", "config.json": "{}"})
    return []


SQUAD_OF_MINE = '{"version": "1.1", "data": [{"title": "Mine", "paragraphs": []}]}'
KEYED = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": None}
NO_KEY = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}

# fmt: off
CASES = [
    # generate: list options that are empty or repeat a value
    Case("gen-item-sets-empty", _gen("distractors", "-o", "item_sets="), ("item_sets", "empty")),
    Case("gen-settings-empty", _gen("distractors", "-o", "settings="), ("settings", "empty")),
    Case("gen-counts-only-commas", _gen("distractors", "-o", "counts=,"), ("counts", "empty")),
    Case("gen-attractor-types-empty", _gen("distractors", "-o", "attractor_types= "), ("attractor_types", "empty")),
    Case("gen-positions-empty", _gen("distractors", "-o", "positions=,,"), ("positions", "empty")),
    Case("gen-fillers-empty", _gen("distractors", "-o", "fillers="), ("fillers", "empty")),
    Case("gen-counts-repeated", _gen("distractors", "-o", "counts=1,1"), ("counts", "more than once")),
    Case("gen-item-sets-repeated", _gen("distractors", "-o", "item_sets=sports,sports"), ("item_sets", "'sports'", "more than once")),
    Case("gen-positions-fit-no-setting", _gen("distractors", "-o", "settings=single", "-o", "positions=later"), ("positions", "single: after, between")),
    Case("gen-domains-empty", _gen("comparisons", "-o", "domains="), ("domains", "empty")),
    Case("gen-conditions-empty", _gen("comparisons", "-o", "conditions="), ("conditions", "empty")),
    Case("gen-domains-repeated", _gen("comparisons", "-o", "domains=films,books,films"), ("domains", "'films'", "more than once")),
    # generate: sizes
    Case("gen-pairs-per-domain-billion", _gen("comparisons", "-o", "pairs_per_domain=1000000000"), ("pairs_per_domain=1000000000", "from 1 to 1000")),
    Case("gen-pairs-per-domain-just-over", _gen("comparisons", "-o", "pairs_per_domain=1001"), ("pairs_per_domain", "from 1 to 1000")),
    Case("gen-pairs-per-domain-zero", _gen("comparisons", "-o", "pairs_per_domain=0"), ("pairs_per_domain",)),
    Case("gen-pairs-per-domain-negative", _gen("comparisons", "-o", "pairs_per_domain=-5"), ("pairs_per_domain",)),
    Case("gen-pairs-per-domain-text", _gen("comparisons", "-o", "pairs_per_domain=many"), ("pairs_per_domain", "'many'", "int")),
    Case("gen-pairs-per-domain-float", _gen("comparisons", "-o", "pairs_per_domain=2.5"), ("pairs_per_domain", "int")),
    Case("gen-names-per-pair-zero", _gen("distractors", "-o", "names_per_pair=0"), ("names_per_pair",)),
    Case("gen-names-per-pair-billion", _gen("distractors", "-o", "names_per_pair=1000000000"), ("names_per_pair",)),
    Case("gen-counts-four", _gen("distractors", "-o", "counts=1,4"), ("counts",)),
    Case("gen-filler-sentences-nine", _gen("distractors", "-o", "filler_sentences=9"), ("filler_sentences",)),
    Case("gen-part-unknown", _gen("comparisons", "-o", "part=dev"), ("part", "'dev'")),
    # generate: names and option syntax
    Case("gen-unknown-generator", _gen("stories"), ("unknown generator 'stories'",)),
    Case("gen-option-without-value", _gen("distractors", "-o", "counts"), ("--option", "KEY=VALUE")),
    Case("gen-option-of-the-other-generator", _gen("distractors", "-o", "conditions=paragraph"), ("no option 'conditions'",)),
    Case("gen-markup-value", _gen("distractors", "-o", "item_sets=[bold]x[/]"), ("'[bold]x[/]'",)),
    Case("gen-huge-value", _gen("distractors", "-o", f"settings={BIG}"), ("settings",)),
    Case("gen-seed-text", _gen("distractors", "--seed", "abc"), ("--seed",)),
    Case("gen-no-out", lambda w: ["generate", "distractors"], ("--out",)),
    # generate: --out as run takes it
    Case("gen-out-is-a-folder", _gen_out("distractors", lambda w: w.tmp), ("--out", "is a folder")),
    Case("gen-out-below-a-file", _gen_out("comparisons", lambda w: _notes(w) / "c.json"), ("--out", "notes.txt is a file")),
    Case("gen-out-deep-below-a-file", _gen_out("distractors", lambda w: _notes(w) / "a" / "b.jsonl"), ("notes.txt is a file",)),
    Case("gen-out-foreign-file", _gen_out("distractors", _notes), ("notes.txt", "not a file faithprobe wrote", "--force")),
    Case("gen-out-foreign-jsonl", _gen_out("distractors", lambda w: _text(w.tmp / "mine.jsonl", '{"id": "a", "text": "mine"}\n')), ("mine.jsonl", "--force")),
    Case("gen-out-foreign-squad", _gen_out("comparisons", lambda w: _text(w.tmp / "mine.json", SQUAD_OF_MINE)), ("mine.json", "--force")),
    Case("gen-out-fifo", _gen_out("distractors", _fifo), ("pipe", "not a regular file")),
    Case("gen-out-force-a-folder", lambda w: ["generate", "distractors", "--force", "--out", str(w.tmp)], ("is a folder",)),
    # train: inputs, --base, --out, sizes (refused before the data is read)
    Case("train-qa-mix-missing", _qa("--mix", "nope.json"), ("nope.json", "--mix file not found")),
    Case("train-qa-mix-missing-with-count", _qa("--mix", "nope.json:50"), ("nope.json", "--mix")),
    Case("train-qa-mix-folder", _qa_with(lambda w: ["--mix", str(w.tmp)]), ("--mix path is not a file",)),
    Case("train-qa-mix-count-zero", _qa_with(lambda w: ["--mix", f"{_squad(w)}:0"]), ("--mix", "at least 1")),
    Case("train-qa-dev-missing", _qa("--dev", "nope-dev.json"), ("nope-dev.json", "not found")),
    Case("train-qa-dev-folder", _qa_with(lambda w: ["--dev", str(w.tmp)]), ("not a file",)),
    Case("train-qa-train-missing", lambda w: ["train", "qa", "--strategy", "ot", "--train", "gone.json", "--out", str(w.tmp / "qa")], ("gone.json",)),
    Case("train-qa-base-without-config", _qa_with(lambda w: ["--base", str(_no_config(w))]), ("--base", "no config.json")),
    Case("train-qa-base-missing", _qa("--base", "no-such-encoder"), ("--base", "no-such-encoder")),
    Case("train-qa-out-is-a-file", _qa_with(lambda w: ["--out", str(_notes(w))]), ("--out", "is a file")),
    Case("train-qa-out-below-a-file", _qa_with(lambda w: ["--out", str(_notes(w) / "qa")]), ("--out", "notes.txt is a file")),
    Case("train-qa-out-foreign-folder", _qa_with(lambda w: ["--out", str(_folder(w.tmp / "mine", **{"a.txt": "mine"}))]), ("mine", "holds no faithprobe training run")),
    Case("train-qa-out-holds-a-model", _qa_with(_finished_training), ("already holds a trained model", "--overwrite")),
    Case("train-qa-strategy-unknown", _qa("--strategy", "best"), ("--strategy", "'best'")),
    Case("train-qa-limit-and-full", _qa("--limit", "5", "--full"), ("--limit or --full",)),
    Case("train-qa-heldout-too-big", _qa("--heldout", "0.95"), ("--heldout",)),
    Case("train-qa-mix-heldout-zero", _qa("--mix-heldout", "0"), ("--mix-heldout",)),
    Case("train-qa-predicate-argument-huge", _qa("--answer-kind", "--predicate-argument", "100000"), ("--predicate-argument", "1..110", "100,000")),
    Case("train-qa-predicate-argument-without-answer-kind", _qa("--predicate-argument", "3"), ("answer-kind",)),
    Case("train-qa-augment-without-ibt-aug", _qa("--augment", "embedded"), ("augment",)),
    Case("train-qa-augment-no-model", _qa("--strategy", "ibt-aug", "--augment", "./no-writer"), ("./no-writer",)),
    Case("train-qa-splitter-unknown", _qa("--splitter", "nltk"), ("splitter", "'nltk'")),
    Case("train-qa-max-length-huge", _qa("--max-length", "100000"), ("max_length", "16..4096")),
    Case("train-qa-lr-negative", _qa("--lr", "-0.1"), ("--lr", "from 1e-12 to 10")),
    Case("train-qa-warmup-one", _qa("--warmup", "1"), ("warmup_ratio",)),
    Case("train-qa-epochs-zero", _qa("--epochs", "0"), ("--epochs",)),
    Case("train-qa-seed-negative", _qa("--seed", "-1"), ("--seed",)),
    Case("train-mc-seed-beyond-numpy", _mc("--seed", str(2**32)), ("--seed",)),
    Case("train-mc-dev-missing", _mc("--dev", "nope-dev.jsonl"), ("nope-dev.jsonl", "not found")),
    Case("train-mc-train-folder", _mc("--train", "."), ("not a file",)),
    Case("train-mc-template-without-slot", _mc("--template", "Answer:"), ("{prompt}",)),
    Case("train-mc-base-without-config", lambda w: [*_mc()(w), "--base", str(_no_config(w))], ("--base", "no config.json")),
    Case("train-mc-out-below-a-file", lambda w: [*_mc()(w), "--out", str(_notes(w) / "mc")], ("notes.txt is a file",)),
    Case("train-nli-exclude-missing", _nli_train("--exclude", "no-such-grid"), ("no-such-grid", "--exclude path not found")),
    Case("train-nli-extra-missing", _nli_train("--extra", "help.tsv"), ("help.tsv", "--extra file not found")),
    Case("train-nli-dev-missing", _nli_train("--dev", "dev.tsv"), ("dev.tsv", "not found")),
    Case("train-nli-out-is-a-file", lambda w: [*_nli_train()(w), "--out", str(_notes(w))], ("--out", "is a file")),
    Case("train-nli-heldout-too-big", _nli_train("--heldout", "0.95"), ("--heldout",)),
    Case("train-unknown-recipe", lambda w: ["train", "gpt"], ("gpt",)),
    # audit: budgets, time, sizes, adjustments
    Case("audit-budget-unknown", _audit("--budget", "huge"), ("--budget", "'huge'")),
    Case("audit-budget-markup", _audit("--budget", "[bold]x[/]"), ("'[bold]x[/]'",)),
    Case("audit-time-without-auto", _audit("--time", "20m"), ("--budget auto",)),
    Case("audit-max-items-without-auto", _audit("--max-items", "100"), ("--budget auto",)),
    Case("audit-auto-without-time", _audit("--budget", "auto"), ("--time",)),
    Case("audit-time-zero", _audit("--budget", "auto", "--time", "0s"), ("--time", "more than 0")),
    Case("audit-time-negative", _audit("--budget", "auto", "--time", "-5m"), ("--time", "'-5m'")),
    Case("audit-time-words", _audit("--budget", "auto", "--time", "soon"), ("--time", "'soon'")),
    Case("audit-time-huge", _audit("--budget", "auto", "--time", BIG), ("--time", "5,000,000 characters")),
    Case("audit-max-items-zero", _audit("--budget", "auto", "--max-items", "0"), ("--max-items",)),
    Case("audit-max-items-text", _audit("--budget", "auto", "--max-items", "all"), ("--max-items",)),
    Case("audit-seed-negative", _audit("--seed", "-3"), ("--seed",)),
    Case("audit-adjust-unknown", _audit("--adjust", "bonferroni"), ("--adjust", "'bonferroni'")),
    Case("audit-fail-on-without-compare", _audit("--fail-on", "regressed"), ("--compare",)),
    Case("audit-markdown-without-compare", _audit("--markdown", "card.md"), ("--compare",)),
    Case("audit-batch-size-zero", _audit("--batch-size", "0"), ("--batch-size",)),
    # audit: edges
    Case("audit-edge-unknown", _audit("--edge", "distractors.nonsense=1"), ("--edge", "no step has this edge")),
    Case("audit-edge-without-value", _audit("--edge", "distractors.related_drop"), ("--edge", "NAME=VALUE")),
    Case("audit-edge-text", _audit("--edge", "distractors.related_drop=high"), ("--edge", "'high'", "not a number")),
    Case("audit-edge-nan", _audit("--edge", "distractors.related_drop=nan"), ("--edge", "not a number")),
    Case("audit-edge-infinite", _audit("--edge", "distractors.related_drop=inf"), ("--edge", "not a number")),
    # audit: models and the endpoint
    Case("audit-no-model", lambda w: ["audit", "--out", str(w.tmp / "audit")], ("--model",)),
    Case("audit-two-models-one-name", lambda w: [*_audit()(w), "--model", str(w.model)], ("share a name",)),
    Case("audit-model-folder-without-config", _audit_model(_no_config), ("weights", "no readable config.json")),
    Case("audit-model-config-not-json", _audit_model(lambda w: _folder(w.tmp / "broken", **{"config.json": "{"})), ("broken", "config.json")),
    Case("audit-model-folder-of-a-gguf", _audit_model(lambda w: _folder(w.tmp / "q", **{"m.gguf": "GGUF"})), ("gguf:",)),
    Case("audit-model-missing-path", _audit_models("./no-such-model"), ("./no-such-model",)),
    Case("audit-model-openai-empty", _audit_models("openai:"), ("openai:MODEL",)),
    Case("audit-model-embedded-unknown", _audit_models("embedded:nope"), ("nope",)),
    Case("audit-openai-without-key", _audit_models("openai:gpt-x"), ("OPENAI_API_KEY",), env=NO_KEY),
    Case("audit-base-url-without-openai", _audit("--base-url", "http://127.0.0.1:8000/v1"), ("--base-url is for openai:MODEL",)),
    Case("audit-base-url-not-a-url", _audit_models("openai:m", args=("--base-url", "not a url")), ("--base-url", "'not a url'"), env=KEYED),
    Case("audit-base-url-no-scheme", _audit_models("openai:m", args=("--base-url", "127.0.0.1:8000/v1")), ("--base-url", "http://"), env=KEYED),
    Case("audit-base-url-bad-port", _audit_models("openai:m", args=("--base-url", "http://127.0.0.1:99999/v1")), ("--base-url", "Port"), env=KEYED),
    Case("audit-base-url-markup-host", _audit_models("openai:m", args=("--base-url", "http://[bold]host/v1")), ("--base-url", "not a URL"), env=KEYED),
    Case("audit-base-url-credentials-hidden", _audit_models("openai:m", args=("--base-url", CREDENTIAL_URL)), ("--base-url", "REDACTED"), URL_SECRETS, env=KEYED),
    Case("audit-api-unknown", _audit_models("openai:m", args=("--api", "grpc")), ("--api", "'grpc'"), env=KEYED),
    # audit: folders
    Case("audit-out-is-a-file", lambda w: [*_audit()(w), "--out", str(_notes(w))], ("--out", "is a file")),
    Case("audit-out-below-a-file", lambda w: [*_audit()(w), "--out", str(_notes(w) / "audit")], ("--out", "notes.txt is a file")),
    Case("audit-out-foreign-folder", lambda w: [*_audit()(w), "--out", str(_folder(w.tmp / "mine", **{"a.txt": "mine"}))], ("not a faithprobe run folder",)),
    Case("audit-cache-dir-is-a-file", lambda w: [*_audit()(w), "--cache-dir", str(_notes(w))], ("--cache-dir", "is a file")),
    Case("audit-cache-dir-below-a-file", lambda w: [*_audit()(w), "--cache-dir", str(_notes(w) / "cache")], ("--cache-dir", "notes.txt is a file")),
    Case("audit-data-dir-missing", _audit("--data-dir", "no-such-data"), ("--data-dir",)),
    Case("audit-data-dir-a-file", lambda w: [*_audit()(w), "--data-dir", str(_notes(w))], ("--data-dir",)),
    # run: the endpoint
    Case("run-base-url-not-a-url", _run_openai("--base-url", "not a url"), ("--base-url", "'not a url'"), env=KEYED),
    Case("run-base-url-empty", _run_openai("--base-url", ""), ("--base-url", "''"), env=KEYED),
    Case("run-base-url-empty-without-openai", _run("--base-url", ""), ("--base-url is for openai:MODEL",)),
    Case("run-base-url-no-host", _run_openai("--base-url", "http:///v1"), ("--base-url", "host"), env=KEYED),
    Case("run-base-url-ftp", _run_openai("--base-url", "ftp://example.org/v1"), ("--base-url", "http://"), env=KEYED),
    Case("run-base-url-space-in-host", _run_openai("--base-url", "http://my host/v1"), ("--base-url", "white space"), env=KEYED),
    Case("run-base-url-newline", _run_openai("--base-url", "http://host/v1\nX-Evil: 1"), ("--base-url",), env=KEYED),
    Case("run-base-url-port-text", _run_openai("--base-url", "http://host:port/v1"), ("--base-url", "not a URL"), env=KEYED),
    Case("run-base-url-credentials-hidden", _run_openai("--base-url", CREDENTIAL_URL), ("--base-url", "REDACTED"), URL_SECRETS, env=KEYED),
    Case("run-base-url-bad-and-long", _run_openai("--base-url", "http://" + "h" * 5000 + ":0x50/v1?token=" + "t" * 5000), ("--base-url",), ("t" * 100,), env=KEYED),
    Case("run-env-base-url-not-a-url", _run_openai(), ("$OPENAI_BASE_URL", "'not a url'"), env={**KEYED, "OPENAI_BASE_URL": "not a url"}),
    Case("audit-env-base-url-credentials-hidden", _audit_models("openai:m"), ("$OPENAI_BASE_URL", "REDACTED"), URL_SECRETS, env={**KEYED, "OPENAI_BASE_URL": CREDENTIAL_URL}),
    Case("run-openai-without-key", _run_openai(), ("OPENAI_API_KEY",), env=NO_KEY),
    Case("run-openai-key-in-another-variable", _run_openai("--api-key-env", "MY_KEY"), ("MY_KEY",), env={**NO_KEY, "MY_KEY": None}),
    Case("run-openai-concurrency-zero", _run_openai("--concurrency", "0"), ("--concurrency",), env=KEYED),
    Case("run-openai-timeout-zero", _run_openai("--timeout", "0"), ("--timeout",), env=KEYED),
    Case("run-openai-retries-negative", _run_openai("--max-retries", "-1"), ("--max-retries",), env=KEYED),
    Case("run-openai-api-unknown", _run_openai("--api", "grpc"), ("--api", "'grpc'"), env=KEYED),
    # run: models, folders, options
    Case("run-model-folder-without-config", _run_model(lambda w: str(_no_config(w))), ("weights", "no readable config.json")),
    Case("run-model-prefixed-folder-without-config", _run_model(lambda w: f"hf-qa:{_no_config(w)}"), ("weights", "no readable config.json")),
    Case("run-model-config-not-utf8", _run_model(lambda w: str(_latin_config(w))), ("latin", "config.json")),
    Case("run-model-is-a-gguf-file", _run_model(lambda w: str(_text(w.tmp / "m.gguf", "GGUF"))), ("gguf:",)),
    Case("run-out-below-a-file", lambda w: [*_run()(w), "--out", str(_notes(w) / "run")], ("--out", "notes.txt is a file")),
    Case("run-cache-dir-below-a-file", lambda w: [*_run()(w), "--cache-dir", str(_notes(w) / "c")], ("--cache-dir", "notes.txt is a file")),
    Case("run-seed-negative", _run("--seed", "-1"), ("--seed",)),
    Case("run-option-empty-key", _run("-o", "=1"), ("--option", "KEY=VALUE")),
    Case("run-option-huge-value", _run("-o", f"filler={BIG}"), ("filler", "5,000,000 characters")),
    Case("run-executor-markup", _run("--executor", "[red]ray"), ("--executor", "'[red]ray'")),
    Case("run-address-without-ray", _run("--address", "head:6379"), ("--address",)),
    Case("run-workers-zero", _run("--executor", "ray", "--workers", "0"), ("--workers",)),
    Case("run-executor-spec-disagrees", _run("--executor", "ray,workers=8", "--workers", "4"), ("workers='8'", "--workers '4'", "disagree")),
    Case("run-executor-spec-unknown-setting", _run("--executor", "ray,[red]x=1"), ("--executor", "'[red]x=1'")),
    Case("audit-executor-workers-zero", _audit("--executor", "ray,workers=0"), ("workers=0",)),
    Case("audit-executor-timeout-nan", _audit("--executor", "ray,replace_timeout=nan"), ("replace_timeout",)),
    Case("audit-placement-markup", _audit("--executor", "ray", "--placement", "[red]m@workers=1"), ("--placement", "'[red]m'")),
    Case("audit-placement-without-settings", _audit("--executor", "ray", "--placement", "m@"), ("--placement", "MODEL@KEY=VALUE")),
    # numbers past any range, empty and repeated items, Ray specs, kernels (issue 59)
    Case("run-option-thirty-digits", _run("-o", "filler=" + "1" * 30), ("filler=" + "1" * 30, "from 0 to 3")),
    Case("run-option-given-twice", _run("-o", "filler=1", "-o", "filler=2"), ("--option", "filler is given twice")),
    Case("run-model-option-given-twice", _run("--model-option", "max_length=9", "--model-option", "max_length=10"), ("--model-option", "max_length is given twice")),
    Case("run-model-setting-given-twice", _run_model(lambda w: f"{w.model},max_length=9,max_length=10"), ("max_length is given twice",)),
    Case("run-model-max-length-thirty-digits", _run_model(lambda w: f"{w.model},max_length={'9' * 30}"), ("max_length", "from 8 to 10000000")),
    Case("run-limit-thirty-digits", _run("--limit", "1" * 30), ("--limit", "9223372036854775807")),
    Case("run-seed-beyond-numpy", _run("--seed", str(2**32)), ("--seed", "from 0 to 4294967295")),
    Case("run-list-option-empty-item", lambda w: ["run", "confidence-shift", "--model", str(w.model), "-o", "probes=no-question,,wrong-question", "--out", str(w.tmp / "run")], ("probes=", "item 2 is empty")),
    Case("run-list-option-trailing-comma", lambda w: ["run", "confidence-shift", "--model", str(w.model), "-o", "probes=no-question,", "--out", str(w.tmp / "run")], ("probes=", "item 2 is empty")),
    Case("gen-counts-empty-item", _gen("distractors", "-o", "counts=1,,2"), ("counts=", "item 2 is empty")),
    Case("gen-seed-negative", _gen("distractors", "--seed", "-1"), ("--seed", "from 0 to 4294967295")),
    Case("audit-edge-given-twice", _audit("--edge", "distractors.related_drop=0.1", "--edge", "distractors.related_drop=0.2"), ("--edge", "given twice")),
    Case("run-executor-address-colons", _run("--executor", "ray,address=::::"), ("address='::::'", "HOST:PORT")),
    Case("run-executor-address-equals", _run("--executor", "ray,address=a=b"), ("address='a=b'", "HOST:PORT")),
    Case("run-address-flag-no-port", _run("--executor", "ray", "--address", "head"), ("address='head'", "HOST:PORT")),
    Case("audit-executor-address-port-zero", _audit("--executor", "ray,address=head:0"), ("address='head:0'", "1 to 65535")),
    Case("run-executor-workers-billion", _run("--executor", "ray,workers=1000000000"), ("workers=1000000000", "from 1 to 4096")),
    Case("run-workers-flag-billion", _run("--executor", "ray", "--workers", "1000000000"), ("--workers", "from 1 to 4096")),
    Case("audit-placement-workers-thirty-digits", _audit("--executor", "ray", "--placement", "m@workers=" + "1" * 30), ("workers=" + "1" * 30, "from 1 to 4096")),
    *([Case("run-model-flash-attention-missing", _run_model(lambda w: f"{w.model},attn_implementation=flash_attention_2"), ("attn_implementation=flash_attention_2", "flash-attn"))]
      if importlib.util.find_spec("flash_attn") is None else []),
    # the other commands
    Case("list-takes-no-argument", lambda w: ["list", "suites"], ("suites",)),
    Case("report-several-without-out", lambda w: ["report", str(w.tmp / "a"), str(w.tmp / "b")], ("--out",)),
    Case("report-no-folder", lambda w: ["report"], ("run_dirs",)),
    Case("serve-port-out-of-range", lambda w: ["serve", "--port", "70000"], ("--port",)),
    Case("serve-fault-rate-above-one", lambda w: ["serve", "--fault-rate", "2"], ("--fault-rate",)),
    Case("unknown-command", lambda w: ["probe"], ("probe",)),
    Case("unknown-option", lambda w: ["--verbose", "list"], ("--verbose",)),
]
# fmt: on


@pytest.fixture(scope="module")
def model_dir(tiny_llama_dir) -> Path:
    return tiny_llama_dir


def test_the_corpus_is_large_and_spans_every_command():
    assert len(CASES) >= 80
    assert len({c.name for c in CASES}) == len(CASES)
    prefixes = {c.name.split("-")[0] for c in CASES}
    assert {"gen", "train", "audit", "run", "list", "report", "serve"} <= prefixes


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_argument_is_one_plain_line_and_exit_2(case, tmp_path, model_dir, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default --out (runs/...) is written here
    monkeypatch.setenv("FAITHPROBE_CACHE_DIR", str(tmp_path / "cache"))
    args = case.make(Where(tmp_path, model_dir))
    line = refused(args, watch=[tmp_path, model_dir], expect=case.expect, env=case.env)
    for word in (*case.absent, KEY):
        assert word not in line, (word, line)


# -- a --base-url with a query and credentials, followed to an endpoint ----------------------


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request 404 quoting its path, as servers do (so a query credential
    would be printed unless redacted), and records the paths."""

    paths: list[str] = []

    def do_POST(self):  # noqa: N802 -- http.server's name
        self.paths.append(self.path)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps({"error": {"message": f"no route {self.path}"}}).encode()
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder():
    _Recorder.paths = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _Recorder.paths
    server.shutdown()
    server.server_close()


def test_a_query_in_the_base_url_goes_as_a_query_and_no_message_shows_a_credential(
    recorder, monkeypatch
):
    from faithprobe.errors import ModelError
    from faithprobe.requests import GenerationRequest
    from faithprobe.subjects.endpoint.subject import EndpointConfig, OpenAISubject

    port, paths = recorder
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url = f"http://alice:pa55word@127.0.0.1:{port}/v1?key=s3cr3tvalue&region=eu"
    subject = OpenAISubject("m", EndpointConfig(base_url=url, max_retries=0))
    with pytest.raises(ModelError) as caught:
        subject.answer([GenerationRequest("Hello", max_new_tokens=2)])
    assert paths == ["/v1/completions?key=s3cr3tvalue&region=eu"]
    message = str(caught.value)
    assert "HTTP 404" in message and "/v1/completions?key=" in message
    for secret in (*URL_SECRETS, KEY, "alice"):
        assert secret not in message, (secret, message)


def test_a_failed_run_prints_no_credential(recorder, tmp_path, monkeypatch):
    port, paths = recorder
    monkeypatch.chdir(tmp_path)
    url = f"http://alice:pa55word@127.0.0.1:{port}/v1?key=s3cr3tvalue"
    args = ["run", "distractors", "--model", "openai:m", "--base-url", url, "--limit", "2",
            "--max-retries", "0", "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    res = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": KEY})
    assert res.exit_code == 2, res.output
    assert paths and all(p.startswith("/v1/completions?key=") for p in paths)
    assert res.stderr.splitlines()[-1].startswith("error: ")
    for secret in (*URL_SECRETS, KEY, "alice"):
        assert secret not in res.output, (secret, res.output)
