"""What faithprobe's groups of subcommands (``train``, ``baseline``, ``analyze``, ``data``)
share: the settings of a group, and the options that mean the same in each of its commands.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer


def command_group(help: str, **settings: Any) -> typer.Typer:
    """A group of subcommands: no shell-completion options, and its help when it is called
    without a subcommand; ``settings`` are further :class:`typer.Typer` settings."""
    return typer.Typer(add_completion=False, no_args_is_help=True, help=help, **settings)


ForceFolder = Annotated[
    bool, typer.Option("--force", help="replace an --out folder that faithprobe did not write")
]
