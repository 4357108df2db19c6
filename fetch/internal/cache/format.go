package cache

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// version is the format of an entry document. A file with another version
// is treated as corrupt (removed, a miss); a layout change that old
// binaries must not even see goes into a new directory segment instead.
const version = 1

// document is an entry as stored: gzip-compressed JSON with the header
// fields first and the payload last, in this order. The order is part of
// the format: the sweeper decompresses only up to "payload" to learn an
// entry's age and validators, never the payload itself.
type document struct {
	V            int             `json:"v"`
	Key          string          `json:"key"`
	StoredAt     time.Time       `json:"stored_at"`
	ETag         string          `json:"etag,omitempty"`
	LastModified string          `json:"last_modified,omitempty"`
	Payload      json.RawMessage `json:"payload"`
}

// header is a document without its payload.
type header struct {
	StoredAt     time.Time
	ETag         string
	LastModified string
}

func (h header) hasValidator() bool { return h.ETag != "" || h.LastModified != "" }

// payloadField introduces the payload. The encoder writes it only as the
// last key: inside a string value the quotes would be escaped.
var payloadField = []byte(`,"payload":`)

// encodeDocument returns e's document for key, split into the header (up
// to and including the payload's name) and the rest. The payload must be
// valid JSON; it is compacted, and HTML characters in it are left as they
// are. The writer flushes the compressor between the two parts, so a reader
// of the header decompresses only the header and not the payload.
func encodeDocument(key string, e *Entry) (head, rest []byte, err error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err = enc.Encode(document{
		V:            version,
		Key:          key,
		StoredAt:     e.StoredAt.UTC(),
		ETag:         e.ETag,
		LastModified: e.LastModified,
		Payload:      e.Payload,
	})
	if err != nil {
		return nil, nil, err
	}
	doc := b.Bytes()
	i := bytes.Index(doc, payloadField) + len(payloadField)
	return doc[:i], doc[i:], nil
}

// decodeDocument reads a document for wantKey from r. With full false it
// stops at the payload and returns only the header. With full true it also
// reads the payload and insists that nothing follows the document, which
// drains r (so a gzip reader below checks its checksum).
//
// It is strict: the version must come first, the key and the time before
// the payload, no field may repeat and no unknown field may appear. Only
// this package writes these files, so anything else is damage.
func decodeDocument(r io.Reader, wantKey string, full bool) (header, json.RawMessage, error) {
	var h header
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return h, nil, err
	}
	seen := map[string]bool{}
	var payload json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return h, nil, err
		}
		name, _ := tok.(string)
		if seen[name] {
			return h, nil, fmt.Errorf("field %q repeated", name)
		}
		seen[name] = true
		if name != "v" && !seen["v"] {
			return h, nil, errors.New("no version first")
		}
		switch name {
		case "v":
			var v int
			if err := dec.Decode(&v); err != nil {
				return h, nil, err
			}
			if v != version {
				return h, nil, fmt.Errorf("format version %d, want %d", v, version)
			}
		case "key":
			var k string
			if err := dec.Decode(&k); err != nil {
				return h, nil, err
			}
			if k != wantKey {
				return h, nil, fmt.Errorf("holds key %.16s…, not %.16s…", k, wantKey)
			}
		case "stored_at":
			if err := dec.Decode(&h.StoredAt); err != nil {
				return h, nil, err
			}
		case "etag":
			if err := dec.Decode(&h.ETag); err != nil {
				return h, nil, err
			}
		case "last_modified":
			if err := dec.Decode(&h.LastModified); err != nil {
				return h, nil, err
			}
		case "payload":
			if !seen["key"] || !seen["stored_at"] {
				return h, nil, errors.New("payload before key and time")
			}
			if !full {
				return h, nil, nil
			}
			if err := dec.Decode(&payload); err != nil {
				return h, nil, err
			}
		default:
			return h, nil, fmt.Errorf("unknown field %q", name)
		}
	}
	if payload == nil {
		return h, nil, errors.New("no payload")
	}
	if err := expectDelim(dec, '}'); err != nil {
		return h, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the document")
		}
		return h, nil, err
	}
	return h, payload, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}

// probe is a remembered failed llms.txt probe for one origin.
type probe struct {
	V        int       `json:"v"`
	Origin   string    `json:"origin"`
	StoredAt time.Time `json:"stored_at"`
}

// boundedReader reads at most n bytes of r and fails with errTooLarge,
// rather than returning EOF, when r has more. It bounds what a
// decompressor may produce from a small file.
type boundedReader struct {
	r io.Reader
	n int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		var one [1]byte
		n, err := io.ReadFull(b.r, one[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

// limitWriter passes writes to w until more than n bytes in all were
// written, then fails with errTooLarge.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errTooLarge
	}
	n, err := l.w.Write(p)
	l.n -= int64(n)
	return n, err
}

// inflater decompresses entry files, keeping its buffers and decompressor
// from one file to the next: a sweep reads the header of every entry, and
// setting up a decompressor costs more than reading a header.
type inflater struct {
	br *bufio.Reader
	zr gzip.Reader
}

// reset starts decompressing r.
func (in *inflater) reset(r io.Reader) (io.Reader, error) {
	if in.br == nil {
		in.br = bufio.NewReader(r)
	} else {
		in.br.Reset(r)
	}
	if err := in.zr.Reset(in.br); err != nil {
		return nil, err
	}
	return &in.zr, nil
}
