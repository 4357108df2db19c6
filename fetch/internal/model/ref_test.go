package model

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// A reference splits at the first "/" (the model id keeps later slashes)
// and at the first "#" after it; anything without both a provider and a
// model, with an empty variant, or with spaces inside is refused.
func TestParseRefSplitsAtTheFirstSlashAndRefusesMalformedRefs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
		bad  bool
	}{
		{in: "openai/gpt-5-mini", want: Ref{"openai", "gpt-5-mini", ""}},
		{in: "openai/gpt-5-mini#low", want: Ref{"openai", "gpt-5-mini", "low"}},
		{in: "openrouter/meta/llama-3.1:free", want: Ref{"openrouter", "meta/llama-3.1:free", ""}},
		{in: "openrouter/meta/llama#high", want: Ref{"openrouter", "meta/llama", "high"}},
		{in: "p/m/#v", want: Ref{"p", "m/", "v"}},
		{in: "  p/m  ", want: Ref{"p", "m", ""}},
		{in: "p//m", want: Ref{"p", "/m", ""}},
		{in: "", bad: true},
		{in: "   ", bad: true},
		{in: "gpt-5", bad: true},
		{in: "/gpt-5", bad: true},
		{in: "openai/", bad: true},
		{in: "openai/#v", bad: true},
		{in: "openai/m#", bad: true},
		{in: "openai/m#a#b", bad: true},
		{in: "op#x/m", bad: true},
		{in: "open ai/m", bad: true},
		{in: "openai/m x", bad: true},
		{in: "openai/m\x00", bad: true},
		{in: "openai/m\n#v", bad: true},
		{in: "openai/\xffm", bad: true},
	} {
		got, err := ParseRef(tc.in)
		if tc.bad {
			e, ok := AsError(err)
			if !ok || e.Kind != Config || e.Code != CodeBadConfig {
				t.Errorf("ParseRef(%q) = %+v, %v; want a bad_config error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestRefStringIsWhatParseRefReads(t *testing.T) {
	for _, tc := range []struct {
		ref  Ref
		want string
	}{
		{Ref{"p", "m", ""}, "p/m"},
		{Ref{"p", "a/b", "hi"}, "p/a/b#hi"},
	} {
		if got := tc.ref.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.ref, got, tc.want)
		}
		back, err := ParseRef(tc.want)
		if err != nil || back != tc.ref {
			t.Errorf("ParseRef(%q) = %+v, %v", tc.want, back, err)
		}
	}
}

// ParseRefs keeps the good references in order, reports each bad one, and
// drops exact repeats while keeping another variant of the same model.
func TestParseRefsSkipsMalformedAndRepeatedRefs(t *testing.T) {
	refs, bad := ParseRefs([]string{"a/x", "nope", "b/y#v", "a/x", " a/x ", "b/y", "/z", "b/y#v"})
	want := []Ref{{"a", "x", ""}, {"b", "y", "v"}, {"b", "y", ""}}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("refs = %+v, want %+v", refs, want)
	}
	if len(bad) != 2 || !strings.Contains(bad[0].Error(), `"nope"`) || !strings.Contains(bad[1].Error(), `"/z"`) {
		t.Fatalf("bad = %v, want errors for \"nope\" and \"/z\"", bad)
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"p/m", "p/m#v", "p/a/b#c", "/m", "p/", "p/m#", "p m/x", "p/m#a#b", "p#/m", "\xff/m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			if r != (Ref{}) {
				t.Fatalf("ParseRef(%q) failed but returned %+v", s, r)
			}
			return
		}
		if r.Provider == "" || r.Model == "" {
			t.Fatalf("ParseRef(%q) = %+v: empty provider or model", s, r)
		}
		if strings.ContainsAny(r.Provider, "/#") || strings.Contains(r.Model, "#") || strings.Contains(r.Variant, "#") {
			t.Fatalf("ParseRef(%q) = %+v: a separator inside a part", s, r)
		}
		if strings.IndexFunc(r.String(), func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) >= 0 {
			t.Fatalf("ParseRef(%q) = %+v: space or control character kept", s, r)
		}
		back, err := ParseRef(r.String())
		if err != nil || back != r {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", s, back, err, r)
		}
	})
}
