package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/encoding/unicode"
)

// The fallback is slim's own grep and glob for machines without ripgrep.
// It follows ripgrep's defaults as slim runs it: ignore files as described
// beside ignoreStack, hidden files searched unless NoHidden, the .git
// directory never, symbolic links not followed, a file whose block of
// bytes holds a NUL byte treated as binary (the search of that file stops
// there, and a file with one in its first block is skipped; a file given
// as the search path is searched whole), a UTF-8 byte
// order mark removed and UTF-16 files with a byte order mark transcoded.
// Globs follow ripgrep's --glob: without a slash a glob matches a name at
// any depth, with one it is anchored at the search directory, "!" excludes,
// and a file must match one of the including globs when there are any. A
// glob that matches decides before the ignore files do, as in ripgrep.
//
// Known differences from ripgrep: patterns are Go regular expressions,
// whose \w, \d, \s and \b are ASCII-only where ripgrep's are Unicode-aware
// (and ripgrep-only syntax such as look-around does not exist in either);
// git's global excludes file and core.excludesFile are not read; and the
// block size that decides where binary detection looks is close to, not
// exactly, ripgrep's.

// blockSize is how much of a file the fallback reads at a time, and so
// where it looks for a NUL byte.
const blockSize = 64 << 10

// maxTranscoded bounds a UTF-16 file the fallback transcodes in memory.
const maxTranscoded = 256 << 20

// override is one --glob.
type override struct {
	negate  bool
	dirOnly bool
	pattern string // a doublestar pattern matched against the slash path below the search directory
}

type overrides struct {
	list       []override
	whitelists int
}

// compileOverrides turns ripgrep-style globs into doublestar patterns.
func compileOverrides(globs ...string) (overrides, error) {
	var o overrides
	for _, g := range globs {
		if g == "" {
			continue
		}
		ov := override{}
		p := g
		if strings.HasPrefix(p, "!") {
			ov.negate = true
			p = p[1:]
		}
		if strings.HasSuffix(p, "/") {
			ov.dirOnly = true
			p = strings.TrimRight(p, "/")
		}
		switch {
		case strings.HasPrefix(p, "/"):
			p = strings.TrimLeft(p, "/")
		case !strings.Contains(p, "/"):
			p = "**/" + p // a slash-free glob matches a name at any depth
		}
		if p == "" || !doublestar.ValidatePattern(p) {
			return o, newErr(Validation, CodeBadGlob, fmt.Sprintf("the glob %q is not valid (check its brackets and braces)", g), nil)
		}
		ov.pattern = p
		if !ov.negate {
			o.whitelists++
		}
		o.list = append(o.list, ov)
	}
	return o, nil
}

// match reports whether a glob decides rel, and whether it excludes it.
// The last matching glob wins.
func (o overrides) match(rel string, isDir bool) (decided, ignored bool) {
	for i := len(o.list) - 1; i >= 0; i-- {
		ov := o.list[i]
		if ov.dirOnly && !isDir {
			continue
		}
		if ok, _ := doublestar.Match(ov.pattern, rel); ok {
			return true, ov.negate
		}
	}
	if !isDir && o.whitelists > 0 {
		return true, true // an including glob exists and none matched
	}
	return false, false
}

// walker visits the files a search looks at.
type walker struct {
	ctx      context.Context
	root     string
	ov       overrides
	noHidden bool
	onFile   func(abs string)
	mu       sync.Mutex
	partial  bool
}

func (w *walker) setPartial() {
	w.mu.Lock()
	w.partial = true
	w.mu.Unlock()
}

