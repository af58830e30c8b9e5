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
	$(MAKE) test-compiled

# The optional compiled build (doc/performance.rst): a `pip install .` into its own virtualenv
# compiles the hot modules with Cython; the engine tests and the corpus run again against it,
# from tests/ so that the installed package is imported, not the checkout.
COMPILED_VENV ?= .venv-compiled
COMPILED_TESTS ?= test_compiled_build.py test_resolve.py test_merge.py test_classes.py \
	test_shared_walks.py test_properties.py test_queries.py test_output_json.py \
	test_output_yaml.py test_corpus.py
.PHONY: test-compiled
test-compiled:
	$(PYTHON) -m venv $(COMPILED_VENV)
	$(COMPILED_VENV)/bin/pip install --quiet --upgrade pip
	$(COMPILED_VENV)/bin/pip install --quiet --force-reinstall . pytest hypothesis
	cd tests && RECLASS_NG_EXPECT_COMPILED=1 ../$(COMPILED_VENV)/bin/python -m pytest \
		-p no:cacheprovider -q $(COMPILED_TESTS)

corpus: install
	$(BIN)/python ../shared/conformance/run_corpus.py --cmd "$(CURDIR)/$(BIN)/reclass -b {inventory} {args} {mode} -o json"

# Side-by-side benchmark against kapicorp-reclass and reclass-rs (doc/performance.rst).
.PHONY: bench
bench: install
	$(PYTHON) bench/run.py
