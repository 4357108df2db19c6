package search

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPrecheck measures the pre-check on the hook's hot path: an
// existing path (one stat), a missing one (stat plus message) and a stale
// absolute path that is re-anchored (three stats).
func BenchmarkPrecheck(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "w", "proj", "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	proj := filepath.Join(dir, "w", "proj")
	h := Host{Generation: "v1", Platform: "linux", Directory: proj, Cwd: proj}
	cases := []struct {
		name string
		path string
		want func(Outcome) bool
	}{
		{"existing", "src", func(o Outcome) bool { return o.Block == "" && o.Args == nil }},
		{"missing", "nope/deeper", func(o Outcome) bool { return o.Block != "" }},
		{"reanchored", "/old/home/proj/src", func(o Outcome) bool { return o.Args != nil }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			args := map[string]any{"pattern": "x", "path": c.path}
			for b.Loop() {
				o, err := Precheck("grep", args, h)
				if err != nil || !c.want(o) {
					b.Fatalf("%+v %v", o, err)
				}
			}
		})
	}
}
