package fetch

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Field is one metadata entry. A nil Value is left out; a []string is a
// list.
type Field struct {
	Key   string
	Value any
}

// Metadata is the metadata block of a result, in its fixed key order.
type Metadata []Field

func (m *Metadata) add(key string, value any) { *m = append(*m, Field{key, value}) }

// addIf adds a string field only when it is not empty.
func (m *Metadata) addIf(key, value string) {
	if value != "" {
		m.add(key, value)
	}
}

// Get returns the value of key, or nil.
func (m Metadata) Get(key string) any {
	for _, f := range m {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// jsonValue encodes v as JSON without HTML escaping, on one line.
func jsonValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// render writes the block (with every "--" in a value escaped when
// forComment, so that the block can sit inside an HTML comment): "---", one "key: value" line per field with the
// value JSON-encoded (so no value can break a line or the block), lists as
// "key:" and "  - item" lines ("key: []" when empty) and "---".
func (m Metadata) render(forComment bool) string {
	esc := func(s string) string { return s }
	if forComment {
		// \u002d is a hyphen to every JSON reader, and never ends a comment.
		esc = func(s string) string { return strings.ReplaceAll(s, "--", `-\u002d`) }
	}
	var b strings.Builder
	b.WriteString("---\n")
	for _, f := range m {
		switch v := f.Value.(type) {
		case nil:
			continue
		case []string:
			if len(v) == 0 {
				b.WriteString(f.Key + ": []\n")
				continue
			}
			b.WriteString(f.Key + ":\n")
			for _, s := range v {
				b.WriteString("  - " + esc(jsonValue(s)) + "\n")
			}
		default:
			b.WriteString(f.Key + ": " + esc(jsonValue(v)) + "\n")
		}
	}
	b.WriteString("---\n")
	return b.String()
}

// MarshalJSON keeps the key order.
func (m Metadata) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, f := range m {
		if f.Value == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(jsonValue(f.Key))
		b.WriteByte(':')
		b.WriteString(jsonValue(f.Value))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
