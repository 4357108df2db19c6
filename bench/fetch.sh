#!/usr/bin/env bash
# Fetch benchmark: real documentation found on this machine (the Rust books
# and std docs of a rustup toolchain, Node's API docs, npm's docs, the Go
# distribution's doc pages), served from a local static server, fetched by
# the shipped slim binary.
#
# It prints, side by side and as medians of interleaved runs (RUNS, default
# 15):
#   - whole-process time of `slim fetch` per page (cache off), as a ratio
#     to a bare exec, with the 1 MB page singled out (goal: under 150 ms);
#   - a cache hit against a bare exec (goal: within 2x), as a process and
#     as the OpenCode plugin has it run, by the resident slim (`slim hook
#     serve`, no process per call);
#   - peak RSS per page;
#   - then extraction quality: recall of each page's main content and leak
#     of its navigation, for slim, plain Readability, the whole-page
#     conversion a host does without a main-content step, and
#     go-trafilatura (bench/fetchquality, a module of its own).
#
# Corpus roots (each optional; a missing one is skipped): RUST_DOCS, NODE_DOCS,
# NPM_DOCS, GO_DOCS. ONLY=hit runs the cache-hit comparison alone.
source "$(dirname "$0")/lib.sh"
go build -o "$out/compare" ./bench/compare
go build -o "$out/docserve" ./bench/docserve

rust=${RUST_DOCS:-$(ls -d "$HOME"/.rustup/toolchains/*/share/doc/rust/html 2>/dev/null | head -1)}
node=${NODE_DOCS:-/usr/share/doc/nodejs/api}
npmdocs=${NPM_DOCS:-$(npm root -g 2>/dev/null)/npm/docs/output}
godocs=${GO_DOCS:-$(go env GOROOT)/doc}

roots=() pages=() files=()
add() { # add PREFIX DIR PAGE...: serve DIR as /PREFIX/ and bench the pages that exist
	local prefix=$1 dir=$2
	shift 2
	[ -d "$dir" ] || { echo "skip $prefix: $dir not found" >&2; return; }
	roots+=(-root "$prefix=$dir")
	for p in "$@"; do
		if [ -f "$dir/$p" ]; then
			pages+=("$prefix/$p")
			files+=("$dir/$p")
		fi
	done
}
add rust "$rust" book/ch04-01-what-is-ownership.html book/ch08-02-strings.html reference/expressions.html \
	std/vec/struct.Vec.html std/primitive.slice.html cargo/reference/manifest.html
add node "$node" fs.html http.html path.html
add npm "$npmdocs" commands/npm-install.html configuring-npm/package-json.html
add go "$godocs" go_spec.html go_mem.html
[ ${#pages[@]} -gt 0 ] || { echo "no documentation found; set RUST_DOCS, NODE_DOCS, NPM_DOCS or GO_DOCS" >&2; exit 1; }

"$out/docserve" "${roots[@]}" >"$out/url.txt" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do [ -s "$out/url.txt" ] && break; sleep 0.1; done
base=$(head -1 "$out/url.txt")

export SLIM_FETCH_ALLOW_PRIVATE=1 SLIM_CACHE_DIR="$out/cache"

if [[ ${ONLY:-} != hit ]]; then
	echo "== whole-process time per fetch, cache off (median of ${RUNS:-15}, ratio to a bare exec)"
	args=(bare="$out/bare")
	for p in "${pages[@]}"; do
		args+=(";;" "$(basename "$p" .html)=$out/slim" fetch --no-cache "$base/$p")
	done
	"$out/compare" -n "${RUNS:-15}" "${args[@]}"
	echo
fi

echo "== cache hit (median of ${RUNS:-31})"
hit=$base/${pages[0]}
"$out/slim" fetch "$hit" >/dev/null
"$out/compare" -n "${RUNS:-31}" bare="$out/bare" ";;" slim-version="$out/slim" version ";;" fetch-cache-hit="$out/slim" fetch "$hit" ";;" \
	fetch-cache-hit-served="serve:$out/slim" fetch "$hit"
[[ ${ONLY:-} == hit ]] && exit 0

echo
echo "== page size and peak RSS (cache off)"
printf '%-36s %10s %10s %10s\n' page "KiB" "RSS MiB" "cpu ms"
for i in "${!pages[@]}"; do
	p=${pages[$i]}
	size=$(wc -c <"${files[$i]}")
	m=$(peak_kib "$out/slim" fetch --no-cache "$base/$p")
	echo "$m" | awk -v p="$p" -v s="$size" '{ printf "%-36s %10.0f %10.1f %10s\n", p, s / 1024, $1 / 1024, ($2 == "-" ? "-" : $2 * 1000) }'
done

echo
echo "== extraction quality (bench/fetchquality)"
corpus=()
for d in "$rust/book" "$rust/reference" "$rust/std" "$rust/cargo" "$rust/rustc" "$node" "$npmdocs" "$godocs/go_spec.html" "$godocs/go_mem.html"; do
	[ -e "$d" ] && corpus+=("$d")
done
(cd bench/fetchquality && go run . -runs "${QUALITY_RUNS:-3}" "${corpus[@]}") | tail -"${QUALITY_TAIL:-8}"
