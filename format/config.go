package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"github.com/slimgate/slim/format/internal/jsonc"
)

// Sources says where the host's configuration lives. The package reads no
// environment variable: the caller fills these in (the slim command from
// XDG_CONFIG_HOME, HOME and the OPENCODE_CONFIG* variables).
type Sources struct {
	// GlobalDir is the user's config directory, $XDG_CONFIG_HOME/opencode
	// (~/.config/opencode): config.json, opencode.json and opencode.jsonc
	// there are read first, in that order.
	GlobalDir string
	// File is OPENCODE_CONFIG, a config file read after the global ones.
	File string
	// NoProject is OPENCODE_DISABLE_PROJECT_CONFIG: skip the project's
	// opencode.json(c) files and .opencode directories.
	NoProject bool
	// Home is the user's home directory: ~/.opencode is read as a
	// .opencode directory, and {file:~/...} references start there.
	Home string
	// Dir is OPENCODE_CONFIG_DIR, read like a .opencode directory.
	Dir string
	// Content is OPENCODE_CONFIG_CONTENT, a whole config given inline.
	Content string
	// ManagedDir holds the administrator's config (/etc/opencode on Linux),
	// read last, so it wins.
	ManagedDir string
	// Getenv answers {env:NAME} references in config files; nil reads
	// none (every reference becomes empty).
	Getenv func(string) string
}

