package match

import (
	"math/bits"
	"sort"
)

// This file indexes the lines by the hash of their fold+trim key (the key
// the look-alike scan and the indentation step compare by), so that those
// scans visit only the lines that hold one of a chunk's keys instead of
// every line of the file once per chunk. The index is a counting sort of
// the lines into buckets by the top bits of that hash (about one bucket
// per line), lines in file order within a bucket: two passes over the
// lines and no map, built on first use, when a rescue step first needs it.

// keyIndexAfter is how many scans of a view run without the key index:
// building it costs a few passes over the lines, so a file with one or
// two chunks to rescue (each costs one or two scans) is scanned as it is.
const keyIndexAfter = 4

// useKeyIndex reports whether a scan should use the key index, counting
// the scans made without it.
func (v *FileView) useKeyIndex() bool {
	if v.keyStart != nil {
		return true
	}
	v.keyScans++
	return v.keyScans > keyIndexAfter
}

// keyBucket returns the lines whose key hash falls in h's bucket, in file
// order: every line with hash h, and possibly lines of other hashes that
// share the bucket, which callers tell apart by lineKeyHashes.
func (v *FileView) keyBucket(h uint32) []int32 {
	n := len(v.lines)
	if n == 0 {
		return nil
	}
	if v.keyStart == nil {
		hs := v.lineKeyHashes()
		shift := uint(32 - bits.Len(uint(n)))
		start := make([]int32, 1<<(32-shift)+1)
		for _, x := range hs {
			start[x>>shift+1]++
		}
		for b := 1; b < len(start); b++ {
			start[b] += start[b-1]
		}
		pos := make([]int32, n)
		next := append([]int32(nil), start[:len(start)-1]...)
		for i, x := range hs {
			pos[next[x>>shift]] = int32(i)
			next[x>>shift]++
		}
		v.keyShift, v.keyStart, v.keyPos = shift, start, pos
	}
	b := h >> v.keyShift
	return v.keyPos[v.keyStart[b]:v.keyStart[b+1]]
}

// rareWindows returns, merged and in order, the ranges [a, b] of window
// starts in [lo, n-m] whose m lines include a line of a rare hash: one of
// the hashes of want left once the most frequent ones, whose allowances
// (mult) sum to less than need, are set aside. A window that holds none
// gets at most that sum from the frequent ones, less than need, so every
// window that can reach need lies in a range. ok is false when the rare
// lines are too many for the ranges to save work over scanning every
// window, or the key index is not worth building yet (useKeyIndex).
func (v *FileView) rareWindows(want []uint32, mult []int, lo, m, need int) (ranges [][2]int, ok bool) {
	n := len(v.lines)
	if !v.useKeyIndex() {
		return nil, false
	}
	hs := v.lineKeyHashes()
	order := make([]int, len(want))
	freq := make([]int, len(want)) // an upper bound: the bucket's size
	for j, h := range want {
		order[j] = j
		freq[j] = len(v.keyBucket(h))
	}
	sort.Slice(order, func(a, b int) bool { return freq[order[a]] > freq[order[b]] })
	common, k := 0, 0
	for k < len(order) && common+mult[order[k]] < need {
		common += mult[order[k]]
		k++
	}
	rare := order[k:]
	total := 0
	for _, j := range rare {
		total += freq[j]
	}
	if total*m >= n-lo {
		return nil, false
	}
	var hits []int
	for _, j := range rare {
		for _, q := range v.keyBucket(want[j]) {
			if int(q) >= lo && hs[q] == want[j] {
				hits = append(hits, int(q))
			}
		}
	}
	sort.Ints(hits)
	for _, p := range hits {
		a, b := max(lo, p-m+1), min(p, n-m)
		if a > b {
			continue
		}
		if k := len(ranges); k > 0 && a <= ranges[k-1][1]+1 {
			ranges[k-1][1] = max(ranges[k-1][1], b)
			continue
		}
		ranges = append(ranges, [2]int{a, b})
	}
	return ranges, true
}
