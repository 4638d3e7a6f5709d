# `make run` and `make test` are the two commands a newcomer needs (README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

REDOCLY_VERSION := 2.77.0
REDOCLY := .tools/node_modules/.bin/redocly

.PHONY: run test lint lint-contract tools bench clean

# The compiled modules (setup.py) are rebuilt whenever their source changes.
$(STAMP): pyproject.toml setup.py $(wildcard service/scoring/*.py) service/serialize.py service/hands.py service/patterns.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/maubinh serve

# Redocly CLI, pinned, from the npm registry into .tools/ (needs node and npm).
$(REDOCLY):
	npm install --no-save --no-audit --no-fund --prefix .tools @redocly/cli@$(REDOCLY_VERSION)

tools: $(REDOCLY)

lint: $(STAMP) lint-contract
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# openapi.yaml under Redocly's recommended rules (redocly.yaml): 0 errors, 0 warnings.
lint-contract: $(REDOCLY)
	$(REDOCLY) lint openapi.yaml --config redocly.yaml --max-problems 50

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/hands.py
	$(BIN)/python bench/scoring.py
	$(BIN)/python bench/advisor.py
	$(BIN)/python bench/cli.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/hostile.py

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache build *.egg-info *.so service/*.so
