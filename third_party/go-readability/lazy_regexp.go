package readability

// This file is added by slim's scripts/vendor-readability.sh: it is not
// part of the released module.

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on first use, so that linking
// the package costs nothing at process start.
type lazyRE struct{ get func() *regexp.Regexp }

func lazyRegexp(expr string) *lazyRE {
	return &lazyRE{get: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

func (l *lazyRE) MatchString(s string) bool              { return l.get().MatchString(s) }
func (l *lazyRE) FindStringSubmatch(s string) []string   { return l.get().FindStringSubmatch(s) }
func (l *lazyRE) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }
func (l *lazyRE) ReplaceAllString(s, repl string) string { return l.get().ReplaceAllString(s, repl) }
func (l *lazyRE) Split(s string, n int) []string         { return l.get().Split(s, n) }
func (l *lazyRE) ReplaceAllStringFunc(s string, f func(string) string) string {
	return l.get().ReplaceAllStringFunc(s, f)
}
