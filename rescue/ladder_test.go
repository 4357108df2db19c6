package rescue

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/hostmodel"
)

// wholeChunk is an Update chunk over every line of from, turning it into to.
func wholeChunk(from, to []string) string {
	var b strings.Builder
	b.WriteString("@@\n")
	for _, l := range from {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range to {
		b.WriteString("+" + l + "\n")
	}
	if len(from) > 0 {
		b.WriteString("*** End of File\n")
	}
	return b.String()
}

func randomLines(r *rand.Rand, n int) []string {
	words := []string{"a", "b", "c", "}", "", "return nil", "x := 1"}
	out := make([]string, n)
	for i := range out {
		out[i] = words[r.Intn(len(words))]
	}
	return out
}

func mutate(r *rand.Rand, ls []string) []string {
	out := append([]string(nil), ls...)
	for k := r.Intn(4) + 1; k > 0; k-- {
		switch i := r.Intn(len(out) + 1); r.Intn(3) {
		case 0:
			out = append(out[:i], append([]string{"new" + string(rune('A'+r.Intn(3)))}, out[i:]...)...)
		case 1:
			if i < len(out) {
				out = append(out[:i], out[i+1:]...)
			}
		default:
			if i < len(out) {
				out[i] = "chg" + out[i]
			}
		}
	}
	return out
}

// Two Updates of one file merge into one hunk, which the rendering ladder
// must always be able to express so that our re-resolution, the host model
// and apply mode all give the same bytes, whatever duplicates the file has.
func TestLadderMergedRandom(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for iter := 0; iter < 300; iter++ {
		base := randomLines(r, r.Intn(12)+1)
		mid := mutate(r, base)
		final := mutate(r, mid)
		if len(mid) == 0 || len(final) == 0 {
			continue
		}
		eol := "\n"
		if iter%3 == 0 {
			eol = "\r\n"
		}
		content := strings.Join(base, eol) + eol
		patch := wrap("*** Update File: f.txt\n" + wholeChunk(base, mid) + "*** Update File: f.txt\n" + wholeChunk(mid, final))
		e := newEnv(t, map[string]string{"f.txt": content})
		res, err := e.process(patch, false)
		if final[len(final)-1] == "" && eol == "\n" {
			// The host drops a trailing blank line: refused in rewrite mode.
			if err == nil || !strings.Contains(err.Error(), "blank line") {
				t.Fatalf("iter %d: got %v, want the blank-line refusal", iter, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("iter %d: rewrite refused: %v\nbase %q\nmid %q\nfinal %q", iter, err, base, mid, final)
		}
		want := strings.Join(final, eol) + eol
		hr, err := hostmodel.Apply(*res.PatchText, e.dir, 0, func(abs string) hostmodel.File {
			b, err := os.ReadFile(abs)
			return hostmodel.File{Data: b, Exists: err == nil}
		}, nil)
		if err != nil {
			t.Fatalf("iter %d: host fails: %v\n%s", iter, err, *res.PatchText)
		}
		if got := string(hr.Finals[filepath.Join(e.dir, "f.txt")]); got != want {
			t.Fatalf("iter %d: host writes %q, want %q\n%s", iter, got, want, *res.PatchText)
		}
		if _, err := e.process(patch, true); err != nil {
			t.Fatalf("iter %d: apply: %v", iter, err)
		}
		if got, _ := e.read("f.txt"); got != want {
			t.Fatalf("iter %d: apply wrote %q, want %q", iter, got, want)
		}
	}
}

// Random single-hunk patches, some with drifted whitespace or quotes on
// their context and removed lines: whatever slim hands on must make the host
// write exactly what apply mode writes, and a refusal may only be a
// verification error that is not the host check's.
func TestLadderSingleRandom(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	drift := func(s string) string {
		switch r.Intn(4) {
		case 0:
			return s + "  "
		case 1:
			return strings.ReplaceAll(s, "x", "“x”")
		}
		return s
	}
	refused, rewritten := 0, 0
	defer func() {
		t.Logf("%d refused, %d rewritten", refused, rewritten)
		if rewritten < 50 {
			t.Errorf("only %d patches were rewritten", rewritten)
		}
	}()
	for iter := 0; iter < 400; iter++ {
		n := r.Intn(15) + 2
		base := randomLines(r, n)
		for i := range base {
			if r.Intn(3) == 0 {
				base[i] = "x" + string(rune('0'+i%10))
			}
		}
		if base[n-1] == "" {
			base[n-1] = "end"
		}
		eol := "\n"
		if iter%2 == 0 {
			eol = "\r\n"
		}
		s := r.Intn(n)
		e := s + r.Intn(min(3, n-s)+1)
		lo, hi := max(0, s-r.Intn(3)), min(n, e+r.Intn(3))
		var b strings.Builder
		b.WriteString("*** Update File: f.txt\n@@\n")
		for i := lo; i < hi; i++ {
			switch {
			case i >= s && i < e:
				b.WriteString("-" + drift(base[i]) + "\n")
			default:
				b.WriteString(" " + drift(base[i]) + "\n")
			}
			if i == e-1 || (s == e && i == s) {
				b.WriteString("+added" + string(rune('a'+iter%26)) + "\n")
			}
		}
		if lo == hi {
			continue
		}
		patch := wrap(b.String())
		env := newEnv(t, map[string]string{"f.txt": strings.Join(base, eol) + eol})
		res, err := env.process(patch, false)
		if err != nil {
			if kindOf(err) != "verification" || strings.Contains(err.Error(), "Cannot express") {
				t.Fatalf("iter %d: %v\n%s", iter, err, patch)
			}
			refused++
			continue
		}
		hr, herr := hostmodel.Apply(*res.PatchText, env.dir, 0, func(abs string) hostmodel.File {
			b, err := os.ReadFile(abs)
			return hostmodel.File{Data: b, Exists: err == nil}
		}, nil)
		if herr != nil {
			t.Fatalf("iter %d: host fails: %v", iter, herr)
		}
		host := string(hr.Finals[filepath.Join(env.dir, "f.txt")])
		if res.Decision == DecisionRewrite {
			rewritten++
		}
		if _, err := env.process(patch, true); err != nil {
			t.Fatalf("iter %d: apply: %v", iter, err)
		}
		if got, _ := env.read("f.txt"); got != host {
			t.Fatalf("iter %d: apply %q, host %q\n%s\n%s", iter, got, host, patch, *res.PatchText)
		}
	}
}
