"""``faithprobe train``: training recipes on the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from faithprobe.errors import FaithprobeError, UsageError
from faithprobe.prompts import DEFAULT_TEMPLATE
from faithprobe.training.multiple_choice import DEFAULT_LIMIT, MCTrainConfig

train_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Fine-tune small task models for the suites to probe.",
)
console = Console(stderr=True)


@train_app.command("mc")
def train_mc_command(
    train: Annotated[
        Path, typer.Option(help="training set: Social IQA jsonl (labels .lst beside) or other")
    ],
    dev: Annotated[Path, typer.Option(help="dev set, same formats; scored at the end")],
    out: Annotated[Path, typer.Option(help="folder for the model, checkpoints, training.json")],
    base: Annotated[
        Path | None,
        typer.Option(help="local encoder folder (default: the embedded all-MiniLM-L6-v2)"),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            min=1, help=f"train on a seeded random subset of N examples (default {DEFAULT_LIMIT})"
        ),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="train on the whole training set")] = False,
    epochs: Annotated[float, typer.Option(min=0.01)] = MCTrainConfig.epochs,
    lr: Annotated[float, typer.Option(help="peak learning rate")] = MCTrainConfig.learning_rate,
    batch_size: Annotated[int, typer.Option(min=1)] = MCTrainConfig.batch_size,
    max_length: Annotated[
        int, typer.Option(min=16, help="tokens per (prompt, choice); the prompt is truncated")
    ] = MCTrainConfig.max_length,
    warmup: Annotated[
        float, typer.Option(help="warm-up, as a fraction of the steps")
    ] = MCTrainConfig.warmup_ratio,
    weight_decay: Annotated[float, typer.Option()] = MCTrainConfig.weight_decay,
    seed: Annotated[int, typer.Option(help="seeds the subset, the head, dropout, order")] = 0,
    template: Annotated[
        str, typer.Option(help="prompt template (first segment); must match evaluation")
    ] = DEFAULT_TEMPLATE,
    max_steps: Annotated[
        int | None, typer.Option(min=1, help="stop after N optimizer steps (smoke runs)")
    ] = None,
    save_steps: Annotated[
        int, typer.Option(min=1, help="checkpoint every N steps")
    ] = MCTrainConfig.save_steps,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="train again into an --out holding a model")
    ] = False,
    restart: Annotated[
        bool, typer.Option("--restart", help="discard checkpoints instead of resuming")
    ] = False,
    keep_checkpoints: Annotated[
        bool, typer.Option("--keep-checkpoints", help="keep <out>/checkpoints after success")
    ] = False,
) -> None:
    """Fine-tune an encoder as a multiple-choice classifier (loadable by the hf-mc backend).

    Runs resume from <out>/checkpoints after an interruption: run the same command again.
    """
    from faithprobe.training.multiple_choice import train_mc

    try:
        if full and limit is not None:
            raise UsageError("give --limit or --full, not both")
        cfg = MCTrainConfig(
            train=train,
            dev=dev,
            out=out,
            base=base,
            limit=None if full else (limit or DEFAULT_LIMIT),
            epochs=epochs,
            learning_rate=lr,
            batch_size=batch_size,
            max_length=max_length,
            warmup_ratio=warmup,
            weight_decay=weight_decay,
            seed=seed,
            template=template,
            max_steps=max_steps,
            save_steps=save_steps,
            extra={"command": "faithprobe " + " ".join(sys.argv[1:])},
        )
        summary = train_mc(
            cfg,
            overwrite=overwrite,
            restart=restart,
            keep_checkpoints=keep_checkpoints,
            log=lambda msg: console.print(msg, highlight=False),
        )
    except FaithprobeError as err:
        console.print(f"[bold red]error:[/] {err}", highlight=False)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print(
            f"[yellow]interrupted[/]: checkpoints are in {out / 'checkpoints'}; "
            "run the same command again to resume"
        )
        raise typer.Exit(130) from None
    acc = summary["dev_accuracy"]
    minutes = summary["train_seconds"] / 60
    print(
        f"dev accuracy {acc['value']:.4f} [95% CI {acc['ci_low']:.4f}, {acc['ci_high']:.4f}] "
        f"({acc['correct']}/{acc['n']}); {summary['train']['examples_used']} training "
        f"examples, {summary['steps']} steps, {minutes:.1f} min; model in {out}"
    )