// run walks the tree below w.root.
func (w *walker) run() {
	var stack ignoreStack
	// The ignore files of the directories above the root apply too.
	var parents []string
	for d := filepath.Dir(w.root); ; d = filepath.Dir(d) {
		parents = append(parents, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(parents) - 1; i >= 0; i-- {
		stack = append(stack, loadDirIgnores(parents[i]))
	}
	w.walk(w.root, stack)
}

func (w *walker) walk(dir string, stack ignoreStack) {
	if w.ctx.Err() != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.setPartial()
		return
	}
	stack = append(stack[:len(stack):len(stack)], loadDirIgnores(dir))
	for _, e := range entries {
		if w.ctx.Err() != nil {
			return
		}
		name := e.Name()
		t := e.Type()
		if t&fs.ModeSymlink != 0 || (!t.IsDir() && !t.IsRegular()) {
			continue // links are not followed; devices, sockets and pipes are not searched
		}
		isDir := t.IsDir()
		if isDir && name == ".git" {
			continue
		}
		abs := filepath.Join(dir, name)
		rel, _ := filepath.Rel(w.root, abs)
		rel = filepath.ToSlash(rel)
		if decided, ignored := w.ov.match(rel, isDir); decided {
			if ignored {
				continue
			}
		} else if decided, ignored := stack.decide(abs, isDir); decided {
			if ignored {
				continue
			}
		} else if w.noHidden && strings.HasPrefix(name, ".") {
			continue
		}
		if isDir {
			w.walk(abs, stack)
		} else {
			w.onFile(abs)
		}
	}
}

func fallbackGrep(ctx context.Context, o GrepOptions) (*GrepResult, error) {
	re, err := regexp.Compile("(?m)" + o.Pattern)
	if err != nil {
		return nil, newErr(Validation, CodeBadPattern, fmt.Sprintf("grep: the pattern is not a valid regular expression: %v", err), err)
	}
	ov, err := compileOverrides(o.Include)
	if err != nil {
		return nil, newErr(Validation, CodeBadGlob, "grep: "+err.Error(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res := &GrepResult{RunInfo: RunInfo{Engine: EngineFallback, FallbackReason: o.FallbackReason}}
	c := newGrepCollector(o.Limit, nil)
	var mu sync.Mutex
	w := &walker{ctx: ctx, root: o.Target.Dir, ov: ov, noHidden: o.NoHidden}
	search := func(path string) {
		var found []Match
		err := searchFile(path, re, o.Target.File == "", func(line int, text []byte) {
			found = append(found, Match{Path: path, Line: line, Text: previewBytes(text)})
		})
		if err != nil {
			w.setPartial()
		}
		if len(found) > 0 {
			mu.Lock()
			for _, m := range found {
				c.add(m)
			}
			mu.Unlock()
		}
	}
	if o.Target.File != "" {
		search(filepath.Join(o.Target.Dir, o.Target.File))
	} else {
		files := make(chan string, 256)
		var wg sync.WaitGroup
		for range max(1, runtime.GOMAXPROCS(0)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for p := range files {
					if ctx.Err() == nil {
						search(p)
					}
				}
			}()
		}
		w.onFile = func(abs string) { files <- abs }
		w.run()
		close(files)
		wg.Wait()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut, res.Timeout = true, o.Timeout
	} else if ctx.Err() != nil {
		return nil, newErr(Internal, CodeInternal, "grep: the search was interrupted", ctx.Err())
	}
	res.Partial = w.partial
	res.Matches, res.Total = c.result()
	res.Truncated = res.Total > len(res.Matches)
	return res, nil
}

func fallbackGlob(ctx context.Context, o GlobOptions) (*GlobResult, error) {
	ov, err := compileOverrides(o.Pattern)
	if err != nil {
		return nil, newErr(Validation, CodeBadGlob, "glob: "+err.Error(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res := &GlobResult{RunInfo: RunInfo{Engine: EngineFallback, FallbackReason: o.FallbackReason}, Dir: o.Target.Dir, Pattern: o.Pattern}
	c := newGlobCollector(o.Limit, nil)
	w := &walker{ctx: ctx, root: o.Target.Dir, ov: ov, noHidden: o.NoHidden, onFile: c.add}
	w.run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut, res.Timeout = true, o.Timeout
	} else if ctx.Err() != nil {
		return nil, newErr(Internal, CodeInternal, "glob: the search was interrupted", ctx.Err())
	}
	res.Partial = w.partial
	res.Files, res.Total = c.result()
	res.Truncated = res.Total > len(res.Files)
	return res, nil
}

// previewBytes is preview for a line read from a file.
func previewBytes(b []byte) string { return preview(string(b)) }

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// searchFile reports each line of path that re matches (1-based line
// number, the line without its terminator). It reads the file a block at a
// time and, with binaryStop, stops at the first block that holds a NUL
// byte; a file named as the search path is searched whole, as ripgrep
// searches a file it is given explicitly.
func searchFile(path string, re *regexp.Regexp, binaryStop bool, emit func(line int, text []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 0, blockSize)
	n, err := io.ReadFull(f, buf[:blockSize])
	buf = buf[:n]
	eof := err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)
	if err != nil && !eof {
		return err
	}
	switch {
	case bytes.HasPrefix(buf, bomUTF16LE) || bytes.HasPrefix(buf, bomUTF16BE):
		rest, err := io.ReadAll(io.LimitReader(f, maxTranscoded))
		if err != nil {
			return err
		}
		text, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder().Bytes(append(buf, rest...))
		if err != nil {
			return err
		}
		searchLines(text, 1, re, emit)
		return nil
	case bytes.HasPrefix(buf, bomUTF8):
		buf = buf[len(bomUTF8):]
	}
	line := 1
	fresh := buf // the bytes read last, where a NUL means binary
	for {
		if binaryStop && bytes.IndexByte(fresh, 0) >= 0 {
			return nil
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
		}
		if end > 0 {
			line = searchLines(buf[:end], line, re, emit)
			buf = append(buf[:0], buf[end:]...)
		}
		if eof {
			return nil
		}
		if cap(buf)-len(buf) < blockSize/2 {
			grown := make([]byte, len(buf), len(buf)+blockSize)
			copy(grown, buf)
			buf = grown
		}
		start := len(buf)
		n, err := io.ReadFull(f, buf[start:min(cap(buf), start+blockSize)])
		buf = buf[:start+n]
		fresh = buf[start:]
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			eof = true
		} else if err != nil {
			return err
		}
	}
}

// searchLines reports the lines of text (whole lines; the last may lack
// its terminator) that re, compiled in multi-line mode, matches. first is
// the number of text's first line; the number after its last is
// returned. The whole text is searched at once, which is fast, and a match
// that runs across a line end is checked against its first line alone, so
// that only what a line-by-line search finds is reported.
func searchLines(text []byte, first int, re *regexp.Regexp, emit func(line int, text []byte)) int {
	line, counted := first, 0 // line is the number of the line that starts at counted
	pos := 0
	for pos < len(text) {
		loc := re.FindIndex(text[pos:])
		if loc == nil {
			break
		}
		s, e := pos+loc[0], pos+loc[1]
		if s == len(text) {
			break // an empty match after the last line
		}
		ls := bytes.LastIndexByte(text[:s], '\n') + 1
		le := len(text)
		if i := bytes.IndexByte(text[s:], '\n'); i >= 0 {
			le = s + i
		}
		line += bytes.Count(text[counted:ls], []byte{'\n'})
		counted = ls
		one := text[ls:le]
		if e <= le || re.Match(one) {
			if le < len(text) {
				one = bytes.TrimSuffix(one, []byte{'\r'}) // a CRLF line end
			}
			emit(line, one)
		}
		pos = le + 1
	}
	return line + bytes.Count(text[counted:], []byte{'\n'})
}
