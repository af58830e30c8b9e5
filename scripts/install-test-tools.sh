#!/bin/sh
# Installs the real tools the adapter integration tests drive:
#   - puppet-agent from Debian's packages (Puppet 7; only when running as root, apt-get is present
#     and `puppet` is not installed yet); the class catalogue sync runs its Ruby library too,
#   - curl (the documented HTTP examples are run as written),
#   - chromium and chromium-driver from Debian's packages (the explorer's browser tests),
#   - neovim from Debian's packages (the editor test of `reclass-ng lsp`, tests/lsp),
#   - salt and ansible-core from PyPI into the virtualenv,
#   - Kapitan from PyPI into .venv-kapitan in the checkout (see below), with pytest and
#     Kapitan's own tests (its sdist) for tests/kapitan_suite,
#   - kapicorp-reclass 2.0.0 from PyPI into a virtualenv of its own (see the end),
#   - the benchmark's peers (kapicorp-reclass 2.0.0, reclass-rs) into bench/.peers/venv.
# Argument: the virtualenv directory or its bin directory (default .venv). Idempotent and quiet:
# a second run installs nothing and prints nothing.
set -eu

TARGET=${1:-.venv}
if [ -x "$TARGET/pip" ]; then
    BIN=$TARGET
elif [ -x "$TARGET/bin/pip" ]; then
    BIN=$TARGET/bin
else
    echo "install-test-tools: no virtualenv at $TARGET (expected $TARGET/bin/pip)" >&2
    exit 2
fi

# Puppet: the Debian package puts `puppet` on PATH as /usr/bin/puppet.
if ! command -v puppet >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "install-test-tools: installing puppet-agent from Debian's packages" >&2
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            puppet-agent >/dev/null
    else
        echo "install-test-tools: puppet is not installed and apt-get as root is not available;" \
             "the Puppet integration tests will be skipped" >&2
    fi
fi

# curl: the documented HTTP examples are run as written (tests/server/test_catalog_doc_examples.py).
if ! command -v curl >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "install-test-tools: installing curl from Debian's packages" >&2
        apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends curl >/dev/null
    else
        echo "install-test-tools: curl is not installed and apt-get as root is not available" >&2
    fi
fi

# Chromium and its WebDriver for the explorer's browser tests (tests/explorer): Debian's
# packages, driven by Selenium through /usr/bin/chromedriver (nothing downloaded at test time).
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "install-test-tools: installing chromium and chromium-driver from Debian's packages" >&2
        apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends chromium chromium-driver >/dev/null
    else
        echo "install-test-tools: chromium/chromium-driver are not installed and apt-get as" \
             "root is not available; the explorer's browser tests will fail" >&2
    fi
fi

# Neovim for the end-to-end test of `reclass-ng lsp` (tests/lsp/test_neovim.py): headless
# Neovim's own LSP client talks to the server (Debian's 0.7 has vim.lsp.start_client).
if [ ! -x /usr/bin/nvim ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "install-test-tools: installing neovim from Debian's packages" >&2
        apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends neovim >/dev/null
    else
        echo "install-test-tools: neovim is not installed and apt-get as root is not" \
             "available; the editor test of reclass-ng lsp will fail" >&2
    fi
fi

# Salt and Ansible: one pip call so the resolver sees both sets of requirements at once. Exact
# versions: the ones the integration tests were written against (Salt 3007+ is needed for
# master_tops on masterless minions); pinning also spares pip from backtracking through Salt's
# 16 MB source releases.
SALT_REQUIREMENT="salt==3008.3"
ANSIBLE_REQUIREMENT="ansible-core==2.19.14"
missing=""
[ -x "$BIN/salt-call" ] || missing="$missing $SALT_REQUIREMENT"
[ -x "$BIN/ansible-inventory" ] || missing="$missing $ANSIBLE_REQUIREMENT"
if [ -n "$missing" ]; then
    echo "install-test-tools: installing$missing into $BIN/.." >&2
    # shellcheck disable=SC2086  # word splitting of the requirement list is intended
    "$BIN/pip" install --quiet --disable-pip-version-check $missing
fi

# Kapitan (tests/integration/test_kapitan_compile.py): in a virtualenv of its own, .venv-kapitan in
# the checkout, because Kapitan pins dependencies the test virtualenv also has (cryptography,
# jsonschema, ...) and pulls in kapicorp-reclass (its `reclass` backend, which the tests compare
# with) and enum34. This checkout is installed there too (editable), with `kapitan-ng`.
KAPITAN_REQUIREMENT="kapitan==0.36.3"
REPO_DIR="$(cd "$(dirname "$0")/.." && pwd)"
KAPITAN_VENV="$REPO_DIR/.venv-kapitan"
# The checkout's requirements are installed again when setup.cfg has changed since (a copy is kept).
if [ ! -x "$KAPITAN_VENV/bin/kapitan-ng" ] || [ ! -x "$KAPITAN_VENV/bin/kapitan" ] ||
        ! cmp -s "$REPO_DIR/setup.cfg" "$KAPITAN_VENV/reclass-ng-setup.cfg"; then
    echo "install-test-tools: installing $KAPITAN_REQUIREMENT into $KAPITAN_VENV" >&2
    [ -x "$KAPITAN_VENV/bin/pip" ] || "$BIN/python" -m venv "$KAPITAN_VENV"
    "$KAPITAN_VENV/bin/pip" install --quiet --disable-pip-version-check \
        "$KAPITAN_REQUIREMENT" -e "$REPO_DIR[kapitan]"
    cp "$REPO_DIR/setup.cfg" "$KAPITAN_VENV/reclass-ng-setup.cfg"
fi

# Kapitan's own test suite run against reclass-ng (tests/kapitan_suite): pytest beside Kapitan,
# Kapitan's sdists (the wheel has no tests) in .kapitan-suite, and the newest Kapitan that
# setup.cfg's extra allows in a virtualenv of its own when it is not the pinned one.
"$KAPITAN_VENV/bin/python" "$REPO_DIR/scripts/install-kapitan-suite.py" "$KAPITAN_REQUIREMENT"

# kapicorp-reclass 2.0.0, the implementation reclass-ng is byte-compatible with
# (tests/test_kapicorp_bytes.py), in a virtualenv of its own inside ours so that its old
# dependency pins never meet the project's: $BIN/../kapicorp-reclass/bin/reclass.
KAPICORP_VENV=$BIN/../kapicorp-reclass
KAPICORP_REQUIREMENT="kapicorp-reclass==2.0.0"
if [ ! -x "$KAPICORP_VENV/bin/reclass" ]; then
    echo "install-test-tools: installing $KAPICORP_REQUIREMENT into $KAPICORP_VENV" >&2
    "$BIN/python" -m venv "$KAPICORP_VENV"
    "$KAPICORP_VENV/bin/pip" install --quiet --disable-pip-version-check "$KAPICORP_REQUIREMENT"
fi

# The benchmark's peers, kapicorp-reclass 2.0.0 and reclass-rs from PyPI, in bench/.peers/venv:
# tests/test_bench_generator.py renders generated inventories with both. The bench's own
# ensure_peers creates them (nothing when they are there: one version probe).
if [ ! -x "$REPO_DIR/bench/.peers/venv/bin/reclass" ]; then
    echo "install-test-tools: installing the bench's peers into $REPO_DIR/bench/.peers/venv" >&2
fi
"$BIN/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import implementations
implementations.ensure_peers(lambda message: None)' "$REPO_DIR/bench"
