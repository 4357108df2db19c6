package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/slimgate/slim/internal/atomicfile"
)

// Actions for Claude Code's settings file, besides Created, Upgraded,
// Unchanged, Removed and Absent.
const (
	// Added: slim's hook entries were added to a settings file that
	// already held other settings.
	Added = "added"
)

// CodeUnreadable is the error code when a settings file slim would edit is
// not a JSON object it can read; it is left untouched.
const CodeUnreadable = "unreadable_settings"

// ClaudeCodeHooks says which hook entries slim puts in Claude Code's
// settings: the command Claude Code runs, the PreToolUse matcher (the tools
// slim may refuse or rewrite before they run) and the timeout in seconds.
// PostToolUse matches every tool ("*"), because the loop guard counts them
// all.
type ClaudeCodeHooks struct {
	Command    string
	PreMatcher string
	Timeout    int
	// PreEvent and PostEvent are the host's names of its before and after
	// tool events, for the hosts that share this layout under other names
	// (Gemini CLI's BeforeTool and AfterTool); empty means PreToolUse and
	// PostToolUse.
	PreEvent, PostEvent string
}

// events are h's before and after event names.
func (h ClaudeCodeHooks) events() (pre, post string) {
	pre, post = h.PreEvent, h.PostEvent
	if pre == "" {
		pre = "PreToolUse"
	}
	if post == "" {
		post = "PostToolUse"
	}
	return pre, post
}

// isOurs reports whether command is slim's Claude Code hook command, as
// this or any other slim binary spells it: a slim path, then the same
// arguments.
func (h ClaudeCodeHooks) isOurs(command string) bool {
	if command == h.Command {
		return true
	}
	_, args, ok := strings.Cut(h.Command, " ")
	if !ok {
		return false
	}
	prog, rest, ok := strings.Cut(command, " ")
	base := filepath.Base(strings.Trim(prog, `"'`))
	return ok && rest == args && (base == "slim" || base == "slim.exe")
}

// group is slim's matcher group, its keys in the order Claude Code's own
// documentation writes them.
func (h ClaudeCodeHooks) group(matcher string) json.RawMessage {
	entry := encodeObject([]member{{"type", mustMarshal("command")}, {"command", mustMarshal(h.Command)}, {"timeout", mustMarshal(h.Timeout)}})
	return encodeObject([]member{{"matcher", mustMarshal(matcher)}, {"hooks", mustMarshal([]json.RawMessage{entry})}})
}

// ClaudeCodePath returns the settings file slim's hooks go to:
// <project top>/.claude/settings.json, or with global the user's
// settings.json in $CLAUDE_CONFIG_DIR (~/.claude when it is unset). guard
// is as for OpenCodePath: the project top, or "" for the user's file.
func ClaudeCodePath(dir string, global bool, getenv func(string) string) (path, guard string, err error) {
	if global {
		base := getenv("CLAUDE_CONFIG_DIR")
		if base == "" {
			home := getenv("HOME")
			if home == "" {
				h, err := os.UserHomeDir()
				if err != nil {
					return "", "", fmt.Errorf("user settings: no CLAUDE_CONFIG_DIR and no home directory: %w", err)
				}
				home = h
			}
			base = filepath.Join(home, ".claude")
		}
		return filepath.Join(base, "settings.json"), "", nil
	}
	top, err := projectTop(dir)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(top, ".claude", "settings.json"), top, nil
}

// ClaudeCode adds slim's PreToolUse and PostToolUse hooks to the settings
// file at path, keeping every other setting and hook: members keep their
// order and their values exactly as written (the file is re-indented the
// way it was indented). It is idempotent (Unchanged, and the file is not
// rewritten, when slim's entries are already there as they should be), and
// replaces slim's own older entries (Upgraded). A file that is not a JSON
// object, whose hooks are not shaped as Claude Code reads them, or that is
// a symbolic link is refused and left untouched; below guard no link is
// followed, as for OpenCode.
func ClaudeCode(path, guard string, h ClaudeCodeHooks) (Result, error) {
	return installCommandHooks("claude-code", path, guard, h, "")
}

// UninstallClaudeCode removes slim's entries from the settings file at
// path and nothing else: a matcher group, an event list or the hooks object
// goes only when slim's entries were all it held, and the file only when
// nothing at all is left in it (an empty object configures nothing).
func UninstallClaudeCode(path, guard string, h ClaudeCodeHooks) (Result, error) {
	return uninstallCommandHooks("claude-code", path, guard, h)
}

