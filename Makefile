# `make test` is the one command that installs what the tests need and runs them. It works
# whether or not a virtualenv already exists (the README's first command makes one without the
# test extras): the test extras are recorded by their own stamp file, not by `.venv/bin/reclass`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TEST_EXTRAS_STAMP := $(VENV)/.test-extras-installed
CORPUS := tests/conformance

.PHONY: test install tools lint corpus refresh-conformance

install: $(TEST_EXTRAS_STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(TEST_EXTRAS_STAMP): setup.cfg pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

# Real Puppet (apt, root only), Salt and Ansible for the integration tests, and kapicorp-reclass
# 2.0.0 in its own virtualenv for the byte-compatibility tests, the bench's peers (bench/.peers).
tools: install
	sh scripts/install-test-tools.sh $(BIN)

test: tools
	$(BIN)/ruff check .
	$(BIN)/mypy reclass_ng
	$(BIN)/python -m pytest
	$(MAKE) test-compiled

# The optional compiled build (doc/performance.rst): a `pip install .` into its own virtualenv
# compiles the hot modules with Cython; the engine tests and the corpus run again against it,
# from tests/ so that the installed package is imported, not the checkout.
COMPILED_VENV ?= .venv-compiled
COMPILED_TESTS ?= test_compiled_build.py test_resolve.py test_merge.py test_classes.py \
	test_shared_walks.py test_properties.py test_queries.py test_output_json.py \
	test_output_yaml.py test_corpus.py test_subtrees.py test_yaml_load.py test_entity.py \
	test_storage_yaml_fs.py test_hostile_inventories.py test_yaml_block.py test_prepare.py \
	test_provenance.py test_provenance_recorder.py test_explain.py test_deep_values.py \
	test_walk_recording.py test_subtree_recording.py test_observe.py test_forked_lanes.py \
	test_syntax.py test_syntax_grammar.py test_values.py test_output_yaml_scalars.py \
	test_storage_regular_file.py
.PHONY: test-compiled
test-compiled:
	$(PYTHON) -m venv $(COMPILED_VENV)
	$(COMPILED_VENV)/bin/pip install --quiet --upgrade pip
	$(COMPILED_VENV)/bin/pip install --quiet --force-reinstall . pytest hypothesis
	cd tests && RECLASS_NG_EXPECT_COMPILED=1 $(abspath $(COMPILED_VENV))/bin/python -m pytest \
		-p no:cacheprovider -q $(COMPILED_TESTS)

# The vendored conformance scenarios (tests/conformance); fails when they are missing.
corpus: install
	@test -f $(CORPUS)/run_corpus.py || { echo "make corpus: no conformance scenarios in $(CORPUS) (git checkout $(CORPUS))" >&2; exit 1; }
	$(BIN)/python $(CORPUS)/run_corpus.py --cmd "$(CURDIR)/$(BIN)/reclass -b {inventory} {args} {mode} -o json"

# Copies a newer shared corpus (../shared/conformance) over the vendored one.
refresh-conformance:
	sh scripts/refresh-conformance.sh

# Side-by-side benchmark against kapicorp-reclass and reclass-rs (doc/performance.rst).
.PHONY: bench
bench: install
	$(PYTHON) bench/run.py
