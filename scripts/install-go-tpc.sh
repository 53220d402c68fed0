#!/usr/bin/env bash
# Installs go-tpc v1.0.7 (the MySQL-only release the Go module proxy serves) into .cache/bin when
# it is not there yet: the TPC-C interop tests and bench/vs_gotpc.sh run it. Needs Go.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=".cache/bin/go-tpc"
version="v1.0.7"
if [ -x "$bin" ] && [ -f "$bin.version" ] && [ "$(cat "$bin.version")" = "$version" ]; then
    exit 0
fi
if ! command -v go >/dev/null; then
    echo "error: go-tpc needs Go to build, and go is not on PATH" >&2
    echo "hint: install Go (https://go.dev/dl) or put a go-tpc $version binary at $bin" >&2
    exit 1
fi
mkdir -p .cache/bin
GOBIN="$PWD/.cache/bin" go install "github.com/pingcap/go-tpc/cmd/go-tpc@$version"
echo "$version" > "$bin.version"
