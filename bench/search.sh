#!/usr/bin/env bash
# Search benchmark, on the Go distribution's own source tree
# ($(go env GOROOT)/src, about 11,000 files): `slim search grep` against the
# same ripgrep command line run alone, `slim search glob` against
# `rg --files`, with the bare reference binary for scale, interleaved, RUNS
# times each (default 21); medians, ratios to rg alone, and slim's overhead
# over rg as a multiple of one bare exec. Then, apart (its heavy runs would
# disturb the others), slim's built-in fallback (no rg on PATH) against rg,
# FALLBACK_RUNS times each (default 5). Goal: slim adds at most one bare-exec time
# over the rg it drives; the fallback's time is reported, not bounded.
# Each query is also run by the resident slim (`slim hook serve`, the way the
# OpenCode plugin has its tools' commands run: no slim process per call),
# in the row "served", with its overhead over rg beside the process's.
# When ast-grep is found (SLIM_AST_GREP, PATH or e2e/node_modules/.bin),
# `slim search ast` is measured against ast-grep alone in the same way,
# AST_RUNS times each (default 5: one ast-grep run takes seconds;
# AST_RUNS=0 skips it).
source "$(dirname "$0")/lib.sh"

go build -o "$out/compare" ./bench/compare
src="$(go env GOROOT)/src"
rg=$(command -v rg) || { echo "search.sh: needs ripgrep (rg) on PATH" >&2; exit 1; }
runs="${RUNS:-21}"
mkdir -p "$out/empty"
# slim with no rg anywhere: an empty PATH, no OpenCode data directory.
fallback=(/usr/bin/env -i PATH="$out/empty" HOME="$out/empty" "$out/slim")

echo "== $(uname -sm), $(nproc) cores, $("$rg" --version | head -n1), $(go version | cut -d' ' -f3), tree $src ($(find "$src" -type f | wc -l) files)"

# overhead FILE [BASE [NAME]]: NAME's median (default slim) minus BASE's
# (default rg), in bare-exec times.
overhead() {
	awk -v base="${2:-rg}" -v name="${3:-slim}" '
	function ns(s) {
		if (s ~ /µs$/) { sub(/µs$/, "", s); return s * 1e3 }
		if (s ~ /ms$/) { sub(/ms$/, "", s); return s * 1e6 }
		if (s ~ /s$/) { sub(/s$/, "", s); return s * 1e9 }
		return s
	}
	NR > 1 { m[$1] = ns($3) }
	END {
		d = m[name] - m[base]
		printf "%s - %s = %.2f ms = %.2f bare execs (bare %.2f ms)\n", name, base, d / 1e6, d / m["bare"], m["bare"] / 1e6
	}' "$1"
}

query() { # name, then the rg arguments, ";;", then the slim arguments
	local name=$1
	shift
	local rgargs=() slimargs=()
	while [[ $1 != ";;" ]]; do rgargs+=("$1"); shift; done
	shift
	slimargs=("$@")
	echo
	echo "== $name"
	# slim against rg alone and the bare binary; the fallback is measured
	# apart, so that its heavy runs do not disturb these.
	(cd "$src" && "$out/compare" -n "$runs" -warmup 2 \
		rg="$rg" "${rgargs[@]}" ";;" \
		slim="$out/slim" "${slimargs[@]}" ";;" \
		served="serve:$out/slim" "${slimargs[@]}" ";;" \
		bare="$out/bare") | tee "$out/table.txt"
	overhead "$out/table.txt"
	overhead "$out/table.txt" rg served
	(cd "$src" && "$out/compare" -n "${FALLBACK_RUNS:-5}" -warmup 1 \
		rg="$rg" "${rgargs[@]}" ";;" \
		fallback="${fallback[@]}" "${slimargs[@]}") | tail -n +2
}

grep_rg=(--no-config --json --no-messages --hidden --glob='!**/.git/**' --)
query "grep 'func NewReader' (a literal, few matches)" \
	"${grep_rg[@]}" 'func NewReader' . ";;" search grep --root "$src" 'func NewReader'
query "grep 'err != nil' (many matches: all counted, 100 shown)" \
	"${grep_rg[@]}" 'err != nil' . ";;" search grep --root "$src" 'err != nil'
query "grep 'func \\(\\w+ \\*\\w+\\) Close\\(' --include '*.go' (a regular expression)" \
	--no-config --json --no-messages --hidden --glob='*.go' --glob='!**/.git/**' -- 'func \(\w+ \*\w+\) Close\(' . ";;" \
	search grep --root "$src" --include '*.go' 'func \(\w+ \*\w+\) Close\('
query "glob '*_test.go'" \
	--no-config --files --hidden --glob='*_test.go' --glob='!**/.git/**' . ";;" search glob --root "$src" '*_test.go'

ast=${SLIM_AST_GREP:-$(command -v ast-grep || true)}
[[ -z $ast && -x e2e/node_modules/.bin/ast-grep ]] && ast=$PWD/e2e/node_modules/.bin/ast-grep
astquery() { # name, directory, pattern
	echo
	echo "== $1 ($("$ast" --version))"
	(cd "$2" && SLIM_AST_GREP="$ast" "$out/compare" -n "${AST_RUNS:-5}" -warmup 1 \
		ast-grep="$ast" run -p "$3" --lang go --json=compact . ";;" \
		slim="$out/slim" search ast --root "$2" -p "$3" -l go ";;" \
		served="serve:$out/slim" search ast --root "$2" -p "$3" -l go ";;" \
		bare="$out/bare") | tee "$out/table.txt"
	overhead "$out/table.txt" ast-grep
	overhead "$out/table.txt" ast-grep served
}
if [[ ${AST_RUNS:-5} == 0 ]]; then
	echo
	echo "(AST_RUNS=0: slim search ast not measured)"
elif [[ -n $ast ]]; then
	# On the whole tree slim stops at its bound (500 matches listed, 1 MiB of
	# ast-grep's output) and kills ast-grep, which is why it is faster there;
	# on net/http both run to the end.
	astquery "ast 'if err != nil { return \$E }' --lang go, the whole tree" "$src" 'if err != nil { return $E }'
	astquery "ast 'panic(\$A)' --lang go, net/http (159 matches)" "$src/net/http" 'panic($A)'
else
	echo
	echo "(no ast-grep found: slim search ast not measured)"
fi
