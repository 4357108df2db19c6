package binsave

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// endless is a reader that never ends and counts what it hands out.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// The limit applies to bytes read: a stream exactly at the limit is not
// over, one byte more is, and an endless stream is read no further than
// limit+1 bytes.
func TestReadLimitedStopsOneByteAfterTheLimit(t *testing.T) {
	data, n, over, err := ReadLimited(bytes.NewReader(make([]byte, 100)), 100)
	if err != nil || over || n != 100 || len(data) != 100 {
		t.Fatalf("at the limit: %d %d %v %v", len(data), n, over, err)
	}
	data, n, over, err = ReadLimited(bytes.NewReader(make([]byte, 101)), 100)
	if err != nil || !over || n != 101 || len(data) != 100 {
		t.Fatalf("one over: %d %d %v %v", len(data), n, over, err)
	}
	src := &endless{}
	data, n, over, err = ReadLimited(src, 1<<20)
	if err != nil || !over || n != 1<<20+1 || len(data) != 1<<20 || src.n > 1<<20+1 {
		t.Fatalf("endless: %d %d %v %v (read %d)", len(data), n, over, err, src.n)
	}
	if data, n, over, _ := ReadLimited(bytes.NewReader([]byte("x")), -5); len(data) != 0 || n != 1 || !over {
		t.Fatalf("negative limit: %q %d %v", data, n, over)
	}
}

// CountLimited counts without keeping, with the same bound, also on a
// decompressed stream that is far larger than its compressed form.
func TestCountLimitedDiscardsWithTheSameBound(t *testing.T) {
	src := &endless{}
	n, over, err := CountLimited(src, 5<<20)
	if err != nil || !over || n != 5<<20+1 || src.n > 5<<20+1 {
		t.Fatalf("endless: %d %v %v (read %d)", n, over, err, src.n)
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	w.Write(make([]byte, 24<<20))
	w.Close()
	r, err := gzip.NewReader(&z)
	if err != nil {
		t.Fatal(err)
	}
	n, over, err = CountLimited(r, 10<<20)
	if err != nil || !over || n != 10<<20+1 {
		t.Fatalf("gzip bomb: %d %v %v from %d compressed bytes", n, over, err, z.Len())
	}
	n, over, err = CountLimited(io.LimitReader(&endless{}, 7), 7)
	if err != nil || over || n != 7 {
		t.Fatalf("at the limit: %d %v %v", n, over, err)
	}
}
