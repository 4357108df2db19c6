package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchTree makes a repository with a deep existing directory chain.
func benchTree(b *testing.B) (root, deep string) {
	b.Helper()
	needGit(b)
	root = newRepo(b, filepath.Join(physical(b, b.TempDir()), "repo"))
	deep = filepath.Join(root, "src", "pkg", "module", "internal", "feature", "impl")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		b.Fatal(err)
	}
	write(b, filepath.Join(deep, "file.go"), "package impl\n")
	return root, deep
}

// BenchmarkCheck decides a few typical targets per iteration: a deep
// existing file, a deep new file, a sibling outside and an absolute path.
func BenchmarkCheck(b *testing.B) {
	root, deep := benchTree(b)
	g, err := NewGuard(root, root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	rel, _ := filepath.Rel(root, deep)
	targets := []string{
		filepath.Join(rel, "file.go"),
		filepath.Join(rel, "new", "dir", "x.go"),
		"../elsewhere/" + strings.Repeat("d/", 6) + "f.txt",
		filepath.Join(deep, "file.go"),
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		for _, t := range targets {
			g.Check(t)
		}
	}
	reportCPU(b, cpu, len(targets))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(targets)), "ns/target")
}

// BenchmarkNewGuard is the per-process set-up cost of a guard.
func BenchmarkNewGuard(b *testing.B) {
	root, deep := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		if _, err := NewGuard(deep, root, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, 1)
}

// BenchmarkResolve resolves a deep subdirectory of a main checkout.
func BenchmarkResolve(b *testing.B) {
	_, deep := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		if _, err := resolveEnv(deep, noEnv); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, 1)
}

// reportCPU adds the process CPU time per operation (and per item when a
// loop iteration handles several) since start.
func reportCPU(b *testing.B, start time.Duration, items int) {
	if d := processCPU() - start; d > 0 && start > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N*items), "cpu-ns/item")
	}
}
