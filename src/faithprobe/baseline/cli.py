"""``faithprobe baseline heuristics``: the heuristic QA baselines on a SQuAD-format file.

Writes ``predictions.parquet`` (one row per heuristic x question, with its EM and F1),
``scores.csv`` (every estimate, numeric), ``scores.md`` (the summary table, also
printed) and ``run.json`` (what wrote them) into ``--out``, replaced whole; an existing
``--out`` that faithprobe did not write is refused unless ``--force``, as ``run`` does.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from faithprobe.console import command_line, log, print_table, user_errors
from faithprobe.numbers import SEEDS, number_option
from faithprobe.paths import Kind, path_option
from faithprobe.sentences import DEFAULT_SPLITTER, SPLITTERS
from faithprobe.subcommands import ForceFolder, command_group

baseline_app = command_group("Baselines to set models against (heuristic QA).")


@baseline_app.command("heuristics")
def heuristics(
    data: Annotated[Path, path_option(Kind.READ_FILE, "SQuAD-format JSON file (SQuAD, Quoref)")],
    out: Annotated[
        Path, path_option(Kind.WRITE_FOLDER, "folder for predictions.parquet and scores.*")
    ],
    limit: Annotated[
        int | None, typer.Option(min=1, help="questions to answer (seeded sample; default all)")
    ] = None,
    seed: Annotated[
        int, number_option(*SEEDS, int, help="seeds the question sample and the bootstrap")
    ] = 0,
    splitter: Annotated[
        str, typer.Option(help=f"sentence splitter: {', '.join(SPLITTERS)}")
    ] = DEFAULT_SPLITTER,
    answer_types: Annotated[
        Path | None,
        path_option(
            Kind.READ_FOLDER,
            "answer-type classifier (faithprobe train answer-types): adds the extractor "
            "entity-trained, the entity of the type it predicts",
        ),
    ] = None,
    force: ForceFolder = False,
) -> None:
    """Pick a sentence (first, token overlap, longest common subsequence, MiniLM
    similarity, oracle), extract a phrase (typed entity, noun chunk, whole sentence), and
    score every combination (Ray Choudhury et al., Machine reading, fast and slow)."""
    from faithprobe.atomic import write_json, write_parquet
    from faithprobe.baseline.scoring import score_rows, scores
    from faithprobe.datasets.qa_formats import read_qa
    from faithprobe.errors import UsageError
    from faithprobe.heuristics.extraction import TypedEntity, default_extractors
    from faithprobe.heuristics.predict import predict, sample
    from faithprobe.heuristics.type_classifier import AnswerTypeClassifier
    from faithprobe.output_folders import MARKER, check_target, replaced_whole
    from faithprobe.report.heuristics import scores_table
    from faithprobe.report.tables import write_tables
    from faithprobe.runner import package_versions
    from faithprobe.sentences import check_splitter

    with user_errors("nothing was written"):
        check_target(out, force=force)  # --out's rule, before any work
        started = time.perf_counter()
        check_splitter(splitter)
        examples = sample(read_qa(data, format="squad", splitter=splitter), limit, seed)
        if not examples:
            raise UsageError(f"{data}: no questions to answer")
        extractors = default_extractors()
        if answer_types is not None:
            trained = AnswerTypeClassifier(answer_types)
            extractors.append(TypedEntity(trained, name="entity-trained"))
        predictions = score_rows(predict(examples, extractors=extractors, splitter=splitter))
        table = scores_table(scores(predictions, seed))
        with replaced_whole(out) as staging:  # whole, with the mark of a folder of ours
            write_parquet(staging / "predictions.parquet", predictions)
            write_tables({table.name: table}, staging)
            record = {"kind": "baseline", "command": command_line()}
            write_json(staging / MARKER, {**record, "versions": package_versions()})
        seconds = time.perf_counter() - started
        print_table(table.display, f"{table.title}: {data.name}, {len(examples)} questions")
        log(f"{seconds:.0f} s; tables and predictions in {out}")
