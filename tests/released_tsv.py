"""Small folders in the distractors method's released format (Pandia & Ettinger 2021), written
from our own generated stories: one folder per condition, a model sub-folder, one
tab-separated file with the released columns; every row told about its own entity (the base
rows about one name, the variants about another), the base rows repeated in each folder, the
``_profession``/``_object`` rows repeated in ``_distractor``, and attractors between entity
and fact (``Swapped``) for related attractors only, as in the released items; and a run of
the suite on a data file or folder with the reference reader (:func:`run_reader`)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.generators.distractors import DistractorConfig, generate

HEADER = ["sentence", "distance_from_beginning", "distance_from_masked_token", "target_prob",
          "ordered_items", "target_occupation", "count_attractors", "relative_prob",
          "relative_rank"]  # fmt: skip
FILE = "complete_data_For_MultipleEntityObjectDistractorAccuracyGPT2Small.csv"
# folder suffix -> (attractor types, position) of the generated variants it holds
FOLDERS = {
    "distractor": (("B", "T"), "after"),
    "distractorSwapped": (("B", "T"), "between"),
    "with_neutral_distractor": (("unrelated",), "after"),
    "profession": (("B",), "after"),
    "object": (("T",), "after"),
}
SETTINGS = {"single": "single_entity", "multi": "multiple_entity"}


def write_released(root: Path, item_sets: tuple[str, ...] = ("capitals",), n_max: int = 1,
                   masked: bool = False) -> Path:  # fmt: skip
    """Write the condition folders under ``root`` (``n_max``: attractors up to; ``masked``:
    the whole sentence with ``[MASK]`` at the blank). Returns ``root``."""
    items = generate(DistractorConfig(names_per_pair=2, item_sets=item_sets), 0)
    bases = [i for i in items if i.features["base_id"] is None]
    first = {b.features["background"]: b for b in reversed(bases)}  # one name per pair
    second = {b.id for b in bases} - {b.id for b in first.values()}
    for setting, prefix in SETTINGS.items():
        for suffix, (kinds, position) in FOLDERS.items():
            rows = [_row(b, masked) for b in first.values()]
            rows += [
                _row(v, masked)
                for v in items
                if v.features["base_id"] in second
                and v.features["setting"] == setting
                and v.features["attractor_type"] in kinds
                and v.features["position"] == position
                and v.features["n_attractors"] <= n_max
                and v.id.endswith("|0")  # one subset per count
            ]
            folder = root / f"{prefix}_{suffix}" / "GPT2Small"
            folder.mkdir(parents=True)
            with open(folder / FILE, "w", newline="") as f:
                writer = csv.writer(f, delimiter="\t")
                writer.writerow(HEADER)
                writer.writerows(rows)
    return root


def _row(item, masked: bool) -> list:
    sentence = f"{item.context} [MASK] ." if masked else item.context
    ranked = list(item.candidates[1:]) + [item.candidates[0]]  # a model's ranking
    return [sentence, 0, 0, 0.1, repr(ranked), item.target, item.features["n_attractors"], 1, 1]


def run_reader(data: Path, out: Path) -> dict:
    """Run the distractors suite on ``data`` with the faithful reference reader into ``out``
    (its cache beside it); return its ``metrics.json``."""
    args = ["run", "distractors", "--data", str(data), "--model", "ref:reader",
            "--out", str(out), "--cache-dir", str(out.parent / "cache")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads((out / "metrics.json").read_text())
