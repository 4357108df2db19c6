package claudecode

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slimgate/slim/rescue"
)

// The Edit rescue. Claude Code's Edit replaces old_string, which must occur
// in the file exactly, by new_string; MultiEdit does the same for a list of
// edits, one after the other. A model's old_string is often a little out of
// date in the ways slim's matcher tolerates: typographic quotes or dashes
// where the file has plain ones (or the other way round), trailing spaces,
// different indentation. Claude Code then fails the call ("String to
// replace not found"), and the model retries, often with the same drift.
//
// Before such a call runs, slim turns each edit whose old_string is not in
// the file into an apply_patch chunk (the old_string's lines removed, the
// new_string's added) and places it with package rescue. When the chunk is
// placed by a tolerant comparison alone, or through one mapping of leading
// whitespace, the edit's old_string becomes the file's real bytes at that
// place and its new_string the authored one (re-indented by the same
// mapping when there was one), and the call goes on with that updatedInput.
// When the drifted old_string fits several places equally, the call is
// denied with their line numbers. Anything else (an old_string that is in
// the file, one no tolerant comparison places, a rescue that would guess
// more than drift, a file with CR line ends) is left to Claude Code.
//
// Claude Code 2.1.332 validates an Edit's input before it runs the
// PreToolUse hooks and refuses an old_string that is not in the file
// itself, so on that release no such request reaches slim; the end-to-end
// test TestClaudeDriftedEditNeverReachesHooks fails when a release asks the
// hooks first.

// editRescuable are the strategies and repairs under which an edit is
// rescued: the tolerant rungs of the matcher, and the indentation mapping.
// A stale-context rescue (prefix-suffix, lcs) guesses which lines the
// author meant; an Edit names them exactly, so slim does not guess.
var editRescuable = map[string]bool{"exact": true, "unicode": true, "trim-end": true, "unicode-trim-end": true, "nfc": true, "indent": true}

// editOutcome is what the Edit rescue decided for one call.
type editOutcome struct {
	// updated is the rewritten tool input (nil: nothing rescued).
	updated map[string]any
	// refusal, when set, is the reason the call must not run.
	refusal string
	// notes say what was rescued, for the log.
	notes []string
}

