package rescue

import (
	"fmt"
	"strings"
	"testing"
)

// Stage benchmarks of the whole-pipeline costs that grow with the file:
// splitting the text (here), indexing it (BenchmarkNewFileView in
// internal/match), and the host model's derivation (BenchmarkHostDerive in
// internal/hostmodel). They locate where BenchmarkProcess spends its time.

func perfText(n int) []byte {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\tv%07d := call(\"alpha\", 'q', %d) // beta\n", i, i%1000)
	}
	return []byte(b.String())
}

func BenchmarkParseText(b *testing.B) {
	data := perfText(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseText(data); err != nil {
			b.Fatal(err)
		}
	}
}
