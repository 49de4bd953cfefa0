"""Model backends, one module each: what ``--model PREFIX:TARGET`` can name.

A backend module defines ``BACKEND``, a :class:`Backend`: its prefix (the registry name the
command line, the code and the docs use), a line for ``faithprobe list``, its loader, how
it checks a target before anything is read, its settings (an options dataclass, given as
``--model-option KEY=VALUE`` or in the spec, ``PREFIX:TARGET,KEY=VALUE``), how it is
recognised in a model folder (its config's ``architectures``), the request kinds it
answers, and, for a model whose fingerprint is known from its files, the identity that
makes it deferrable. The built-in
backends are the modules of this package; a package adds its own by naming a module (or
``module:ATTRIBUTE``) in the entry-point group ``faithprobe.backends``, as a suite does in
``faithprobe.suites``. A backend module imports nothing heavy: its loader is a
``"module:function"`` string, imported when a model loads.
"""

from __future__ import annotations

import json
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from importlib import metadata
from pathlib import Path
from typing import Any

from faithprobe.errors import ModelError, UsageError, excerpt
from faithprobe.options import parse
from faithprobe.paths import Kind, checked
from faithprobe.registry import Registry, load_target
from faithprobe.subjects.identity import Identity
from faithprobe.subjects.spec import ModelSpec

ENTRY_POINT_GROUP = "faithprobe.backends"


@dataclass(frozen=True)
class NoSettings:
    """A backend without settings of its own."""


@dataclass(frozen=True)
class Loading:
    """How the run loads every model: rows per forward pass (each model's own settings
    are in its spec)."""

    batch_size: int = 16


@dataclass(frozen=True)
class Backend:
    """One backend (module docstring). ``load``: ``"module:function"`` of
    ``(spec, loading) -> Subject``; ``check``: raises on a spec that cannot name a model;
    ``hub``: its targets are model folders or Hugging Face ids (``architectures``: the
    config class-name endings it is recognised by, tried in ``precedence`` order, highest
    first; ``model_types``: config ``model_type`` values it takes when no architecture
    says); ``identity`` with ``folder``: the model's fingerprint is its folder's
    (``folder(spec, loading)``, None when it must load at once), so it can be deferred;
    ``local``: its target is a path here (a hub backend's may be too), checked by
    :func:`faithprobe.paths.checked` before ``check`` runs;
    ``answers``: request kind -> the condition under which it answers that kind ("" for
    always), what a model that cannot answer a request is told to use instead (by default
    its identity's kinds, unconditionally)."""

    name: str
    description: str
    load: str | Callable[[ModelSpec, Loading], Any]
    check: Callable[[ModelSpec], None] | None = None
    settings: type = NoSettings
    hub: bool = False
    architectures: tuple[str, ...] = ()
    precedence: int = 0
    model_types: tuple[str, ...] = ()
    identity: Identity | None = None
    folder: Callable[[ModelSpec, Loading], Path | None] | None = None
    local: bool = False
    answers: Mapping[str, str] | None = None

    def loader(self) -> Callable[[ModelSpec, Loading], Any]:
        return load_target(self.load) if isinstance(self.load, str) else self.load

    def answered(self) -> Mapping[str, str]:
        if self.answers is not None:
            return self.answers
        return dict.fromkeys(sorted(self.identity.accepts), "") if self.identity else {}


def _discover(registry: Registry) -> None:
    """The built-in backends (the modules of this package but its private helpers), then those that installed
    packages name in the entry-point group ``faithprobe.backends``."""
    modules = pkgutil.iter_modules(__path__, f"{__name__}.")
    names = [f"{m.name}:BACKEND" for m in modules if not m.name.rpartition(".")[2].startswith("_")]
    points = metadata.entry_points(group=ENTRY_POINT_GROUP)
    names += [p.value if ":" in p.value else f"{p.value}:BACKEND" for p in points]
    for target in names:
        backend: Backend = load_target(target)
        registry.add(backend.name, backend, description=backend.description)


BACKENDS: Registry[Backend] = Registry("model backend", discover=_discover)


def answering(kind: str) -> str:
    """The backends that answer ``kind`` requests, with their conditions: what a model that
    cannot is told to use instead; "" when none does."""
    found = []
    for name in sorted(BACKENDS.names()):
        if (condition := BACKENDS.get(name).answered().get(kind)) is not None:
            found.append(f"{name} ({condition})" if condition else name)
    return ", ".join(found)


