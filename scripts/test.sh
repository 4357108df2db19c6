#!/usr/bin/env bash
# The test suite: formatting, vet, and every Go test with the race detector
# (which includes the CLI scripts, the plugin's Node tests and, when
# e2e/node_modules holds the pinned OpenCode, the real-host end-to-end tests;
# SLIM_E2E=require turns a missing host into a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:-} -tags=urfave_cli_no_docs"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [[ -n "$unformatted" ]]; then
	echo "gofmt needed:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test -race -timeout 20m ./...
