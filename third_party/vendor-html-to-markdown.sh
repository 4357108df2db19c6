#!/usr/bin/env bash
# Re-creates third_party/html-to-markdown from the released
# github.com/JohannesKaufmann/html-to-markdown/v2: the packages slim's
# markdown rendering links (the converter, the base, commonmark and table
# plugins and their internal helpers), the tests among theirs that need no
# module outside it, and the licence, with the changes in
# third_party/html-to-markdown.patch applied.
#
# Why: the released converter copies and sorts its handler lists for every
# node it renders and takes a read lock for every byte of text it
# escapes; on a one-megabyte documentation page that was about a tenth of
# the conversion. The patch sorts each list once per registration (the
# same sort of the same registration-order list, so the same order) and
# lets the hot paths read them without a lock (the characters to escape,
# looked up for every byte, from a table for ASCII); it also resolves each
# distinct link once per conversion (a documentation page repeats the
# same few hundred links thousands of times), trims runs of newlines byte
# by byte into a buffer made at its final size (the released version
# decoded every rune and grew its result by appending; a fuzz target checks
# the two agree), skips three copies of the whole document when there is
# nothing to replace, and walks the tree for the removal of scripts and
# styles and for the leaf-block alternatives with a loop instead of a
# deferred call per node (fuzz targets check that the trees agree). The
# output is byte-for-byte the released module's. The numbers are in
# docs/fetch-extraction.md ("Speed").
#
# Usage: third_party/vendor-html-to-markdown.sh [--upstream-tests]
#
# --upstream-tests also applies the patch to a temporary copy of the whole
# released module and runs all of its tests there, golden files included
# (they need test-only modules, such as goldie, that slim's go.mod does not
# list; the Go module proxy provides them).
set -euo pipefail
cd "$(dirname "$0")/.."

mod=github.com/JohannesKaufmann/html-to-markdown/v2@v2.5.2
to=third_party/html-to-markdown
patchfile=third_party/html-to-markdown.patch
pkgs=(converter collapse marker plugin/base plugin/commonmark plugin/table
	internal/domutils internal/escape internal/textutils)

from=$(go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')

if [[ ${1:-} == --upstream-tests ]]; then
	tmp=$(mktemp -d)
	trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
	cp -R "$from/." "$tmp/"
	chmod -R u+w "$tmp"
	if [[ -s $patchfile ]]; then
		patch --quiet -d "$tmp" -p1 <"$patchfile"
	fi
	(cd "$tmp" && go test ./...)
	exit 0
fi

rm -rf "$to"
for p in "${pkgs[@]}"; do
	mkdir -p "$to/$p"
	for f in "$from/$p"/*.go; do
		case $f in
		*_test.go)
			# Tests that use the golden-file helper (internal/tester,
			# goldie) or other test-only modules stay out: run them with
			# --upstream-tests.
			if grep -q 'internal/tester"\|goldie\|goldmark\|levenshtein\|cascadia\|plugin/strikethrough"' "$f"; then
				continue
			fi
			;;
		esac
		cp "$f" "$to/$p/"
	done
done
cp "$from/LICENSE" "$to/LICENSE"
chmod -R u+w "$to"
cat >"$to/go.mod" <<'MOD'
module github.com/JohannesKaufmann/html-to-markdown/v2

go 1.25.0

require (
	github.com/JohannesKaufmann/dom v0.3.1
	golang.org/x/net v0.55.0
)
MOD
if [[ -s $patchfile ]]; then
	patch --quiet -d "$to" -p1 <"$patchfile"
fi
gofmt -l "$to" | { ! grep .; }
echo "vendored: $to"
