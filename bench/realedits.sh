#!/usr/bin/env bash
# Real-edit corpus: slim rescue on real edit history. For each pinned
# release triple A < B < C of a Go module (bench/realedits/modules.txt),
# every Go file that changed from A to B and from A to C gives one case:
# the Codex patch A -> C applied to B, judged against git merge-file of B,
# A and C (a clean merge is the expected file; a conflict must be refused
# with the file untouched). Prints one row per class: right, wrong apply,
# false refusal, unsafe apply. Exits 1 on any wrong or unsafe apply.
# The versions are fetched with `go mod download` into the module cache.
# Extra arguments go to the program, e.g. -v (list every case that is not
# right) or -dump DIR (write those cases out).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v git >/dev/null || { echo "realedits: git is needed for git diff and git merge-file" >&2; exit 2; }
exec go run ./bench/realedits "$@"
