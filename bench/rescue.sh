#!/usr/bin/env bash
# Rescue benchmark: runs BenchmarkProcess (rescue/bench_test.go) COUNT times
# (default 5) and prints, per mode, drift and chunk count, the median time
# for 1k, 10k and 100k-line files and the ratios 10k/1k and 100k/10k; then
# builds the binary and measures its peak RSS applying 50 drifted chunks to
# each file size, relative to the file size, and its CPU time (user + sys,
# which a busy machine inflates less than wall time).
# Goals: 100k lines with 50 drifted chunks < 50 ms; each ratio <= 12;
# peak RSS <= 4 x file size + 16 MiB.
# BENCH (a -bench regexp) narrows the run, e.g. BENCH='Process/mode=rewrite'.
source "$(dirname "$0")/lib.sh"

echo "== go test -bench ${BENCH:-BenchmarkProcess} -count ${COUNT:-5}"
go test -run '^$' -bench "${BENCH:-BenchmarkProcess}" \
	-count "${COUNT:-5}" -benchmem ./rescue/ >"$out/bench.txt"
grep -E '^(goos|goarch|cpu):' "$out/bench.txt" || true

# "name ns/op alloc/filesize cpu-ms/op" per result line, GOMAXPROCS suffix removed.
awk '/^BenchmarkProcess\// {
	name = $1; sub(/-[0-9]+$/, "", name); ns = "-"; af = "-"; cpu = "-"
	for (i = 2; i <= NF; i++) {
		if ($i == "ns/op") ns = $(i-1)
		if ($i == "alloc/filesize") af = $(i-1)
		if ($i == "cpu-ms/op") cpu = $(i-1)
	}
	print name, ns, af, cpu
}' "$out/bench.txt" >"$out/rows.txt"

median() { # file column -> "name median" per name
	sort -k1,1 -k"$2","$2"g "$1" | awk -v c="$2" '
	function flush() { if (n) print prev, v[int((n+1)/2)] }
	$1 != prev { flush(); n = 0; prev = $1 }
	{ v[++n] = $c }
	END { flush() }'
}
median "$out/rows.txt" 2 >"$out/ns.txt"
median "$out/rows.txt" 3 >"$out/af.txt"
median "$out/rows.txt" 4 >"$out/cpu.txt"

# Wall time (ns/op) and process CPU time (cpu-ms/op, user + system, which
# a busy machine inflates less), medians in ms; ratios of 10x larger files.
echo
echo "medians in ms; wall = ns/op, cpu = process user+sys per op; alloc/size = bytes allocated per op / file size"
printf '%-7s %-5s %6s | %8s %8s %8s %6s %6s | %8s %8s %8s %6s %6s | %10s\n' mode drift chunks \
	"wall 1k" "10k" "100k" "x10" "x10" "cpu 1k" "10k" "100k" "x10" "x10" "alloc/size"
awk 'FILENAME ~ /af.txt$/ { af[$1] = $2; next }
FILENAME ~ /cpu.txt$/ { cpu[$1] = $2; next }
{
	split($1, p, "/"); mode = p[2]; dr = p[3]; ch = p[4]; ln = p[5]
	sub(/mode=/, "", mode); sub(/drift=/, "", dr); sub(/chunks=/, "", ch); sub(/lines=/, "", ln)
	key = mode " " dr " " ch; keys[key] = 1; t[key, ln] = $2 / 1e6; c[key, ln] = cpu[$1]
	if (ln == 100000) a[key] = af[$1]
}
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.1f", y / x) : "-" }
END {
	for (k in keys) {
		split(k, q, " ")
		printf "%-7s %-5s %6s | %8.2f %8.2f %8.2f %6s %6s | %8s %8s %8s %6s %6s | %10s\n", q[1], q[2], q[3],
			t[k, 1000], t[k, 10000], t[k, 100000], ratio(t[k, 1000], t[k, 10000]), ratio(t[k, 10000], t[k, 100000]),
			c[k, 1000], c[k, 10000], c[k, 100000], ratio(c[k, 1000], c[k, 10000]), ratio(c[k, 10000], c[k, 100000]), a[k]
	}
}' "$out/af.txt" "$out/cpu.txt" "$out/ns.txt" | sort -k1,1 -k2,2 -k3,3n

echo
echo "== peak RSS of the binary (50 drifted chunks)"
go run ./bench/rescuefixture "$out/fx"

base=$(peak_kib "$out/slim" version)
printf '%-8s %8s %8s %10s %10s %10s %12s\n' lines "file MiB" mode "RSS MiB" "RSS/file" "budget MiB" "cpu ms"
echo "$base" | awk '{ printf "%-8s %8s %8s %10.1f %10s %10s %12s\n", "-", "-", "version", $1 / 1024, "-", "-", ($2 == "-" ? "-" : $2 * 1000) }'
for n in 1000 10000 100000; do
	size=$(wc -c <"$out/fx/$n/pkg/big.go")
	for mode in rewrite apply; do
		rm -rf "$out/run" && cp -r "$out/fx/$n" "$out/run"
		flag=()
		[ "$mode" = apply ] && flag=(--apply)
		m=$(peak_kib "$out/slim" rescue --root "$out/run" "${flag[@]}" "$out/fx/$n.patch")
		if [ "$mode" = apply ] && ! cmp -s "$out/run/pkg/big.go" "$out/fx/$n.want"; then
			echo "apply of $n lines gave unexpected bytes" >&2
			exit 1
		fi
		echo "$m" | awk -v n="$n" -v s="$size" -v m="$mode" '{
			printf "%-8s %8.2f %8s %10.1f %10.2f %10.1f %12s\n", n, s / 1048576, m, $1 / 1024, $1 * 1024 / s, (4 * s + 16 * 1048576) / 1048576, ($2 == "-" ? "-" : $2 * 1000)
		}'
	done
done
