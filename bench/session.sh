#!/usr/bin/env bash
# A whole OpenCode session in the real host, with and without slim: one
# `opencode run` per session against the scripted fake provider, whose
# model sends 60 tool calls in 35 turns, some of several parallel calls
# (read 20, grep 8, glob 6, bash 12 cheap commands, apply_patch 10 small
# edits that succeed, todowrite 4). Modes, alternating, RUNS sessions each
# (default 7) after WARMUP each (default 1) that do not count:
#   no plugin    the host alone
#   slim plugin  the plugin as `slim hooks install --opencode` writes it
#                (default settings: a resident slim answers the hooks)
# and with PERCALL=1 also the plugin with SLIM_SERVE=0 (one slim process
# per hook call), with NOSYNC=1 the plugin with SLIM_SERVE_SYNC=0 (the
# resident's answers read through the host's event loop). Prints medians of the `opencode run` wall time, its CPU
# time and the sum of the tool parts' times (the host's own record of
# each call, plugin hooks included), the ratios to no plugin (goal: within
# 3%, ratio <= 1.03) and the median of the ratios within each round, the
# per-call median of each tool, and the load average. Every call
# must complete as it should and every edit land, or it stops. Each
# session takes 8-15 s on 2 cores. Needs the pinned host:
# scripts/e2e-setup.sh installs it.
source "$(dirname "$0")/lib.sh"
oc=${SLIM_E2E_OPENCODE:-e2e/node_modules/.bin/opencode}
[[ -x $oc ]] || { echo "bench/session: no OpenCode at $oc; run scripts/e2e-setup.sh" >&2; exit 2; }
percall=()
[[ ${PERCALL:-0} == 1 ]] && percall=(-percall)
[[ ${NOSYNC:-0} == 1 ]] && percall+=(-nosync)
go run ./bench/session -opencode "$oc" -slim "$out/slim" -runs "${RUNS:-7}" -warmup "${WARMUP:-1}" "${percall[@]}"