DEFAULT_HUB = "hf-causal"  # a folder or Hugging Face id nothing else recognises


def hub_backend_of(config: Mapping[str, Any]) -> str:
    """The hub backend a model folder's ``config.json`` says it is for."""
    hubs = sorted((b for b in map(BACKENDS.get, BACKENDS.names()) if b.hub),
                  key=lambda b: -b.precedence)  # fmt: skip
    archs = config.get("architectures") or []
    for backend in hubs:
        if backend.architectures and any(a.endswith(backend.architectures) for a in archs):
            return backend.name
    for backend in hubs:
        if config.get("model_type") in backend.model_types:
            return backend.name
    return DEFAULT_HUB


def read_config(folder: Path) -> dict:
    """The folder's ``config.json``, or a ModelError saying what to give instead."""
    try:
        return json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) else f"not valid JSON ({err})"
        hint = (
            f"it holds a GGUF file: give it as gguf:{folder}"
            if any(folder.glob("*.gguf"))
            else "give the folder a Hugging Face model was saved in"
        )
        raise ModelError(
            f"model folder {folder}: no readable config.json ({reason}); {hint}"
        ) from None


def recognise(text: str, target: str) -> str:
    """The backend of an unprefixed ``--model``: a folder's by its config, else
    :data:`DEFAULT_HUB` (a Hugging Face id; a path that is none fails its check)."""
    folder = Path(target).expanduser()
    return hub_backend_of(read_config(folder)) if folder.is_dir() else DEFAULT_HUB


def backend_name(text: str) -> str:
    """The backend a ``--model`` string names by its prefix; "" for a folder or an id."""
    prefix = text.partition(":")[0]
    return prefix if prefix in BACKENDS else ""


def _split_settings(text: str) -> tuple[str, dict[str, str]]:
    """``MODEL,KEY=VALUE,...`` -> (MODEL, the settings): a part after a comma is a setting
    when it is ``KEY=VALUE`` with KEY a name; a setting given twice is refused."""
    model, *parts = text.split(",")
    given: dict[str, str] = {}
    for i, part in enumerate(parts):
        key, sep, value = part.partition("=")
        if not sep or not key.strip().isidentifier():
            return ",".join([model, *parts[: i + 1]]), {}
        if key.strip() in given:
            raise UsageError(f"--model {excerpt(text)}: {key.strip()} is given twice: give it once")
        given[key.strip()] = value
    return model, given


def parse_model(text: str, options: Mapping[str, object] | None = None) -> ModelSpec:
    """The one check of a ``--model`` string: its backend (by prefix; a folder's by its
    config; a Hugging Face id's ``hf-causal``), checked by the backend before any data is
    read or any model loaded. ``options``: settings offered to every model
    (``--model-option``), of which it takes those its backend has, under those written in
    the spec."""
    if not isinstance(text, str):
        raise UsageError(f"--model {text!r}: expected a model spec string")
    if not text.strip():  # not the working folder
        raise UsageError(f"--model {text!r}: name a model (`faithprobe list` shows the kinds)")
    model, inline = _split_settings(text)
    backend = backend_name(model)
    target = model.partition(":")[2] if backend else model
    if not backend or BACKENDS.get(backend).hub or BACKENDS.get(backend).local:
        checked(target, "--model", Kind.READ_ANY)  # a folder, a file, or a Hugging Face id
    if not backend:
        backend = recognise(model, target)
    entry = BACKENDS.get(backend)
    keys = [f.name for f in fields(entry.settings)]
    given = {**{k: v for k, v in (options or {}).items() if k in keys}, **inline}
    if unknown := [k for k in inline if k not in keys]:
        known = ", ".join(keys) or "none"
        raise UsageError(
            f"--model {excerpt(text)}: backend {backend} has no setting {excerpt(unknown[0])}; "
            f"its settings: {known}"
        )
    settings = parse(entry.settings, given, f"backend {excerpt(backend)}")
    spec = ModelSpec(model, backend, target, target if entry.hub else model, settings)
    if entry.check is not None:
        entry.check(spec)
    return spec
