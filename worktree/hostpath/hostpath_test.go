package hostpath

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// vector is one call of Node's path module and its result, as produced by
// testdata/gen_vectors.js.
type vector struct {
	Cwd string          `json:"cwd"`
	In  []string        `json:"in"`
	Out json.RawMessage `json:"out"`
}

type flavorVectors map[string][]vector

func loadVectors(t *testing.T) map[string]flavorVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]flavorVectors{}
	for _, f := range []string{"posix", "win32"} {
		var fv flavorVectors
		if err := json.Unmarshal(raw[f], &fv); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = fv
	}
	return out
}

// TestNodeVectors compares every function with Node's results.
func TestNodeVectors(t *testing.T) {
	all := loadVectors(t)
	flavors := map[string]Flavor{"posix": Posix, "win32": Win32}
	for name, vecs := range all {
		f := flavors[name]
		for fn, cases := range vecs {
			if len(cases) == 0 {
				t.Errorf("%s.%s: no vectors", name, fn)
			}
			for _, c := range cases {
				var got any
				switch fn {
				case "normalize":
					got = f.Normalize(c.In[0])
				case "isAbsolute":
					got = f.IsAbs(c.In[0])
				case "join":
					got = f.Join(c.In...)
				case "resolve":
					got = f.Resolve(c.Cwd, c.In...)
				case "relative":
					got = f.relativeIn(c.Cwd, c.In[0], c.In[1])
				default:
					t.Fatalf("unknown function %s in vectors", fn)
				}
				gb, _ := json.Marshal(got)
				if string(gb) != string(c.Out) {
					t.Errorf("%s.%s(%q) cwd=%q = %s, Node gives %s", name, fn, c.In, c.Cwd, gb, c.Out)
				}
			}
		}
	}
}

func TestForPlatformAndSep(t *testing.T) {
	tests := []struct {
		platform string
		want     Flavor
		sep      string
	}{
		{"win32", Win32, `\`},
		{"linux", Posix, "/"},
		{"darwin", Posix, "/"},
		{"", Posix, "/"},
	}
	for _, tt := range tests {
		f := ForPlatform(tt.platform)
		if f != tt.want || f.Sep() != tt.sep {
			t.Errorf("ForPlatform(%q) = %v sep %q, want %v sep %q", tt.platform, f, f.Sep(), tt.want, tt.sep)
		}
	}
	if Native.Concrete() == Native {
		t.Error("Native.Concrete() must pick posix or win32")
	}
}

// TestRelativeDefaultCwd: Relative resolves relative inputs against the
// flavor's root.
func TestRelativeDefaultCwd(t *testing.T) {
	if got := Posix.Relative("/a/b", "/a/c/d"); got != "../c/d" {
		t.Errorf("posix relative = %q", got)
	}
	if got := Win32.Relative(`C:\a\b`, `c:\a\B\x`); got != "x" {
		t.Errorf("win32 relative = %q", got)
	}
	if got := Win32.Relative(`C:\a`, `D:\a`); got != `D:\a` {
		t.Errorf("win32 relative across drives = %q", got)
	}
}

// FuzzResolve checks properties Node's resolve has for both flavors: the
// result is absolute when cwd is, resolving it again changes nothing, and
// normalising it changes nothing.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a/../b", `C:\x\..\y`, `\\srv\sh\x`, "..", "", `\\?\C:\x`, "c:rel", "//x", "a\x00b"} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, tc := range []struct {
			fl  Flavor
			cwd string
		}{{Posix, "/home/dev/root"}, {Win32, `C:\dev\root`}} {
			r := tc.fl.Resolve(tc.cwd, a, b)
			if !tc.fl.IsAbs(r) {
				t.Fatalf("%v: Resolve(%q, %q) = %q is not absolute", tc.fl, a, b, r)
			}
			if tc.fl == Win32 && (strings.HasPrefix(r, `\\.\`) || strings.HasPrefix(r, `\\?\`)) {
				continue // as in Node: a bare device root resolves again to the cwd's drive
			}
			if r2 := tc.fl.Resolve(tc.cwd, r); r2 != r {
				t.Fatalf("%v: Resolve not idempotent: %q then %q", tc.fl, r, r2)
			}
			if n := tc.fl.Normalize(r); n != r && !(tc.fl == Win32 && strings.HasSuffix(n, `\`) && n[:len(n)-1] == r) {
				t.Fatalf("%v: Normalize(Resolve) = %q, want %q", tc.fl, n, r)
			}
			// relative then resolve gets back to the target.
			from := tc.fl.Resolve(tc.cwd, b)
			if tc.fl == Win32 && strings.Contains(r[2:], ":") {
				continue // as in Node: a name with a colon reads back as a drive
			}
			rel := tc.fl.relativeIn(tc.cwd, from, r)
			if back := tc.fl.Resolve(tc.cwd, from, rel); !strings.EqualFold(back, r) {
				t.Fatalf("%v: Resolve(%q, Relative(%q, %q)=%q) = %q", tc.fl, from, from, r, rel, back)
			}
		}
	})
}
