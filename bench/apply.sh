#!/usr/bin/env bash
# apply_patch in the real OpenCode host, side by side: one `opencode run`
# per mode and patch size against a scripted fake provider, each run
# sending CALLS apply_patch calls (default 6) that change every file of the
# project (1, 3 and 10 files of 400 lines), ROUNDS runs per mode and size
# (default 3), interleaved. A call's time is the host's own record of its
# tool part (from running to result, plugin hooks included). Modes:
#   host     the host's own apply_patch, no plugin
#   rewrite  the host's own apply_patch behind slim's plugin (slim rescues
#            the patch in the before hook)
#   apply    slim's apply mode (slim hooks install --opencode --apply): the
#            plugin's apply_patch, which slim writes itself
# Prints the median per mode and size, apply / rewrite and apply / host.
# Goal: apply no slower than the host's tool behind the plugin up to 10
# files. Needs the pinned host: scripts/e2e-setup.sh installs it.
source "$(dirname "$0")/lib.sh"
oc=${SLIM_E2E_OPENCODE:-e2e/node_modules/.bin/opencode}
[[ -x $oc ]] || { echo "bench/apply: no OpenCode at $oc; run scripts/e2e-setup.sh" >&2; exit 2; }
settle "$out/slim"
go run ./bench/apply -opencode "$oc" -slim "$out/slim" -rounds "${ROUNDS:-3}" -calls "${CALLS:-6}" -sizes "${SIZES:-1,3,10}"
