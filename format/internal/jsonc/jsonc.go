// Package jsonc reads JSON with comments and trailing commas, the dialect
// of OpenCode's opencode.json and opencode.jsonc files, exactly as strictly
// as the host reads it: a document the host would refuse is refused here.
//
// The dialect is JSON (RFC 8259) plus three things: line comments (// to
// the end of the line), block comments (/* ... */, which must be closed),
// and one trailing comma before a closing } or ]. Whitespace is the space,
// the tab, CR and LF only: a byte order mark, a form feed or a no-break
// space is an error, as it is for the host. A text that holds no value at
// all (only whitespace or comments) is an error too.
//
// Objects keep their members in the order they first appear; a key given
// twice keeps its first place and takes its last value, as a JavaScript
// object built from the text does.
package jsonc

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of a Value.
type Kind int

// The kinds of a Value.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "an array"
	case Object:
		return "an object"
	}
	return "unknown"
}

// Value is one parsed JSON value. Only the fields of its Kind are set.
type Value struct {
	Kind    Kind
	Bool    bool
	Num     string // the number as written
	Str     string
	Elems   []Value
	Members []Member
}

// Member is one key and value of an object.
type Member struct {
	Key   string
	Value Value
}

// Get returns the value of key in an object (false when v is not an
// object or has no such key).
func (v Value) Get(key string) (Value, bool) {
	if v.Kind != Object {
		return Value{}, false
	}
	for _, m := range v.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return Value{}, false
}

// SyntaxError says where a document stops being valid. Line and Column
// count from 1; Column counts bytes.
type SyntaxError struct {
	Offset int
	Line   int
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// MaxDepth bounds the nesting of arrays and objects, so that a hostile
// document cannot exhaust the stack.
const MaxDepth = 512

// Parse reads one document. Bytes that are not UTF-8 are read as U+FFFD,
// as a text decoder does.
func Parse(data []byte) (Value, error) {
	text := string(data)
	if !utf8.ValidString(text) {
		text = replaceInvalid(text)
	}
	p := &parser{s: text}
	p.skip()
	if p.err != nil {
		return Value{}, p.err
	}
	if p.i >= len(p.s) {
		return Value{}, p.fail(p.i, "a value is expected")
	}
	v := p.value(0)
	if p.err != nil {
		return Value{}, p.err
	}
	p.skip()
	if p.err != nil {
		return Value{}, p.err
	}
	if p.i < len(p.s) {
		return Value{}, p.fail(p.i, "the end of the document is expected")
	}
	return v, nil
}

// replaceInvalid replaces each byte that is not part of a UTF-8 sequence
// with U+FFFD.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

type parser struct {
	s   string
	i   int
	err *SyntaxError
}

func (p *parser) fail(at int, format string, args ...any) *SyntaxError {
	if p.err == nil {
		line, col := 1, 1
		for j := 0; j < at && j < len(p.s); j++ {
			switch p.s[j] {
			case '\n':
				line, col = line+1, 1
			case '\r':
				if j+1 < len(p.s) && p.s[j+1] == '\n' {
					j++
				}
				line, col = line+1, 1
			default:
				col++
			}
		}
		p.err = &SyntaxError{Offset: at, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	return p.err
}

// skip passes whitespace and comments.
func (p *parser) skip() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.i+1 < len(p.s) && p.s[p.i+1] == '/':
			p.i += 2
			for p.i < len(p.s) && p.s[p.i] != '\n' && p.s[p.i] != '\r' {
				p.i++
			}
		case c == '/' && p.i+1 < len(p.s) && p.s[p.i+1] == '*':
			start := p.i
			end := strings.Index(p.s[p.i+2:], "*/")
			if end < 0 {
				p.fail(start, "a block comment is not closed")
				return
			}
			p.i += 2 + end + 2
		default:
			return
		}
	}
}

func (p *parser) value(depth int) Value {
	if p.i >= len(p.s) {
		p.fail(p.i, "a value is expected")
		return Value{}
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s := p.str()
		return Value{Kind: String, Str: s}
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		start := p.i
		for p.i < len(p.s) && !isDelimiter(p.s[p.i]) {
			p.i++
		}
		switch p.s[start:p.i] {
		case "true":
			return Value{Kind: Bool, Bool: true}
		case "false":
			return Value{Kind: Bool}
		case "null":
			return Value{Kind: Null}
		}
		p.fail(start, "a value is expected")
		return Value{}
	}
}

