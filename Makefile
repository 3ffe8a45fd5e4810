# Entry points. `make run` and `make test` work on a fresh clone with only
# Python 3.11 and make: they create .venv and install what they need.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test worker lint format bench migrations-check deploy-check next-django \
	next-django-env next-django-tests clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The demo runs on SQLite with tasks in-process: no services needed, even
# when DATABASE_URL or REDIS_URL are set in the calling shell. Links in its
# e-mails point at the address it serves; the periodic tasks run in-process.
# The demo study's connected system is the shipped demo server (llm/demo_server.py),
# started on a loopback port beside runserver and stopped with it.
LLM_DEMO_PORT ?= 8001
DEMO_ENV := env -u DATABASE_URL -u REDIS_URL SITE_URL=http://$(HOST):$(PORT) DEMO_SCHEDULER=1 \
	LLM_ALLOW_HTTP_LOOPBACK=1 DEMO_LLM_URL=http://127.0.0.1:$(LLM_DEMO_PORT)/v1
run: $(STAMP)
	mkdir -p var
	$(DEMO_ENV) $(BIN)/python manage.py migrate --no-input
	$(DEMO_ENV) $(BIN)/python manage.py compile_translations
	$(DEMO_ENV) $(BIN)/python manage.py seed_demo
	$(BIN)/python -m llm.demo_server --host 127.0.0.1 --port $(LLM_DEMO_PORT) --delay 1 & demo=$$!; \
	trap 'kill $$demo 2>/dev/null' EXIT INT TERM; \
	$(DEMO_ENV) $(BIN)/python manage.py runserver $(HOST):$(PORT)

# The test session compiles the translations itself (tests/conftest.py). The
# tests run on every core (pytest-xdist; what each worker has of its own:
# tests/parallel.py); PYTEST_ARGS="-n0 tests/llm" runs some in one process.
# COVERAGE=1 (CI) measures the apps and prints the total, failing under the
# floor set in pyproject.toml's [tool.coverage.report]: for the whole suite.
PYTEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(if $(filter 1,$(COVERAGE)),--cov) $(PYTEST_ARGS)

worker: $(STAMP)
	@test -n "$$REDIS_URL" || (echo "Set REDIS_URL (e.g. redis://127.0.0.1:6379/0) to run a worker." && exit 1)
	$(BIN)/celery -A shs_platform worker --beat --loglevel=info

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)
	$(BIN)/python -m tests.bench $(BENCH_ARGS)

# The code that keeps a compiled query or writes SQL of its own
# (surveys/prepared.py, surveys/protocol/statements.py) against the newest
# Django release, which needs Python 3.12 or later (run by .ci/run): a
# Django upgrade that changes what they build on fails here first.
NEXT_VENV := .venv-next
NEXT_PYTHON ?= $(shell for p in python3.13 python3.12 \
	$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[23]*/bin/python3 2>/dev/null); do \
	$$p -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && echo $$p && break; done)
NEXT_TESTS := tests/surveys/test_prepared_lookups.py tests/surveys/test_protocol_statements.py \
	tests/surveys/test_request_cost.py
# next-django-env alone builds the environment: CI builds it in the
# background while lint runs, then runs next-django-tests.
next-django: next-django-env next-django-tests

next-django-env:
	@test -n "$(NEXT_PYTHON)" || (echo "next-django needs Python 3.12 or later (NEXT_PYTHON=...)" && exit 1)
	test -x $(NEXT_VENV)/bin/python || $(NEXT_PYTHON) -m venv $(NEXT_VENV)
	$(NEXT_VENV)/bin/python -m pip install --quiet -e ".[dev]"
	$(NEXT_VENV)/bin/python -m pip install --quiet --upgrade "Django>=6.0"

next-django-tests:
	$(NEXT_VENV)/bin/python -m django --version
	$(NEXT_VENV)/bin/python -m pytest -p no:cacheprovider $(NEXT_TESTS)

# Fails when a model change has no migration yet (run by .ci/run).
migrations-check: $(STAMP)
	$(BIN)/python manage.py makemigrations --check --dry-run

# Django's deployment checklist with production settings, warnings included
# (run by .ci/run). The secret is made up per run: the check only needs one.
DEPLOY_ENV := DEBUG=0 ALLOWED_HOSTS=shs.example.org CSRF_TRUSTED_ORIGINS=https://shs.example.org
deploy-check: $(STAMP)
	$(DEPLOY_ENV) SECRET_KEY="ci-$$(head -c 48 /dev/urandom | base64 | tr -d '/+=')" \
	  $(BIN)/python manage.py check --deploy --fail-level WARNING

clean:
	rm -rf $(VENV) $(NEXT_VENV) var staticfiles .pytest_cache .ruff_cache .mypy_cache .coverage .coverage.*
