#!/usr/bin/env bash
# Validates .goreleaser.yaml with the pinned goreleaser (from the Go module
# proxy) and, with --build, builds a snapshot of every target into dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
GORELEASER_VERSION=v2.15.1
bin="${GOBIN:-$(go env GOPATH)/bin}/goreleaser"
if ! "$bin" --version 2>/dev/null | grep -q "${GORELEASER_VERSION#v}"; then
	echo "installing goreleaser $GORELEASER_VERSION" >&2
	CGO_ENABLED=0 go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi
"$bin" check
if [[ "${1:-}" == "--build" ]]; then
	"$bin" build --snapshot --clean
	ls dist/
fi
