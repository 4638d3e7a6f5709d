# `make run` and `make test` are the two commands a newcomer needs (README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

REDOCLY_VERSION := 2.77.0
OPENAPI_TS_VERSION := 7.13.0
TYPESCRIPT_VERSION := 5.9.3
K8S_MODELS_VERSION := 6.0.0
NODE_BIN := .tools/node_modules/.bin
TOOLS := .tools/.installed-$(REDOCLY_VERSION)-$(OPENAPI_TS_VERSION)-$(TYPESCRIPT_VERSION)-$(K8S_MODELS_VERSION)
TS_CLIENT := tests/system/clients/typescript

.PHONY: run test lint lint-contract lint-client tools bench clean wheels base-image image spark-image

SERVE_STAMP := $(VENV)/.serve-stamp
DEV_STAMP := $(VENV)/.dev-stamp
# The compiled modules (setup.py) are rebuilt whenever their source changes.
SOURCES := pyproject.toml setup.py $(wildcard service/scoring/*.py) service/serialize.py service/game/hand_strengths.py service/game/hands.py service/game/patterns.py \
	service/game/hand_words.py service/support/strict_json.py service/support/json_rules.py service/trust/canonical_json.py service/documents.py $(wildcard service/validation/*.py) \
	service/bulk/engine.py service/trust/rulings_in_bulk.py service/trust/receipts.py service/trust/receipt_lines.py service/trust/answer_signatures.py

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `make run` installs what serving needs and nothing more; `make test` adds the dev extra.
$(SERVE_STAMP): $(SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): $(SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(SERVE_STAMP)

run: $(SERVE_STAMP)
	$(BIN)/maubinh serve

# The wheel and every wheel it and its extras need, for the images and the install tests: pip inside a
# container build cannot reach PyPI here, so the images install from this folder with --no-index.
# async-timeout: redis needs it on Python < 3.11.3, the images' Debian Python (3.11.2), and pip on a
# newer host would not fetch it.
WHEELHOUSE := build/wheelhouse
$(WHEELHOUSE)/.stamp: pyproject.toml setup.py $(shell find service -type f -not -name '*.so' -not -path '*/__pycache__/*')
	rm -rf $(WHEELHOUSE)
	$(PYTHON) -m pip wheel --quiet --wheel-dir $(WHEELHOUSE) '.[spark,otel]' 'async-timeout>=4.0.3'
	touch $@

wheels: $(WHEELHOUSE)/.stamp

# Images, built with Debian's podman from a base bootstrapped from Debian's packages (no registry
# needed): deploy/base-image.sh tags it with the name the Dockerfiles' FROM uses.
PODMAN := podman
PODMAN_LIMITS := --ulimit nofile=20000:20000 --ulimit nproc=32768:32768
IMAGE := localhost/maubinh:latest
WHEELS = $(shell cat $(WHEELHOUSE)/*.whl | sha256sum | cut -c1-16)
SPARK_IMAGE := localhost/maubinh-spark:latest

base-image:
	deploy/base-image.sh

image: wheels base-image
	$(PODMAN) build $(PODMAN_LIMITS) --format docker --build-arg WHEELS=$(WHEELS) --file deploy/Dockerfile --tag $(IMAGE) .

spark-image: wheels base-image
	$(PODMAN) build $(PODMAN_LIMITS) --format docker --build-arg WHEELS=$(WHEELS) --file deploy/spark/Dockerfile --tag $(SPARK_IMAGE) .

# Redocly CLI, openapi-typescript, TypeScript and the Prometheus Operator's CRD validators (for the
# monitoring component), pinned, from the npm registry into .tools/ (needs node and npm); in one
# install, since npm prunes what an install does not name.
$(TOOLS):
	npm install --no-save --no-audit --no-fund --prefix .tools @redocly/cli@$(REDOCLY_VERSION) \
		openapi-typescript@$(OPENAPI_TS_VERSION) typescript@$(TYPESCRIPT_VERSION) \
		@kubernetes-models/prometheus-operator@$(K8S_MODELS_VERSION)
	touch $@

tools: $(TOOLS)

lint: $(DEV_STAMP) lint-contract lint-client
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

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

bench: $(DEV_STAMP)
	$(BIN)/python bench/hands.py
	$(BIN)/python bench/scoring.py
	$(BIN)/python bench/advisor.py
	$(BIN)/python bench/cli.py
	$(BIN)/python bench/bulk.py
	$(BIN)/python bench/receipts.py
	$(BIN)/python bench/log.py
	$(BIN)/python bench/signing.py
	$(BIN)/python bench/signing.py --against log
	$(BIN)/python bench/load.py
	$(BIN)/python bench/tails.py
	$(BIN)/python bench/instructions.py
	$(BIN)/python bench/tracing.py
	$(BIN)/python bench/hostile.py

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache build *.egg-info *.so service/*.so
