package match

import (
	"hash/maphash"
	"strconv"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/jsstr"
)

func TestFoldUnicode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"‘a’ ‚b‛", "'a' 'b'"},
		{"“a” „b‟", `"a" "b"`},
		{"a‐b‑c‒d–e—f―g−h", "a-b-c-d-e-f-g-h"},
		{"wait…", "wait..."},
		{"a\u00A0b\u2002c\u2003d\u2004e\u2005f\u2006g\u2007h\u2008i\u2009j\u200Ak\u202Fl\u205Fm\u3000n", "a b c d e f g h i j k l m n"},
		// Not folded: U+2000, U+2001, zero-width space, prime, NEL.
		{"a\u2000b\u2001c\u200Bd\u2032e\u0085", "a\u2000b\u2001c\u200Bd\u2032e\u0085"},
		{"é “x”", `é "x"`},
		{"bad \xff “x”", "bad \xff \"x\""},
	} {
		if got := foldUnicode(tc.in); got != tc.want {
			t.Errorf("foldUnicode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLadderKeyASCIIFastPath: the fast paths give the same keys as the
// general functions on ASCII input.
func TestLadderKeyASCIIFastPath(t *testing.T) {
	for _, s := range []string{"", " ", "a", "  a \t", "\ta\v\f\r", "x\x00 y  ", "\x7f "} {
		if got, want := ladderKey(s), jsstr.TrimEnd(s); got != want {
			t.Errorf("ladderKey(%q) = %q, want %q", s, got, want)
		}
		if got, want := lineKey(s), jsstr.Trim(s); got != want {
			t.Errorf("lineKey(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestRungsNest: equality on any rung implies equality of the ladder key,
// which is what lets one index serve every rung.
func TestRungsNest(t *testing.T) {
	pairs := [][2]string{
		{"a", "a"}, {"“a”", `"a"`}, {"a  ", "a"}, {"“a” \u00A0", `"a"`},
		{"cafe\u0301", "caf\u00e9"}, {"x \u2212 y", "x - y"}, {"…", "..."},
	}
	for _, p := range pairs {
		for r := rungExact; r < numRungs; r++ {
			if rungKey(r, p[0]) == rungKey(r, p[1]) && ladderKey(p[0]) != ladderKey(p[1]) {
				t.Errorf("%q and %q equal on %s but not by ladder key", p[0], p[1], rungNames[r])
			}
		}
		if ladderKey(p[0]) != ladderKey(p[1]) {
			t.Errorf("%q and %q should match on some rung", p[0], p[1])
		}
	}
}

// TestLCSNeeded checks the formula against the table of its values for
// every chunk size up to MaxLCSChunkLines.
func TestLCSNeeded(t *testing.T) {
	table := "1:1 2:2 3:3 4:3 5:4 6:5 7:5 8:6 9:7 10:7 11:8 12:9 13:10 14:10 15:11 16:12 17:12 18:13 19:14 20:14 21:15 22:16 23:17 24:17 25:18 26:19 27:19 28:20 29:21 30:21 31:22 32:23 33:24 34:24 35:25 36:26 37:26 38:27 39:28 40:28 41:29 42:30 43:31 44:31 45:32 46:33 47:33 48:34"
	for _, f := range strings.Fields(table) {
		m, _ := strconv.Atoi(strings.Split(f, ":")[0])
		want, _ := strconv.Atoi(strings.Split(f, ":")[1])
		if got := LCSNeeded(m); got != want {
			t.Errorf("LCSNeeded(%d) = %d, want %d", m, got, want)
		}
	}
}

func TestLCSLen(t *testing.T) {
	s := func(x string) []string { return strings.Split(x, "") }
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"abcde", "abcde", 5}, {"abcde", "axcye", 3}, {"abc", "", 0}, {"abcbdab", "bdcaba", 4},
	} {
		if got := lcsLen(s(tc.a), s(tc.b)); got != tc.want {
			t.Errorf("lcsLen(%q,%q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestAlignRegionPrefersContexts(t *testing.T) {
	// a: [x(del), c(ctx)], b: [c, x] - an LCS of 1 either way; the context
	// must be the one matched.
	match, matched, ok := alignRegion([]string{"x", "c"}, []bool{false, true}, []string{"c", "x"})
	if !ok || matched != 1 || match[1] != 0 || match[0] != -1 {
		t.Fatalf("match %v matched %d ok %v", match, matched, ok)
	}
}

func TestViewIndex(t *testing.T) {
	v := NewFileView([]string{"a", "b  ", "a", "“q”", "b"}, false)
	ids, ok := v.idsOf([]string{"b"})
	if !ok {
		t.Fatal("b not indexed")
	}
	if got := v.blockHits(ids, 0, v.Len(), 0); len(got) != 2 || got[0] != 1 || got[1] != 4 {
		t.Fatalf("hits of b = %v", got)
	}
	ids, _ = v.idsOf([]string{"a", "b"})
	if got := v.blockHits(ids, 0, v.Len(), 0); len(got) != 1 || got[0] != 0 {
		t.Fatalf("hits of a,b = %v", got)
	}
	if got := v.blockHits(ids, 1, v.Len(), 0); len(got) != 0 {
		t.Fatalf("hits of a,b from 1 = %v", got)
	}
	if p := v.firstAtOrAfter(v.idOf(`"q"`), 0); p != 3 {
		t.Fatalf(`firstAtOrAfter("q") = %d`, p)
	}
	if v.idOf("zzz") != -1 {
		t.Fatal("unknown line has an id")
	}
	ev := NewFileView([]string{"a", "a "}, true)
	ids, _ = ev.idsOf([]string{"a"})
	if got := ev.blockHits(ids, 0, ev.Len(), 0); len(got) != 1 {
		t.Fatalf("exact-only hits of a = %v", got)
	}
}

// TestViewHashCollision builds a view whose index lumps two different lines
// under one id, as a 64-bit hash collision would, and checks that no lookup
// treats them as equal.
func TestViewHashCollision(t *testing.T) {
	seed := maphash.MakeSeed()
	v := &FileView{
		lines:  []string{"a", "b", "a"},
		seed:   seed,
		hashes: []uint64{maphash.String(seed, "a")},
		ids:    []int32{0, 0, 0},
		start:  []int32{0, 3},
		pos:    []int32{0, 1, 2},
	}
	ids, ok := v.idsOf([]string{"a"})
	if !ok {
		t.Fatal("a not found")
	}
	if got := v.blockHits(ids, 0, 3, 0); len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Fatalf("hits %v, want [0 2]", got)
	}
	if got := v.allAtOrAfter(ids[0], 1, 10); len(got) != 1 || got[0] != 2 {
		t.Fatalf("allAtOrAfter %v, want [2]", got)
	}
	if p := v.firstAtOrAfter(ids[0], 1); p != 2 {
		t.Fatalf("firstAtOrAfter = %d, want 2", p)
	}
	if v.idOf("b") != -1 {
		t.Fatal("b resolved to a's id")
	}
}

// TestSortByHash checks both paths (comparison sort below 128 lines, radix
// above): the result is sorted, stable for equal hashes, and a permutation
// that keeps each line with its own hash.
func TestSortByHash(t *testing.T) {
	for _, n := range []int{50, 5000} {
		hs := make([]uint64, n)
		idx := make([]int32, n)
		for i := range hs {
			hs[i] = uint64(i*2654435761) ^ uint64(i%7)<<60
			switch {
			case i%10 == 0:
				hs[i] = 42 // duplicates keep their order
			case i%10 == 1:
				hs[i] = 1<<40 | uint64(i%3) // same top bits, different low bits
			}
			idx[i] = int32(i)
		}
		orig := append([]uint64(nil), hs...)
		hs, idx = sortByHash(hs, idx)
		seen := make([]bool, n)
		for k := 0; k < n; k++ {
			if hs[k] != orig[idx[k]] || seen[idx[k]] {
				t.Fatalf("n=%d: position %d holds line %d with hash %x", n, k, idx[k], hs[k])
			}
			seen[idx[k]] = true
			if k > 0 && (hs[k-1] > hs[k] || (hs[k-1] == hs[k] && idx[k-1] > idx[k])) {
				t.Fatalf("n=%d: not sorted stably at %d", n, k)
			}
		}
	}
}
