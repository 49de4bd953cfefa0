"""The generic registry: lazy ``module:attribute`` targets, aliases, discovery, and one
message for an unknown name."""

import sys

import pytest

from faithprobe.errors import UsageError
from faithprobe.registry import Registry, load_target


def test_lazy_target_is_imported_on_first_get_only():
    sys.modules.pop("json.tool", None)
    reg = Registry("thing")
    reg.add("tool", "json.tool:main", description="json's command line")
    assert "json.tool" not in sys.modules  # listing names and descriptions imports nothing
    assert [e.description for e in reg.entries()] == ["json's command line"]
    assert "json.tool" not in sys.modules
    main = reg.get("tool")
    assert main is sys.modules["json.tool"].main


def test_aliases_and_objects():
    reg = Registry("thing")
    reg.add("one", 1, aliases=("uno", "eins"))
    assert reg.get("uno") == reg.get("eins") == reg.get("one") == 1
    assert "uno" in reg and "two" not in reg
    assert reg.names() == ["one"]
    assert reg.entry("eins").name == "one"


def test_unknown_name_says_what_is_available():
    reg = Registry("widget")
    reg.add("b", 2)
    reg.add("a", 1)
    with pytest.raises(UsageError, match=r"^unknown widget 'c'; available: a, b$"):
        reg.get("c")


def test_a_name_taken_twice_is_a_bug():
    reg = Registry("thing")
    reg.add("a", 1, aliases=("x",))
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("x", 2)


def test_discover_runs_once_before_the_first_lookup():
    calls = []

    def discover(reg):
        calls.append(1)
        reg.add("found", "os.path:join")

    reg = Registry("thing", discover=discover)
    assert not calls
    assert reg.names() == ["found"] and "found" in reg
    assert reg.get("found") is load_target("os.path:join")
    assert calls == [1]


def test_decorator_registers_the_object():
    reg = Registry("thing")

    @reg.register("f", description="a function")
    def f():
        return 3

    assert reg.get("f") is f and reg.entry("f").description == "a function"


def test_project_registries_share_the_message():
    from faithprobe.datasets import LOADERS
    from faithprobe.generators import GENERATORS
    from faithprobe.subjects import BACKENDS

    for reg, kind in ((LOADERS, "dataset loader"), (GENERATORS, "generator"),
                      (BACKENDS, "model backend")):  # fmt: skip
        with pytest.raises(UsageError, match=f"^unknown {kind} 'nope'; available: "):
            reg.get("nope")
    assert {"squad", "coqa", "hotpotqa", "quoref"} <= set(LOADERS.names())