// isDelimiter reports the bytes that end a bare word (true, false, null).
func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '{', '}', '[', ']', '"', ':', ',', '/':
		return true
	}
	return false
}

func (p *parser) object(depth int) Value {
	if depth > MaxDepth {
		p.fail(p.i, "nesting deeper than %d levels", MaxDepth)
		return Value{}
	}
	v := Value{Kind: Object, Members: []Member{}}
	index := map[string]int{}
	p.i++ // {
	for {
		p.skip()
		if p.err != nil {
			return v
		}
		if p.i < len(p.s) && p.s[p.i] == '}' { // empty, or after a trailing comma
			p.i++
			return v
		}
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			p.fail(p.i, "a property name in double quotes is expected")
			return v
		}
		key := p.str()
		if p.err != nil {
			return v
		}
		p.skip()
		if p.err != nil {
			return v
		}
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			p.fail(p.i, "a colon is expected")
			return v
		}
		p.i++
		p.skip()
		if p.err != nil {
			return v
		}
		val := p.value(depth)
		if p.err != nil {
			return v
		}
		if at, ok := index[key]; ok {
			v.Members[at].Value = val
		} else {
			index[key] = len(v.Members)
			v.Members = append(v.Members, Member{Key: key, Value: val})
		}
		if !p.more('}') {
			return v
		}
	}
}

func (p *parser) array(depth int) Value {
	if depth > MaxDepth {
		p.fail(p.i, "nesting deeper than %d levels", MaxDepth)
		return Value{}
	}
	v := Value{Kind: Array, Elems: []Value{}}
	p.i++ // [
	for {
		p.skip()
		if p.err != nil {
			return v
		}
		if p.i < len(p.s) && p.s[p.i] == ']' { // empty, or after a trailing comma
			p.i++
			return v
		}
		e := p.value(depth)
		if p.err != nil {
			return v
		}
		v.Elems = append(v.Elems, e)
		if !p.more(']') {
			return v
		}
	}
}

// more passes what follows a member or an element: it reports whether a
// comma was read, so another one may follow. On the closing byte, which it
// consumes, or on an error, it returns false.
func (p *parser) more(closing byte) bool {
	p.skip()
	if p.err != nil {
		return false
	}
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		return true
	}
	if p.i < len(p.s) && p.s[p.i] == closing {
		p.i++
		return false
	}
	p.fail(p.i, "a comma or %c is expected", closing)
	return false
}

// str reads a string literal at p.i (on its opening quote).
func (p *parser) str() string {
	start := p.i
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			p.fail(start, "a string is not closed")
			return ""
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String()
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.fail(start, "a string is not closed")
				return ""
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					p.fail(p.i-2, "a \\u escape needs four hexadecimal digits")
					return ""
				}
				if utf16.IsSurrogate(r) && r < 0xdc00 && strings.HasPrefix(p.s[p.i:], `\u`) {
					save := p.i
					p.i += 2
					if r2, ok := p.hex4(); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
						b.WriteRune(utf16.DecodeRune(r, r2))
						continue
					}
					p.i = save
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
				b.WriteRune(r)
			default:
				p.fail(p.i-2, "an invalid escape \\%c", e)
				return ""
			}
		case c < 0x20:
			if c == '\n' || c == '\r' {
				p.fail(start, "a string is not closed at the end of its line")
			} else {
				p.fail(p.i, "a control character inside a string")
			}
			return ""
		default:
			b.WriteByte(c)
			p.i++
		}
	}
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r*16 + rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r*16 + rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r*16 + rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// number reads a JSON number: an optional minus, 0 or digits without a
// leading zero, an optional fraction and an optional exponent.
func (p *parser) number() Value {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case digits() == 0:
		p.fail(start, "a value is expected")
		return Value{}
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			p.fail(start, "a number ends after its decimal point")
			return Value{}
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.fail(start, "a number ends inside its exponent")
			return Value{}
		}
	}
	if p.i < len(p.s) && !isDelimiter(p.s[p.i]) {
		p.fail(p.i, "a comma or a closing bracket is expected after a number")
		return Value{}
	}
	return Value{Kind: Number, Num: p.s[start:p.i]}
}
