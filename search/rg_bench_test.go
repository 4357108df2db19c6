package search

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goSrc is the tree the search benchmarks run on, the Go distribution's
// own source (about 11,000 files), as bench/search.sh does.
func goSrc(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(filepath.Join(dir, "go", "build")); err != nil {
		b.Skipf("no Go source tree at %s: %v", dir, err)
	}
	return dir
}

// rgOutput runs ripgrep once with args in dir and returns its stdout, the
// input the decoding benchmarks replay.
func rgOutput(b *testing.B, rg *Ripgrep, dir string, args []string) []byte {
	b.Helper()
	cmd := exec.Command(rg.Path, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		b.Fatalf("%s %v: %v", rg.Path, args, err)
	}
	return out
}

// BenchmarkCollectGrep measures slim's own work on ripgrep's JSON stream,
// without ripgrep: records split, decoded where they can be shown, counted
// otherwise, one stat per file with matches. "many" is the stream of
// `err != nil` over the Go tree (about 6.5 MB, 23,000 matches), "few" that
// of a literal with a handful.
func BenchmarkCollectGrep(b *testing.B) {
	rg := needRg(b)
	src := goSrc(b)
	for _, c := range []struct{ name, pattern string }{
		{"many", "err != nil"},
		{"few", "func NewReader"},
	} {
		o := GrepOptions{Pattern: c.pattern, Target: Target{Dir: src}}
		out := rgOutput(b, rg, src, grepArgs(o))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				ds := openDirStat(src)
				gc := newGrepCollector(DefaultLimit, ds.modTime)
				err := collectGrep(bytes.NewReader(out), src, gc)
				ds.close()
				if err != nil {
					b.Fatal(err)
				}
				if gc.total == 0 {
					b.Fatal("no matches")
				}
			}
		})
	}
}

// BenchmarkCollectGlob measures slim's own work on ripgrep's file list for
// `*_test.go` over the Go tree (about 1,750 files): the paths made absolute
// and each stat'ed for the newest-first order.
func BenchmarkCollectGlob(b *testing.B) {
	rg := needRg(b)
	src := goSrc(b)
	o := GlobOptions{Pattern: "*_test.go", Target: Target{Dir: src}}
	out := rgOutput(b, rg, src, globArgs(o))
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		files, total, err := collectGlob(bytes.NewReader(out), src, DefaultLimit)
		if err != nil {
			b.Fatal(err)
		}
		if total == 0 || len(files) == 0 || !strings.HasSuffix(files[0], "_test.go") {
			b.Fatalf("%d files, first %q", total, files)
		}
	}
}

// BenchmarkRipgrep measures Grep and Glob as the resident slim runs them
// (ripgrep started, its output read while it runs, the result built:
// "slim") beside ripgrep alone with the same arguments, its output read
// through the same widened pipe and thrown away ("rg"). The difference is
// slim's own work on the served path, without the cost a slower reader
// of ripgrep's output would add to ripgrep.
func BenchmarkRipgrep(b *testing.B) {
	rg := needRg(b)
	src := goSrc(b)
	tg := Target{Dir: src}
	ctx := context.Background()
	alone := func(args []string) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				run, err := startRg(ctx, rg, args, src, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, run.stdout)
				var info RunInfo
				if err := run.wait("bench", &info, time.Minute, true); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, q := range []struct{ name, pattern, include string }{
		{"grep-literal", "func NewReader", ""},
		{"grep-many", "err != nil", ""},
		{"grep-regex", `func \(\w+ \*\w+\) Close\(`, "*.go"},
	} {
		o := GrepOptions{Pattern: q.pattern, Include: q.include, Target: tg, Ripgrep: rg}
		b.Run(q.name+"/rg", alone(grepArgs(o)))
		b.Run(q.name+"/slim", func(b *testing.B) {
			for b.Loop() {
				if _, err := Grep(ctx, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	o := GlobOptions{Pattern: "*_test.go", Target: tg, Ripgrep: rg}
	b.Run("glob/rg", alone(globArgs(o)))
	b.Run("glob/slim", func(b *testing.B) {
		for b.Loop() {
			if _, err := Glob(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
