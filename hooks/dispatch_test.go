package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// harness drives a Dispatcher through the wire protocol: every request is
// written as JSON text, decoded and validated exactly as `slim hook` does.
type harness struct {
	t     *testing.T
	d     *Dispatcher
	store *loopguard.Store
	now   time.Time
	n     int
	host  string // JSON of the host object
	// ran holds the args each call ran with, by callID: those of its
	// before, as a mutate answer left them. The host hands that same object
	// to after, and so does after here.
	ran map[string]any
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), host: `{"flavor":"v1","platform":"linux"}`, ran: map[string]any{}}
	clock := func() time.Time { return h.now }
	h.store = loopguard.NewStore(t.TempDir(), loopguard.StoreOptions{Now: clock})
	h.d = &Dispatcher{Loop: &loopguard.Guard{Store: h.store}}
	return h
}

func (h *harness) send(phase protocol.Phase, fields map[string]any) protocol.Response {
	h.t.Helper()
	fields["v"] = 1
	fields["host"] = json.RawMessage(h.host)
	data, err := json.Marshal(fields)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.sendRaw(phase, string(data))
}

func (h *harness) sendRaw(phase protocol.Phase, data string) protocol.Response {
	h.t.Helper()
	req, err := protocol.Decode([]byte(data))
	if err == nil {
		err = req.Validate(phase)
	}
	if err != nil {
		h.t.Fatalf("request %s: %v", data, err)
	}
	resp := h.d.Handle(req)
	if resp.V != protocol.Version {
		h.t.Fatalf("response v = %d", resp.V)
	}
	return resp
}

// before sends a before request with a fresh callID and returns it. The
// args the call runs with (after a mutate) are kept for its after.
func (h *harness) before(tool, session string, args any) (string, protocol.Response) {
	h.n++
	id := fmt.Sprintf("call_%d", h.n)
	f := map[string]any{"tool": tool, "callID": id, "args": args}
	if session != "" {
		f["sessionID"] = session
	}
	r := h.send(protocol.Before, f)
	h.ran[id] = args
	if r.Action == protocol.Mutate {
		h.ran[id] = r.Args
	}
	return id, r
}

// after sends the after request of callID with the args the call ran
// with, as the host does (none for a callID before never saw).
func (h *harness) after(tool, session, callID string, output any, status string) protocol.Response {
	f := map[string]any{"tool": tool, "output": output}
	if a, ok := h.ran[callID]; ok {
		f["args"] = a
	}
	if session != "" {
		f["sessionID"] = session
	}
	if callID != "" {
		f["callID"] = callID
	}
	if status != "" {
		f["status"] = status
	}
	return h.send(protocol.After, f)
}

// result is one complete call as the model sees it.
type result struct {
	refused bool
	message string
	output  any // output after the plugin applied any append
	notice  bool
}

