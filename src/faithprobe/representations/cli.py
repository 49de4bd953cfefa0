"""``faithprobe analyze``: analyses of models beyond their answers.

``faithprobe analyze representations`` compares QA models' final-layer representations of
an original story and its intervened versions (SQuAD and CoQA: TS, TS-R; HotpotQA: OS-R)
(:mod:`faithprobe.representations.analysis`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from faithprobe.console import command_line, log, print_table, progress_bars, user_errors
from faithprobe.datasets.coqa import COQA_RULES
from faithprobe.numbers import SEEDS, number_option
from faithprobe.paths import Kind, path_option
from faithprobe.representations.config import (
    DEFAULT_LIMIT,
    POOLINGS,
    AnalysisConfig,
    parse_named_encoders,
)
from faithprobe.subcommands import ForceFolder, command_group
from faithprobe.subjects.hf.qa_windows import DEFAULT_MAX_LENGTH

analyze_app = command_group("Analyse models beyond their answers (hidden representations).")


@analyze_app.command("representations")
def representations(
    model: Annotated[
        list[str],
        typer.Option(
            help="QA model folder or Hugging Face id, optionally named NAME=PATH "
            "(repeat: two or more, e.g. --model OT=models/qa-ot --model IBT=models/qa-ibt)"
        ),
    ],
    data: Annotated[Path, path_option(Kind.READ_FILE, "SQuAD-format, CoQA or HotpotQA JSON file")],
    out: Annotated[
        Path,
        path_option(Kind.WRITE_FOLDER, "folder for the Parquet tables, metrics, tables, plots"),
    ],
    heldout_of: Annotated[
        Path | None,
        path_option(
            Kind.READ_FOLDER,
            "model folder whose training split to respect: only held-out documents",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="items (questions) to analyse")] = DEFAULT_LIMIT,
    seed: Annotated[
        int, number_option(*SEEDS, int, help="seeds the item sample and the bootstrap")
    ] = 0,
    max_length: Annotated[
        int, typer.Option(min=8, help="tokens per input; only this first window is analysed")
    ] = DEFAULT_MAX_LENGTH,
    batch_size: Annotated[int, typer.Option(min=1, help="inputs per forward pass")] = 16,
    pooling: Annotated[
        Literal[POOLINGS],
        typer.Option(
            help="the summary token compared: auto (the model's own: last for XLNet, first "
            "for BERT-like encoders), first ([CLS], <s>) or last"
        ),
    ] = "auto",
    history_turns: Annotated[
        int,
        typer.Option(
            min=0,
            help="CoQA: previous turns, with their gold answers, before each question "
            "(the faithfulness suite's -o history_turns)",
        ),
    ] = AnalysisConfig.history_turns,
    coqa_rules: Annotated[
        Literal[COQA_RULES],
        typer.Option(
            help="CoQA: faithprobe's reading or the method's (more yes/no spellings; the "
            "history skips unknown answers), the faithfulness suite's -o coqa_rules"
        ),
    ] = AnalysisConfig.coqa_rules,
    force: ForceFolder = False,
) -> None:
    """Cosine similarity of the summary-token ([CLS] for BERT, last for XLNet) and
    shared-token final-layer states between the
    original story (OS) and its truncated (TS) and rationale-removed (TS-R) versions
    (SQuAD, CoQA with its conversation history; HotpotQA: OS and OS-R, the supporting facts
    removed), per model, with the differences between models (Chaturvedi et al., section
    5.2)."""
    from faithprobe.atomic import write_json
    from faithprobe.output_folders import MARKER, check_target, replaced_whole
    from faithprobe.representations.analysis import analyze, write_outputs
    from faithprobe.representations.report import write_report
    from faithprobe.runner import package_versions

    with user_errors("nothing was written"):
        check_target(out, force=force)  # --out's rule, before any model is loaded
        config = AnalysisConfig(
            models=parse_named_encoders(model),
            data=data,
            heldout_of=str(heldout_of) if heldout_of else "",
            limit=limit,
            seed=seed,
            max_length=max_length,
            batch_size=batch_size,
            pooling=pooling,
            history_turns=history_turns,
            coqa_rules=coqa_rules,
        )
        with progress_bars() as progress:
            analysis = analyze(config, progress=progress)
        with replaced_whole(out) as staging:  # whole, with the mark of a folder of ours
            paths = write_outputs(analysis, staging)
            tables, _, plots = write_report(
                analysis.metrics, analysis.similarities, analysis.tokens, staging
            )
            record = {"kind": "representations", "command": command_line()}
            write_json(staging / MARKER, {**record, "versions": package_versions()})
        for table in tables.values():
            print_table(table.display, table.title)
        cut = ", ".join(f"{m['name']} {m['items_truncated']}" for m in analysis.metrics["models"])
        log(f"first window only (max_length {max_length}); items cut: {cut}")
        log(
            f"written to {out}: {', '.join(p.name for p in paths.values())}, "
            f"tables/ ({len(tables)} tables), plots/ ({len(plots)} histograms)"
        )
