// Command rescuefixture writes the inputs of bench/rescue.sh's peak-memory
// measurement of the slim binary: for 1k, 10k and 100k lines, a file with
// 50 drifted chunks to rescue, the patch, and the bytes a correct apply
// produces, the same inputs BenchmarkProcess uses.
//
// Usage:
//
//	go run ./bench/rescuefixture DIR
//
// It writes DIR/<lines>/pkg/big.go, DIR/<lines>.patch and DIR/<lines>.want.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/slimgate/slim/internal/drift"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rescuefixture DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "rescuefixture:", err)
		os.Exit(1)
	}
}

func write(out string) error {
	for _, n := range []int{1_000, 10_000, 100_000} {
		bc := drift.NewBenchCase(n, 50, true)
		file := filepath.Join(out, fmt.Sprint(n), "pkg", "big.go")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		for path, data := range map[string][]byte{
			file: bc.Disk,
			filepath.Join(out, fmt.Sprintf("%d.patch", n)): []byte(bc.Patch),
			filepath.Join(out, fmt.Sprintf("%d.want", n)):  bc.Want,
		} {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
