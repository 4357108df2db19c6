# Sourced by the bench scripts: moves to the repository root and builds,
# into a temporary directory $out removed on exit, slim as it ships
# (static, urfave_cli_no_docs) and the bare reference binary that prints
# one line.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export CGO_ENABLED=0
go build -o "$out/bare" ./bench/bare
go build -tags urfave_cli_no_docs -trimpath -o "$out/slim" ./cmd/slim
