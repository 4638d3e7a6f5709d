# `make run` and `make test` are the two commands a newcomer needs (README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

REDOCLY_VERSION := 2.77.0
OPENAPI_TS_VERSION := 7.13.0
TYPESCRIPT_VERSION := 5.9.3
NODE_BIN := .tools/node_modules/.bin
TOOLS := .tools/.installed-$(REDOCLY_VERSION)-$(OPENAPI_TS_VERSION)-$(TYPESCRIPT_VERSION)
TS_CLIENT := tests/system/clients/typescript

.PHONY: run test lint lint-contract lint-client tools bench clean

# The compiled modules (setup.py) are rebuilt whenever their source changes.
$(STAMP): pyproject.toml setup.py $(wildcard service/scoring/*.py) service/serialize.py service/hands.py service/patterns.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/maubinh serve

# Redocly CLI, openapi-typescript and TypeScript, pinned, from the npm registry into .tools/ (needs
# node and npm); in one install, since npm prunes what an install does not name.
$(TOOLS):
	npm install --no-save --no-audit --no-fund --prefix .tools @redocly/cli@$(REDOCLY_VERSION) \
		openapi-typescript@$(OPENAPI_TS_VERSION) typescript@$(TYPESCRIPT_VERSION)
	touch $@

tools: $(TOOLS)

lint: $(STAMP) lint-contract lint-client
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# openapi.yaml under Redocly's recommended rules (redocly.yaml): 0 errors, 0 warnings.
lint-contract: $(TOOLS)
	$(NODE_BIN)/redocly lint openapi.yaml --config redocly.yaml --max-problems 50

# A TypeScript client generated with openapi-typescript's default options compiles against the
# requests an integrator writes (every member the API fills in left out).
lint-client: $(TOOLS)
	$(NODE_BIN)/openapi-typescript openapi.yaml -o $(TS_CLIENT)/maubinh.d.ts --silent
	$(NODE_BIN)/tsc -p $(TS_CLIENT)/tsconfig.json

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
