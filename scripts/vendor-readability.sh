#!/usr/bin/env bash
# Re-creates third_party/go-readability and third_party/dom from the
# released modules, with one change: the packages' regular expressions are
# compiled on first use instead of at package initialisation.
#
# Why: slim is one binary, and every hook call pays the package
# initialisation of everything linked into it. The released readability
# compiles about 30 regular expressions in init, which measured 0.7 ms of
# init and about half a bare exec of whole-process start-up on every
# `slim hook` call, not only on `slim fetch`. docs/fetch-extraction.md has
# the numbers. The lazy copy behaves identically; the patch is mechanical
# and this script re-applies it to a new release.
#
# Usage: scripts/vendor-readability.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."

readability=codeberg.org/readeck/go-readability/v2@v2.1.3
dom=github.com/go-shiori/dom@v0.0.0-20230515143342-73569d674e1c

src() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

copy() { # copy MODULE_DIR DEST: the non-test Go sources and the licence
	local from=$1 to=$PWD/$2
	rm -rf "$to"
	mkdir -p "$to"
	(cd "$from" && find . -name '*.go' ! -name '*_test.go' ! -path './cmd/*' ! -path './scripts/*' -print0 |
		xargs -0 -I{} sh -c 'mkdir -p "'"$to"'/$(dirname "{}")" && cp "{}" "'"$to"'/{}"')
	cp "$from/LICENSE" "$to/LICENSE"
	chmod -R u+w "$to"
}

lazy() { # lazy DIR PACKAGE FILE...: regexp.MustCompile( -> lazyRegexp( and add the type
	local dir=$1 pkg=$2
	shift 2
	for f in "$@"; do
		sed -i 's/= regexp\.MustCompile(/= lazyRegexp(/' "$dir/$f"
		if ! grep -q 'regexp\.' "$dir/$f"; then
			sed -i '/^[[:space:]]*"regexp"$/d' "$dir/$f"
		fi
		gofmt -w "$dir/$f"
	done
	cat >"$dir/lazy_regexp.go" <<GO
package $pkg

// This file is added by slim's scripts/vendor-readability.sh: it is not
// part of the released module.

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on first use, so that linking
// the package costs nothing at process start.
type lazyRE struct{ get func() *regexp.Regexp }

func lazyRegexp(expr string) *lazyRE {
	return &lazyRE{get: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

func (l *lazyRE) MatchString(s string) bool                { return l.get().MatchString(s) }
func (l *lazyRE) FindStringSubmatch(s string) []string     { return l.get().FindStringSubmatch(s) }
func (l *lazyRE) FindAllString(s string, n int) []string   { return l.get().FindAllString(s, n) }
func (l *lazyRE) ReplaceAllString(s, repl string) string   { return l.get().ReplaceAllString(s, repl) }
func (l *lazyRE) Split(s string, n int) []string           { return l.get().Split(s, n) }
func (l *lazyRE) ReplaceAllStringFunc(s string, f func(string) string) string {
	return l.get().ReplaceAllStringFunc(s, f)
}
GO
	gofmt -w "$dir/lazy_regexp.go"
}

r=third_party/go-readability
copy "$(src $readability)" "$r"
lazy "$r" readability parser.go
# The one place that needs the compiled expression itself.
sed -i 's/rxVideoVilter = rxVideos$/rxVideoVilter = rxVideos.get()/' "$r/parser.go"
cat >"$r/go.mod" <<'MOD'
module codeberg.org/readeck/go-readability/v2

go 1.23.0

require (
	github.com/go-shiori/dom v0.0.0-20230515143342-73569d674e1c
	github.com/itlightning/dateparse v0.2.1
	golang.org/x/net v0.62.0
)
MOD

d=third_party/dom
copy "$(src $dom)" "$d"
lazy "$d" dom dom.go
cat >"$d/go.mod" <<'MOD'
module github.com/go-shiori/dom

go 1.23.0

require (
	github.com/andybalholm/cascadia v1.3.4
	golang.org/x/net v0.62.0
)
MOD
echo "vendored: $r, $d"
