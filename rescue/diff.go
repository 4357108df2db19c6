package rescue

import "github.com/slimgate/slim/internal/unidiff"

// This file is the line diff used to render merged or collapsed hunks and
// the --dry-run --diff output: Myers' O((N+M)D) greedy algorithm after the
// common prefix and suffix are trimmed. Its memory grows with D², so above
// maxDiffCost edits the middle is reported as one changed block, which is
// still a correct diff. It never builds an (N×M) table, so its memory stays
// bounded on large files.

// editBlock is one changed region: a[A0:A1] is replaced by b[B0:B1].
type editBlock = unidiff.Block

// maxDiffCost bounds the edit distance the diff explores.
const maxDiffCost = 1000

// diffLines returns the changed blocks between a and b, in order.
func diffLines(a, b []string) []editBlock {
	ids := map[string]int{}
	intern := func(xs []string) []int {
		out := make([]int, len(xs))
		for i, x := range xs {
			id, ok := ids[x]
			if !ok {
				id = len(ids)
				ids[x] = id
			}
			out[i] = id
		}
		return out
	}
	A, B := intern(a), intern(b)
	matchA := make([]bool, len(A))
	matchB := make([]bool, len(B))
	lo := 0
	for lo < len(A) && lo < len(B) && A[lo] == B[lo] {
		matchA[lo], matchB[lo] = true, true
		lo++
	}
	ha, hb := len(A), len(B)
	for ha > lo && hb > lo && A[ha-1] == B[hb-1] {
		ha--
		hb--
		matchA[ha], matchB[hb] = true, true
	}
	myers(A[lo:ha], B[lo:hb], matchA[lo:ha], matchB[lo:hb])

	var blocks []editBlock
	i, j := 0, 0
	for i < len(A) || j < len(B) {
		if i < len(A) && j < len(B) && matchA[i] && matchB[j] {
			i++
			j++
			continue
		}
		blk := editBlock{A0: i, B0: j}
		for i < len(A) && !matchA[i] {
			i++
		}
		for j < len(B) && !matchB[j] {
			j++
		}
		blk.A1, blk.B1 = i, j
		blocks = append(blocks, blk)
	}
	return blocks
}

// myers marks the lines of a shortest edit script's common subsequence.
// When the edit distance exceeds maxDiffCost nothing is marked.
func myers(A, B []int, matchA, matchB []bool) {
	n, m := len(A), len(B)
	if n == 0 || m == 0 {
		return
	}
	max := n + m
	if max > maxDiffCost {
		max = maxDiffCost
	}
	off := max + 1
	v := make([]int, 2*max+3)
	// trace[d] holds v[-d-1 .. d+1] as it was before round d.
	var trace [][]int
	for d := 0; d <= max; d++ {
		snap := make([]int, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && A[x] == B[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				backtrack(trace, n, m, matchA, matchB)
				return
			}
		}
	}
}

func backtrack(trace [][]int, x, y int, matchA, matchB []bool) {
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d]
		at := func(k int) int { return vd[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py && x > 0 && y > 0 {
			x--
			y--
			matchA[x], matchB[y] = true, true
		}
		x, y = px, py
		if d == 0 {
			break
		}
	}
}
