import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.generators import comparisons
from faithprobe.generators.comparisons import ComparisonConfig
from faithprobe.generators.distractors import DistractorConfig, generate

runner = CliRunner()


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory, tiny_llama, tiny_gpt2, tiny_tokenizer):
    root = tmp_path_factory.mktemp("models")
    out = []
    for name, model in (("llama", tiny_llama), ("gpt2", tiny_gpt2)):
        model.save_pretrained(root / name)
        tiny_tokenizer.save_pretrained(root / name)
        out.append(root / name)
    return out


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_list_names_everything():
    res = _invoke("list")
    assert res.exit_code == 0
    for word in (
        "distractors",
        "attractors.background",
        "filler",
        "cloze-jsonl",
        "hf-masked",
        "embedded",
    ):
        assert word in res.output


def test_generate_writes_the_dataset(tmp_path):
    out = tmp_path / "d.jsonl"
    res = _invoke("generate", "distractors", "--out", out, "--seed", 2)
    assert res.exit_code == 0, res.output
    lines = out.read_text().splitlines()
    assert len(lines) == len(generate(DistractorConfig(), 2))
    first = json.loads(lines[0])
    assert {"id", "context", "target", "candidates", "suffix", "features"} <= set(first)


def test_generate_reads_the_generators_own_options(tmp_path):
    out = tmp_path / "c.json"
    res = _invoke("generate", "comparisons", "--out", out, "-o", "pairs_per_domain=2",
                  "-o", "domains=films,books", "-o", "part=train")  # fmt: skip
    assert res.exit_code == 0, res.output
    config = ComparisonConfig(pairs_per_domain=2, domains=("films", "books"), part="train")
    assert f"{len(comparisons.generate(config, 0))} items written" in res.output
    res = _invoke("generate", "comparisons", "--out", out, "-o", "pairs=2")
    assert res.exit_code == 2
    assert "generator 'comparisons' has no option 'pairs'; its options: pairs_per_domain" in (
        res.output
    )


def test_run_two_models_end_to_end_and_rebuild_report(tmp_path, model_dirs):
    out = tmp_path / "run"
    res = _invoke(
        "run",
        "distractors",
        "--model",
        model_dirs[0],
        "--model",
        model_dirs[1],
        "--limit",
        36,
        "--batch-size",
        4,
        "--out",
        out,
        "--cache-dir",
        tmp_path / "c",
    )
    assert res.exit_code == 0, res.output
    for name in ("results.parquet", "metrics.json", "run.json", "report.html"):
        assert (out / name).is_file()
    assert list((out / "tables").glob("*.md")) and list((out / "plots").glob("*.png"))
    results = pd.read_parquet(out / "results.parquet")
    assert set(results["subject"]) == {str(d) for d in model_dirs}
    n_variants = (~results["intervention"].isin(["none", "fact_swap"])).sum()
    assert n_variants == 2 * 36  # the critical-fact swaps come with their base items
    metrics = json.loads((out / "metrics.json").read_text())
    est = metrics["estimates"][0]
    assert {"value", "ci_low", "ci_high", "n", "n_clusters", "method"} <= set(est)
    run = json.loads((out / "run.json").read_text())
    assert run["seed"] == 0 and all(s["fingerprint"] for s in run["subjects"])
    before = (out / "metrics.json").read_text()
    (out / "metrics.json").unlink()
    assert _invoke("report", out).exit_code == 0
    assert (out / "metrics.json").read_text() == before


def test_unknown_model_is_one_clear_error(tmp_path):
    res = _invoke("run", "distractors", "--model", "no-such-model", "--out", tmp_path / "r")
    assert res.exit_code == 2
    assert "no-such-model" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "r").exists()


def test_unknown_suite_and_missing_data(tmp_path):
    res = _invoke("run", "nonsense")
    assert res.exit_code == 2 and "unknown suite" in res.output
    res = _invoke("run", "distractors", "--data", tmp_path / "missing.jsonl")
    assert res.exit_code == 2 and "missing.jsonl" in res.output


def test_bad_record_names_file_record_and_field_and_keeps_old_results(tmp_path, model_dirs):
    out = tmp_path / "run"
    good = tmp_path / "good.jsonl"
    assert _invoke("generate", "distractors", "--out", good).exit_code == 0
    res = _invoke(
        "run",
        "distractors",
        "--model",
        model_dirs[0],
        "--data",
        good,
        "--limit",
        12,
        "--out",
        out,
        "--cache-dir",
        tmp_path / "c",
    )
    assert res.exit_code == 0, res.output
    kept = (out / "results.parquet").read_bytes()

    lines = good.read_text().splitlines()
    broken = json.loads(lines[1])
    del broken["target"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(broken), *lines[2:5]]) + "\n")
    res = _invoke("run", "distractors", "--model", model_dirs[0], "--data", bad, "--out", out)
    assert res.exit_code == 2
    assert f"{bad}: record line 2: field 'target': missing" in " ".join(res.output.split())
    assert (out / "results.parquet").read_bytes() == kept

    bad.write_text(lines[0] + "\n{not json\n")
    res = _invoke("run", "distractors", "--model", model_dirs[0], "--data", bad, "--out", out)
    assert res.exit_code == 2 and "line 2" in res.output and "not valid JSON" in res.output

    feature_less = json.loads(lines[60])
    del feature_less["features"]["setting"]
    bad.write_text(lines[0] + "\n" + json.dumps(feature_less) + "\n")
    res = _invoke("run", "distractors", "--model", model_dirs[0], "--data", bad, "--out", out)
    assert res.exit_code == 2 and "features.setting" in res.output


def test_run_rejects_a_bad_executor_and_ray_options_without_ray():
    res = _invoke("run", "distractors", "--executor", "dask")
    assert res.exit_code == 2 and "--executor 'dask'" in res.output
    res = _invoke("run", "distractors", "--address", "10.0.0.1:6379")
    assert res.exit_code == 2 and "--address is for --executor ray" in res.output


def test_a_bug_is_not_disguised_as_a_user_error(monkeypatch, tmp_path):
    """Only the project's own errors become one line and exit 2; anything else (here a
    ValueError from a broken suite) keeps its traceback and exits 1, so it gets reported."""
    from faithprobe.suites.distractors.suite import DistractorsSuite

    def broken(self, data, seed):
        raise ValueError("a bug in the suite")

    monkeypatch.setattr(DistractorsSuite, "pairs", broken)
    res = _invoke("run", "distractors", "--out", tmp_path / "r")
    assert res.exit_code == 1 and isinstance(res.exception, ValueError)
    assert "error: a bug" not in res.stderr


def test_usage_errors_of_the_command_line_are_one_plain_line():
    for args, expect in (
        (["run"], "Missing argument"),
        (["run", "distractors", "--no-such-flag"], "No such option: --no-such-flag"),
        (["run", "distractors", "--limit", "0"], "--limit"),
    ):
        res = _invoke(*args)
        assert res.exit_code == 2
        (line,) = res.stderr.splitlines()
        assert line.startswith("error: ") and expect in line, line
