#!/usr/bin/env bash
# Builds tools/exchangeop, the token exchange server (RFC 8693) of the
# identity tests (internal/testenv's ExchangeOP helper), into the cache the
# other test servers use: $HOME/.cache/vmcp/bin/exchangeop-v3.52.0 (the
# zitadel/oidc version it is built on; VMCP_BIN_CACHE overrides the
# directory). make rebuilds it when its source changes; this script always
# builds. Under a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v3.52.0
CACHE="${VMCP_BIN_CACHE:-$HOME/.cache/vmcp/bin}"
OUT="$CACHE/exchangeop-$VERSION"
mkdir -p "$CACHE"
tmp="$OUT.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd tools/exchangeop && nice -n 10 "${GO:-go}" build -o "$tmp" .)
mv "$tmp" "$OUT"
echo "exchangeop $VERSION at $OUT"
