#!/bin/sh
# slim-managed: git hook shim, version 1 (slim hooks install --git; slim hooks uninstall --git restores the previous hook)
# Runs the hook that was here before slim (moved aside to @HOOK@.pre-slim), then
# "slim git-hook @HOOK@". A missing slim, or an exit other than 0 or 5, lets the commit pass.
hook=@HOOK@
here=$(dirname "$0")
if [ -x "$here/$hook.pre-slim" ]; then
	"$here/$hook.pre-slim" "$@" || exit $?
fi
slim=${SLIM_BIN:-slim}
if ! command -v "$slim" >/dev/null 2>&1; then
	echo "slim: warning: $hook checks skipped: slim not found (put it on PATH or set SLIM_BIN)" >&2
	exit 0
fi
"$slim" git-hook "$hook" "$@"
rc=$?
case $rc in
0) exit 0 ;;
5) exit 1 ;;
*)
	echo "slim: warning: $hook checks skipped: slim git-hook exited with $rc" >&2
	exit 0
	;;
esac
