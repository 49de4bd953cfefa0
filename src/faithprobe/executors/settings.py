"""Where a run's models compute, as a spec: ``--executor NAME[,KEY=VALUE...]`` with the
settings declared once, as a frozen dataclass per executor (like the backends' settings,
:mod:`faithprobe.options`), and ``--placement MODEL@KEY=VALUE,...`` for one model's own
share of a Ray cluster."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from faithprobe.errors import UsageError, excerpt
from faithprobe.numbers import DAY
from faithprobe.options import check_among, option, parse, record

# the counts a Ray setting takes: more actors, CPUs or GPUs than a cluster of this size has
# is a typo (the cluster's own are compared when it is reached: ray_pool.check_fits)
WORKERS = (1, 4096)
CPUS = (0, 4096)
GPUS = (0, 1024)
ADDRESS_FORMS = "auto, HOST:PORT or ray://HOST:PORT"
_HOSTNAME = re.compile(r"(?!-)[\w-]{1,63}(?<!-)(\.(?!-)[\w-]{1,63}(?<!-))*\.?", re.ASCII)


def split_address(text: str) -> tuple[str, int] | None:
    """``(host, port)`` of a Ray address ``HOST:PORT`` or ``ray://HOST:PORT`` (an IPv6 host
    in brackets, ``[::1]:6379``); None for ``auto`` or anything else."""
    host, sep, port = text.removeprefix("ray://").rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
    elif not _HOSTNAME.fullmatch(host):
        return None
    if not sep or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


@dataclass(frozen=True)
class InProcessSettings:
    """The in-process executor takes no settings: the models compute in this process."""


@dataclass(frozen=True)
class RaySettings:
    """Ray actors, one model replica each, on this machine or a Ray cluster."""

    address: str | None = option(
        None,
        "a running Ray cluster (HEAD:6379, ray://HEAD:10001, auto); empty: start Ray on this "
        "machine and shut it down at the end",
    )
    workers: int = option(2, "actors per model, one model replica each", range=WORKERS)
    gpus_per_worker: float | None = option(
        None,
        "GPUs Ray reserves for each actor (empty: 1 if this machine sees CUDA, else 0)",
        range=GPUS,
    )
    cpus_per_worker: float = option(1.0, "CPUs Ray reserves for each actor", range=CPUS)
    num_cpus: int | None = option(
        None,
        "without an address: the CPUs of the Ray started here (empty: all)",
        range=(1, CPUS[1]),
    )
    max_replacements: int = option(
        3,
        "actors started per model in place of lost ones (a killed actor, a lost node); a "
        "lost actor's unfinished requests go to the model's other actors meanwhile",
        range=(0, WORKERS[1]),
    )
    replace_timeout: float = option(
        600.0,
        "seconds a model with no live actor waits for a replacement to load before its work fails",
        range=(1, DAY),
    )
    max_workers: int | None = option(
        None,
        "audit: the most actors a model grows to once every model has started, on the workers "
        "of models that have finished (empty: no limit; equal to workers: no growing)",
        range=WORKERS,
    )

    def __post_init__(self) -> None:
        if self.address is not None and self.address != "auto" and not split_address(self.address):
            raise UsageError(
                f"option address={excerpt(self.address)}: expected {ADDRESS_FORMS} (a port "
                "from 1 to 65535; an IPv6 host in brackets, [::1]:6379)"
            )


@dataclass(frozen=True)
class Placement:
    """One model's share of the cluster (``--placement MODEL@...``); None: the executor's."""

    workers: int | None = option(None, "this model's actors", range=WORKERS)
    gpus_per_worker: float | None = option(None, "GPUs per actor of this model", range=GPUS)
    cpus_per_worker: float | None = option(None, "CPUs per actor of this model", range=CPUS)


EXECUTOR_SETTINGS: dict[str, type] = {"inprocess": InProcessSettings, "ray": RaySettings}


@dataclass(frozen=True)
class ExecutorSpec:
    """``name``: ``inprocess`` or ``ray``; ``settings``: an instance of its settings
    dataclass; ``placements``: model name or ``--model`` text -> its :class:`Placement`."""

    name: str = "inprocess"
    settings: Any = field(default_factory=InProcessSettings)
    placements: Mapping[str, Placement] = field(default_factory=dict)

    def placed(self, name: str, text: str = "") -> RaySettings:
        """The Ray settings of the model named ``name`` (given as ``text``): the
        executor's, with its placement over them."""
        placement = self.placements.get(name) or self.placements.get(text) or Placement()
        given = {
            f.name: v for f in fields(placement) if (v := getattr(placement, f.name)) is not None
        }
        return replace(self.settings, **given)

    def record(self) -> dict[str, object]:
        """For run.json."""
        placements = {model: record(p) for model, p in self.placements.items()}
        return {
            "name": self.name,
            **record(self.settings),
            **({"placements": placements} if placements else {}),
        }


