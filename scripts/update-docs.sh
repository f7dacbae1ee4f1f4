#!/usr/bin/env bash
# Copies the documentation generated from ODS (build/docs: dialect, ops,
# attributes, types, passes) into docs/generated/, where it is committed and
# readable without a build. test/Docs/generated-docs.test fails when the
# copy is stale; run this script after changing a .td file.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
ninja -C "$BUILD_DIR" mlir-doc >/dev/null
rm -rf "$ROOT/docs/generated"
mkdir -p "$ROOT/docs/generated"
(cd "$BUILD_DIR/docs" && find . -name '*.md' -print0 | xargs -0 cp --parents -t "$ROOT/docs/generated")
echo "updated docs/generated from $BUILD_DIR/docs"
