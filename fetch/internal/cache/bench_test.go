package cache

import (
	"strconv"
	"testing"
)

// benchStore opens a store holding "others" results of 20 KB (a short
// article each) and one more, under a key and an alias, whose key it returns.
func benchStore(b *testing.B, others int) (*Store, string) {
	s, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	for i := range others {
		mustPut(b, s, &Entry{ETag: `"e"`, Payload: signed("other", i, 20_000)}, Key("other", strconv.Itoa(i)))
	}
	k := Key("page")
	mustPut(b, s, &Entry{ETag: `"e"`, Payload: signed("page", 0, 20_000)}, k, Key("final"))
	return s, k
}

func BenchmarkGetHit(b *testing.B) {
	s, k := benchStore(b, 0)
	b.ResetTimer()
	for b.Loop() {
		if _, st, err := s.Get(k); st != Fresh || err != nil {
			b.Fatal(st, err)
		}
	}
}

// BenchmarkPut stores a 20 KB result with an alias into a cache of 200
// entries, sweep included, as every fetch that misses does.
func BenchmarkPut(b *testing.B) {
	s, k := benchStore(b, 200)
	p := signed("page", 1, 20_000)
	b.ResetTimer()
	for b.Loop() {
		if err := s.Put([]string{k, Key("final")}, &Entry{ETag: `"e"`, Payload: p}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSweep300Entries(b *testing.B) {
	s, _ := benchStore(b, 300)
	b.ResetTimer()
	for b.Loop() {
		if err := s.Sweep(); err != nil {
			b.Fatal(err)
		}
	}
}