// call runs before, and (unless refused) after with output, applying an
// append the way the plugin does.
func (h *harness) call(tool, session string, args, output any) result {
	h.t.Helper()
	id, b := h.before(tool, session, args)
	switch b.Action {
	case protocol.Block:
		return result{refused: true, message: b.Message}
	case protocol.Pass, protocol.Mutate:
	default:
		h.t.Fatalf("before answered %q", b.Action)
	}
	a := h.after(tool, session, id, output, "")
	r := result{output: output}
	switch a.Action {
	case protocol.Append:
		if !strings.HasPrefix(a.Append, "\n") || !strings.Contains(a.Append, loopguard.Marker) {
			h.t.Fatalf("append text %q must begin with a newline and hold the marker", a.Append)
		}
		s, ok := output.(string)
		if !ok {
			h.t.Fatalf("append for a non-string output %#v", output)
		}
		r.output, r.notice = s+a.Append, true
	case protocol.Pass:
	default:
		h.t.Fatalf("after answered %q", a.Action)
	}
	return r
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// expect checks a sequence of results against a pattern: "." plain, "N"
// notice, "R" refused.
func expect(t *testing.T, name string, got []result, want string) {
	t.Helper()
	var b strings.Builder
	for _, r := range got {
		switch {
		case r.refused:
			b.WriteByte('R')
		case r.notice:
			b.WriteByte('N')
		default:
			b.WriteByte('.')
		}
	}
	if b.String() != want {
		t.Errorf("%s: got %s, want %s", name, b.String(), want)
	}
}

func repeat(h *harness, n int, tool, session string, a, out any) []result {
	var rs []result
	for i := 0; i < n; i++ {
		rs = append(rs, h.call(tool, session, a, out))
	}
	return rs
}

func TestLoopGuardCases(t *testing.T) {
	a := args("filePath", "a.ts")
	b := args("filePath", "b.ts")
	cases := []struct {
		name string
		run  func(h *harness) []result
		want string
	}{
		{"two identical reads pass", func(h *harness) []result { return repeat(h, 2, "read", "s", a, "A") }, ".."},
		{"notices on the 3rd, 4th and 5th identical result", func(h *harness) []result { return repeat(h, 5, "read", "s", a, "A") }, "..NNN"},
		{"changed args restart the run", func(h *harness) []result {
			return append(repeat(h, 2, "read", "s", a, "A"), repeat(h, 2, "read", "s", b, "B")...)
		}, "...."},
		{"key order does not matter", func(h *harness) []result {
			var rs []result
			for _, raw := range []string{`{"filePath":"a.ts","offset":10}`, `{"offset":10,"filePath":"a.ts"}`, `{"filePath":"a.ts","offset":10}`} {
				id, resp := h.beforeRaw("read", "s", raw)
				if resp.Action != protocol.Pass {
					h.t.Fatalf("before: %v", resp.Action)
				}
				a := h.after("read", "s", id, "A", "")
				rs = append(rs, result{notice: a.Action == protocol.Append})
			}
			return rs
		}, "..N"},
		{"array order matters", func(h *harness) []result {
			xy, yx := args("paths", []any{"x", "y"}), args("paths", []any{"y", "x"})
			return []result{h.call("read", "s", xy, "A"), h.call("read", "s", yx, "A"), h.call("read", "s", xy, "A"), h.call("read", "s", yx, "A")}
		}, "...."},
		{"6th and 7th identical read refused", func(h *harness) []result {
			rs := repeat(h, 7, "read", "s", a, "A")
			for _, r := range rs[5:] {
				if !strings.HasPrefix(r.message, `Refusing to execute "read"`) || !strings.Contains(r.message, "infinite loop") || !strings.Contains(r.message, "5 times") {
					h.t.Errorf("refusal message %q", r.message)
				}
			}
			return rs
		}, "..NNNRR"},
		{"grep refused on the 6th", func(h *harness) []result { return repeat(h, 7, "grep", "s", args("pattern", "x"), "m") }, "..NNNRR"},
		{"glob refused on the 6th", func(h *harness) []result { return repeat(h, 7, "glob", "s", args("pattern", "*.go"), "m") }, "..NNNRR"},
		{"bash warned, never refused", func(h *harness) []result { return repeat(h, 7, "bash", "s", args("command", "ls"), "m") }, "..NNNNN"},
		{"edit warned, never refused", func(h *harness) []result { return repeat(h, 7, "edit", "s", args("filePath", "a"), "m") }, "..NNNNN"},
		{"ast_grep_search warned, never refused", func(h *harness) []result {
			return repeat(h, 7, "ast_grep_search", "s", args("pattern", "x"), "m")
		}, "..NNNNN"},
		{"changing outputs never make a run", func(h *harness) []result {
			var rs []result
			for i := 1; i <= 6; i++ {
				rs = append(rs, h.call("read", "s", a, fmt.Sprintf("rev %d", i)))
			}
			return append(rs, h.call("read", "s", a, "rev 7"))
		}, "......."},
		{"alternating outputs never make a run", func(h *harness) []result {
			var rs []result
			for i := 0; i < 6; i++ {
				rs = append(rs, h.call("read", "s", a, []string{"A", "B"}[i%2]))
			}
			return rs
		}, "......"},
		{"parallel befores with changing outputs make no run", func(h *harness) []result {
			var ids []string
			for i := 0; i < 6; i++ {
				id, r := h.before("read", "s", a)
				if r.Action != protocol.Pass {
					h.t.Fatalf("parallel before %d: %v", i, r.Action)
				}
				ids = append(ids, id)
			}
			var rs []result
			for i, id := range ids {
				r := h.after("read", "s", id, fmt.Sprintf("out %d", i), "")
				rs = append(rs, result{notice: r.Action == protocol.Append})
			}
			_, r := h.before("read", "s", a)
			return append(rs, result{refused: r.Action == protocol.Block})
		}, "......."},
		{"6 parallel befores and 5 identical afters: the next is refused", func(h *harness) []result {
			var ids []string
			for i := 0; i < 6; i++ {
				id, _ := h.before("read", "s", a)
				ids = append(ids, id)
			}
			var rs []result
			for _, id := range ids[:5] {
				r := h.after("read", "s", id, "same", "")
				rs = append(rs, result{notice: r.Action == protocol.Append})
			}
			_, r := h.before("read", "s", a)
			return append(rs, result{refused: r.Action == protocol.Block})
		}, "..NNNR"},
		{"sessions are isolated", func(h *harness) []result {
			return append(repeat(h, 2, "read", "s1", a, "A"), h.call("read", "s2", a, "A"))
		}, "..."},
		{"exempt tools untouched and do not break a run", func(h *harness) []result {
			var rs []result
			for _, tool := range []string{"task", "task_status", "task_result", "task_cancel", "task_message", "task_revive", "wait_for_user", "wait_for_background_tasks"} {
				rs = append(rs, repeat(h, 8, tool, "s", args("id", "x"), "same")...)
			}
			if n := countFiles(h.store.Dir(), ".json"); n != 0 {
				h.t.Errorf("exempt tools wrote %d state files", n)
			}
			rs = append(rs, h.call("read", "s", a, "A"), h.call("read", "s", a, "A"), h.call("task_status", "s", args("task_id", "t"), "busy"), h.call("read", "s", a, "A"))
			return rs
		}, strings.Repeat(".", 64) + "...N"},
		{"a different call breaks the run", func(h *harness) []result {
			return []result{h.call("read", "s", a, "A"), h.call("read", "s", a, "A"), h.call("grep", "s", args("pattern", "X"), "m"), h.call("read", "s", a, "A")}
		}, "...."},
		{"no sessionID is inert", func(h *harness) []result {
			rs := repeat(h, 7, "read", "", a, "A")
			if n := countFiles(h.store.Dir(), ".json"); n != 0 {
				h.t.Errorf("wrote %d state files without a session", n)
			}
			return rs
		}, "......."},
		{"an after that carries no args restarts the run", func(h *harness) []result {
			rs := repeat(h, 2, "read", "s", a, "A")
			if r := h.after("read", "s", "never-seen", "A", ""); r.Action != protocol.Pass {
				h.t.Errorf("after without args: %v", r.Action)
			}
			rs = append(rs, repeat(h, 2, "read", "s", a, "A")...)
			for i := 0; i < 4; i++ { // however many there are
				if r := h.after("read", "s", "", "A", ""); r.Action != protocol.Pass {
					h.t.Errorf("after without args or callID: %v", r.Action)
				}
			}
			return append(rs, repeat(h, 3, "read", "s", a, "A")...)
		}, "......N"},
		{"afters alone count: a call whose before was never asked for", func(h *harness) []result {
			var rs []result
			for i := 0; i < 4; i++ {
				h.ran["bash-"+fmt.Sprint(i)] = args("command", "ls")
				r := h.after("bash", "s", "bash-"+fmt.Sprint(i), "m", "")
				rs = append(rs, result{notice: r.Action == protocol.Append})
			}
			return rs
		}, "..NN"},
		{"afters alone make a run that refuses the next read", func(h *harness) []result {
			var rs []result
			for i := 0; i < 5; i++ {
				h.ran["r-"+fmt.Sprint(i)] = a
				r := h.after("read", "s", "r-"+fmt.Sprint(i), "A", "")
				rs = append(rs, result{notice: r.Action == protocol.Append})
			}
			return append(rs, h.call("read", "s", a, "A"))
		}, "..NNNR"},
		{"v2 error results count", func(h *harness) []result {
			var rs []result
			for i := 0; i < 3; i++ {
				id, _ := h.before("read", "s", a)
				r := h.after("read", "s", id, "Error: file not found", "error")
				rs = append(rs, result{notice: r.Action == protocol.Append})
			}
			return rs
		}, "..N"},
		{"MCP array output gets no notice", func(h *harness) []result {
			out := []any{map[string]any{"type": "text", "text": "hi"}}
			return repeat(h, 7, "mcp_search", "s", args("q", "x"), out)
		}, "......."},
		{"a result already holding the marker gets no notice", func(h *harness) []result {
			return repeat(h, 4, "read", "s", a, "text "+loopguard.Marker+" quoted by the model")
		}, "...."},
		{"session.deleted restarts counting", func(h *harness) []result {
			rs := repeat(h, 5, "read", "s", a, "A")
			if r := h.send(protocol.Event, map[string]any{"event": map[string]any{"type": "session.deleted", "sessionID": "s"}}); r.Action != protocol.Pass {
				h.t.Errorf("event: %v", r.Action)
			}
			return append(rs, repeat(h, 4, "read", "s", a, "A")...)
		}, "..NNN..NN"},
		{"v2 subagent is exempt as task", func(h *harness) []result {
			h.host = `{"flavor":"v2","platform":"linux"}`
			rs := []result{h.call("read", "s", a, "A"), h.call("read", "s", a, "A")}
			rs = append(rs, repeat(h, 8, "subagent", "s", args("agent", "explore", "prompt", "p"), "done")...)
			return append(rs, h.call("read", "s", a, "A"))
		}, "..........N"},
		{"tool name case does not matter", func(h *harness) []result {
			var rs []result
			for i, tool := range []string{"Read", "read", "READ", "read", "Read", "read", "Read"} {
				rs = append(rs, h.call(tool, "s", a, "A"))
				if i == 6 && !strings.HasPrefix(rs[i].message, `Refusing to execute "Read"`) {
					h.t.Errorf("refusal names %q", rs[i].message)
				}
			}
			return rs
		}, "..NNNRR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			got := c.run(h)
			expect(t, c.name, got, c.want)
			for i, r := range got {
				if s, ok := r.output.(string); ok && r.notice && strings.Count(s, loopguard.Marker) != 1 {
					t.Errorf("result %d holds the marker %d times", i+1, strings.Count(s, loopguard.Marker))
				}
			}
		})
	}
}

