#!/usr/bin/env bash
# Builds the Ory Hydra authorization server that the OAuth tests run
# (internal/testenv's Hydra helper) once, into the same cache as the
# Temporal CLI: $HOME/.cache/vmcp/bin/hydra-v2.3.0 (VMCP_BIN_CACHE
# overrides the directory). A binary already there is reused.
#
# Hydra is built from tools/hydra, its own module, because
# `go install github.com/ory/hydra/v2@v2.3.0` cannot build it: Hydra's
# go.mod replaces github.com/gobuffalo/pop/v6 with Ory's fork, and only a
# main module's replace counts, so tools/hydra/go.mod repeats it. The tests
# run Hydra with DSN=memory, an in-memory SQLite, which needs cgo and the
# sqlite build tag. About 10 minutes on 2 cores, under nice.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v2.3.0
CACHE="${VMCP_BIN_CACHE:-$HOME/.cache/vmcp/bin}"
OUT="$CACHE/hydra-$VERSION"
if [ -x "$OUT" ]; then
  echo "hydra $VERSION at $OUT"
  exit 0
fi
mkdir -p "$CACHE"
echo "building hydra $VERSION into $OUT (about 10 minutes)"
tmp="$OUT.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd tools/hydra && CGO_ENABLED=1 nice -n 10 "${GO:-go}" build \
  -tags sqlite,sqlite_omit_load_extension -o "$tmp" github.com/ory/hydra/v2)
mv "$tmp" "$OUT"
echo "hydra $VERSION at $OUT"
