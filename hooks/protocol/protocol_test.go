package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeAccepts(t *testing.T) {
	in := `{"v":1,"phase":"after","host":{"flavor":"v2","platform":"linux","directory":"/w","worktree":"/w","cwd":"/w","serverUrl":"http://127.0.0.1:4096"},
		"tool":"read","sessionID":"s1","callID":"c1","args":{"filePath":"a.ts","offset":1.50,"big":12345678901234567890},"output":"text","status":"completed"}`
	r, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.Phase != After || r.Host.Generation != "v2" || r.Host.ServerURL == "" || r.Tool != "read" || r.Output != "text" || r.Status != "completed" {
		t.Fatalf("decoded %+v", r)
	}
	args := r.ArgsObject()
	if args["offset"] != json.Number("1.50") || args["big"] != json.Number("12345678901234567890") {
		t.Fatalf("numbers not kept as written: %#v", args)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"offset":1.50`) {
		t.Fatalf("re-encoded %s", buf.String())
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, "empty"},
		{`   `, "empty"},
		{`nope`, "not valid JSON"},
		{`[1]`, "must be a JSON object"},
		{`"x"`, "must be a JSON object"},
		{`null`, "not null"},
		{`{"v":1,"tool":"read"} {}`, "data after"},
		{`{"v":1,"tool":"read"`, "not valid JSON"},
		{`{"tool":"read"}`, `"v" is missing`},
		{`{"v":2,"tool":"read"}`, "protocol v2 is not supported"},
		{`{"v":"1"}`, `"v" must be an integer`},
		{`{"v":1.5}`, `"v" must be an integer`},
		{`{"V":1}`, `field "V" is not part`},
		{`{"v":1,"Tool":"read"}`, `field "Tool" is not part`},
		{`{"v":1,"extra":true}`, `field "extra" is not part`},
		{`{"v":1,"phase":"during"}`, `phase "during"`},
		{`{"v":1,"phase":3}`, `"phase" must be a string, not a number`},
		{`{"v":1,"tool":{}}`, `"tool" must be a string, not an object`},
		{`{"v":1,"sessionID":[]}`, `"sessionID" must be a string, not an array`},
		{`{"v":1,"host":[]}`, "host must be a JSON object"},
		{`{"v":1,"host":{"dir":"/w"}}`, `host field "dir"`},
		{`{"v":1,"host":{"flavor":"v3"}}`, `host.flavor "v3"`},
		{`{"v":1,"host":{"cwd":1}}`, `"host.cwd" must be a string`},
		{`{"v":1,"event":"session.deleted"}`, "event must be a JSON object"},
		{`{"v":1,"event":{"type":"x","properties":{}}}`, `event field "properties"`},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.in))
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%q) = %v, want a RequestError containing %q", c.in, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		in   string
		argv Phase
		want string // "" = ok
		got  Phase
	}{
		{`{"v":1,"tool":"read"}`, Before, "", Before},
		{`{"v":1,"phase":"before","tool":"read"}`, Before, "", Before},
		{`{"v":1,"phase":"before","tool":"read"}`, "", "", Before},
		{`{"v":1,"phase":"after","tool":"read"}`, Before, "does not match", ""},
		{`{"v":1,"tool":"read"}`, "", `"phase" is missing`, ""},
		{`{"v":1,"phase":"before"}`, "", `"tool" is missing`, ""},
		{`{"v":1,"tool":""}`, After, `"tool" is missing`, ""},
		{`{"v":1}`, Event, `"event.type" is missing`, ""},
		{`{"v":1,"event":{}}`, Event, `"event.type" is missing`, ""},
		{`{"v":1,"event":{"type":"session.deleted","sessionID":"s"}}`, Event, "", Event},
		{`{"v":1,"tool":"read"}`, "sideways", `phase "sideways"`, ""},
	}
	for _, c := range cases {
		r, err := Decode([]byte(c.in))
		if err != nil {
			t.Fatalf("Decode(%s): %v", c.in, err)
		}
		err = r.Validate(c.argv)
		if c.want == "" {
			if err != nil || r.Phase != c.got {
				t.Errorf("%s with %q: err %v phase %q", c.in, c.argv, err, r.Phase)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %q: err %v, want %q", c.in, c.argv, err, c.want)
		}
	}
}

func TestNullsAreAbsent(t *testing.T) {
	r, err := Decode([]byte(`{"v":1,"phase":null,"tool":"read","sessionID":null,"args":null,"output":null,"event":null,"host":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Phase != "" || r.SessionID != "" || r.Args != nil || r.Output != nil || r.Event != nil {
		t.Fatalf("%+v", r)
	}
}

func TestResponseRoundTrip(t *testing.T) {
	in := Response{V: Version, Action: Mutate, Args: map[string]any{"patchText": "<a&b>", "n": json.Number("1.0")}, Notes: []string{"rescued"}}
	var buf bytes.Buffer
	if err := Encode(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"patchText":"<a&b>"`) {
		t.Fatalf("HTML escaped: %s", buf.String())
	}
	// Decoded strictly: numbers as written, every field
	// known.
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var out Response
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip: %+v != %+v", out, in)
	}
}

func TestReadRequestLimit(t *testing.T) {
	big := strings.Repeat(" ", MaxRequestBytes+1)
	_, err := ReadRequest(strings.NewReader(big))
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != MaxRequestBytes || tl.Tool != "" || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v", err)
	}
	exact := `{"v":1,"tool":"read"}` + strings.Repeat(" ", 1024-21)
	if r, err := readRequest(strings.NewReader(exact), 1024); err != nil || r.Tool != "read" {
		t.Fatalf("a request of exactly the limit: %v", err)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A request over the limit is refused after limit+1 bytes, naming the tool
// its first bytes give, wherever the cut falls.
func TestTooLargeRequestNamesItsTool(t *testing.T) {
	pad := strings.Repeat("x", 4096)
	cases := []struct {
		name, req, tool string
	}{
		{"plugin order", `{"v":1,"phase":"before","host":{"directory":"/w"},"tool":"apply_patch","sessionID":"s","args":{"patchText":"` + pad + `"}}`, "apply_patch"},
		{"tool after nested values", `{"args":{"a":[1,{"b":"c","tool":"read"}],"n":null},"host":{},"tool":"apply_patch","output":"` + pad + `"}`, "apply_patch"},
		{"a nested tool does not count", `{"args":{"tool":"apply_patch"},"output":"` + pad + `","tool":"read"}`, ""},
		{"cut before the tool", `{"v":1,"args":{"patchText":"` + pad + `"},"tool":"apply_patch"}`, ""},
		{"tool not a string", `{"tool":["apply_patch"],"args":"` + pad + `"}`, ""},
		{"key case matters", `{"Tool":"apply_patch","args":"` + pad + `"}`, ""},
		{"not an object", `["apply_patch","` + pad + `"]`, ""},
		{"not JSON", `tool: apply_patch ` + pad, ""},
	}
	const limit = 1024
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cr := &countingReader{r: strings.NewReader(c.req + pad)}
			_, err := readRequest(cr, limit)
			var tl *TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("err = %v", err)
			}
			if tl.Tool != c.tool || tl.Limit != limit {
				t.Errorf("tool %q limit %d, want %q %d", tl.Tool, tl.Limit, c.tool, limit)
			}
			if cr.n != limit+1 {
				t.Errorf("read %d bytes, want %d", cr.n, limit+1)
			}
		})
	}
}

// FuzzDecode checks that Decode never panics and that every accepted
// request survives Encode and Decode unchanged.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"v":1,"phase":"before","host":{"flavor":"v1","platform":"linux","directory":"/w","worktree":"/w","cwd":"/w"},"tool":"read","sessionID":"s","callID":"c","args":{"filePath":"a.ts"}}`,
		`{"v":1,"phase":"after","tool":"grep","sessionID":"s","callID":"c","args":{"pattern":"x","path":"src"},"output":"found 3\n<a>","status":"error"}`,
		`{"v":1,"phase":"after","tool":"mcp_x","output":{"content":[{"type":"text","text":"hi"}],"n":-0.0e-7}}`,
		`{"v":1,"phase":"event","event":{"type":"session.deleted","sessionID":"s"}}`,
		`{"v":1,"args":[1,"two",null,true,{"a":{}}]}`,
		`{"v":1,"tool":"\u00e9\ud800","args":{"\u0000":"\u2028"}}`,
		`{"v":1,"args":{"a":1,"a":2}}`,
		`{"v":1}`,
		`{}`,
		`[]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("error is not a RequestError: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, r); err != nil {
			t.Fatalf("accepted request does not encode: %v", err)
		}
		r2, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("re-encoded request rejected: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the request:\n%#v\n%#v", r, r2)
		}
	})
}

// ReadLine reads exactly one line and leaves the rest: what follows the
// first newline is still there for the next read, a request and Decode of
// that line agree, and a line over the limit is refused, never read whole.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte(`{"v":1,"phase":"apply","tool":"apply_patch","args":{"patchText":"x"}}`), []byte(`{"approve":true}`+"\n"))
	f.Add([]byte(`{"v":1}`), []byte(""))
	f.Add([]byte("not json"), []byte("\n\n"))
	f.Fuzz(func(t *testing.T, line, rest []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		input := append(append(append([]byte{}, line...), '\n'), rest...)
		br := bufio.NewReaderSize(bytes.NewReader(input), 16)
		got, err := ReadLine(br)
		want, werr := Decode(line)
		if (err == nil) != (werr == nil) {
			t.Fatalf("ReadLine err %v, Decode err %v", err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("ReadLine %+v, Decode %+v", got, want)
		}
		left, _ := io.ReadAll(br)
		if !bytes.Equal(left, rest) {
			t.Fatalf("left %q, want %q", left, rest)
		}
	})
}

func TestReadLineLimit(t *testing.T) {
	long := `{"v":1,"tool":"apply_patch","args":{"patchText":"` + strings.Repeat("x", 200) + `"}}` + "\n"
	_, err := ReadBoundedLine(bufio.NewReaderSize(strings.NewReader(long), 16), 100)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Tool != "apply_patch" || tl.Limit != 100 {
		t.Fatalf("err %v", err)
	}
}
