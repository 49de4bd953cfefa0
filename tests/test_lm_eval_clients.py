"""lm-evaluation-harness's own API clients against ``faithprobe serve``: the predictions of
its in-process model (benchmarks/lm_eval_serve.py, on the tiny Llama and four items made
from a small SQuAD-format file). Skipped where lm-eval's API extra is not installed
(``pip install '.[bench]'``); the figures on the embedded model are in docs/models.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lm_eval", reason="needs pip install '.[bench]'")
pytest.importorskip("tenacity", reason="lm-eval's API clients need lm-eval[api]")

BENCHMARK = Path(__file__).parents[1] / "benchmarks" / "lm_eval_serve.py"
PARAGRAPHS = {
    "Alice": "Alice lives in Paris with her dog. She walks to the market by the river "
    "every morning.",
    "Bob": "Bob drives a bus in Rome. He starts his first round at six and ends it at noon.",
    "Carol": "Carol grows apples on a farm. Her trees give more fruit after a wet spring "
    "than a dry one.",
    "Dave": "Dave plays the violin at night. His neighbours open their windows to hear "
    "him play old songs.",
}


def test_lm_eval_clients_predict_as_its_in_process_model(tiny_chat_llama_dir, tmp_path):
    squad = tmp_path / "squad.json"
    articles = [{"title": title, "paragraphs": [{"context": text, "qas": []}]}
                for title, text in PARAGRAPHS.items()]  # fmt: skip
    squad.write_text(json.dumps({"version": "1.1", "data": articles}))
    out = tmp_path / "results.json"
    command = [sys.executable, str(BENCHMARK), "--model", str(tiny_chat_llama_dir),
               "--squad", str(squad), "--limit", "4", "--batch-size", "2",
               "--out", str(tmp_path / "items"), "--json", str(out), "--threads", "1"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["items"] == 4
    for client in ("local-completions (token ids)", "local-completions (strings)"):
        assert result[client]["differing_predictions"] == 0, client
        assert result[client]["differing_acc_norm_predictions"] == 0, client
        assert result[client]["differing_greedy_flags"] == 0, client
        assert result[client]["max_abs_loglik_diff"] < 1e-4, client
    chat = result["local-chat-completions (replies by letter)"]
    assert chat["differing_replies"] == 0 and any(chat["first_replies"])
    items = (tmp_path / "items" / "hellaswag_from_squad.jsonl").read_text().splitlines()
    first = json.loads(items[0])
    assert first["ctx_a"] == "Alice lives in Paris with her dog."
    assert first["ctx_b"] == "she walks to" and "the market by the river" in " ".join(
        first["endings"]
    )
