// Package e2e holds slim's end-to-end tests: a real, pinned OpenCode host
// (npm package opencode-ai, installed into e2e/node_modules by
// scripts/e2e-setup.sh) runs scripted tool calls from a fake model provider
// on 127.0.0.1 (fixtures/fakeprovider) in a throw-away git project, with the
// thin plugin installed by the real `slim hooks install --opencode`.
//
// The tests assert on what the host did to the files and on the tool results
// the model was sent, never on the host's exit code alone: a plugin that fails
// to load does not fail a run.
//
// Without node_modules/.bin/opencode the tests skip; with SLIM_E2E=require
// (as in CI) a missing or broken host fails them instead. SLIM_E2E=off skips
// them always. SLIM_E2E_KEEP=DIR keeps each run's project, logs and request
// log under DIR for inspection.
//
// The package has no non-test code; this file only documents it.
package e2e