func (h *harness) beforeRaw(tool, session, rawArgs string) (string, protocol.Response) {
	h.n++
	id := fmt.Sprintf("call_%d", h.n)
	h.ran[id] = json.RawMessage(rawArgs) // after gets the same text, keys in the same order
	return id, h.sendRaw(protocol.Before, fmt.Sprintf(`{"v":1,"tool":%q,"sessionID":%q,"callID":%q,"args":%s}`, tool, session, id, rawArgs))
}

func countFiles(dir, suffix string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) {
			n++
		}
		return nil
	})
	return n
}

// A failed call on a v1 host gets no after, and its before wrote nothing:
// the record stays byte for byte what the last after wrote, and the run
// goes on where it was.
func TestFailedCallsChangeNothing(t *testing.T) {
	h := newHarness(t)
	a := args("filePath", "a.ts")
	expect(t, "setup", repeat(h, 2, "read", "s", a, "A"), "..")
	p := h.store.Path("s")
	was, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	for i := 0; i < 3; i++ {
		h.now = h.now.Add(time.Minute)
		if _, r := h.before("read", "s", a); r.Action != protocol.Pass {
			t.Fatalf("failed call %d: %v", i, r.Action)
		}
	}
	if now, _ := os.ReadFile(p); string(now) != string(was) {
		t.Fatalf("befores changed the record:\n%s\n%s", was, now)
	}
	if fi2, _ := os.Stat(p); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("befores rewrote the record")
	}
	// The run continues where it was: the next completed identical call is the 3rd.
	expect(t, "continue", []result{h.call("read", "s", a, "A")}, "N")
}

