#!/usr/bin/env bash
# The test suite: formatting, a tidy go.mod and go.sum, vet, every Go test
# with the race detector (the CLI scripts and the plugin's Node tests
# included), repeated runs of one deadline race, then the real-host
# end-to-end tests on their own, so they do
# not compete for the cores with the race-instrumented packages. The
# end-to-end tests skip when e2e/node_modules has no pinned OpenCode
# (scripts/e2e-setup.sh installs it); SLIM_E2E=require turns a missing host
# into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [[ -n "$unformatted" ]]; then
	echo "gofmt needed:" >&2
	echo "$unformatted" >&2
	exit 1
fi
if ! tidy=$(go mod tidy -diff); then
	echo "go.mod and go.sum are not tidy (run go mod tidy):" >&2
	echo "$tidy" >&2
	exit 1
fi
go vet ./...
go test -race -timeout 20m $(go list ./... | grep -v '/e2e$')
# A revive's admission answered at its deadline may end either way but
# must register once: one run sweeps seven delays around the deadline, so
# 29 more runs make about 200 tries of that race.
go test -timeout 10m -count=29 -run '^TestReviveWhoseAdmissionLandsAtItsDeadlineRegistersExactlyOnce$' ./tasks
# The patched copy of the CLI library (third_party/urfave-cli, a replace in
# go.mod) is another module: ./... does not hold its tests.
go test -timeout 5m github.com/urfave/cli/v2
# So is the patched markdown converter (third_party/html-to-markdown): the
# tests of its own that need no module outside it;
# third_party/vendor-html-to-markdown.sh --upstream-tests runs all of them.
go test -timeout 5m github.com/JohannesKaufmann/html-to-markdown/v2/...
go test -timeout 15m ./e2e/...
