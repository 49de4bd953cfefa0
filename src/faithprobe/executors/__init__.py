"""Where a subject's requests are computed: in this process (the default) or sharded across
pools of Ray actors, one model replica per actor, on this machine or a Ray cluster
(:mod:`~faithprobe.executors.ray_pool`); chosen by a spec, ``--executor NAME,KEY=VALUE...``
(:mod:`~faithprobe.executors.settings`)."""

from faithprobe.executors.ray_pool import RayExecutor, RaySubject, check_reachable
from faithprobe.executors.settings import (
    ExecutorSpec,
    InProcessSettings,
    Placement,
    RaySettings,
    check_placed,
    parse_executor,
)

__all__ = [
    "ExecutorSpec",
    "InProcessSettings",
    "Placement",
    "RayExecutor",
    "RaySettings",
    "RaySubject",
    "check_placed",
    "check_reachable",
    "parse_executor",
]
