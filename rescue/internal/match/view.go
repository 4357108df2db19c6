package match

import (
	"hash/maphash"
	"sort"
)

// FileView is one file's lines, indexed once so that every chunk of every
// hunk against the file can be placed without rescanning it.
//
// Each line gets the id of its ladder key (the key of the loosest rung, see
// ladderKey), and the positions of each id are kept in increasing order.
// A block of pattern lines then matches at position p on some rung exactly
// when the ids agree line for line, so a seek costs the length of the
// rarest pattern line's position list times the block length, not N times m.
// Above the size cap (exactOnly) the key is the line itself.
//
// The index is built without a hash map: every key is hashed (64 bits), the
// (hash, line) pairs are radix-sorted, and equal hashes form one id. The
// sort is linear and streams through memory, and the index holds no
// pointers for the garbage collector to scan. Pattern lines are looked up by
// binary search over the sorted hashes and then compared with the id's key
// itself, and every hit is checked against the file line's key, so a hash
// collision can never produce a match.
//
// A FileView is not safe for concurrent use: the index used for failure
// hints is built lazily.
type FileView struct {
	lines     []string
	exactOnly bool
	seed      maphash.Seed

	hashes []uint64 // hash of each id's key, increasing
	ids    []int32  // id of each line
	start  []int32  // positions of id k are pos[start[k]:start[k+1]]
	pos    []int32

	// loose indexes lineKey (fold+trim) ids; built only when a chunk fails,
	// for the closest-region hint.
	loose *looseIndex

	// keyHash holds a hash of each line's lineKey; built only when a rescue
	// step is about to accept a place, for the look-alike scan (match.go).
	keyHash []uint32
	// keyStart and keyPos index the lines by keyHash (keyindex.go): the
	// lines of bucket b (the hash shifted right by keyShift) are
	// keyPos[keyStart[b]:keyStart[b+1]], in file order.
	keyShift uint
	keyStart []int32
	keyPos   []int32
	keyScans int // scans made before the key index was built
}

type looseIndex struct {
	keyID map[string]int32
	ids   []int32
}

// NewFileView indexes lines, the file's lines without terminators and without
// a BOM. With exactOnly (files above the rescue size cap) only the exact rung
// runs and no rescue step is tried.
func NewFileView(lines []string, exactOnly bool) *FileView {
	n := len(lines)
	v := &FileView{
		lines:     lines,
		exactOnly: exactOnly,
		seed:      maphash.MakeSeed(),
		ids:       make([]int32, n),
		pos:       make([]int32, n),
	}
	hs := make([]uint64, n)
	for i, l := range lines {
		hs[i] = maphash.String(v.seed, v.keyOf(l))
	}
	for i := range v.pos {
		v.pos[i] = int32(i)
	}
	hs, v.pos = sortByHash(hs, v.pos)
	// Equal hashes in a row form one id; radix sorting is stable, so each
	// id's positions are already increasing.
	groups := 0
	for k := range hs {
		if k == 0 || hs[k] != hs[k-1] {
			groups++
		}
	}
	v.start = make([]int32, 0, groups+1)
	g := -1
	for k, p := range v.pos {
		if k == 0 || hs[k] != hs[k-1] {
			g++
			v.start = append(v.start, int32(k))
			hs[g] = hs[k] // compact in place: g <= k, and hs[k-1] was read first
		}
		v.ids[p] = int32(g)
	}
	v.start = append(v.start, int32(n))
	v.hashes = hs[:groups:groups]
	return v
}

// sortByHash sorts hs ascending, permuting idx along, stably. The result
// may be in new slices (the radix passes end in their scratch space).
func sortByHash(hs []uint64, idx []int32) ([]uint64, []int32) {
	n := len(hs)
	if n < 128 {
		sort.Stable(hashSorter{hs, idx})
		return hs, idx
	}
	// Three 11-bit passes sort by the top 33 bits; runs that share them
	// (equal keys, or a rare partial collision) are then finished by an
	// insertion sort on the full hash, which costs nothing for equal keys.
	const bits = 11
	const buckets = 1 << bits
	hs2 := make([]uint64, n)
	idx2 := make([]int32, n)
	var count [buckets]int32
	for pass, shift := 0, uint(64-3*bits); pass < 3; pass, shift = pass+1, shift+bits {
		clear(count[:])
		for _, h := range hs {
			count[(h>>shift)&(buckets-1)]++
		}
		sum := int32(0)
		for b, c := range count {
			count[b] = sum
			sum += c
		}
		for k, h := range hs {
			d := (h >> shift) & (buckets - 1)
			hs2[count[d]] = h
			idx2[count[d]] = idx[k]
			count[d]++
		}
		hs, hs2 = hs2, hs
		idx, idx2 = idx2, idx
	}
	const top = 64 - 3*bits
	for start := 0; start < n; {
		end := start + 1
		for end < n && hs[end]>>top == hs[start]>>top {
			end++
		}
		for i := start + 1; i < end; i++ {
			h, x := hs[i], idx[i]
			j := i
			for j > start && hs[j-1] > h {
				hs[j], idx[j] = hs[j-1], idx[j-1]
				j--
			}
			hs[j], idx[j] = h, x
		}
		start = end
	}
	return hs, idx
}

type hashSorter struct {
	hs  []uint64
	idx []int32
}

