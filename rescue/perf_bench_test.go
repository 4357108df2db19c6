package rescue

import (
	"fmt"
	"strings"
	"testing"
)

// Stage benchmarks of the whole-pipeline costs that grow with the file:
// splitting the text (here), indexing it (BenchmarkNewFileView in
// internal/match), and the host model's derivation. They locate where
// BenchmarkProcess spends its time.

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

func BenchmarkHostDerive(b *testing.B) {
	text := string(perfText(100_000))
	t, _ := parseText([]byte(text))
	var chunks []hostChunk
	for k := 0; k < 50; k++ {
		at := k * 2000
		old := append([]string(nil), t.lines[at:at+7]...)
		nw := append([]string(nil), old...)
		nw[3] += " // changed"
		chunks = append(chunks, hostChunk{old: old, new: nw})
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hostDerive("f", chunks, text, nil); err != nil {
			b.Fatal(err)
		}
	}
}
