package patch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func wrap(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }

func kindOf(err error) string {
	var se *SyntaxError
	if errors.As(err, &se) {
		return "validation"
	}
	if err == nil {
		return ""
	}
	return "other"
}

// shape is a patch without line numbers or repairs, for comparisons.
func shape(p *Patch) []string {
	var out []string
	for _, h := range p.Hunks {
		out = append(out, h.Kind.String()+" "+h.Path+" -> "+h.Move)
		for _, l := range h.Add {
			out = append(out, "+"+l)
		}
		for _, c := range h.Chunks {
			var ctx []string
			for _, x := range c.Contexts {
				ctx = append(ctx, x.Text)
			}
			out = append(out, "@@"+strings.Join(ctx, "|"))
			for _, l := range c.Lines {
				out = append(out, string(rune(l.Op))+l.Text)
			}
			if c.EOF {
				out = append(out, "EOF")
			}
		}
	}
	return out
}

func TestParseShapes(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		repairs  []Repair
	}{
		{"P10 an End Patch line inside a chunk is a context line", "*** Begin Patch  \n*** Update File: a.txt\n@@ marker\n *** End Patch\n keep\n*** End Patch  \n",
			[]string{"update a.txt -> ", "@@marker", " *** End Patch", " keep"}, nil},
		{"P23 @@ text without a space", wrap("*** Update File: a\n@@ctx\n-x\n"), []string{"update a -> ", "@@ctx", "-x"}, nil},
		{"P24 @@ text keeps indentation after the separating space", wrap("*** Update File: a\n@@   def f():\n-x\n"), []string{"update a -> ", "@@  def f():", "-x"}, nil},
		{"P26 a plain chunk", wrap("*** Update File: a\n@@\n alpha\n-beta\n+BETA\n"), []string{"update a -> ", "@@", " alpha", "-beta", "+BETA"}, nil},
		{"stacked", wrap("*** Update File: a\n@@ class A\n@@ def f():\n@@\n-x\n"), []string{"update a -> ", "@@class A|def f():", "-x"}, nil},
		{"eof-then-chunk", wrap("*** Update File: a\n@@\n-x\n*** End of File\n\n@@\n-y\n"), []string{"update a -> ", "@@", "-x", "EOF", "@@", "-y"}, nil},
		{"trailing-blank-is-separator", wrap("*** Update File: a\n@@\n-x\n\n*** Delete File: b\n"), []string{"update a -> ", "@@", "-x", "delete b -> "}, nil},
		{"blank-context", wrap("*** Update File: a\n@@\n a\n\n-b\n"), []string{"update a -> ", "@@", " a", " ", "-b"}, []Repair{{Kind: RepairBlankContextLine, Line: 5}}},
		{"add-trailing-blank", wrap("*** Add File: a\n+x\n\n*** Delete File: b\n"), []string{"add a -> ", "+x", "delete b -> "}, nil},
		{"no-space-header", wrap("*** Add File:e.txt\n+a\n"), []string{"add e.txt -> ", "+a"}, nil},
		{"heredoc-apply-patch-fence", "```bash\napply_patch <<'EOF'\n" + wrap("*** Delete File: x\n") + "EOF\n```\n", []string{"delete x -> "},
			[]Repair{{Kind: RepairCodeFence, Line: 1}, {Kind: RepairApplyPatchPrefix, Line: 2}}},
		{"lone-closing-fence", wrap("*** Delete File: x\n") + "```\n", []string{"delete x -> "}, []Repair{{Kind: RepairCodeFence, Line: 4}}},
		{"lone-opening-fence", "```diff\n" + wrap("*** Delete File: x\n"), []string{"delete x -> "}, []Repair{{Kind: RepairCodeFence, Line: 1}}},
		{"crlf", strings.ReplaceAll(wrap("*** Delete File: x\n"), "\n", "\r\n"), []string{"delete x -> "}, []Repair{{Kind: RepairPatchEOL, Line: 1}}},
		{"padded-move", wrap("*** Update File: a\n  *** Move to: b\n@@\n-x\n"), []string{"update a -> b", "@@", "-x"}, []Repair{{Kind: RepairPaddedHeader, Line: 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			got := shape(p)
			for i := range got {
				got[i] = strings.TrimRight(got[i], "")
			}
			want := c.want
			for i, w := range want {
				if w == " " {
					want[i] = " "
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
			if c.repairs != nil && !reflect.DeepEqual(p.Repairs, c.repairs) {
				t.Errorf("repairs %v, want %v", p.Repairs, c.repairs)
			}
			if c.repairs == nil && len(p.Repairs) != 0 {
				t.Errorf("unexpected repairs %v", p.Repairs)
			}
		})
	}
}

func TestParseAddBlankBeforeMore(t *testing.T) {
	_, err := Parse([]byte(wrap("*** Add File: a\n+x\n\n+y\n")))
	if kindOf(err) != "validation" || !strings.Contains(err.Error(), "unexpected line in Add File body: <empty>") {
		t.Fatalf("got %v", err)
	}
}

// FuzzParse: the parser never panics, and whatever it accepts renders to a
// canonical text that parses back to the same patch.
func FuzzParse(f *testing.F) {
	seeds := []string{
		wrap("*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n"),
		wrap("*** Add File: x\n+1\n+\n*** Delete File: y\n*** Update File: z\n*** Move to: w\n@@ ctx\n@@ inner\n-q\n+r\n*** End of File\n"),
		"cat <<'EOF'\n" + wrap("*** Update File: a\n a\n\n-b\n") + "EOF\n",
		"```\n" + wrap("  *** Update File: a\n@@ -1,2 +1,2 @@\n-x\n+y\n*** End of File  \n") + "```",
		"*** Begin Patch\r\n*** Update File: a\r\n@@\r\n-x\r\n+y\r\n *** End Patch",
		"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
		wrap("*** Update File: a\n@@\n *** End Patch\n"),
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if kindOf(err) != "validation" || !strings.HasPrefix(err.Error(), "apply_patch validation failed: ") {
				t.Fatalf("error of kind %s: %v", kindOf(err), err)
			}
			return
		}
		text := p.Format()
		p2, err := Parse([]byte(text))
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, text)
		}
		if !reflect.DeepEqual(shape(p), shape(p2)) {
			t.Fatalf("round trip changed the patch:\n%q\n%q", shape(p), shape(p2))
		}
		if p2.Format() != text {
			t.Fatalf("canonical form is not stable")
		}
		if len(p2.Repairs) != 0 {
			t.Fatalf("canonical form needed repairs: %v\n%s", p2.Repairs, text)
		}
	})
}

func TestHeredocDelim(t *testing.T) {
	cases := []struct {
		line  string
		cmd   bool
		delim string
		ok    bool
	}{
		{"<<EOF", false, "EOF", true},
		{"<<'EOF'", false, "EOF", true},
		{`<<"EOF'`, false, "EOF", true},
		{"cat <<'PATCH'", false, "PATCH", true},
		{"cat<<EOF", false, "", false},
		{"<< EOF", false, "EOF", true},
		{"<<-EOF", false, "EOF", true},
		{"<<E-F", false, "", false},
		{"<<", false, "", false},
		{"apply_patch <<'EOF'", true, "EOF", true},
		{"applypatch<<EOF", true, "EOF", true},
		{"cd src && apply_patch <<\"X\"", true, "X", true},
		{"cd && apply_patch <<EOF", true, "", false},
		{"apply_patch <<'EOF'", false, "", false},
		{"echo <<EOF", true, "", false},
	}
	for _, c := range cases {
		d, ok := heredocDelim(c.line, c.cmd)
		if d != c.delim || ok != c.ok {
			t.Errorf("%q cmd=%v: got %q %v", c.line, c.cmd, d, ok)
		}
	}
}
