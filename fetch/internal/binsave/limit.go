package binsave

import "io"

// ReadLimited reads r to its end but never more than limit+1 bytes, and
// returns at most limit of them. n is the number of bytes read (limit+1
// when there was more), and over reports that the stream is longer than
// limit. The limit applies to the bytes actually read, so a body that
// declares no length, or a false one, or that decompresses to far more
// than it declared, cannot slip past it. A negative limit counts as 0.
func ReadLimited(r io.Reader, limit int64) (data []byte, n int64, over bool, err error) {
	if limit < 0 {
		limit = 0
	}
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	n = int64(len(data))
	if n > limit {
		return data[:limit], n, true, err
	}
	return data, n, false, err
}

// CountLimited is ReadLimited for bytes that are not kept: it reads and
// discards at most limit+1 bytes, so a body over the limit costs no memory.
func CountLimited(r io.Reader, limit int64) (n int64, over bool, err error) {
	if limit < 0 {
		limit = 0
	}
	n, err = io.Copy(io.Discard, io.LimitReader(r, limit+1))
	return n, n > limit, err
}