// rescueEdits rescues the edits of an Edit or MultiEdit call whose target
// (already contained) is path.
func rescueEdits(tool, path string, input map[string]any) editOutcome {
	type edit struct {
		obj      map[string]any
		old, new string
	}
	var edits []edit
	read := func(m map[string]any) (edit, bool) {
		old, ok1 := m["old_string"].(string)
		nw, ok2 := m["new_string"].(string)
		all, _ := m["replace_all"].(bool)
		// An empty old_string creates a file; replace_all asks for every
		// place, which a drifted old_string cannot name with certainty.
		return edit{obj: m, old: old, new: nw}, ok1 && ok2 && old != "" && !all
	}
	switch tool {
	case "Edit":
		e, ok := read(input)
		if !ok {
			return editOutcome{}
		}
		edits = append(edits, e)
	case "MultiEdit":
		list, ok := input["edits"].([]any)
		if !ok {
			return editOutcome{}
		}
		for _, v := range list {
			m, ok := v.(map[string]any)
			if !ok {
				return editOutcome{}
			}
			e, ok := read(m)
			if !ok {
				return editOutcome{}
			}
			edits = append(edits, e)
		}
	default:
		return editOutcome{}
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > rescue.MaxFileSize {
		return editOutcome{}
	}
	data, err := os.ReadFile(path)
	if err != nil || bytes.IndexByte(data, '\r') >= 0 || bytes.IndexByte(data, 0) >= 0 {
		return editOutcome{}
	}
	content := string(data)
	var out editOutcome
	changed := map[int]edit{}
	for i, e := range edits {
		if strings.Contains(content, e.old) {
			// Claude Code's own case (one place, or its own refusal of
			// several); MultiEdit's later edits see the text after it.
			content = strings.Replace(content, e.old, e.new, 1)
			continue
		}
		old, nw, refusal, note := placeEdit(content, e.old, e.new)
		if refusal != "" {
			what := tool
			if tool == "MultiEdit" {
				what = fmt.Sprintf("MultiEdit edit %d", i+1)
			}
			return editOutcome{refusal: fmt.Sprintf("%s: old_string is not in %s as written, and %s", what, path, refusal)}
		}
		if old == "" {
			return editOutcome{} // not rescued: Claude Code says why
		}
		content = strings.Replace(content, old, nw, 1)
		changed[i] = edit{obj: e.obj, old: old, new: nw}
		out.notes = append(out.notes, note)
	}
	if len(changed) == 0 {
		return editOutcome{}
	}
	// The rewritten input: a copy, every other field kept as sent.
	cp := func(m map[string]any, e edit) map[string]any {
		n := make(map[string]any, len(m))
		for k, v := range m {
			n[k] = v
		}
		n["old_string"], n["new_string"] = e.old, e.new
		return n
	}
	out.updated = make(map[string]any, len(input))
	for k, v := range input {
		out.updated[k] = v
	}
	if tool == "Edit" {
		out.updated = cp(input, changed[0])
		return out
	}
	list := make([]any, len(edits))
	for i, e := range edits {
		list[i] = e.obj
		if c, ok := changed[i]; ok {
			list[i] = cp(e.obj, c)
		}
	}
	out.updated["edits"] = list
	return out
}

// placeEdit places one drifted edit in content. It returns the file's real
// bytes for old_string and the new_string to write (old == "" when the edit
// is not rescued), or a refusal when the drifted old_string fits several
// places.
func placeEdit(content, old, nw string) (realOld, realNew, refusal, note string) {
	dir, err := os.MkdirTemp("", "slim-edit-")
	if err != nil {
		return "", "", "", ""
	}
	defer os.RemoveAll(dir)
	const name = "file"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		return "", "", "", ""
	}
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: " + name + "\n@@\n")
	for _, l := range strings.Split(strings.TrimSuffix(old, "\n"), "\n") {
		p.WriteString("-" + l + "\n")
	}
	if nw != "" {
		for _, l := range strings.Split(strings.TrimSuffix(nw, "\n"), "\n") {
			p.WriteString("+" + l + "\n")
		}
	}
	p.WriteString("*** End Patch\n")
	res, err := rescue.Process([]byte(p.String()), rescue.Options{Directory: dir, NoWorktree: true})
	if err != nil {
		var re *rescue.Error
		if errors.As(err, &re) && re.Kind == rescue.Verification && len(res.Chunks) == 1 && len(res.Chunks[0].Candidates) > 1 {
			return "", "", fmt.Sprintf("after slim's tolerant comparison it fits %d places, at lines %s; include more surrounding lines so it names one", len(res.Chunks[0].Candidates), joinInts(res.Chunks[0].Candidates)), ""
		}
		return "", "", "", ""
	}
	if len(res.Chunks) != 1 || !editRescuable[res.Chunks[0].Strategy] {
		return "", "", "", ""
	}
	indent := ""
	for _, r := range res.Repairs {
		switch r.Kind {
		case "indentation":
			indent = r.Detail
		case "patch_eol", "absolute_path":
		default:
			return "", "", "", "" // already applied, a dropped header, ...: not drift
		}
	}
	if res.PatchText == nil {
		return "", "", "", ""
	}
	oldLines, newLines, ok := oneChunk(*res.PatchText)
	if !ok {
		return "", "", "", ""
	}
	// The rendered chunk is the rescue's own view: its old lines are the
	// file's bytes, its new lines the authored ones (mapped when an
	// indentation repair says so), both framed by the same context lines
	// when the renderer added any.
	realOld, realNew = strings.Join(oldLines, "\n"), strings.Join(newLines, "\n")
	switch {
	case strings.HasSuffix(old, "\n"):
		realOld += "\n"
		if len(newLines) > 0 {
			realNew += "\n"
		}
	case strings.HasSuffix(nw, "\n"):
		realNew += "\n"
	}
	// The rescue's rendering must name exactly one place of the file, as
	// Claude Code requires of old_string.
	if realOld == "" || strings.Count(content, realOld) != 1 {
		return "", "", "", ""
	}
	note = "edit rescued (" + res.Chunks[0].Strategy
	if indent != "" {
		note += ", indentation " + indent
	}
	return realOld, realNew, "", note + fmt.Sprintf(") at line %d", res.Chunks[0].Line)
}

// oneChunk reads the lines of the single chunk of a one-file patch: the old
// text (context and removed lines) and the new (context and added lines).
// ok is false for anything else.
func oneChunk(patchText string) (oldLines, newLines []string, ok bool) {
	lines := strings.Split(strings.TrimSuffix(patchText, "\n"), "\n")
	headers := 0
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "*** Update File: "):
			in = true
			continue
		case l == "*** Begin Patch" || l == "*** End Patch":
			in = false
			continue
		case strings.HasPrefix(l, "*** "):
			return nil, nil, false // another file, a move, an End of File marker
		case !in:
			continue
		case strings.HasPrefix(l, "@@"):
			if headers++; headers > 1 {
				return nil, nil, false
			}
			continue
		}
		if l == "" {
			return nil, nil, false
		}
		switch l[0] {
		case ' ':
			oldLines, newLines = append(oldLines, l[1:]), append(newLines, l[1:])
		case '-':
			oldLines = append(oldLines, l[1:])
		case '+':
			newLines = append(newLines, l[1:])
		default:
			return nil, nil, false
		}
	}
	return oldLines, newLines, len(oldLines) > 0
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
