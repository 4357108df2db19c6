package search

import (
	"os"
	"path/filepath"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// The fallback reads ignore files the way ripgrep does by default:
// .gitignore (only inside a git repository), .ignore and .rgignore in every
// directory from the search root down, the same files in the directories
// above it (.gitignore only up to the repository's top), and the
// repository's .git/info/exclude. Within a directory .rgignore wins over
// .ignore, which wins over .gitignore and then the exclude file; for each of
// them the deepest directory with a matching rule decides, and within a
// file the last matching rule does, so "!pattern" re-includes.
//
// Each rule is parsed here (comments, "!", escapes, trailing spaces, a
// trailing "/" for directories only, anchoring by a slash) and its pattern
// compiled by go-gitignore after being rewritten into the subset that
// library translates faithfully: "?" and literal metacharacters are given
// as classes or escapes, and an anchored pattern always starts with "/".

// ignoreRule is one line of an ignore file.
type ignoreRule struct {
	negate  bool
	dirOnly bool
	m       *ignore.GitIgnore
}

// ignoreFile is the rules of one file, in order.
type ignoreFile []ignoreRule

// match reports whether the file decides rel (a slash-separated path
// relative to the file's directory), and if so whether it ignores it
// (true) or re-includes it (false).
func (f ignoreFile) match(rel string, isDir bool) (decided, ignored bool) {
	for i := len(f) - 1; i >= 0; i-- {
		r := f[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.m.MatchesPath(rel) {
			return true, !r.negate
		}
	}
	return false, false
}

// parseIgnore parses the contents of an ignore file.
func parseIgnore(data string) ignoreFile {
	var f ignoreFile
	for _, line := range strings.Split(data, "\n") {
		if r, ok := parseIgnoreLine(line); ok {
			f = append(f, r)
		}
	}
	return f
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	// Trailing spaces go, unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	var r ignoreRule
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	if strings.Contains(line, "/") && !strings.HasPrefix(line, "/") {
		line = "/" + line // a slash anywhere but at the end anchors the pattern
	}
	r.m = ignore.CompileIgnoreLines(translateIgnorePattern(line))
	return r, true
}

// translateIgnorePattern rewrites a gitignore pattern so that go-gitignore
// compiles it to the right regular expression: it escapes regular
// expression metacharacters the library passes through, turns "?" into a
// class (the library would make it literal), keeps bracket classes
// ("[!a-z]" becomes "[^a-z]") and turns escaped characters into literals.
func translateIgnorePattern(p string) string {
	var b strings.Builder
	lead := true // still among leading spaces, which the library would trim
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != ' ' {
			lead = false
		}
		switch {
		case c == ' ' && lead:
			b.WriteString("[ ]")
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(literal(p[i]))
		case c == '\\':
			b.WriteString(`\\`)
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			if cls, n, ok := bracketClass(p[i:]); ok {
				b.WriteString(cls)
				i += n - 1
			} else {
				b.WriteString(`\[`)
			}
		case strings.IndexByte("+(){}|^$]", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// literal is c as the library will match it literally.
func literal(c byte) string {
	switch c {
	case '*':
		return `\*` // the library's own escape for a star
	case '?', '#', '!', ' ':
		return "[" + string(c) + "]"
	case '.', '/':
		return string(c)
	}
	if strings.IndexByte(`+(){}|^$[]\`, c) >= 0 {
		return `\` + string(c)
	}
	return string(c)
}

// bracketClass translates the class at the start of p ("[...]"), returning
// it, the bytes of p it used, and false when the class is not closed.
func bracketClass(p string) (string, int, bool) {
	var b strings.Builder
	b.WriteByte('[')
	i := 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		b.WriteByte('^')
		i++
	}
	first := true
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c == ']' && !first:
			b.WriteByte(']')
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteByte('\\')
			b.WriteByte(p[i])
		case c == '*' || c == '[' || c == ']' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
		first = false
	}
	return "", 0, false
}

// The ignore files of one directory.
type dirIgnores struct {
	dir     string // absolute
	hasGit  bool   // the directory holds a .git entry (a repository's top)
	rg      ignoreFile
	ig      ignoreFile
	git     ignoreFile
	exclude ignoreFile // .git/info/exclude, at a repository's top
}

// loadDirIgnores reads the ignore files of dir.
func loadDirIgnores(dir string) *dirIgnores {
	d := &dirIgnores{dir: dir}
	read := func(name string) ignoreFile {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		return parseIgnore(string(b))
	}
	d.rg = read(".rgignore")
	d.ig = read(".ignore")
	d.git = read(".gitignore")
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		d.hasGit = true
		if fi.IsDir() {
			d.exclude = read(filepath.Join(".git", "info", "exclude"))
		}
	}
	return d
}

// ignoreStack is the ignore files in force for a directory: its own and
// those of every directory above it, the deepest last.
type ignoreStack []*dirIgnores

// decide reports whether an ignore file decides the path abs (below the
// deepest directory of the stack), and whether it ignores it.
func (s ignoreStack) decide(abs string, isDir bool) (decided, ignored bool) {
	anyGit := false
	for _, d := range s {
		if d.hasGit {
			anyGit = true
			break
		}
	}
	kinds := []func(*dirIgnores) ignoreFile{
		func(d *dirIgnores) ignoreFile { return d.rg },
		func(d *dirIgnores) ignoreFile { return d.ig },
		func(d *dirIgnores) ignoreFile { return d.git },
		func(d *dirIgnores) ignoreFile { return d.exclude },
	}
	for k, kind := range kinds {
		gitKind := k >= 2
		if gitKind && !anyGit {
			continue
		}
		for i := len(s) - 1; i >= 0; i-- {
			d := s[i]
			if f := kind(d); f != nil {
				rel, err := filepath.Rel(d.dir, abs)
				if err == nil {
					if decided, ig := f.match(filepath.ToSlash(rel), isDir); decided {
						return true, ig
					}
				}
			}
			if gitKind && d.hasGit {
				break // git's rules stop at the repository's top
			}
		}
	}
	return false, false
}
