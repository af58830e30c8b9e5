#!/bin/sh
# Refreshes the vendored conformance scenarios (tests/conformance/) from the shared corpus
# (../shared/conformance next to the repository, or the directory given as argument).
# The vendored copy is what the tests and `make corpus` use, so a clone alone runs the whole
# suite; this script only brings in a newer shared corpus. Expected outputs are copied
# unchanged. Scenarios that exist only in tests/conformance (written in this repository,
# listed in tests/conformance/LOCAL) are kept.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SOURCE=${1:-$ROOT/../shared/conformance}
TARGET=$ROOT/tests/conformance

if [ ! -f "$SOURCE/run_corpus.py" ]; then
    echo "refresh-conformance: no corpus at $SOURCE (expected $SOURCE/run_corpus.py);" \
         "the vendored copy in tests/conformance is unchanged" >&2
    exit 0
fi

mkdir -p "$TARGET"
for entry in "$SOURCE"/* ; do
    name=$(basename "$entry")
    rm -rf "${TARGET:?}/$name"
    cp -R "$entry" "$TARGET/$name"
done
# Scenarios that disappeared from the shared corpus disappear here too, except local ones.
for entry in "$TARGET"/* ; do
    name=$(basename "$entry")
    [ -e "$SOURCE/$name" ] && continue
    [ "$name" = LOCAL ] && continue
    if [ -f "$TARGET/LOCAL" ] && grep -qx "$name" "$TARGET/LOCAL"; then
        continue
    fi
    rm -rf "${TARGET:?}/$name"
done
echo "refresh-conformance: $(find "$TARGET" -name scenario.json | wc -l) scenarios in $TARGET" >&2
