# `make test` is the one command that installs what the tests need and runs them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: test install tools lint corpus

install: $(BIN)/reclass

$(BIN)/reclass: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# Real Puppet, Salt and Ansible for the integration tests (apt needs root; skipped otherwise).
tools: install
	sh scripts/install-test-tools.sh $(BIN)

test: tools
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

corpus: install
	$(BIN)/python ../shared/conformance/run_corpus.py --cmd "$(CURDIR)/$(BIN)/reclass -b {inventory} {args} {mode} -o json"

# Side-by-side benchmark against kapicorp-reclass and reclass-rs (doc/performance.rst).
.PHONY: bench
bench: install
	$(PYTHON) bench/run.py
