"""Options declared once as a frozen dataclass: parsing ``-o`` strings, listing, recording."""

from dataclasses import dataclass

import pytest

from faithprobe.errors import UsageError
from faithprobe.options import describe, option, parse, record


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
