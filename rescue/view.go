package rescue

import "sort"

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
// A FileView is not safe for concurrent use: the index used for failure
// hints is built lazily.
type FileView struct {
	lines     []string
	exactOnly bool

	keyID map[string]int32 // ladder key -> id
	ids   []int32          // id of each line
	start []int32          // positions of id k are pos[start[k]:start[k+1]]
	pos   []int32

	// loose indexes lineKey (fold+trim) ids; built only when a chunk fails,
	// for the closest-region hint.
	loose *looseIndex
}

type looseIndex struct {
	keyID map[string]int32
	ids   []int32
}

// NewFileView indexes lines, the file's lines without terminators and without
// a BOM. With exactOnly (files above the rescue size cap) only the exact rung
// runs and no rescue step is tried.
func NewFileView(lines []string, exactOnly bool) *FileView {
	v := &FileView{
		lines:     lines,
		exactOnly: exactOnly,
		keyID:     make(map[string]int32, len(lines)/2+1),
		ids:       make([]int32, len(lines)),
	}
	var counts []int32
	for i, l := range lines {
		k := l
		if !exactOnly {
			k = ladderKey(l)
		}
		id, ok := v.keyID[k]
		if !ok {
			id = int32(len(counts))
			v.keyID[k] = id
			counts = append(counts, 0)
		}
		v.ids[i] = id
		counts[id]++
	}
	v.start = make([]int32, len(counts)+1)
	for k, c := range counts {
		v.start[k+1] = v.start[k] + c
	}
	// Fill positions using counts as per-key write cursors.
	v.pos = make([]int32, len(lines))
	copy(counts, v.start[:len(counts)])
	for i, id := range v.ids {
		v.pos[counts[id]] = int32(i)
		counts[id]++
	}
	return v
}

// Len returns the number of lines.
func (v *FileView) Len() int { return len(v.lines) }

// Lines returns the lines the view was built from (not a copy).
func (v *FileView) Lines() []string { return v.lines }

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
	if id, ok := v.keyID[v.keyOf(s)]; ok {
		return id
	}
	return -1
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
	k := sort.Search(len(ps), func(i int) bool { return int(ps[i]) >= lo })
	if k == len(ps) {
		return -1
	}
	return int(ps[k])
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
