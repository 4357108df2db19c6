package rescue_test

// Whole-pipeline benchmarks of rescue.Process: rewrite mode and apply mode
// (into a temporary directory) on 1k, 10k and 100k-line files with 1, 10 and
// 50 chunks, exact and drifted (trailing blanks and curly quotes on every
// context line). Goals (issue "slim rescue", Speed): 100k lines with 50
// drifted chunks under 50 ms; 10x the file costs at most 12x the time; peak
// memory at most 4x the file size + 16 MiB (bench/rescue.sh measures the
// binary's peak RSS).

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue"
	"github.com/slimgate/slim/rescue/internal/drift"
)

// benchCase is one benchmark input: the file on disk, the patch, and the
// bytes a correct apply produces.
type benchCase struct {
	disk, want []byte
	patch      string
}

// benchLine is a line of Go-like text with quotes, so that curling them is a
// real drift; the serial keeps every line distinct.
func benchLine(i int, r *rand.Rand) string {
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	return fmt.Sprintf("\tv%07d := call(\"%s\", '%c', %d) // %s", i, words[r.IntN(5)], 'a'+rune(r.IntN(26)), r.IntN(1000), words[r.IntN(5)])
}

// makeBenchCase builds a file of n lines and a patch with k chunks against
// it. When drifted, every context line of every chunk gets curly quotes and
// trailing blanks on disk (the patch keeps the straight, trimmed text).
func makeBenchCase(n, k int, drifted bool) benchCase {
	r := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	view := make([]drift.Line, n)
	for i := range view {
		view[i] = drift.Line{Text: benchLine(i, r), EOL: "\n"}
	}
	edits := drift.SpreadEdits(r, view, k, 3)
	patch := "*** Begin Patch\n" + drift.UpdateHunk("pkg/big.go", view, edits, 3) + "*** End Patch\n"
	disk := drift.Clone(view)
	if drifted {
		for _, e := range edits {
			for i := max(0, e.Start-3); i < min(n, e.Start+e.Del+3); i++ {
				if i >= e.Start && i < e.Start+e.Del {
					continue
				}
				disk[i].Text = drift.Curl(disk[i].Text) + "  "
			}
		}
	}
	return benchCase{disk: drift.Join(disk), want: drift.ApplyAll(disk, edits), patch: patch}
}

func BenchmarkProcess(b *testing.B) {
	for _, mode := range []string{"rewrite", "apply"} {
		for _, drifted := range []bool{false, true} {
			for _, chunks := range []int{1, 10, 50} {
				for _, n := range []int{1_000, 10_000, 100_000} {
					name := fmt.Sprintf("mode=%s/drift=%v/chunks=%d/lines=%d", mode, drifted, chunks, n)
					b.Run(name, func(b *testing.B) { benchProcess(b, makeBenchCase(n, chunks, drifted), mode == "apply") })
				}
			}
		}
	}
}

func benchProcess(b *testing.B, bc benchCase, apply bool) {
	dir := b.TempDir()
	path := filepath.Join(dir, "pkg", "big.go")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	write := func() {
		if err := os.WriteFile(path, bc.disk, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write()
	opts := rescue.Options{Directory: dir, Worktree: "/", Apply: apply}
	patch := []byte(bc.patch)
	// Check once that the benchmark measures a correct run.
	if _, err := rescue.Process(patch, opts); err != nil {
		b.Fatalf("Process: %v", err)
	}
	if apply {
		if got, _ := os.ReadFile(path); !bytes.Equal(got, bc.want) {
			b.Fatalf("apply gave different bytes:\n%s", lineDiff(string(bc.want), string(got)))
		}
		write()
	}
	b.SetBytes(int64(len(bc.disk)))
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
	b.ReportMetric(float64(ms.TotalAlloc-alloc0)/float64(b.N)/float64(len(bc.disk)), "alloc/filesize")
}

// TestWriteBenchFixture writes the 1k, 10k and 100k-line inputs with 50
// drifted chunks for bench/rescue.sh's peak-RSS measurement of the binary:
// <dir>/<lines>/pkg/big.go and <dir>/<lines>.patch. It runs only when
// SLIM_BENCH_FIXTURE_DIR is set.
func TestWriteBenchFixture(t *testing.T) {
	out := os.Getenv("SLIM_BENCH_FIXTURE_DIR")
	if out == "" {
		t.Skip("SLIM_BENCH_FIXTURE_DIR not set")
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		bc := makeBenchCase(n, 50, true)
		writeTree(t, filepath.Join(out, fmt.Sprint(n)), map[string][]byte{"pkg/big.go": bc.disk})
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("%d.patch", n)), []byte(bc.patch), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("%d.want", n)), bc.want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBenchCase checks the benchmark inputs themselves: the drifted file
// differs from the patch's view only on context lines, and the expected
// bytes differ from the disk.
func TestBenchCase(t *testing.T) {
	for _, drifted := range []bool{false, true} {
		bc := makeBenchCase(1000, 10, drifted)
		if bytes.Equal(bc.disk, bc.want) {
			t.Fatal("edit changes nothing")
		}
		if got := strings.Count(bc.patch, "\n@@\n"); got < 8 || got > 10 {
			t.Errorf("%d chunks", got)
		}
		curly := bytes.Count(bc.disk, []byte("\u201C"))
		if drifted != (curly > 0) {
			t.Errorf("drifted=%v but %d curly quotes on disk", drifted, curly)
		}
	}
}
