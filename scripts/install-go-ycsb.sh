#!/usr/bin/env bash
# Installs go-ycsb v1.0.3 into .cache/bin, with its workload files in .cache/go-ycsb-workloads,
# when not there yet: bench/vs_goycsb.sh runs it. Needs Go. Its go.mod has replace directives, so
# `go install pkg@version` refuses it: the module is downloaded and built as the main module.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=".cache/bin/go-ycsb"
version="v1.0.3"
if [ -x "$bin" ] && [ -f "$bin.version" ] && [ "$(cat "$bin.version")" = "$version" ]; then
    exit 0
fi
if ! command -v go >/dev/null; then
    echo "error: go-ycsb needs Go to build, and go is not on PATH" >&2
    echo "hint: install Go (https://go.dev/dl) or put a go-ycsb $version binary at $bin" >&2
    exit 1
fi
mkdir -p .cache/bin
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dir="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/pingcap/go-ycsb@$version" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
echo "building go-ycsb $version (a few minutes the first time: it links many database clients)"
(cd "$work/src" && go build -o "$PWD/../go-ycsb" ./cmd/go-ycsb)
mv "$work/go-ycsb" "$bin"
rm -rf .cache/go-ycsb-workloads
cp -r "$work/src/workloads" .cache/go-ycsb-workloads
echo "$version" > "$bin.version"