// A corrupt or truncated state file reads as an empty session.
func TestCorruptStateFile(t *testing.T) {
	for _, damage := range []string{"truncate", "garbage", "empty", "other-session"} {
		t.Run(damage, func(t *testing.T) {
			h := newHarness(t)
			a := args("filePath", "a.ts")
			expect(t, "setup", repeat(h, 5, "read", "s", a, "A"), "..NNN")
			p := h.store.Path("s")
			data, _ := os.ReadFile(p)
			switch damage {
			case "truncate":
				data = data[:len(data)/2]
			case "garbage":
				data = []byte("\x00\xff not json")
			case "empty":
				data = nil
			case "other-session":
				data = []byte(strings.Replace(string(data), `"session":"s"`, `"session":"t"`, 1))
			}
			os.WriteFile(p, data, 0o600)
			expect(t, "after damage", []result{h.call("read", "s", a, "A")}, ".")
			var st loopguard.State
			data, _ = os.ReadFile(p)
			if err := json.Unmarshal(data, &st); err != nil || st.Session != "s" || st.Last.Runs != 1 {
				t.Fatalf("file not rewritten cleanly: %v %+v", err, st)
			}
		})
	}
}

// A store that cannot be written fails open: the call passes, with a note.
func TestStoreErrorFailsOpen(t *testing.T) {
	root := filepath.Join(t.TempDir(), "file")
	os.WriteFile(root, []byte("not a directory"), 0o600)
	d := &Dispatcher{Loop: &loopguard.Guard{Store: loopguard.NewStore(root, loopguard.StoreOptions{})}}
	for _, ph := range []protocol.Phase{protocol.Before, protocol.After} {
		req, _ := protocol.Decode([]byte(`{"v":1,"tool":"read","sessionID":"s","callID":"c","args":{},"output":"x"}`))
		req.Validate(ph)
		r := d.Handle(req)
		if r.Action != protocol.Pass || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "failed open") {
			t.Errorf("%s: %+v", ph, r)
		}
	}
}

