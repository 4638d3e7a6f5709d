# `make run` and `make test` are the two commands a newcomer needs (README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint bench clean

# The compiled modules (setup.py) are rebuilt whenever their source changes.
$(STAMP): pyproject.toml setup.py service/scoring.py service/serialize.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/maubinh serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/hands.py
	$(BIN)/python bench/scoring.py
	$(BIN)/python bench/advisor.py
	$(BIN)/python bench/load.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info *.so service/*.so
