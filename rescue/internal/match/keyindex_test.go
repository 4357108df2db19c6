package match

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The key index only narrows which windows the look-alike scan and the
// indentation step visit: with it and without it they must find the same
// places, on files with repeated blocks, blank lines and re-indented
// copies, for chunks taken from the file and perturbed.
func TestKeyIndexFindsWhatTheFullScanFinds(t *testing.T) {
	base := synthSource(3000, 3)
	lines := append([]string(nil), base...)
	r := rand.New(rand.NewPCG(5, 6))
	// Re-indented and repeated copies of some blocks, so that both scans
	// have something to find.
	for i := 0; i < 40; i++ {
		at := r.IntN(len(base) - 10)
		block := append([]string(nil), base[at:at+2+r.IntN(6)]...)
		if i%2 == 0 {
			for k := range block {
				block[k] = "    " + strings.TrimLeft(block[k], "\t")
			}
		}
		to := r.IntN(len(lines))
		lines = slices.Insert(lines, to, block...)
	}
	full := NewFileView(lines, false)
	full.keyScans = -1 << 30 // never builds the index
	indexed := NewFileView(lines, false)
	indexed.keyScans = keyIndexAfter // builds it on the next scan
	found, placed := 0, 0
	for trial := 0; trial < 300; trial++ {
		m := 3 + r.IntN(8)
		at := r.IntN(len(lines) - m)
		keys := make([]string, m)
		for k := range keys {
			keys[k] = lineKey(lines[at+k])
		}
		if r.IntN(2) == 0 {
			keys[r.IntN(m)] = "changed by someone else"
		}
		lo := r.IntN(at + 1)
		off := at + r.IntN(3) - 1
		a, aok := full.lookalikes(keys, lo, off, off)
		b, bok := indexed.lookalikes(keys, lo, off, off)
		if !slices.Equal(a, b) || aok != bok {
			t.Fatalf("trial %d: look-alikes %v (%v) without the index, %v (%v) with it", trial, a, aok, b, bok)
		}
		pa, pb := full.indentPlaces(keys, lo, 3), indexed.indentPlaces(keys, lo, 3)
		if !slices.Equal(pa, pb) {
			t.Fatalf("trial %d: indentation places %v without the index, %v with it", trial, pa, pb)
		}
		found += len(a)
		placed += len(pa)
	}
	if found < 100 || placed < 100 {
		t.Fatalf("only %d look-alikes and %d indentation places in all: the trials test too little", found, placed)
	}
	if indexed.keyStart == nil || full.keyStart != nil {
		t.Fatal("the index was not used by one view and only by it")
	}
}