def _pairs(text: str, parts: Sequence[str], flag: str) -> dict[str, str]:
    given: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key.strip().isidentifier():
            raise UsageError(f"{flag} {excerpt(text)}: {excerpt(part)} is not KEY=VALUE")
        if key.strip() in given:
            raise UsageError(f"{flag} {excerpt(text)}: {key.strip()} given twice")
        given[key.strip()] = value.strip()
    return given


def parse_executor(
    text: str,
    placements: Sequence[str] = (),
    aliases: Mapping[str, object] | None = None,
) -> ExecutorSpec:
    """``--executor NAME[,KEY=VALUE...]`` and the ``--placement`` texts, checked; ``aliases``:
    settings given under older flags (``run``'s ``--address``...), None where not given."""
    name, *parts = text.split(",")
    name = name.strip()
    check_among(name, EXECUTOR_SETTINGS, f"--executor {excerpt(text)}")
    given: dict[str, object] = _pairs(text, parts, "--executor")
    for key, value in (aliases or {}).items():
        if value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if name != "ray":
            raise UsageError(f"{flag} is for --executor ray")
        if key in given and str(given[key]) != str(value):
            raise UsageError(
                f"--executor ...,{key}={excerpt(given[key])} and {flag} {excerpt(str(value))} "
                "disagree: give the setting once"
            )
        given[key] = value
    settings = parse(EXECUTOR_SETTINGS[name], given, f"executor {name!r}")
    return ExecutorSpec(name, settings, _placements(placements, name))


def _placements(texts: Sequence[str], executor: str) -> dict[str, Placement]:
    """``MODEL@KEY=VALUE,...`` per model (split at the last ``@``: a model's name may hold
    one, a setting's value does not)."""
    out: dict[str, Placement] = {}
    for text in texts:
        model, sep, rest = text.rpartition("@")
        if not sep or not model.strip() or not rest.strip():
            raise UsageError(f"--placement {excerpt(text)}: expected MODEL@KEY=VALUE[,KEY=VALUE]")
        if executor != "ray":
            raise UsageError(f"--placement {excerpt(text)} is for --executor ray")
        if model.strip() in out:
            raise UsageError(f"--placement: model {excerpt(model.strip())} placed twice")
        given = _pairs(text, rest.split(","), "--placement")
        out[model.strip()] = parse(Placement, given, f"--placement {model.strip()!r}")
    return out


def check_placed(executor: ExecutorSpec, models: Sequence[Any]) -> None:
    """Refuse a ``--placement`` naming none of ``models`` (their specs): a typo would
    silently leave a model on the executor's defaults."""
    known = {str(m) for m in models} | {m.name for m in models}
    if unknown := [p for p in executor.placements if p not in known]:
        raise UsageError(
            f"--placement {excerpt(unknown[0])}: no --model of that name or text "
            f"(the models: {', '.join(sorted({m.name for m in models}))})"
        )
