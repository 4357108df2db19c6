package cache

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"testing"
	"time"
)

// FuzzDecodeDocument feeds arbitrary bytes to the entry decoder. It must
// never panic; whatever it accepts in full it must also accept reading the
// header alone, with the same header (the sweeper and Get must agree on an
// entry's age); and an accepted document must survive a round trip.
func FuzzDecodeDocument(f *testing.F) {
	k := Key("fuzz")
	at := time.Date(2031, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, e := range []*Entry{
		{StoredAt: at, Payload: json.RawMessage(`{"a":"b"}`)},
		{StoredAt: at, ETag: `W/"x"`, LastModified: lastMod, Payload: json.RawMessage(`[1,"<x>",null]`)},
	} {
		head, rest, _ := encodeDocument(k, e)
		f.Add(append(head, rest...))
	}
	f.Add([]byte(`{"v":1,"key":"` + k + `","stored_at":"2031-01-02T03:04:05Z","payload":1}{}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`{"payload":1,"v":1}`))
	f.Add([]byte(`{"v":1,"v":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hf, payload, errFull := decodeDocument(bytes.NewReader(data), k, true)
		hh, _, errHead := decodeDocument(bytes.NewReader(data), k, false)
		if errFull != nil {
			return
		}
		if errHead != nil || !hh.StoredAt.Equal(hf.StoredAt) || hh.ETag != hf.ETag || hh.LastModified != hf.LastModified {
			t.Fatalf("full decode gave %+v, header decode %+v (%v)", hf, hh, errHead)
		}
		head, rest, err := encodeDocument(k, &Entry{StoredAt: hf.StoredAt, ETag: hf.ETag, LastModified: hf.LastModified, Payload: payload})
		if err != nil {
			t.Fatalf("re-encoding an accepted document: %v", err)
		}
		h2, p2, err := decodeDocument(bytes.NewReader(append(head, rest...)), k, true)
		if err != nil || !h2.StoredAt.Equal(hf.StoredAt) || h2.ETag != hf.ETag || h2.LastModified != hf.LastModified {
			t.Fatalf("round trip: %+v %v, want %+v", h2, err, hf)
		}
		var c1, c2 bytes.Buffer
		json.Compact(&c1, payload)
		json.Compact(&c2, p2)
		if c1.String() != c2.String() {
			t.Fatalf("payload %s came back as %s", payload, p2)
		}
	})
}

// FuzzReadEntryFile writes arbitrary bytes as an entry file (raw, and
// gzip-compressed) and reads it back: Get must return a hit or a miss and
// never panic, and a miss must leave no file behind.
func FuzzReadEntryFile(f *testing.F) {
	f.Add([]byte(`{"v":1}`), true)
	f.Add([]byte("\x1f\x8b\x08\x00"), false)
	f.Fuzz(func(t *testing.T, data []byte, compress bool) {
		s, _ := open(t, func(o *Options) { o.MaxEntryBytes = 1 << 16 })
		k := Key("fuzz")
		if compress {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			w.Write(data)
			w.Close()
			data = b.Bytes()
		}
		if err := writeFile(s.entryPath(k), data); err != nil {
			t.Fatal(err)
		}
		e, st, _ := s.Get(k)
		if st == Miss && (e != nil || exists(s.entryPath(k))) {
			t.Fatalf("a miss returned %v or left the file", e)
		}
		if st != Miss && e == nil {
			t.Fatal("a hit without an entry")
		}
	})
}
