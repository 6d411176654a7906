#!/usr/bin/env bash
# Builds the Jaeger all-in-one that the tracing tests run (Jaeger v2, the
# OpenTelemetry-collector-based cmd/jaeger, configured by a YAML file) from
# the tools module tools/jaeger, whose go.mod pins it (go get -tool), into
# a cache outside the tree: $VMCP_BIN_CACHE (default $HOME/.cache/vmcp/bin)
# as jaeger-<version>, with a jaeger symlink beside it. The tests
# (internal/testenv/jaeger.go) look for it there. A build that is already
# cached is reused. It is a large program: several minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../tools/jaeger"
GO=${GO:-go}
cache=${VMCP_BIN_CACHE:-$HOME/.cache/vmcp/bin}
version=$($GO list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)
out="$cache/jaeger-$version"
if [ -x "$out" ]; then
  echo "jaeger $version at $out (cached)"
  exit 0
fi
mkdir -p "$cache"
# Build beside the final name and rename, so that an interrupted build
# never leaves a half-written binary that looks cached.
$GO build -trimpath -o "$out.tmp" github.com/jaegertracing/jaeger/cmd/jaeger
mv "$out.tmp" "$out"
ln -sf "jaeger-$version" "$cache/jaeger"
echo "jaeger $version at $out"
