"""A Ray that faithprobe starts itself (``--executor ray`` without an address): where its
files go, and its token.

Left to itself, ``ray.init()`` puts a session's sockets, logs and spilled objects under
``/tmp/ray`` (22 MB for a short run, kept after it) and, as Ray 2.5x turns token
authentication on for a new cluster, writes a token to ``~/.ray/auth_token`` with the
umask's mode (0644: readable by every user of the machine). A Ray of faithprobe's own
instead keeps its session in a temporary folder of mode 0700 (Ray makes the folder it is
given readable and writable by all, so it is given one inside), removed when Ray is shut
down, and takes its token from the environment of this process (``RAY_AUTH_TOKEN``, which
Ray's own processes inherit; ``/proc/PID/environ`` is readable by its owner only), so
nothing is written to ``~`` or ``/tmp/ray``. A token or token file the user gives Ray
(``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``, or ``RAY_AUTH_MODE=disabled``) is left as it
is. An existing cluster (an address) is Ray's and its owner's: docs/models.md says what it
writes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

TOKEN, TOKEN_PATH, MODE = "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"


@cache
def _token() -> str:
    """One token per process: Ray's token loader keeps the first one it reads, so a second
    Ray started by this process must be given the same."""
    return secrets.token_hex(32)  # 256 bits, as Ray's own generator makes


@contextmanager
def own_ray(ray, **init: object) -> Iterator[str]:
    """``ray.init(address="local", **init)`` with its session in a temporary folder (its
    path is yielded) and its token in this process's environment (module docstring); on
    leaving, Ray is shut down, the environment restored and the folder removed."""
    folder = tempfile.mkdtemp(prefix="faithprobe-ray-")  # mode 0700: Ray makes its own
    saved = {name: os.environ.get(name) for name in (TOKEN, MODE)}  # folder 0777, so inside
    if not (os.environ.get(TOKEN) or os.environ.get(TOKEN_PATH) or os.environ.get(MODE)):
        os.environ[TOKEN] = _token()
    try:
        ray.init(address="local", _temp_dir=os.path.join(folder, "ray"), **init)
        yield folder
    finally:
        if ray.is_initialized():
            ray.shutdown()
        for name, value in saved.items():  # ray.init sets RAY_AUTH_MODE=token for good
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)
