package loopguard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// fingerprint returns the 128-bit hex fingerprint of a tool call's args (or
// of a result): sha256 over the lower-cased tool name, a 0x00 byte and the
// canonical JSON of v. The tool name must already be lower-cased.
func fingerprint(tool string, v any) string {
	h := sha256.New()
	io.WriteString(h, tool)
	h.Write([]byte{0})
	w := canonWriter{w: h}
	w.value(v)
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:16])
}

// canonical returns the canonical JSON of v: object keys sorted by their
// bytes at every depth, arrays in order, numbers exactly as written
// (json.Number), strings escaped minimally and never HTML-escaped, no
// whitespace. Distinct values give distinct texts.
func canonical(v any) []byte {
	var b bytesWriter
	w := canonWriter{w: &b}
	w.value(v)
	return b
}

type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

type canonWriter struct {
	w   io.Writer
	buf []byte
}

func (c *canonWriter) raw(s string) { io.WriteString(c.w, s) }

func (c *canonWriter) value(v any) {
	switch x := v.(type) {
	case nil:
		c.raw("null")
	case bool:
		if x {
			c.raw("true")
		} else {
			c.raw("false")
		}
	case json.Number:
		c.raw(string(x))
	case string:
		c.str(x)
	case float64:
		c.float(x)
	case float32:
		c.float(float64(x))
	case int:
		c.raw(strconv.Itoa(x))
	case int64:
		c.raw(strconv.FormatInt(x, 10))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		c.raw("{")
		for i, k := range keys {
			if i > 0 {
				c.raw(",")
			}
			c.str(k)
			c.raw(":")
			c.value(x[k])
		}
		c.raw("}")
	case []any:
		c.raw("[")
		for i, e := range x {
			if i > 0 {
				c.raw(",")
			}
			c.value(e)
		}
		c.raw("]")
	default:
		// Values that do not come from JSON decoding: fall back to their
		// JSON form, decoded again so maps still get sorted keys.
		data, err := json.Marshal(x)
		if err != nil {
			c.raw(fmt.Sprintf("%q", fmt.Sprintf("%#v", x)))
			return
		}
		var back any
		if json.Unmarshal(data, &back) != nil {
			c.raw(string(data))
			return
		}
		c.value(back)
	}
}

func (c *canonWriter) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		c.str(strconv.FormatFloat(f, 'g', -1, 64))
		return
	}
	c.raw(strconv.FormatFloat(f, 'g', -1, 64))
}

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string: quote, backslash and control characters
// escaped, everything else (HTML characters included) as is. Bytes that are
// not UTF-8 are written through unchanged, which keeps the text injective.
func (c *canonWriter) str(s string) {
	b := append(c.buf[:0], '"')
	start := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 0x20 && ch != '"' && ch != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		if ch < 0x20 {
			b = append(b, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xf])
		} else {
			b = append(b, '\\', ch)
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	b = append(b, '"')
	c.w.Write(b)
	c.buf = b
}
