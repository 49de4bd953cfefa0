"""What the Hugging Face backends share: a target that is a model folder or a Hugging Face
id, checked before anything loads, recognised by its ``config.json``, loaded by the
backend class's ``from_pretrained`` under its settings (device, dtype, sharding, revision:
:class:`~faithprobe.subjects.local_settings.HubSettings`), and deferred (for a backend with
an identity) when it is a local folder."""

from __future__ import annotations

from pathlib import Path

from faithprobe.errors import ModelError
from faithprobe.registry import load_target
from faithprobe.subjects.backends import Backend, Loading, read_config
from faithprobe.subjects.identity import Identity
from faithprobe.subjects.local_settings import HubSettings
from faithprobe.subjects.spec import ModelSpec


def check(spec: ModelSpec) -> None:
    """A file instead of a folder, a path that does not exist and is no Hugging Face id, a
    folder without a readable config.json, a device that is not here or a dtype it lacks:
    told before anything is read."""
    path = Path(spec.target).expanduser()
    if path.exists() and not path.is_dir():
        if path.suffix.lower() == ".gguf":
            raise ModelError(f"model path {path} is a GGUF file; give it as gguf:{spec.target}")
        raise ModelError(f"model path {path} is a file; give the model's folder")
    if not path.exists() and ("/" not in spec.target or spec.target.startswith((".", "/", "~"))):
        raise ModelError(
            f"model {spec.text!r} is not 'embedded', gguf:PATH, an existing folder, or a "
            "Hugging Face id (owner/name)"
        )
    if path.is_dir():
        read_config(path)
    spec.settings.check()


def folder(spec: ModelSpec, loading: Loading) -> Path | None:
    """The local folder a deferred model's fingerprint is read from (none for a Hugging
    Face id, or a folder whose own code would run)."""
    path = Path(spec.target).expanduser()
    return path if path.is_dir() and not spec.settings.trust_remote_code else None


def load(cls: str):
    """The loader of a backend whose subject class ``cls`` (``"module:Class"``) has
    ``from_pretrained``."""

    def load_pretrained(spec: ModelSpec, loading: Loading):
        try:
            return load_target(cls).from_pretrained(
                spec.target, batch_size=loading.batch_size, settings=spec.settings
            )
        except OSError as err:
            exists = Path(spec.target).expanduser().exists()
            where = "folder" if exists else "Hugging Face id (is the network reachable?)"
            raise ModelError(f"cannot load model {spec.text!r} as a {where}: {err}") from err

    return load_pretrained


def hub_backend(
    name: str,
    description: str,
    cls: str,
    *,
    identity: Identity,
    deferrable: bool = True,
    **kwargs,
) -> Backend:
    """A backend of models in folders or on the Hugging Face Hub, loaded by ``cls`` (whose
    kinds and versions are ``identity``); ``deferrable``: a local folder's fingerprint is
    known from its files (False for a backend that mixes in what it reads off the loaded
    model)."""
    return Backend(
        name, description, load=load(cls), check=check, settings=HubSettings, hub=True,
        identity=identity, folder=folder if deferrable else None, **kwargs,
    )  # fmt: skip