func (s hashSorter) Len() int           { return len(s.hs) }
func (s hashSorter) Less(i, j int) bool { return s.hs[i] < s.hs[j] }
func (s hashSorter) Swap(i, j int) {
	s.hs[i], s.hs[j] = s.hs[j], s.hs[i]
	s.idx[i], s.idx[j] = s.idx[j], s.idx[i]
}

// Len returns the number of lines.
func (v *FileView) Len() int { return len(v.lines) }

// ExactOnly reports whether only the exact rung runs.
func (v *FileView) ExactOnly() bool { return v.exactOnly }

// keyOf returns the index key of a pattern line.
func (v *FileView) keyOf(s string) string {
	if v.exactOnly {
		return s
	}
	return ladderKey(s)
}

// idOf returns the id of pattern line s, or -1 when no file line matches it
// on any rung.
func (v *FileView) idOf(s string) int32 {
	k := v.keyOf(s)
	h := maphash.String(v.seed, k)
	i := sort.Search(len(v.hashes), func(i int) bool { return v.hashes[i] >= h })
	if i < len(v.hashes) && v.hashes[i] == h && v.repKey(int32(i)) == k {
		return int32(i)
	}
	return -1
}

// repKey returns the key of id: the key of its first line. Keys are not
// stored, to keep the index free of pointers (cheap for the collector).
func (v *FileView) repKey(id int32) string {
	return v.keyOf(v.lines[v.pos[v.start[id]]])
}

// lineIs reports whether file line p has the key of id. Ids come from
// 64-bit hashes; this check makes a collision harmless.
func (v *FileView) lineIs(p int, id int32) bool {
	if v.ids[p] != id {
		return false
	}
	first := int(v.pos[v.start[id]])
	return first == p || v.keyOf(v.lines[p]) == v.keyOf(v.lines[first])
}

// idsOf returns the ids of pattern lines; ok is false when one of them
// matches no file line at all.
func (v *FileView) idsOf(lines []string) (ids []int32, ok bool) {
	ids = make([]int32, len(lines))
	ok = true
	for i, l := range lines {
		ids[i] = v.idOf(l)
		if ids[i] < 0 {
			ok = false
		}
	}
	return ids, ok
}

func (v *FileView) postings(id int32) []int32 {
	if id < 0 {
		return nil
	}
	return v.pos[v.start[id]:v.start[id+1]]
}

// firstAtOrAfter returns the first position >= lo of a line with id, or -1.
func (v *FileView) firstAtOrAfter(id int32, lo int) int {
	ps := v.postings(id)
	for k := sort.Search(len(ps), func(i int) bool { return int(ps[i]) >= lo }); k < len(ps); k++ {
		if v.lineIs(int(ps[k]), id) {
			return int(ps[k])
		}
	}
	return -1
}

// allAtOrAfter returns the positions >= lo of lines with id, at most limit.
func (v *FileView) allAtOrAfter(id int32, lo, limit int) []int {
	ps := v.postings(id)
	var out []int
	for k := sort.Search(len(ps), func(i int) bool { return int(ps[i]) >= lo }); k < len(ps); k++ {
		if v.lineIs(int(ps[k]), id) {
			out = append(out, int(ps[k]))
			if len(out) >= limit {
				break
			}
		}
	}
	return out
}

// blockAt reports whether the pattern ids match the file at p.
func (v *FileView) blockAt(ids []int32, p int) bool {
	if p < 0 || p+len(ids) > len(v.ids) {
		return false
	}
	for k, id := range ids {
		if v.ids[p+k] != id {
			return false
		}
	}
	for k, id := range ids {
		if !v.lineIs(p+k, id) {
			return false
		}
	}
	return true
}

// blockHits returns, in increasing order, every p in [lo, hi-len(ids)] where
// the pattern ids match, stopping after limit hits when limit > 0. The scan
// walks the position list of the rarest pattern line only.
func (v *FileView) blockHits(ids []int32, lo, hi, limit int) []int {
	m := len(ids)
	if m == 0 || lo < 0 || hi > len(v.ids) || hi-lo < m {
		return nil
	}
	best, bestN := -1, 0
	for k, id := range ids {
		if id < 0 {
			return nil
		}
		n := int(v.start[id+1] - v.start[id])
		if best < 0 || n < bestN {
			best, bestN = k, n
		}
	}
	ps := v.postings(ids[best])
	from := lo + best
	i := sort.Search(len(ps), func(i int) bool { return int(ps[i]) >= from })
	var out []int
	for ; i < len(ps); i++ {
		p := int(ps[i]) - best
		if p+m > hi {
			break
		}
		if v.blockAt(ids, p) {
			out = append(out, p)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	return out
}

// looseIDs returns the lineKey ids of the file, building them on first use,
// and the id lookup for pattern lines.
func (v *FileView) looseIDs() *looseIndex {
	if v.loose != nil {
		return v.loose
	}
	li := &looseIndex{keyID: make(map[string]int32, len(v.lines)/2+1), ids: make([]int32, len(v.lines))}
	for i, l := range v.lines {
		k := lineKey(l)
		id, ok := li.keyID[k]
		if !ok {
			id = int32(len(li.keyID))
			li.keyID[k] = id
		}
		li.ids[i] = id
	}
	v.loose = li
	return li
}