// installCommandHooks adds h's before and after entries (PreToolUse and
// PostToolUse unless h names others) to the settings file at path, for the
// hosts whose hooks have Claude Code's layout (events, matcher groups,
// command entries): Claude Code, Codex and Gemini CLI.
// kind is the host's Result.Kind, also named in errors; note, when the
// file is written, is Result.Note. See ClaudeCode for what is kept,
// replaced and refused.
func installCommandHooks(kind, path, guard string, h ClaudeCodeHooks, note string) (Result, error) {
	r := Result{Kind: kind, Path: path}
	old, mode, err := readSettings(path, guard, "written")
	if err != nil {
		return r, err
	}
	s, err := parseSettings(path, old)
	if err != nil {
		return r, err
	}
	changed := false
	pre, post := h.events()
	for _, ev := range []struct{ name, matcher string }{{pre, h.PreMatcher}, {post, "*"}} {
		c, err := s.install(ev.name, h.group(ev.matcher), h)
		if err != nil {
			return r, err
		}
		changed = changed || c
	}
	switch {
	case old == nil:
		r.Action = Created
	case s.hadOurs && !changed:
		r.Action = Unchanged
		return r, nil
	case s.hadOurs:
		r.Action = Upgraded
	default:
		r.Action = Added
	}
	r.Note = note
	if old == nil {
		if err := mkdirs(guard, filepath.Dir(path)); err != nil {
			return r, fmt.Errorf("install %s hooks: %w", kind, err)
		}
	}
	if err := atomicfile.WriteFile(path, s.encode(), mode); err != nil {
		return r, fmt.Errorf("install %s hooks: %w", kind, err)
	}
	return r, nil
}

// uninstallCommandHooks removes h's entries from the settings file at path
// for the hosts installCommandHooks writes, as UninstallClaudeCode says.
func uninstallCommandHooks(kind, path, guard string, h ClaudeCodeHooks) (Result, error) {
	r := Result{Kind: kind, Path: path}
	old, mode, err := readSettings(path, guard, "removed")
	if err != nil {
		return r, err
	}
	if old == nil {
		r.Action = Absent
		return r, nil
	}
	s, err := parseSettings(path, old)
	if err != nil {
		return r, err
	}
	pre, post := h.events()
	for _, ev := range []string{pre, post} {
		if err := s.strip(ev, h); err != nil {
			return r, err
		}
	}
	if !s.hadOurs {
		r.Action = Absent
		return r, nil
	}
	r.Action = Removed
	if len(s.top) == 0 {
		if err := os.Remove(path); err != nil {
			return r, fmt.Errorf("uninstall %s hooks: %w", kind, err)
		}
		r.Note = "nothing else was in it; the file was removed"
		return r, nil
	}
	if err := atomicfile.WriteFile(path, s.encode(), mode); err != nil {
		return r, fmt.Errorf("uninstall %s hooks: %w", kind, err)
	}
	return r, nil
}

