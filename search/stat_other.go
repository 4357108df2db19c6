//go:build !linux

package search

// dirStat takes the modification times that order results. Where no
// cheaper stat is wired in, it is modTime.
type dirStat struct{}

func openDirStat(string) *dirStat          { return &dirStat{} }
func (*dirStat) modTime(path string) int64 { return modTime(path) }
func (*dirStat) close()                    {}
