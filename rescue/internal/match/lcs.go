package match

import "math"

// Bounds of the LCS rescue: chunks of at most MaxLCSChunkLines old lines,
// at most MaxLCSCandidates framed windows, and a window must share
// LCSNeeded(m) of the chunk's m old lines (all of them up to two, else
// lcsRatio of them rounded up).
const (
	MaxLCSChunkLines = 48
	MaxLCSCandidates = 64
	lcsRatio         = 0.7
)

// maxAlignCells bounds the alignment table of one prefix/suffix region. A
// larger region must agree key for key (see alignRegion).
const maxAlignCells = 1 << 20

// LCSNeeded returns how many of m old lines an LCS window must share with
// the chunk: m for m <= 2, otherwise max(2, ceil(0.7*m)).
func LCSNeeded(m int) int {
	if m <= 2 {
		return m
	}
	n := int(math.Ceil(lcsRatio * float64(m)))
	if n < 2 {
		n = 2
	}
	return n
}

// lcsLen returns the length of the longest common subsequence of a and b,
// in O(len(a)*len(b)) time and O(len(b)) space.
func lcsLen(a, b []string) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// alignRegion aligns the interior old lines of a prefix/suffix chunk (keys
// a, with ctx[i] true for context lines) to the file lines of the region
// (keys b). It maximises first the number of context lines matched, then
// the number of lines matched. It returns, for each old line, the index of
// the file line it is matched to or -1, and the number of matched lines.
// ok is false when the table would exceed maxAlignCells and the region is
// not a key-for-key copy.
func alignRegion(a []string, ctx []bool, b []string) (match []int, matched int, ok bool) {
	n, m := len(a), len(b)
	match = make([]int, n)
	for i := range match {
		match[i] = -1
	}
	if (n+1)*(m+1) > maxAlignCells {
		if n != m {
			return match, 0, false
		}
		for i := range a {
			if a[i] != b[i] {
				return match, 0, false
			}
			match[i] = i
		}
		return match, n, true
	}
	const ctxWeight = 1 << 16
	w := m + 1
	t := make([]int32, (n+1)*w)
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			best := t[(i-1)*w+j]
			if x := t[i*w+j-1]; x > best {
				best = x
			}
			if a[i-1] == b[j-1] {
				add := int32(1)
				if ctx[i-1] {
					add += ctxWeight
				}
				if x := t[(i-1)*w+j-1] + add; x > best {
					best = x
				}
			}
			t[i*w+j] = best
		}
	}
	for i, j := n, m; i > 0 && j > 0; {
		switch {
		case a[i-1] == b[j-1] && t[i*w+j] == t[(i-1)*w+j-1]+1+boolWeight(ctx[i-1], ctxWeight):
			match[i-1] = j - 1
			matched++
			i--
			j--
		case t[i*w+j] == t[(i-1)*w+j]:
			i--
		default:
			j--
		}
	}
	return match, matched, true
}

func boolWeight(b bool, w int32) int32 {
	if b {
		return w
	}
	return 0
}