// readSettings returns the settings file's bytes (nil when it does not
// exist) and the mode to write it back with, refusing a link at it or, below
// guard, on the way to it.
func readSettings(path, guard, done string) ([]byte, fs.FileMode, error) {
	if err := checkLinks(guard, path, done); err != nil {
		return nil, 0, err
	}
	if err := refuseLink(path, done); err != nil {
		return nil, 0, err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	b, err := readRegular(path)
	if err != nil {
		if isNotRegular(err) {
			return nil, 0, refuse(CodeUnreadable, "%s is not a regular file; it was left untouched", path)
		}
		return nil, 0, err
	}
	return b, fi.Mode().Perm(), nil
}

// member is one key of a JSON object with its value as written.
type member struct {
	key string
	val json.RawMessage
}

// settings is a parsed settings file: its top-level members in order, the
// indentation to write it back with, and whether slim's entries were found.
type settings struct {
	path    string
	top     []member
	indent  string
	hadOurs bool
}

func parseSettings(path string, data []byte) (*settings, error) {
	s := &settings{path: path, indent: indentOf(data)}
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	top, err := parseObject(data)
	if err != nil {
		return nil, refuse(CodeUnreadable, "%s is not a JSON object slim can read (%v); it was left untouched. Fix it by hand and run the command again", path, err)
	}
	s.top = top
	return s, nil
}

func (s *settings) bad(format string, args ...any) error {
	return refuse(CodeUnreadable, "%s: %s; it was left untouched. Fix it by hand and run the command again", s.path, fmt.Sprintf(format, args...))
}

// event returns the hooks object's members and the groups of one event.
func (s *settings) event(name string) (hooks []member, groups []json.RawMessage, err error) {
	raw, n := find(s.top, "hooks")
	if n > 1 {
		return nil, nil, s.bad("the key \"hooks\" appears %d times", n)
	}
	if raw != nil {
		if hooks, err = parseObject(raw); err != nil {
			return nil, nil, s.bad("\"hooks\" is not an object")
		}
	}
	ev, n := find(hooks, name)
	if n > 1 {
		return nil, nil, s.bad("the key \"hooks.%s\" appears %d times", name, n)
	}
	if ev != nil {
		if err := json.Unmarshal(ev, &groups); err != nil {
			return nil, nil, s.bad("\"hooks.%s\" is not an array", name)
		}
	}
	return hooks, groups, nil
}

// setEvent stores the groups of one event (an empty list removes the
// event, and an empty hooks object the hooks key).
func (s *settings) setEvent(hooks []member, name string, groups []json.RawMessage) {
	if len(groups) == 0 {
		hooks = without(hooks, name)
	} else {
		hooks = with(hooks, name, mustMarshal(groups))
	}
	if len(hooks) == 0 {
		s.top = without(s.top, "hooks")
	} else {
		s.top = with(s.top, "hooks", encodeObject(hooks))
	}
}

// strip removes slim's entries from one event's groups. It reports
// through hadOurs whether there were any.
func (s *settings) strip(name string, h ClaudeCodeHooks) error {
	hooks, groups, err := s.event(name)
	if err != nil {
		return err
	}
	kept, found, err := s.stripGroups(name, groups, h)
	if err != nil || !found {
		return err
	}
	s.hadOurs = true
	s.setEvent(hooks, name, kept)
	return nil
}

func (s *settings) stripGroups(name string, groups []json.RawMessage, h ClaudeCodeHooks) (kept []json.RawMessage, found bool, err error) {
	for i, g := range groups {
		gm, err := parseObject(g)
		if err != nil {
			return nil, false, s.bad("hooks.%s[%d] is not an object", name, i)
		}
		entriesRaw, _ := find(gm, "hooks")
		var entries []json.RawMessage
		if entriesRaw != nil && json.Unmarshal(entriesRaw, &entries) != nil {
			return nil, false, s.bad("hooks.%s[%d].hooks is not an array", name, i)
		}
		var rest []json.RawMessage
		for _, e := range entries {
			var entry struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(e, &entry) == nil && h.isOurs(entry.Command) {
				found = true
				continue
			}
			rest = append(rest, e)
		}
		switch {
		case len(rest) == len(entries):
			kept = append(kept, g)
		case len(rest) > 0:
			kept = append(kept, encodeObject(with(gm, "hooks", mustMarshal(rest))))
		}
	}
	return kept, found, nil
}

// install makes want the only group of slim's in one event, leaving the
// other groups where they are; changed is false when it already was.
func (s *settings) install(name string, want json.RawMessage, h ClaudeCodeHooks) (changed bool, err error) {
	hooks, groups, err := s.event(name)
	if err != nil {
		return false, err
	}
	kept, found, err := s.stripGroups(name, groups, h)
	if err != nil {
		return false, err
	}
	if found {
		s.hadOurs = true
		if len(kept) == len(groups)-1 {
			// Already there exactly once, in a group of its own: unchanged
			// when that group is exactly the wanted one.
			for _, g := range groups {
				if sameJSON(g, want) {
					return false, nil
				}
			}
		}
	}
	s.setEvent(hooks, name, append(kept, want))
	return true, nil
}

func sameJSON(raw json.RawMessage, want any) bool {
	var a, b any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&a) != nil {
		return false
	}
	dec = json.NewDecoder(bytes.NewReader(mustMarshal(want)))
	dec.UseNumber()
	dec.Decode(&b)
	return reflect.DeepEqual(a, b)
}

// encode writes the settings back, indented as the file was, with a final
// newline.
func (s *settings) encode() []byte {
	var out bytes.Buffer
	json.Indent(&out, encodeObject(s.top), "", s.indent) // encodeObject's output is valid JSON
	out.WriteByte('\n')
	return out.Bytes()
}

// indentOf is the indentation unit of a JSON text: the leading blanks of
// its first indented line, two spaces when it has none.
func indentOf(data []byte) string {
	for _, line := range strings.Split(string(data), "\n")[1:] {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(trimmed) < len(line) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}

// parseObject reads one JSON object into its members in order, each value
// as written. Nothing may follow the object.
func parseObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		ms = append(ms, member{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	return ms, nil
}

// encodeObject writes members as one compact JSON object, in order.
func encodeObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustMarshal(m.key))
		b.WriteByte(':')
		json.Compact(&b, m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func find(ms []member, key string) (json.RawMessage, int) {
	var val json.RawMessage
	n := 0
	for _, m := range ms {
		if m.key == key {
			val, n = m.val, n+1
		}
	}
	return val, n
}

// with sets key to val, in place when key is there, else at the end.
func with(ms []member, key string, val json.RawMessage) []member {
	out := append([]member(nil), ms...)
	for i := range out {
		if out[i].key == key {
			out[i].val = val
			return out
		}
	}
	return append(out, member{key, val})
}

func without(ms []member, key string) []member {
	var out []member
	for _, m := range ms {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

// mustMarshal encodes values built from JSON slim read or wrote itself,
// which always encode, without HTML escaping.
func mustMarshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
