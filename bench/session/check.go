package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/slimgate/slim/bench/internal/ochost"
	"github.com/slimgate/slim/hooks/loopguard"
)

// check says why a run does not count: a call that failed, went missing,
// reached another tool or did not do what it should, a file not as the
// edits leave it, or, with the plugin, a plugin that logged a problem or
// whose slim never counted the session's last calls (a plugin that is
// broken passes every call, and would look fast), or, where the resident
// slim should answer, a plugin that lost it and fell back to a process
// per call. Without the plugin, nothing of slim may have run. A variant
// (-variant) is checked up to the plugin's log: it may not ask slim at all.
func check(s *session, p *ochost.Project, r *ochost.Run, m mode) error {
	var offered []string
	for _, q := range r.Requests {
		if len(q.Tools) > 0 {
			offered = q.Tools
			break
		}
	}
	for _, t := range s.usedTools() {
		if !slices.Contains(offered, t) {
			return fmt.Errorf("the host did not offer %s (it offered %v)", t, offered)
		}
	}
	byID := map[string]ochost.Part{}
	var lastStart int64
	for _, part := range r.Parts {
		if _, dup := byID[part.CallID]; dup {
			return fmt.Errorf("call %s was reported twice", part.CallID)
		}
		byID[part.CallID] = part
		lastStart = max(lastStart, part.Start)
	}
	if len(r.Parts) != len(s.calls) {
		return fmt.Errorf("%d tool parts, want %d", len(r.Parts), len(s.calls))
	}
	for _, c := range s.calls {
		part, ok := byID[c.id]
		switch {
		case !ok:
			return fmt.Errorf("call %s (%s) never completed", c.id, c.tool)
		case part.Tool != c.tool:
			return fmt.Errorf("call %s ran %s, not %s: %s", c.id, part.Tool, c.tool, clip(part.Output))
		case part.Status != "completed" || part.Error != "":
			return fmt.Errorf("call %s (%s) ended %s: %s", c.id, c.tool, part.Status, clip(part.Error+part.Output))
		case !strings.Contains(part.Output, c.want):
			return fmt.Errorf("call %s (%s) answered %q, without %q", c.id, c.tool, clip(part.Output), c.want)
		}
	}
	for name, start := range s.files {
		want, edited := s.final[name]
		if !edited {
			want = start
		}
		got, err := os.ReadFile(p.Path(name))
		if err != nil || string(got) != want {
			return fmt.Errorf("%s is not as the edits leave it (%v)", name, err)
		}
	}
	problems, err := p.PluginProblems()
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("the plugin logged %d problems, the first: %s", len(problems), clip(problems[0]))
	}
	if !m.plugin {
		if _, err := os.Stat(filepath.Join(p.StateDir, "loop")); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("slim kept loop guard state in a run without the plugin (%v)", err)
		}
		return nil
	}
	if m.file != "" {
		// A variant is an experiment, and may not ask slim at all.
		return nil
	}
	if len(m.env) == 0 {
		// The plugin logs (at info) every time its resident slim could not
		// start, exited or was stopped; then calls ran a process each.
		log, err := os.ReadFile(p.PluginLog)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "resident slim") {
				return fmt.Errorf("the plugin lost its resident slim: %s", clip(line))
			}
		}
	}
	// The after of every call counts it in the session's record, so the
	// record's time shows that slim still ran for the last turn.
	st := loopguard.NewStore(p.StateDir, loopguard.StoreOptions{}).Load(r.SessionID)
	if st.Last.Runs < 1 || st.UpdatedAt.UnixMilli() < lastStart {
		return fmt.Errorf("slim's loop guard record of session %s was last written at %s, before the last call started (%d ms): slim did not see every call", r.SessionID, st.UpdatedAt, lastStart)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