// Entry is one member of the `formatter` object: a built-in's override or
// a formatter of the project's own.
type Entry struct {
	Name     string `json:"name"`
	Disabled bool   `json:"disabled,omitempty"`
	// Command, Extensions and Environment are nil when the entry does not
	// set them.
	Command     []string          `json:"command,omitempty"`
	Extensions  []string          `json:"extensions,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
}

// Config is the host's `formatter` setting once every config file is
// merged.
type Config struct {
	// Enabled is false when no file sets `formatter`, or the merged value
	// is false: the host then formats nothing.
	Enabled bool `json:"enabled"`
	// Entries are the members of the `formatter` object, in the order the
	// merged object has them; empty for `formatter: true`.
	Entries []Entry `json:"entries,omitempty"`
	// From lists the sources that set `formatter`, lowest precedence first.
	From []string `json:"from,omitempty"`
}

// LoadConfig reads the `formatter` setting the host would use for a
// session in directory, whose worktree top is worktree ("" when there is
// none). The sources are merged in the host's order, each later one
// winning: the global files, File, the project's files from the worktree
// top down to the directory (in each directory opencode.json, then
// opencode.jsonc), the .opencode directories from the directory up to the
// worktree top (so the outer one wins), ~/.opencode, Dir, Content, and the
// managed directory. Objects merge key by key, recursively; any other value
// (true, false, an array) replaces what came before.
//
// Every file must be valid JSONC and its `formatter` value must have the
// host's shape (true, false, or an object of entries with an optional
// boolean `disabled`, string arrays `command` and `extensions`, and an
// object of strings `environment`; other keys are ignored); otherwise the
// host refuses to start, and LoadConfig returns a Validation error naming
// the file. An empty file counts as {}. Before parsing, {env:NAME} is
// replaced by the variable's value and {file:PATH} by the file's trimmed
// text, as the host does.
func LoadConfig(directory, worktree string, src Sources) (*Config, error) {
	var files []string
	add := func(paths ...string) { files = append(files, paths...) }
	if src.GlobalDir != "" {
		add(filepath.Join(src.GlobalDir, "config.json"), filepath.Join(src.GlobalDir, "opencode.json"), filepath.Join(src.GlobalDir, "opencode.jsonc"))
	}
	if src.File != "" {
		add(src.File)
	}
	if !src.NoProject {
		dirs := upDirs(directory, worktree)
		for i := len(dirs) - 1; i >= 0; i-- {
			add(filepath.Join(dirs[i], "opencode.json"), filepath.Join(dirs[i], "opencode.jsonc"))
		}
	}
	for _, d := range dotDirs(directory, worktree, src) {
		add(filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"))
	}

	var merged *jsonc.Value
	cfg := &Config{}
	take := func(name string, v jsonc.Value, ok bool) {
		if !ok {
			return
		}
		cfg.From = append(cfg.From, name)
		if merged == nil {
			merged = &v
			return
		}
		m := mergeDeep(*merged, v)
		merged = &m
	}
	for _, f := range files {
		v, ok, err := readConfigFile(f, src)
		if err != nil {
			return nil, err
		}
		take(f, v, ok)
	}
	if src.Content != "" {
		v, ok, err := parseConfig("OPENCODE_CONFIG_CONTENT", []byte(src.Content), directory, src)
		if err != nil {
			return nil, err
		}
		take("OPENCODE_CONFIG_CONTENT", v, ok)
	}
	if src.ManagedDir != "" {
		for _, name := range []string{"opencode.json", "opencode.jsonc"} {
			f := filepath.Join(src.ManagedDir, name)
			v, ok, err := readConfigFile(f, src)
			if err != nil {
				return nil, err
			}
			take(f, v, ok)
		}
	}
	if merged == nil {
		return cfg, nil
	}
	switch merged.Kind {
	case jsonc.Bool:
		cfg.Enabled = merged.Bool
	case jsonc.Object:
		cfg.Enabled = true
		for _, m := range merged.Members {
			cfg.Entries = append(cfg.Entries, entryOf(m))
		}
	}
	return cfg, nil
}

// dotDirs lists the .opencode directories the host reads config from, in
// its order: those from directory up to worktree (nearest first), then
// ~/.opencode, then src.Dir; each once.
func dotDirs(directory, worktree string, src Sources) []string {
	var out []string
	seen := map[string]bool{}
	add := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	if !src.NoProject {
		for _, d := range upDirs(directory, worktree) {
			if isDir(filepath.Join(d, ".opencode")) {
				add(filepath.Join(d, ".opencode"))
			}
		}
	}
	if src.Home != "" && isDir(filepath.Join(src.Home, ".opencode")) {
		add(filepath.Join(src.Home, ".opencode"))
	}
	add(src.Dir)
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// upDirs lists start and its parents up to stop (included), nearest first;
// up to the file system root when stop is not met.
func upDirs(start, stop string) []string {
	dirs := []string{start}
	for cur := start; cur != stop; {
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		dirs = append(dirs, parent)
		cur = parent
	}
	return dirs
}

// readConfigFile reads one config file; a missing file is no source.
func readConfigFile(path string, src Sources) (jsonc.Value, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return jsonc.Value{}, false, nil
	}
	if err != nil {
		return jsonc.Value{}, false, newErr(Internal, CodeInternal, fmt.Sprintf("read the OpenCode config %s: %v", path, err), err)
	}
	return parseConfig(path, data, filepath.Dir(path), src)
}

// parseConfig substitutes the references in a config text, parses it and
// returns its `formatter` value, checked against the host's schema (false
// when the config does not set it).
func parseConfig(name string, data []byte, dir string, src Sources) (jsonc.Value, bool, error) {
	if len(data) == 0 {
		return jsonc.Value{}, false, nil
	}
	text, err := substitute(string(data), dir, src)
	if err != nil {
		return jsonc.Value{}, false, newErr(Validation, CodeConfigInvalid, fmt.Sprintf("the OpenCode config %s: %v", name, err), err)
	}
	doc, err := jsonc.Parse([]byte(text))
	if err != nil {
		return jsonc.Value{}, false, newErr(Validation, CodeConfigInvalid,
			fmt.Sprintf("the OpenCode config %s is not valid JSONC: %v; OpenCode refuses to start with it, so fix it first", name, err), err)
	}
	if doc.Kind != jsonc.Object {
		return jsonc.Value{}, false, newErr(Validation, CodeConfigInvalid,
			fmt.Sprintf("the OpenCode config %s is %s, not an object", name, doc.Kind), nil)
	}
	v, ok := doc.Get("formatter")
	if !ok {
		return jsonc.Value{}, false, nil
	}
	if err := checkFormatter(v); err != nil {
		return jsonc.Value{}, false, newErr(Validation, CodeConfigInvalid,
			fmt.Sprintf("the OpenCode config %s: %v; OpenCode refuses to start with it, so fix it first", name, err), err)
	}
	return v, true, nil
}

// refs finds each {KIND:...} reference in text (at least one character
// after the colon, none of them "}"), as start and end offsets.
func refs(text, kind string) [][2]int {
	open := "{" + kind + ":"
	var out [][2]int
	for i := 0; ; {
		j := strings.Index(text[i:], open)
		if j < 0 {
			return out
		}
		start := i + j
		k := strings.IndexByte(text[start+len(open):], '}')
		if k <= 0 { // no closing brace, or nothing before it
			i = start + 1
			continue
		}
		end := start + len(open) + k + 1
		out = append(out, [2]int{start, end})
		i = end
	}
}

// substitute replaces {env:NAME} with the variable's value ("" when it is
// unset) and then {file:PATH} with the named file's trimmed text, escaped
// for a JSON string, except on a line that is a // comment up to the
// reference. PATH is relative to dir; ~/ starts at src.Home.
func substitute(text, dir string, src Sources) (string, error) {
	if locs := refs(text, "env"); len(locs) > 0 {
		var b strings.Builder
		last := 0
		for _, loc := range locs {
			b.WriteString(text[last:loc[0]])
			if src.Getenv != nil {
				b.WriteString(src.Getenv(text[loc[0]+len("{env:") : loc[1]-1]))
			}
			last = loc[1]
		}
		b.WriteString(text[last:])
		text = b.String()
	}
	locs := refs(text, "file")
	if len(locs) == 0 {
		return text, nil
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		b.WriteString(text[last:loc[0]])
		last = loc[1]
		ref := text[loc[0]:loc[1]]
		lineStart := strings.LastIndexByte(text[:loc[0]], '\n') + 1
		if strings.HasPrefix(strings.TrimLeftFunc(text[lineStart:loc[0]], unicode.IsSpace), "//") {
			b.WriteString(ref)
			continue
		}
		p := ref[len("{file:") : len(ref)-1]
		if strings.HasPrefix(p, "~/") {
			p = filepath.Join(src.Home, p[2:])
		} else if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("bad file reference %q: %w", ref, err)
		}
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		e.Encode(strings.TrimFunc(string(data), jsSpace))
		s := strings.TrimSpace(enc.String())
		b.WriteString(s[1 : len(s)-1])
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// jsSpace is the white space JavaScript's String.trim removes: Unicode's,
// and the byte order mark.
func jsSpace(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }

// checkFormatter checks a `formatter` value against the host's schema.
func checkFormatter(v jsonc.Value) error {
	switch v.Kind {
	case jsonc.Bool:
		return nil
	case jsonc.Object:
	default:
		return fmt.Errorf("formatter must be true, false or an object, not %s", v.Kind)
	}
	for _, m := range v.Members {
		at := "formatter." + m.Key
		if m.Value.Kind != jsonc.Object {
			return fmt.Errorf("%s must be an object, not %s", at, m.Value.Kind)
		}
		for _, f := range m.Value.Members {
			switch f.Key {
			case "disabled":
				if f.Value.Kind != jsonc.Bool {
					return fmt.Errorf("%s.disabled must be true or false, not %s", at, f.Value.Kind)
				}
			case "command", "extensions":
				if !isStrings(f.Value) {
					return fmt.Errorf("%s.%s must be an array of strings", at, f.Key)
				}
			case "environment":
				ok := f.Value.Kind == jsonc.Object
				for _, kv := range f.Value.Members {
					ok = ok && kv.Value.Kind == jsonc.String
				}
				if !ok {
					return fmt.Errorf("%s.environment must be an object of strings", at)
				}
			}
			// Other keys are ignored, as the host ignores them.
		}
	}
	return nil
}

func isStrings(v jsonc.Value) bool {
	if v.Kind != jsonc.Array {
		return false
	}
	for _, e := range v.Elems {
		if e.Kind != jsonc.String {
			return false
		}
	}
	return true
}

func strs(v jsonc.Value) []string {
	out := make([]string, 0, len(v.Elems))
	for _, e := range v.Elems {
		out = append(out, e.Str)
	}
	return out
}

// entryOf reads one checked member of the merged `formatter` object.
func entryOf(m jsonc.Member) Entry {
	e := Entry{Name: m.Key}
	for _, f := range m.Value.Members {
		switch f.Key {
		case "disabled":
			e.Disabled = f.Value.Bool
		case "command":
			e.Command = strs(f.Value)
		case "extensions":
			e.Extensions = strs(f.Value)
		case "environment":
			e.Environment = map[string]string{}
			for _, kv := range f.Value.Members {
				e.Environment[kv.Key] = kv.Value.Str
			}
		}
	}
	return e
}

// mergeDeep merges b over a as the host merges config files: two objects
// merge key by key (a's keys first, in a's order, then b's new keys),
// recursively; anything else in b replaces a.
func mergeDeep(a, b jsonc.Value) jsonc.Value {
	if a.Kind != jsonc.Object || b.Kind != jsonc.Object {
		return b
	}
	out := jsonc.Value{Kind: jsonc.Object}
	for _, m := range a.Members {
		if bv, ok := b.Get(m.Key); ok {
			out.Members = append(out.Members, jsonc.Member{Key: m.Key, Value: mergeDeep(m.Value, bv)})
		} else {
			out.Members = append(out.Members, m)
		}
	}
	for _, m := range b.Members {
		if _, ok := a.Get(m.Key); !ok {
			out.Members = append(out.Members, m)
		}
	}
	return out
}
