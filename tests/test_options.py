"""Options declared once as a frozen dataclass: parsing ``-o`` strings, listing, recording."""

from dataclasses import dataclass

import pytest

from faithprobe.errors import UsageError
from faithprobe.options import describe, listed, option, parse, record


@dataclass(frozen=True)
class Opts:
    trials: int = option(5, "trials per probe")
    rate: float = option(0.5, "a rate")
    strict: bool = option(False, "be strict")
    name: str = option("x", "a name")
    counts: tuple[int, ...] = option((1, 2), "counts")
    model: str | None = option(None, "a model, or none")

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise UsageError("trials must be at least 1")


def test_strings_become_the_declared_types():
    o = parse(Opts, {"trials": "3", "rate": "0.25", "strict": "yes", "name": "a=b",
                     "counts": "3, 1", "model": "embedded"}, "suite 's'")  # fmt: skip
    assert o == Opts(3, 0.25, True, "a=b", (3, 1), "embedded")


def test_typed_values_pass_through_and_defaults_hold():
    assert parse(Opts, {"trials": 2, "counts": [4]}, "x") == Opts(trials=2, counts=(4,))
    assert parse(Opts, None, "x") == Opts()


def test_empty_string_is_none_for_an_optional_option():
    assert parse(Opts, {"model": ""}, "x").model is None


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"nope": "1"}, r"^suite 's' has no option 'nope'; its options: trials, rate, strict"),
        ({"trials": "many"}, r"^option trials='many': expected int$"),
        ({"strict": "perhaps"}, r"^option strict='perhaps': expected bool$"),
        ({"counts": "1,x"}, r"^option counts='1,x': expected comma-separated ints$"),
        ({"trials": "0"}, r"^trials must be at least 1$"),
    ],
)
def test_bad_values_are_usage_errors(given, message):
    with pytest.raises(UsageError, match=message):
        parse(Opts, given, "suite 's'")


def test_describe_and_record():
    assert list(describe(Opts))[0] == ("trials", 5, "trials per probe")
    assert record(Opts(counts=(3,))) == {"trials": 5, "rate": 0.5, "strict": False,
                                         "name": "x", "counts": [3], "model": None}  # fmt: skip


@dataclass(frozen=True)
class Picked:
    splitter: str = option("spacy", "sentence splitter", choices=("spacy", "pysbd"))
    parts: tuple[str, ...] = option(("a",), "parts", choices={"a": "first", "b": "second"})
    counts: tuple[int, ...] = option((1,), "counts", choices=(1, 2, 3))
    model: str | None = option(None, "a model, or none", choices=("tiny", "small"))


def test_choices_are_accepted():
    given = {"splitter": "pysbd", "parts": "b, a", "counts": "3,1", "model": "tiny"}
    assert parse(Picked, given, "x") == Picked("pysbd", ("b", "a"), (3, 1), "tiny")
    assert parse(Picked, {"parts": ["b"], "counts": (2,)}, "x") == Picked(parts=("b",), counts=(2,))
    assert parse(Picked, {"model": ""}, "x").model is None  # an optional option left empty


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"splitter": "nltk"}, "suite 's' option splitter='nltk': choose from 'spacy', 'pysbd'"),
        ({"parts": "a,c"}, "suite 's' option parts='c': choose from 'a', 'b'"),
        ({"parts": ("b", "z")}, "suite 's' option parts='z': choose from 'a', 'b'"),
        ({"counts": "1,5"}, "suite 's' option counts=5: choose from 1, 2, 3"),
        ({"model": "huge"}, "suite 's' option model='huge': choose from 'tiny', 'small'"),
        ({"parts": ""}, "suite 's' option parts is empty: choose one or more of 'a', 'b'"),
        ({"counts": "2,1,2"}, "suite 's' option counts=2: given more than once"),
    ],
)
def test_a_value_not_among_the_choices_is_refused_naming_them(given, message):
    with pytest.raises(UsageError) as refused:
        parse(Picked, given, "suite 's'")
    assert str(refused.value) == message


def test_a_long_refused_value_is_shown_cut():
    with pytest.raises(UsageError, match=r"option splitter='xxxx.*…"):
        parse(Picked, {"splitter": "x" * 500}, "suite 's'")


def test_describe_lists_the_choices():
    assert list(describe(Picked)) == [
        ("splitter", "spacy", "sentence splitter; one of 'spacy', 'pysbd'"),
        ("parts", ("a",), "parts; one or more of 'a', 'b'"),
        ("counts", (1,), "counts; one or more of 1, 2, 3"),
        ("model", None, "a model, or none; one of 'tiny', 'small'"),
    ]
    assert record(Picked()) == {"splitter": "spacy", "parts": ["a"], "counts": [1], "model": None}


def test_options_without_choices_take_any_value_and_describe_as_before():
    o = parse(Opts, {"name": "anything at all", "counts": "9,7"}, "x")
    assert (o.name, o.counts) == ("anything at all", (9, 7))
    assert [text for _, _, text in describe(Opts)] == [
        "trials per probe", "a rate", "be strict", "a name", "counts", "a model, or none"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("9,,7", "x option counts='9,,7': item 2 is empty (a comma too many?)"),
        ("9,7,", "x option counts='9,7,': item 3 is empty"),
        (",9", "x option counts=',9': item 1 is empty"),
        ("9, 09", "x option counts=9: given more than once"),  # the same number
    ],
)
def test_a_list_with_an_empty_or_repeated_item_is_refused_choices_or_not(given, message):
    with pytest.raises(UsageError) as refused:
        parse(Opts, {"counts": given}, "x")
    assert str(refused.value).startswith(message)
    assert listed("a, b", "k") == ("a", "b") and listed(" ", "k") == ()
    with pytest.raises(UsageError, match="^option k='a': given more than once$"):
        listed("a,b,a", "k")


def test_a_default_outside_its_choices_is_a_declaration_error():
    with pytest.raises(ValueError, match="default 'x' is not among the choices 'a', 'b'"):
        option("x", "help", choices=("a", "b"))