func TestEventsAndUnknownTools(t *testing.T) {
	h := newHarness(t)
	for _, typ := range []string{"session.idle", "session.status", "chat.message", "file.edited", "something.new"} {
		if r := h.send(protocol.Event, map[string]any{"sessionID": "s", "event": map[string]any{"type": typ, "sessionID": "s"}}); r.Action != protocol.Pass {
			t.Errorf("%s: %v", typ, r.Action)
		}
	}
	a := args("filePath", "a.ts")
	expect(t, "idle events change nothing", repeat(h, 3, "read", "s", a, "A"), "..N")
	h.send(protocol.Event, map[string]any{"event": map[string]any{"type": "session.idle", "sessionID": "s"}})
	h.send(protocol.Event, map[string]any{"event": map[string]any{"type": "chat.message", "sessionID": "s", "messageID": "m2"}})
	expect(t, "still counting", repeat(h, 1, "read", "s", a, "A"), "N")
	// The event's session falls back to the request's sessionID.
	h.send(protocol.Event, map[string]any{"sessionID": "s", "event": map[string]any{"type": "session.deleted"}})
	if _, err := os.Stat(h.store.Path("s")); !os.IsNotExist(err) {
		t.Errorf("session.deleted left the state file: %v", err)
	}
	// An unknown tool with odd args passes.
	if _, r := h.before("some_new_tool", "", []any{1, 2}); r.Action != protocol.Pass {
		t.Errorf("unknown tool: %v", r.Action)
	}
	// apply_patch with no patch guard wired, or without patchText, passes.
	if _, r := h.before("apply_patch", "", args("other", 1)); r.Action != protocol.Pass {
		t.Errorf("apply_patch without patchText: %v", r.Action)
	}
}

// What the background task tools say about a call of the host's task
// tool reaches the model appended to its output, before a loop guard
// notice, and never onto an output that is not text.
func TestATaskNoteIsAppendedToTheTaskOutput(t *testing.T) {
	note := "\n\n[slim] not tracked"
	for _, tt := range []struct {
		name   string
		loop   bool
		output string
		want   protocol.Response
	}{
		{"without the loop guard", false, `"task_id: ses_x"`, protocol.Response{Action: protocol.Append, Append: note}},
		{"with the loop guard", true, `"task_id: ses_x"`, protocol.Response{Action: protocol.Append, Append: note}},
		{"an output that is not text", false, `{"id":"ses_x"}`, protocol.Response{Action: protocol.Pass}},
		{"with a loop guard that fails", true, `"task_id: ses_x"`, protocol.Response{Action: protocol.Append, Append: note}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &Dispatcher{TaskOutput: func(protocol.Host, string, any, any) (string, error) { return note, nil }}
			if tt.loop {
				root := t.TempDir()
				if strings.Contains(tt.name, "fails") {
					root = filepath.Join(root, "file")
					os.WriteFile(root, []byte("not a directory"), 0o600)
				}
				d.Loop = &loopguard.Guard{Store: loopguard.NewStore(root, loopguard.StoreOptions{})}
			}
			req, err := protocol.Decode([]byte(`{"v":1,"tool":"task","sessionID":"s","callID":"c","args":{},"output":` + tt.output + `}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Validate(protocol.After)
			r := d.Handle(req)
			if r.Action != tt.want.Action || r.Append != tt.want.Append {
				t.Fatalf("answer %+v, want %s %q", r, tt.want.Action, tt.want.Append)
			}
		})
	}
}
