package hostmodel

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkHostDerive derives 50 changed chunks in a 100k-line file, one of
// the stage benchmarks that locate where BenchmarkProcess (package rescue)
// spends its time.
func BenchmarkHostDerive(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&sb, "\tv%07d := call(\"alpha\", 'q', %d) // beta\n", i, i%1000)
	}
	text := sb.String()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var chunks []chunk
	for k := 0; k < 50; k++ {
		at := k * 2000
		old := append([]string(nil), lines[at:at+7]...)
		nw := append([]string(nil), old...)
		nw[3] += " // changed"
		chunks = append(chunks, chunk{old: old, new: nw})
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := derive("f", chunks, text, nil); err != nil {
			b.Fatal(err)
		}
	}
}
