# The two commands of a fresh machine (only Python 3.11+ needed):
#
#   make train   set up .venv, then 5 minutes of DMC self-play and its evaluation table
#   make test    set up .venv, then lint, the test suite and the strict documentation build
#   (make test-slow: what make test leaves out, the long reference sweeps at full size, marked slow,
#   and the end-to-end runs through Ray, SB3, TorchRL, RLlib, Tianshou, notebooks, a browser and a pseudo-terminal, marked integration)
#
# Set-up is done once: .venv is created if missing, and the packages are
# (re)installed only when pyproject.toml is newer than the stamp .venv/.installed.
# The CPU build of torch goes in first: an unpinned torch pulls a multi-GB CUDA build.

PYTHON := python3
VENV := .venv
TORCH := torch==2.13.0
# extra pip arguments for torch, e.g. make install TORCH_PIP_ARGS="--index-url URL" for another CPU wheel index
# (these variables are set with := so that only the command line overrides them, not the environment)
TORCH_PIP_ARGS :=
EXTRAS := env,train,dev,peers,docs,rl,ray,web,interop
TRAIN_ARGS := --config configs/default.yaml --max-minutes 5 --overwrite
SITE_DIR := build/site
# pytest worker processes of make test (pytest-xdist): auto = one per core; 0 runs the suite in this process
TEST_WORKERS := auto

BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# every recipe runs with the venv's tools first on PATH (tests start `python` and console scripts)
export PATH := $(abspath $(BIN)):$(PATH)
export VIRTUAL_ENV := $(abspath $(VENV))
# Material for MkDocs prints a banner about MkDocs 2.0 on every build otherwise
export NO_MKDOCS_2_WARNING := 1

.DEFAULT_GOAL := help
.PHONY: help install train test test-slow lint typecheck pytest docs serve-docs

help:
	@echo "make train   set up .venv if needed, then train by self-play for 5 minutes and print the evaluation table"
	@echo "make test    set up .venv if needed, then ruff, mypy, mkdocs build --strict and pytest (what CI runs)"
	@echo "make test-slow  the tests marked slow or integration (reference sweeps, end-to-end runs; CI runs them too)"
	@echo "make docs    build the documentation site into $(SITE_DIR) (strict)"
	@echo "make serve-docs  the site at http://127.0.0.1:8000 while you edit"
	@echo "make install only the set-up"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed, found " + sys.version.split()[0] + " ($(PYTHON)); try make PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	@echo "== installing into $(VENV): $(TORCH) (CPU build) first, then the project with extras [$(EXTRAS)]"
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check $(TORCH_PIP_ARGS) $(TORCH)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e ".[$(EXTRAS)]"
	@touch $@

install: $(STAMP)

train: $(STAMP)
	python -m train.run $(TRAIN_ARGS)

lint: $(STAMP)
	ruff check .

typecheck: $(STAMP)
	mypy

pytest: $(STAMP)
	python -m pytest -q -n $(TEST_WORKERS) -m "not slow and not integration"

docs: $(STAMP)
	mkdocs build --strict --site-dir $(SITE_DIR)

serve-docs: $(STAMP)
	mkdocs serve

# lint and the docs first: they fail in seconds, the test suite takes minutes;
# the tests marked slow or integration (pyproject.toml, [tool.pytest.ini_options] markers) are
# make test-slow's: make test is the quick loop, CI runs both. The quick loop runs over
# TEST_WORKERS processes (pytest-xdist; the tests share no files); make test-slow runs in one,
# since its Ray, browser and terminal sessions start processes and servers of their own
test: $(STAMP)
	ruff check .
	mypy
	mkdocs build --strict --site-dir $(SITE_DIR)
	python -m pytest -q -n $(TEST_WORKERS) -m "not slow and not integration"

test-slow: $(STAMP)
	python -m pytest -q -m "slow or integration"
