package rescue_test

// Whole-pipeline benchmarks of rescue.Process: rewrite mode and apply mode
// (into a temporary directory) on 1k, 10k and 100k-line files with 1, 10 and
// 50 chunks, exact and drifted (trailing blanks and curly quotes on every
// context line). The goals: 100k lines with 50 drifted chunks under 50 ms;
// 10x the file costs at most 12x the time; peak memory at most 4x the file
// size + 16 MiB (bench/rescue.sh measures the binary's peak RSS, on inputs
// that bench/rescuefixture writes).

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/slimgate/slim/internal/drift"
	"github.com/slimgate/slim/rescue"
)

func BenchmarkProcess(b *testing.B) {
	for _, mode := range []string{"rewrite", "apply"} {
		for _, drifted := range []bool{false, true} {
			for _, chunks := range []int{1, 10, 50} {
				for _, n := range []int{1_000, 10_000, 100_000} {
					name := fmt.Sprintf("mode=%s/drift=%v/chunks=%d/lines=%d", mode, drifted, chunks, n)
					b.Run(name, func(b *testing.B) { benchProcess(b, drift.NewBenchCase(n, chunks, drifted), mode == "apply") })
				}
			}
		}
	}
}

func benchProcess(b *testing.B, bc drift.BenchCase, apply bool) {
	dir := b.TempDir()
	path := filepath.Join(dir, "pkg", "big.go")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	write := func() {
		if err := os.WriteFile(path, bc.Disk, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write()
	opts := rescue.Options{Directory: dir, NoWorktree: true, Apply: apply}
	patch := []byte(bc.Patch)
	// Check once that the benchmark measures a correct run.
	if _, err := rescue.Process(patch, opts); err != nil {
		b.Fatalf("Process: %v", err)
	}
	if apply {
		if got, _ := os.ReadFile(path); !bytes.Equal(got, bc.Want) {
			b.Fatalf("apply gave different bytes:\n%s", lineDiff(string(bc.Want), string(got)))
		}
		write()
	}
	b.SetBytes(int64(len(bc.Disk)))
	b.ReportAllocs()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	alloc0 := ms.TotalAlloc
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rescue.Process(patch, opts); err != nil {
			b.Fatalf("Process: %v", err)
		}
		if apply {
			b.StopTimer()
			write()
			b.StartTimer()
		}
	}
	b.StopTimer()
	// CPU time includes the file restores of apply mode, which are small
	// next to Process (one write of the file).
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.TotalAlloc-alloc0)/float64(b.N)/float64(len(bc.Disk)), "alloc/filesize")
}
