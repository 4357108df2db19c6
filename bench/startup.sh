#!/usr/bin/env bash
# Start-up benchmark: a bare Go binary that prints one line, side by side
# with `slim version` and `slim worktree check`, interleaved, 31 runs each
# (override with RUNS). Prints medians and ratios to the bare binary.
# Goal: slim within 1.5x of the bare binary.
source "$(dirname "$0")/lib.sh"
go build -o "$out/compare" ./bench/compare
repo="$out/repo"
mkdir -p "$repo/src"
git -C "$repo" init -q
echo 'package main' > "$repo/src/main.go"
"$out/compare" -n "${RUNS:-31}" \
	bare="$out/bare" ";;" \
	slim-version="$out/slim" version ";;" \
	slim-worktree-check="$out/slim" worktree check --root "$repo" src/main.go src/new.go
