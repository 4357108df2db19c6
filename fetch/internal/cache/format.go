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
//
// Version 1 held the payload as a JSON value inside the document; the
// payload is now opaque bytes after a one-line header, because decoding
// a page of text as JSON cost more than everything else a cache hit does.
const version = 2

// maxHeader bounds the header line of an entry.
const maxHeader = 16 << 10

// document is an entry's header as stored: one line of JSON, then the
// payload's bytes to the end of the (gzip-compressed) file. The sweeper
// reads only the header line, never the payload.
type document struct {
	V            int       `json:"v"`
	Key          string    `json:"key"`
	StoredAt     time.Time `json:"stored_at"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
}

// header is a document without its payload.
type header struct {
	StoredAt     time.Time
	ETag         string
	LastModified string
}

func (h header) hasValidator() bool { return h.ETag != "" || h.LastModified != "" }

// encodeDocument returns e's document for key, split into the header line
// and the payload. The writer flushes the compressor between the two
// parts, so a reader of the header decompresses only the header.
func encodeDocument(key string, e *Entry) (head, rest []byte, err error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // ends the line with "\n"; JSON strings hold no raw newline
	enc.SetEscapeHTML(false)
	err = enc.Encode(document{
		V:            version,
		Key:          key,
		StoredAt:     e.StoredAt.UTC(),
		ETag:         e.ETag,
		LastModified: e.LastModified,
	})
	if err != nil {
		return nil, nil, err
	}
	if b.Len() > maxHeader {
		return nil, nil, fmt.Errorf("header of %d bytes (validators too long)", b.Len())
	}
	return b.Bytes(), e.Payload, nil
}

// decodeDocument reads a document for wantKey from r. With full false it
// stops after the header line. With full true it also reads the payload,
// to the end of r (so a gzip reader below checks its checksum: a torn or
// damaged file fails there).
//
// The header is strict: the version must be this one, the key the one
// asked for, a time present, and no unknown field may appear. Only this
// package writes these files, so anything else is damage.
func decodeDocument(r io.Reader, wantKey string, full bool) (header, []byte, error) {
	var h header
	br := bufio.NewReaderSize(r, 4096)
	line, err := readHeaderLine(br)
	if err != nil {
		return h, nil, err
	}
	var d struct {
		V            *int       `json:"v"`
		Key          *string    `json:"key"`
		StoredAt     *time.Time `json:"stored_at"`
		ETag         string     `json:"etag"`
		LastModified string     `json:"last_modified"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return h, nil, err
	}
	if dec.More() {
		return h, nil, errors.New("data after the header")
	}
	switch {
	case d.V == nil:
		return h, nil, errors.New("no version")
	case *d.V != version:
		return h, nil, fmt.Errorf("format version %d, want %d", *d.V, version)
	case d.Key == nil || *d.Key != wantKey:
		return h, nil, errors.New("holds another key")
	case d.StoredAt == nil:
		return h, nil, errors.New("no time")
	}
	h = header{StoredAt: *d.StoredAt, ETag: d.ETag, LastModified: d.LastModified}
	if !full {
		return h, nil, nil
	}
	payload, err := io.ReadAll(br)
	if err != nil {
		return h, nil, err
	}
	return h, payload, nil
}

// readHeaderLine reads the header line, at most maxHeader bytes.
func readHeaderLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxHeader {
			return nil, errors.New("header line too long")
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, errors.New("no end of the header")
		default:
			return nil, err
		}
	}
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
