#!/usr/bin/env bash
# Re-creates third_party/urfave-cli from the released github.com/urfave/cli/v2:
# the root package's non-test sources and the licence, without docs.go, and
# with the changes in third_party/urfave-cli.patch applied.
#
# Why: docs.go (the man page and markdown generator, which slim never calls)
# imports go-md2man and, through it, blackfriday, whose package
# initialisation builds its tables on every start of every program that
# links it: about 0.6 ms on every `slim hook` call. Upstream leaves docs.go
# out only under the urfave_cli_no_docs build tag, and a tag is kept only
# by the builds that remember it; without the file, every build of slim
# (go build, go install, go test, an editor's) links neither module. The
# patch moves the package's remaining start-up work (a regular expression,
# the slice flags' time-stamped prefix and an error value built with
# fmt.Sprintf) to first use, and gives every app and command its own copy
# of the shared help and version flags and of the help command, which
# setting up and parsing write to: the resident slim runs several command
# lines at once in one process. The copy otherwise behaves as the released
# module built with the tag.
#
# Usage: third_party/vendor-cli.sh   (from anywhere in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

cli=github.com/urfave/cli/v2@v2.27.7
to=third_party/urfave-cli

from=$(go mod download -json "$cli" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
rm -rf "$to"
mkdir -p "$to"
for f in "$from"/*.go; do
	case $(basename "$f") in
	*_test.go | docs.go) continue ;;
	esac
	cp "$f" "$to/"
done
cp "$from/LICENSE" "$to/LICENSE"
chmod -R u+w "$to"
cat >"$to/go.mod" <<'MOD'
module github.com/urfave/cli/v2

go 1.18

require github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1
MOD
if [[ -s third_party/urfave-cli.patch ]]; then
	patch --quiet -d "$to" -p1 <third_party/urfave-cli.patch
fi
gofmt -l "$to" | { ! grep .; }
echo "vendored: $to"
