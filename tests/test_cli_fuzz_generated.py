"""A corpus that grows with the command line: every command's declared options and
arguments (typer's parameter list, walked from the app), each fed the hostile values of
its type, each refused as :func:`cli_corpus.refused` says a bad input must be: exit 2, one
plain line naming the option, no traceback, nothing written, within 60 s.

- a path: a name and a whole path too long, ``~nosuchuser``, a FIFO, a name with a byte
  that is not UTF-8 (no run.json could hold it), and the wrong kind of thing for what the
  option is for (:class:`faithprobe.paths.Kind`: a folder where a file is read or written,
  a file where a folder is);
- a number: NaN and the infinities, a value past each bound the option declares, and one
  of 31 digits (every number has a stated range, its own or the integers faithprobe takes);
- a string: empty, control characters, rich markup, a byte that is not UTF-8.

The same goes for every setting of a spec (:data:`SPEC_CASES`): each option of a suite
(``-o``), a generator, a backend (``--model-option``), the Ray executor and a placement,
read off its options dataclass, given a value of its type that cannot be taken (31 digits,
NaN, a byte that is not UTF-8, a list with an empty item; an executor or placement setting
every malformed value of :data:`MALFORMED`): refused in one line naming the setting.

An option added later is covered without a case being written (a flag is not; the
hand-written corpus, ``tests/test_cli_fuzz*.py``, keeps the semantic cases). A path or a
number is given alone (no other argument), so the option under test is the first one
checked: the line must name it, so a refusal for something else (a missing argument) does
not pass. A string is checked in the command's body, so it is given beside an invocation
the command would carry out (:data:`BASE`), with the work stubbed to fail where it would
begin (:data:`WORK`): a value taken is a failing case, unless :data:`TAKEN` says why the
option takes it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer

from cli_corpus import refused
from faithprobe.cli import app
from faithprobe.paths import NAME_MAX, PATH_MAX, Kind

FILE_KINDS = (Kind.READ_FILE, Kind.WRITE_FILE)
FOLDER_KINDS = (Kind.READ_FOLDER, Kind.WRITE_FOLDER)
NOT_UTF8 = os.fsdecode(b"\xe9")  # a byte of a name or an argument that is not UTF-8: \udce9
DIGITS = "1" + "0" * 30


@dataclass(frozen=True)
class Param:
    """One declared option or argument of one command."""

    command: tuple[str, ...]
    name: str  # what the error line names: the option's flag, or the argument's name
    flag: str | None  # None for an argument
    kind: type
    path_kind: Kind | None
    low: float | None
    high: float | None
    nargs: int


def _commands(group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    for name, command in getattr(group, "commands", {}).items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def declared() -> list[Param]:
    """Every option and argument of every command, as typer declares it."""
    out = []
    for path, command in _commands(typer.main.get_command(app)):
        for p in command.params:
            descriptor = getattr(p, "type_descriptor", None)
            if descriptor is None or getattr(p, "is_flag", False):
                continue
            parser = descriptor.parameter_info.parser
            flag = p.opts[0] if getattr(p, "opts", None) and p.opts[0].startswith("-") else None
            out.append(
                Param(
                    command=path,
                    name=flag or p.name,
                    flag=flag,
                    kind=_leaf(descriptor.annotation),
                    path_kind=getattr(parser, "kind", None),
                    low=getattr(p, "min", None),
                    high=getattr(p, "max", None),
                    nargs=max(p.nargs, 1),
                )
            )
    return out


def _leaf(annotation) -> type:
    """The scalar type of ``annotation`` (``Path | None`` -> Path, ``list[float]`` -> float)."""
    import typing

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return _leaf(args[0]) if args else annotation


def hostile(param: Param) -> list[tuple[str, str]]:
    """(label, value) pairs the option must refuse; ``{tmp}`` stands for the test's folder."""
    if not isinstance(param.kind, type):  # a Literal, say: a string's
        return []
    if issubclass(param.kind, Path):
        values = [
            ("name-too-long", "n" * (NAME_MAX + 1)),
            ("path-too-long", "/".join(["d" * 200] * (PATH_MAX // 200 + 1))),
            ("unknown-user", "~nosuchuser46/x"),
            ("fifo", "{tmp}/fifo"),
            ("not-utf8", "{tmp}/caf" + NOT_UTF8),
        ]
        if param.path_kind in FILE_KINDS:
            values.append(("a-folder", "{tmp}/folder"))
        if param.path_kind in FOLDER_KINDS:
            values.append(("a-file", "{tmp}/file.txt"))
        return values
    if param.kind is str:
        return [("empty", ""), ("control", "a\x1b[2J\x07b"), ("markup", "[bold]x[/bold]"),
                ("not-utf8", "a" + NOT_UTF8 + "b")]  # fmt: skip
    if param.kind in (int, float):
        values = [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("31-digits", DIGITS)]
        if param.low is not None:
            values.append(("below-least", str(param.low - 1)))
        if param.high is not None:
            values.append(("above-most", str(param.high * 10 + 1)))
        return values
    return []


CASES = [
    pytest.param(p, value, id=f"{' '.join(p.command)} {p.name} {label}")
    for p in declared()
    if p.kind is not str
    for label, value in hostile(p)
]

# -- strings: refused in the command's body, so given beside a base invocation ----------

SQUAD = str(
    Path(__file__).resolve().parents[1] / "src/faithprobe/catalog/samples/squad/dev-v1.1.json"
)
BASE = {  # an invocation each command would carry out; an argument's value replaces the first
    ("run",): ["distractors", "--model", "ref:reader", "--limit", "2"],
    ("audit",): ["--model", "ref:reader"],
    ("serve",): ["--model", "embedded", "--port", "0"],
    ("generate",): ["distractors", "--out", "g.jsonl"],
    ("train", "mc"): ["--train", SQUAD, "--dev", SQUAD, "--out", "m"],
    ("train", "qa"): ["--strategy", "ot", "--train", SQUAD, "--out", "m"],
    ("train", "nli"): ["--train", SQUAD, "--out", "m"],
    ("train", "answer-types"): ["--train", SQUAD, "--out", "m"],
    ("analyze", "representations"): [
        "--model",
        "A=a",
        "--model",
        "B=b",
        "--data",
        SQUAD,
        "--out",
        "o",
    ],
    ("baseline", "heuristics"): ["--data", SQUAD, "--out", "o"],
    ("data", "fetch"): ["squad", "--to", "d", "--mirror", "http://127.0.0.1:9"],
    ("data", "schema"): ["distractors"],
}
# where the work begins: reached, a hostile value was taken (a traceback, so the case fails)
WORK = (
    "faithprobe.runner.load_subjects",
    "faithprobe.audit.execute.audit",
    "faithprobe.subjects.load_subject",
    "faithprobe.training.multiple_choice.train_mc",
    "faithprobe.training.nli.train_nli",
    "faithprobe.training.extractive_qa.train_qa",
    "faithprobe.training.answer_types.train_answer_types",
    "faithprobe.representations.analysis.analyze",
    "faithprobe.heuristics.predict.predict",
    "faithprobe.catalog.fetch.fetch",
)
# values an option takes as they are (each says why); every other one must be refused
TAKEN = {
    "run --model markup": "owner/name: a Hugging Face id's shape, tried when loading",
    "audit --model markup": "owner/name: a Hugging Face id's shape, tried when loading",
    "serve --model markup": "owner/name: a Hugging Face id's shape, tried when loading",
    "analyze representations --model control": "a folder or Hugging Face id, tried when loading",
    "analyze representations --model markup": "a folder or Hugging Face id, tried when loading",
    "run --address empty": "no address: Ray starts on this machine (the default)",
    "serve --name empty": "no name: clients ask for --model as given (the default)",
    "serve --name control": "the name clients ask for is any text",
    "serve --name markup": "the name clients ask for is any text",
    "serve --name not-utf8": "the name clients ask for is any text, sent back JSON-escaped",
    "serve --fault-kinds empty": "no faults injected",
    "train qa --augment empty": "the default augmentation",
    "data fetch --mirror empty": "no mirror (the default)",
    "data fetch --mirror control": "tried as a URL: the fetch fails in one line",
    "data fetch --mirror markup": "tried as a URL: the fetch fails in one line",
    "data fetch --mirror not-utf8": "tried as a URL: the fetch fails in one line",
}
STRING_CASES = [
    pytest.param(p, value, id=case)
    for p in declared()
    if p.kind is str
    for label, value in hostile(p)
    if (case := f"{' '.join(p.command)} {p.name} {label}") not in TAKEN
]


# -- spec settings: every option of an options dataclass -----------------------------------

# a model of each backend settings class, as a case gives it (``{tiny}``: a tiny causal LM)
BACKEND_MODELS = {
    "embedded": "embedded",
    "hf-causal": "{tiny}",
    "openai": "openai:m",
    "heuristic": "heuristic:first+entity",
    "ref": "ref:reader",
}
KEYED = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None}
# what an executor or placement setting must refuse, whatever its type
MALFORMED = [("31-digits", DIGITS), ("nan", "nan"), ("text", "abc"), ("markup", "[red]x"),
             ("equals", "a=b"), ("colons", "::::"), ("not-utf8", "a" + NOT_UTF8 + "b"),
             ("empty", "")]  # fmt: skip


@dataclass(frozen=True)
class Setting:
    """One setting of one options dataclass, and where the command line takes it."""

    owner: str  # "suite distractors", "generator comparisons", "backend openai", "executor ray"...
    name: str
    kind: type  # its scalar type (int | None -> int, tuple[str, ...] -> str)
    many: bool  # a comma-separated list
    optional: bool  # an empty value means none

    def args(self, value: str, tmp: Path, tiny: Path) -> list[str]:
        """``faithprobe`` arguments that give this setting ``value``."""
        group, _, name = self.owner.partition(" ")
        given = f"{self.name}={value}"
        out = ["--out", str(tmp / "out")]
        if group == "suite":
            return ["run", name, "--model", "ref:reader", "-o", given, *out]
        if group == "generator":
            return ["generate", name, "-o", given, "--out", str(tmp / "g.jsonl")]
        if group == "backend":
            model = BACKEND_MODELS[name].replace("{tiny}", str(tiny))
            return ["run", "distractors", "--model", model, "--model-option", given, *out]
        if group == "executor":
            return [
                "run",
                "distractors",
                "--model",
                "ref:reader",
                "--executor",
                f"ray,{given}",
                *out,
            ]
        return ["audit", "--model", "ref:reader", "--executor", "ray", "--placement",
                f"ref:reader@{given}", *out]  # fmt: skip


def _settings(owner: str, cls: type) -> list[Setting]:
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        optional = type(None) in typing.get_args(kind)
        kind = _leaf(kind)
        many = typing.get_origin(hints[f.name]) is tuple or (
            optional and typing.get_origin(_first(hints[f.name])) is tuple
        )
        out.append(Setting(owner, f.name, kind, many, optional))
    return out


def _first(annotation):
    import typing

    return next(a for a in typing.get_args(annotation) if a is not type(None))


def spec_settings() -> list[Setting]:
    """Every setting of every suite, generator, backend (one model per settings class),
    the Ray executor and a placement."""
    from faithprobe.executors.settings import EXECUTOR_SETTINGS, Placement
    from faithprobe.generators import GENERATORS
    from faithprobe.subjects.backends import BACKENDS
    from faithprobe.suite_protocol import SUITES

    found = [s for n in SUITES.names() for s in _settings(f"suite {n}", SUITES.get(n).options)]
    found += [s for n in GENERATORS.names()
              for s in _settings(f"generator {n}", GENERATORS.get(n).config)]  # fmt: skip
    found += [
        s for n in BACKEND_MODELS for s in _settings(f"backend {n}", BACKENDS.get(n).settings)
    ]
    found += _settings("executor ray", EXECUTOR_SETTINGS["ray"]) + _settings("placement", Placement)
    return found


def spec_hostile(setting: Setting) -> list[tuple[str, str]]:
    """(label, value) pairs the setting must refuse (module docstring)."""
    if setting.owner.split(" ")[0] in ("executor", "placement"):
        return [(label, v) for label, v in MALFORMED if v or not setting.optional]
    if setting.many:
        return [("empty-item", "a,,b")]
    if setting.kind in (int, float):
        return [("31-digits", DIGITS), ("nan", "nan")]
    if setting.kind is bool:
        return [("not-bool", "maybe")]
    if setting.kind is str:
        return [("not-utf8", "a" + NOT_UTF8 + "b")]
    return []


SPEC_CASES = [
    pytest.param(s, value, id=f"{s.owner} {s.name} {label}")
    for s in spec_settings()
    for label, value in spec_hostile(s)
]


@pytest.mark.parametrize(("setting", "value"), SPEC_CASES)
def test_a_hostile_value_of_every_spec_setting_is_refused(
    tmp_path, monkeypatch, tiny_llama_dir, setting, value
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAITHPROBE_CACHE_DIR", str(tmp_path / "cache"))
    for target in WORK:
        monkeypatch.setattr(target, _work_began)
    args = setting.args(value, tmp_path, tiny_llama_dir)
    refused(args, watch=[tmp_path], expect=[setting.name], env=KEYED)


def test_every_spec_setting_has_hostile_values_and_every_backend_a_model():
    from faithprobe.subjects.backends import BACKENDS

    settings = spec_settings()
    assert [f"{s.owner} {s.name}" for s in settings if not spec_hostile(s)] == []
    classes = {BACKENDS.get(n).settings for n in BACKENDS.names()}
    assert classes == {BACKENDS.get(n).settings for n in BACKEND_MODELS}, "a model per class"
    assert len(SPEC_CASES) > 100


def test_the_corpus_covers_every_path_and_number_option():
    """Every path option is checked by :mod:`faithprobe.paths` (it declares what it is for),
    and the corpus is not empty of any kind of value."""
    params = declared()
    unchecked = [
        f"{' '.join(p.command)} {p.name}"
        for p in params
        if isinstance(p.kind, type) and issubclass(p.kind, Path) and p.path_kind is None
    ]
    assert unchecked == [], "path options without faithprobe.paths.argument"
    assert len(CASES) > 200
    assert {p.kind for p in params if hostile(p)} >= {Path, int, float}


@pytest.mark.parametrize(("param", "value"), CASES)
def test_a_hostile_value_of_every_option_is_refused(tmp_path, monkeypatch, param, value):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("mine\n")
    os.mkfifo(tmp_path / "fifo")
    value = value.replace("{tmp}", str(tmp_path))
    given = [param.flag] if param.flag else []
    refused(
        [*param.command, *given, *[value] * param.nargs],
        watch=[tmp_path],
        expect=[param.name],
    )


@pytest.mark.parametrize(("param", "value"), STRING_CASES)
def test_a_hostile_string_is_refused_before_any_work(tmp_path, monkeypatch, param, value):
    """The line names the option or shows the value (an argument has no flag to name)."""
    monkeypatch.chdir(tmp_path)
    for target in WORK:
        monkeypatch.setattr(target, _work_began)
    base = BASE[param.command]
    given = [*base, param.flag, value] if param.flag else [value, *base[1:]]
    line = refused([*param.command, *given], watch=[tmp_path])
    assert param.name.lstrip("-") in line or repr(value) in line, line


def _work_began(*_args, **_kwargs):
    raise AssertionError("a hostile value was taken: the command began its work")


def test_every_command_with_a_string_option_has_a_base_invocation():
    """A command added later gets a base invocation here, or this fails."""
    commands = {p.command for p in declared() if p.kind is str}
    assert commands <= set(BASE), commands - set(BASE)
