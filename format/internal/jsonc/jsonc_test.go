package jsonc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// plain turns a Value into what encoding/json decodes the same document
// to, for comparing the two readers.
func plain(v Value) any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		return json.Number(v.Num)
	case String:
		return v.Str
	case Array:
		out := []any{}
		for _, e := range v.Elems {
			out = append(out, plain(e))
		}
		return out
	case Object:
		out := map[string]any{}
		for _, m := range v.Members {
			out[m.Key] = plain(m.Value)
		}
		return out
	}
	return nil
}

func TestParseAcceptsTheHostDialect(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     any
	}{
		{"plain object", `{"a": 1}`, map[string]any{"a": json.Number("1")}},
		{"line comment", "// top\n{\"a\": true // after\n}", map[string]any{"a": true}},
		{"line comment ended by CR", "{\"a\": // x\r1}", map[string]any{"a": json.Number("1")}},
		{"block comment", `{/* c */"a"/**/:/* */null}`, map[string]any{"a": nil}},
		{"comment-like text inside a string", `{"a": "// not /* a comment */"}`, map[string]any{"a": "// not /* a comment */"}},
		{"trailing comma in object", `{"a": 1,}`, map[string]any{"a": json.Number("1")}},
		{"trailing comma in array", `[1, 2,]`, []any{json.Number("1"), json.Number("2")}},
		{"trailing comma after comment", "[1, // one\n]", []any{json.Number("1")}},
		{"empty containers", `{"a": {}, "b": []}`, map[string]any{"a": map[string]any{}, "b": []any{}}},
		{"escapes", `"\"\\\/\b\f\n\r\t\u00e9"`, "\"\\/\b\f\n\r\t\u00e9"},
		{"surrogate pair", `"\ud83d\ude00"`, "\U0001F600"},
		{"lone surrogate", `"\ud83d!"`, "\uFFFD!"},
		{"numbers", `[0, -0, 12, 1.5, -2e10, 3E+2, 4e-1]`, []any{json.Number("0"), json.Number("-0"), json.Number("12"), json.Number("1.5"), json.Number("-2e10"), json.Number("3E+2"), json.Number("4e-1")}},
		{"top-level scalar", ` "x" `, "x"},
		{"CRLF whitespace", "{\r\n\t\"a\": 1\r\n}\r\n", map[string]any{"a": json.Number("1")}},
		{"not UTF-8 read as replacement", "\"a\xffb\"", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got := plain(v); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRefusesWhatTheHostRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, msg string }{
		{"whitespace only", " \n\t", "a value is expected"},
		{"comment only", "// nothing\n", "a value is expected"},
		{"unclosed block comment", `{"a": 1} /* open`, "block comment is not closed"},
		{"byte order mark", "\ufeff{}", "a value is expected"},
		{"form feed is not whitespace", "{\f}", "property name"},
		{"no-break space is not whitespace", "{\u00a0}", "property name"},
		{"lone comma in object", `{,}`, "property name"},
		{"lone comma in array", `[,]`, "a value is expected"},
		{"double comma", `[1,,2]`, "a value is expected"},
		{"two trailing commas", `{"a":1,,}`, "property name"},
		{"missing comma", `[1 2]`, "comma"},
		{"unquoted key", `{a: 1}`, "property name"},
		{"single quotes", `{'a': 1}`, "property name"},
		{"missing colon", `{"a" 1}`, "colon"},
		{"unclosed object", `{"a": 1`, "comma or }"},
		{"unclosed array", `[1`, "comma or ]"},
		{"unclosed string", `"abc`, "not closed"},
		{"newline in string", "\"a\nb\"", "end of its line"},
		{"control character in string", "\"a\x01b\"", "control character"},
		{"bad escape", `"\x"`, "invalid escape"},
		{"short unicode escape", `"\u12"`, "four hexadecimal digits"},
		{"leading zero", `01`, "after a number"},
		{"bare minus", `-`, "a value is expected"},
		{"dot without digits", `1.`, "decimal point"},
		{"leading dot", `.5`, "a value is expected"},
		{"plus sign", `+1`, "a value is expected"},
		{"empty exponent", `1e+`, "exponent"},
		{"word after number", `1x`, "after a number"},
		{"misspelt keyword", `tru`, "a value is expected"},
		{"keyword with tail", `nullx`, "a value is expected"},
		{"lone slash", `{"a": /}`, "a value is expected"},
		{"two values", `{} {}`, "end of the document"},
		{"undefined", `{"a": undefined}`, "a value is expected"},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "nesting deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want an error", tc.in)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Parse(%q) = %v, want a message with %q", tc.in, err, tc.msg)
			}
		})
	}
}

func TestDuplicateKeyKeepsFirstPlaceAndLastValue(t *testing.T) {
	v, err := Parse([]byte(`{"a": 1, "b": 2, "a": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range v.Members {
		keys = append(keys, m.Key+"="+m.Value.Num)
	}
	if got := strings.Join(keys, ","); got != "a=3,b=2" {
		t.Errorf("members %s, want a=3,b=2", got)
	}
}

func TestSyntaxErrorLocatesTheProblem(t *testing.T) {
	_, err := Parse([]byte("{\n  \"a\": 1,\r\n  \"b\" 2\n}"))
	se, ok := err.(*SyntaxError)
	if !ok {
		t.Fatalf("error %T %v, want *SyntaxError", err, err)
	}
	if se.Line != 3 || se.Column != 7 {
		t.Errorf("at line %d column %d, want line 3 column 7", se.Line, se.Column)
	}
}

// FuzzParse checks that the reader never panics, that it reads every
// plain JSON document as encoding/json does, and that what it accepts
// stays accepted with its comments blanked out (comments never change a
// value).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"formatter": {"gofmt": {"disabled": true}, "x": {"command": ["a", "$FILE"], "extensions": [".x"],},}}`,
		"// c\n{\"formatter\": false /* off */}",
		`[1, -2.5e3, "\ud83d\ude00", null, true, {}]`,
		`{"a": "b", "a": {"c": [1,]}}`,
		"\"\\u00e9\"", "{", "/*", "[1,,]", "\ufeff{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if json.Valid(data) && depth(data) < MaxDepth {
			if err != nil {
				t.Fatalf("valid JSON %q refused: %v", data, err)
			}
			var want any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if derr := dec.Decode(&want); derr != nil {
				t.Fatalf("encoding/json: %v", derr)
			}
			if got := plain(v); !reflect.DeepEqual(got, want) {
				t.Fatalf("Parse(%q) = %#v, encoding/json gives %#v", data, got, want)
			}
		}
		if err != nil {
			return
		}
		blanked := blankComments(data)
		v2, err := Parse(blanked)
		if err != nil {
			t.Fatalf("accepted %q but not with its comments blanked %q: %v", data, blanked, err)
		}
		if !reflect.DeepEqual(plain(v), plain(v2)) {
			t.Fatalf("blanking the comments of %q changed its value", data)
		}
	})
}

// depth is the deepest nesting of brackets outside strings.
func depth(data []byte) int {
	d, most, inStr := 0, 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '[' || c == '{'):
			d++
			most = max(most, d)
		case !inStr && (c == ']' || c == '}'):
			d--
		}
	}
	return most
}

// blankComments replaces the bytes of each comment outside strings with
// spaces (keeping line ends), for a document Parse accepted.
func blankComments(data []byte) []byte {
	out := bytes.Clone(data)
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n' && out[i] != '\r'; i++ {
				out[i] = ' '
			}
		case !inStr && c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' && out[j] != '\r' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		}
	}
	return out
}
