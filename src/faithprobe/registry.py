"""Registries: the names a user types (suites, interventions, data loaders, generators,
model backends) and what each one loads.

An entry's target is the object itself or a ``"module:attribute"`` string imported on first
use, so listing what exists imports nothing heavy and a registry never has to import the
modules that fill it (which would point imports upward). A registry may also be given a
``discover`` function, called once before the first lookup, that adds the entries of
modules it finds (the suites and plug-ins that packages name in entry points:
:func:`declared`). An unknown name is a :class:`~faithprobe.errors.UsageError` naming what
is available.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Generic, TypeVar

from faithprobe.errors import UsageError

T = TypeVar("T")


def load_target(target: str) -> Any:
    """The object a ``"package.module:attribute"`` string names."""
    module, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        value = getattr(value, part)
    return value


def import_submodules(package: str) -> None:
    """Import every module of ``package``, so that modules registering themselves on import
    are found without a list of them to keep."""
    root = importlib.import_module(package)
    for info in pkgutil.iter_modules(root.__path__, f"{package}."):
        importlib.import_module(info.name)


DISTRIBUTION = "faithprobe"  # the distribution whose entry points declare the built-in things
# the entry-point group naming suite packages, faithprobe's built-in ones and plug-ins alike
# (its name is that of the package holding the built-in suites; no import of it is meant)
SUITE_GROUP = "faithprobe.suites"


def declared(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``: faithprobe's own (declared in its ``pyproject.toml``),
    in the order of their names, then those of other installed packages. None of
    faithprobe's own is a :class:`~faithprobe.errors.UsageError`: its metadata is missing
    (a source checkout used without an install) or older than its ``pyproject.toml``."""
    points = metadata.entry_points(group=group)
    own = sorted((p for p in points if p.dist is not None and p.dist.name == DISTRIBUTION),
                 key=lambda p: p.name)  # fmt: skip
    if not own:
        raise UsageError(
            f"{DISTRIBUTION}'s metadata names nothing in the entry-point group {group!r} (it "
            "is not installed, or was before the group was declared): install it (pip "
            "install -e . in its checkout, or make install)"
        )
    return own + [p for p in points if p not in own]


def import_declared(group: str, only: str) -> None:
    """Import the module ``only`` of each package named in the entry-point group ``group``
    (:func:`declared`), where it has one (a suite's ``interventions``, its ``schema``), so
    that modules registering themselves on import are found in plug-ins as in faithprobe."""
    for point in declared(group):
        package = importlib.util.find_spec(point.module)
        if package is None or package.submodule_search_locations is None:
            continue  # a module, not a package: nothing below it
        if importlib.util.find_spec(f"{point.module}.{only}") is not None:
            importlib.import_module(f"{point.module}.{only}")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered name: its ``target`` (the object, or ``"module:attribute"``), a line
    for ``faithprobe list``, and other names that mean the same."""

    name: str
    target: T | str
    description: str = ""
    aliases: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)


class Registry(Generic[T]):
    """Names of one ``kind`` of thing (``"suite"``, ``"intervention"``...) and what they load."""

    def __init__(self, kind: str, discover: Callable[[Registry[T]], None] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}
        self._aliases: dict[str, str] = {}
        self._loaded: dict[str, T] = {}
        self._discover = discover
        self._discovered = discover is None

    # -- filling ---------------------------------------------------------------------------

    def add(
        self,
        name: str,
        target: T | str,
        *,
        description: str = "",
        aliases: tuple[str, ...] = (),
        **details: Any,
    ) -> None:
        """Register ``target`` under ``name`` (and ``aliases``); a name taken twice is a bug."""
        for key in (name, *aliases):
            if key in self._entries or key in self._aliases:
                raise ValueError(f"{self.kind} {key!r} registered twice")
        self._entries[name] = Entry(name, target, description, tuple(aliases), details)
        for alias in aliases:
            self._aliases[alias] = name

    def register(self, name: str, **kwargs: Any) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def wrap(obj: T) -> T:
            self.add(name, obj, **kwargs)
            return obj

        return wrap

    # -- looking up --------------------------------------------------------------------------

    def _ensure_discovered(self) -> None:
        if not self._discovered:
            self._discovered = True  # first, so a discover that looks names up does not loop
            assert self._discover is not None
            self._discover(self)

    def entry(self, name: str) -> Entry[T]:
        """The entry ``name`` (or an alias) stands for; an unknown name is a UsageError."""
        self._ensure_discovered()
        key = self._aliases.get(name, name)
        try:
            return self._entries[key]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UsageError(f"unknown {self.kind} {name!r}; available: {known}") from None

    def get(self, name: str) -> T:
        """What ``name`` stands for, imported on first use."""
        entry = self.entry(name)
        if entry.name not in self._loaded:
            target = entry.target
            self._loaded[entry.name] = load_target(target) if isinstance(target, str) else target
        return self._loaded[entry.name]

    def __contains__(self, name: object) -> bool:
        self._ensure_discovered()
        return name in self._entries or name in self._aliases

    def names(self) -> list[str]:
        self._ensure_discovered()
        return list(self._entries)

    def entries(self) -> Iterator[Entry[T]]:
        self._ensure_discovered()
        return iter(list(self._entries.values()))
