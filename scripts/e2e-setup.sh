#!/usr/bin/env bash
# Installs what the end-to-end tests (go test ./e2e/...) need:
#   - the pinned OpenCode host, opencode-ai from e2e/package-lock.json, and the
#     pinned ast-grep, @ast-grep/cli, the pinned Claude Code host,
#     @anthropic-ai/claude-code, the pinned Codex CLI, @openai/codex, and the
#     pinned Gemini CLI, @google/gemini-cli, into e2e/node_modules (skipped when the pinned versions are already
#     there); the ast-grep tests of
#     search/astgrep, cmd/slim and e2e run e2e/node_modules/.bin/ast-grep;
#   - ripgrep (rg) on PATH, which the host's grep and glob tools run (without it
#     the host tries to download one from the internet).
# Idempotent. Fails loudly when something cannot be installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
e2e="$here/e2e"
locked() { node -p 'require(process.argv[1]).packages["node_modules/" + process.argv[2]].version' "$e2e/package-lock.json" "$1"; }
want="$(locked opencode-ai)"
want_ag="ast-grep $(locked @ast-grep/cli)"
want_cc="$(locked @anthropic-ai/claude-code) (Claude Code)"
want_cx="codex-cli $(locked @openai/codex)"
want_gm="$(locked @google/gemini-cli)"

die() { echo "e2e-setup: $*" >&2; exit 1; }

command -v node >/dev/null || die "node is not installed"
command -v npm >/dev/null || die "npm is not installed"

have_oc() {
	[ -x "$e2e/node_modules/.bin/opencode" ] || return 0
	OPENCODE_DISABLE_AUTOUPDATE=1 timeout 60 "$e2e/node_modules/.bin/opencode" --version 2>/dev/null || true
}
have_ag() {
	[ -x "$e2e/node_modules/.bin/ast-grep" ] || return 0
	timeout 60 "$e2e/node_modules/.bin/ast-grep" --version 2>/dev/null || true
}
have_cc() {
	[ -x "$e2e/node_modules/.bin/claude" ] || return 0
	DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 timeout 60 "$e2e/node_modules/.bin/claude" --version 2>/dev/null || true
}
have_cx() {
	[ -x "$e2e/node_modules/.bin/codex" ] || return 0
	CODEX_HOME="$(mktemp -d)" timeout 60 "$e2e/node_modules/.bin/codex" --version 2>/dev/null | tail -n1 || true
}
have_gm() {
	[ -x "$e2e/node_modules/.bin/gemini" ] || return 0
	gm_home="$(mktemp -d)"
	HOME="$gm_home" GEMINI_CLI_NO_RELAUNCH=true timeout 60 "$e2e/node_modules/.bin/gemini" --version 2>/dev/null | tail -n1 || true
	rm -rf "$gm_home"
}
have="$(have_oc)"
have_ag_v="$(have_ag)"
have_cc_v="$(have_cc)"
have_cx_v="$(have_cx)"
have_gm_v="$(have_gm)"
if [ "$have" = "$want" ] && [ "$have_ag_v" = "$want_ag" ] && [ "$have_cc_v" = "$want_cc" ] && [ "$have_cx_v" = "$want_cx" ] && [ "$have_gm_v" = "$want_gm" ]; then
	echo "e2e-setup: opencode $have, $have_ag_v, claude $have_cc_v, $have_cx_v and gemini $have_gm_v already installed"
else
	echo "e2e-setup: installing opencode-ai@$want, @ast-grep/cli (${want_ag#ast-grep }), @anthropic-ai/claude-code (${want_cc% (*}), @openai/codex (${want_cx#codex-cli }) and @google/gemini-cli ($want_gm) from e2e/package-lock.json"
	# `npm ci` would be the natural command, but it insists that every optional
	# platform package of opencode-ai is in the lock file, and a lock file can
	# only hold the ones the registry serves. So: `npm install` against the
	# committed lock, then check that it installed the locked versions and left
	# the lock file untouched.
	# npm counts a package whose files were damaged as installed: remove
	# the one that does not answer with its version, so it is installed anew.
	[ "$have" = "$want" ] || rm -rf "$e2e/node_modules/opencode-ai" "$e2e/node_modules/opencode-linux-"*
	[ "$have_ag_v" = "$want_ag" ] || rm -rf "$e2e/node_modules/@ast-grep"
	[ "$have_cc_v" = "$want_cc" ] || rm -rf "$e2e/node_modules/@anthropic-ai/claude-code" "$e2e/node_modules/@anthropic-ai/claude-code-"*
	[ "$have_cx_v" = "$want_cx" ] || rm -rf "$e2e/node_modules/@openai/codex"*
	[ "$have_gm_v" = "$want_gm" ] || rm -rf "$e2e/node_modules/@google/gemini-cli"
	lock_copy="$(mktemp)"
	trap 'rm -f "$lock_copy"' EXIT
	cp "$e2e/package-lock.json" "$lock_copy"
	if ! (cd "$e2e" && npm install --no-audit --no-fund --foreground-scripts); then
		cp "$lock_copy" "$e2e/package-lock.json"
		die "npm install failed (is the npm registry reachable?)"
	fi
	if ! cmp -s "$lock_copy" "$e2e/package-lock.json"; then
		cp "$lock_copy" "$e2e/package-lock.json"
		die "npm install wanted to change e2e/package-lock.json; refresh it on purpose with npm install in e2e/"
	fi
	have="$(have_oc)"
	[ "$have" = "$want" ] || die "installed opencode reports version '$have', want '$want'"
	have_ag_v="$(have_ag)"
	[ "$have_ag_v" = "$want_ag" ] || die "e2e/node_modules/.bin/ast-grep --version says '$have_ag_v', want '$want_ag'"
	have_cc_v="$(have_cc)"
	[ "$have_cc_v" = "$want_cc" ] || die "e2e/node_modules/.bin/claude --version says '$have_cc_v', want '$want_cc'"
	have_cx_v="$(have_cx)"
	[ "$have_cx_v" = "$want_cx" ] || die "e2e/node_modules/.bin/codex --version says '$have_cx_v', want '$want_cx'"
	have_gm_v="$(have_gm)"
	[ "$have_gm_v" = "$want_gm" ] || die "e2e/node_modules/.bin/gemini --version says '$have_gm_v', want '$want_gm'"
	echo "e2e-setup: opencode $have, $have_ag_v, claude $have_cc_v, $have_cx_v and gemini $have_gm_v installed"
fi

if command -v rg >/dev/null; then
	echo "e2e-setup: $(rg --version | head -n1) found"
else
	if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
		echo "e2e-setup: installing ripgrep (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq || die "apt-get update failed"
		apt-get install -y -qq ripgrep >/dev/null || die "apt-get install ripgrep failed"
	else
		die "ripgrep (rg) is not on PATH; install it (Debian/Ubuntu: apt-get install ripgrep)"
	fi
	command -v rg >/dev/null || die "ripgrep still not on PATH after install"
	echo "e2e-setup: $(rg --version | head -n1) installed"
fi
