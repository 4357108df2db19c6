package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// applyWorld is a session directory with a few files and a dispatcher
// with a real loop guard, driven through decoded apply requests.
type applyWorld struct {
	t    *testing.T
	root string
	d    *Dispatcher
	n    int
}

func newApplyWorld(t *testing.T) *applyWorld {
	root := t.TempDir()
	for name, text := range map[string]string{"a.txt": "one\ntwo\n", "crlf.txt": "x\r\ny\r\n", "old.txt": "moved\n", "gone.txt": "bye\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := loopguard.NewStore(t.TempDir(), loopguard.StoreOptions{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	return &applyWorld{t: t, root: root, d: &Dispatcher{PatchGuard: true, Loop: &loopguard.Guard{Store: store}}}
}

// call sends one apply request for patch; approve answers the ask (nil:
// the test fails if asked).
func (w *applyWorld) call(patch string, approve func(*protocol.EditAsk) (bool, error)) protocol.ApplyAnswer {
	w.t.Helper()
	w.n++
	host, _ := json.Marshal(map[string]string{"flavor": "v1", "platform": "linux", "directory": w.root, "worktree": w.root})
	data, _ := json.Marshal(map[string]any{"v": 1, "phase": "apply", "host": json.RawMessage(host), "tool": "apply_patch",
		"sessionID": "ses_apply", "callID": "call_" + string(rune('a'+w.n)), "args": map[string]any{"patchText": patch}})
	req, err := protocol.Decode(data)
	if err == nil {
		err = req.Validate(protocol.Apply)
	}
	if err != nil {
		w.t.Fatal(err)
	}
	if approve == nil {
		approve = func(*protocol.EditAsk) (bool, error) {
			w.t.Fatal("asked, though nothing needed asking")
			return false, nil
		}
	}
	return w.d.Apply(context.Background(), req, approve)
}

func (w *applyWorld) file(name string) string {
	b, err := os.ReadFile(filepath.Join(w.root, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func yes(asks *[]*protocol.EditAsk) func(*protocol.EditAsk) (bool, error) {
	return func(a *protocol.EditAsk) (bool, error) { *asks = append(*asks, a); return true, nil }
}

func TestApplyWritesWhatWasApproved(t *testing.T) {
	w := newApplyWorld(t)
	var formatted [][]string
	w.d.Format = func(dir string, files []string) []FormatReport {
		formatted = append(formatted, files)
		return []FormatReport{{Path: files[0], Formatters: []string{"gofmt"}, Changed: true}}
	}
	var asks []*protocol.EditAsk
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Update File: crlf.txt\n@@\n-y\n+z\n" +
		"*** Update File: old.txt\n*** Move to: sub/new.txt\n@@\n-moved\n+moved!\n*** Delete File: gone.txt\n*** Add File: added.txt\n+hi\n*** End Patch"
	got := w.call(patch, yes(&asks))
	if got.Action != protocol.Result {
		t.Fatalf("answer %+v", got)
	}
	wantOut := "Success. Updated the following files:\nM a.txt\nM crlf.txt\nM sub/new.txt\nD gone.txt\nA added.txt\n" +
		"Formatted a.txt with gofmt; read it again before the next patch."
	if got.Output != wantOut || got.Title != "Success. Updated the following files:" {
		t.Errorf("output %q\ntitle %q", got.Output, got.Title)
	}
	if len(asks) != 1 {
		t.Fatalf("%d asks", len(asks))
	}
	a := asks[0]
	if a.Permission != "edit" || !reflect.DeepEqual(a.Always, []string{"*"}) ||
		!reflect.DeepEqual(a.Patterns, []string{"a.txt", "crlf.txt", "old.txt", "sub/new.txt", "gone.txt", "added.txt"}) ||
		a.Metadata.Filepath != "a.txt, crlf.txt, old.txt, sub/new.txt, gone.txt, added.txt" {
		t.Errorf("ask %+v", a)
	}
	if !strings.HasPrefix(a.Metadata.Diff, "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n\n--- a/crlf.txt") || a.Metadata.Diff != got.Metadata.Diff {
		t.Errorf("diff %q", a.Metadata.Diff)
	}
	var kinds []string
	for _, f := range got.Metadata.Files {
		kinds = append(kinds, f.Type+" "+f.RelativePath+" "+filepath.Base(f.MovePath))
	}
	if want := []string{"update a.txt .", "update crlf.txt .", "move sub/new.txt new.txt", "delete gone.txt .", "add added.txt ."}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("files %q, want %q", kinds, want)
	}
	for name, want := range map[string]string{"a.txt": "one\nTWO\n", "crlf.txt": "x\r\nz\r\n", "sub/new.txt": "moved!\n", "added.txt": "hi\n"} {
		if g := w.file(name); g != want {
			t.Errorf("%s = %q, want %q", name, g, want)
		}
	}
	for _, name := range []string{"gone.txt", "old.txt"} {
		if _, err := os.Stat(filepath.Join(w.root, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there", name)
		}
	}
	if want := [][]string{{filepath.Join(w.root, "a.txt"), filepath.Join(w.root, "crlf.txt"), filepath.Join(w.root, "sub", "new.txt"), filepath.Join(w.root, "added.txt")}}; !reflect.DeepEqual(formatted, want) {
		t.Errorf("formatted %q, want %q", formatted, want)
	}
}

func TestApplyRefusalsWriteNothing(t *testing.T) {
	edit := "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch"
	cases := []struct {
		name    string
		patch   string
		approve func(w *applyWorld) func(*protocol.EditAsk) (bool, error)
		prefix  string
	}{
		{"not approved", edit, func(*applyWorld) func(*protocol.EditAsk) (bool, error) {
			return func(*protocol.EditAsk) (bool, error) { return false, nil }
		}, notApproved},
		{"the approval failed", edit, func(*applyWorld) func(*protocol.EditAsk) (bool, error) {
			return func(*protocol.EditAsk) (bool, error) { return true, errors.New("pipe closed") }
		}, notApproved},
		{"a file changed while the user was asked", edit, func(w *applyWorld) func(*protocol.EditAsk) (bool, error) {
			return func(*protocol.EditAsk) (bool, error) {
				os.WriteFile(filepath.Join(w.root, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
				return true, nil
			}
		}, "apply_patch verification failed: File changed since the patch was shown for approval: "},
		{"second file has no match", "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** Update File: crlf.txt\n@@\n-nope\n+z\n*** End Patch", nil, "apply_patch verification failed: "},
		{"outside the session", "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch", nil, "apply_patch blocked: "},
		{"malformed", "not a patch", nil, "apply_patch validation failed: "},
		{"no patch", "", nil, "patchText is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newApplyWorld(t)
			var approve func(*protocol.EditAsk) (bool, error)
			if c.approve != nil {
				approve = c.approve(w)
			}
			before := w.file("crlf.txt")
			got := w.call(c.patch, approve)
			if got.Action != protocol.Block || !strings.HasPrefix(got.Message, c.prefix) {
				t.Fatalf("answer %+v, want a block starting %q", got, c.prefix)
			}
			if a := w.file("a.txt"); a != "one\ntwo\n" && a != "one\ntwo\nthree\n" {
				t.Errorf("a.txt = %q", a)
			}
			if w.file("crlf.txt") != before {
				t.Errorf("crlf.txt changed")
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(w.root), "escape.txt")); err == nil {
				t.Errorf("escape.txt was written")
			}
		})
	}
}

// The loop guard sees apply mode's calls as it sees the host's
// apply_patch: the same patch over and over gets the notice from its third
// identical result on, and, a write tool, is never refused for repeating.
func TestApplyLoopGuard(t *testing.T) {
	w := newApplyWorld(t)
	w.d.Format = nil
	patch := "*** Begin Patch\n*** Add File: note.txt\n+x\n*** Delete File: note.txt\n*** End Patch"
	var outs []string
	for i := 0; i < 7; i++ {
		var asks []*protocol.EditAsk
		a := w.call(patch, yes(&asks))
		if a.Action == protocol.Block {
			outs = append(outs, "block: "+a.Message)
			continue
		}
		outs = append(outs, a.Output)
	}
	if !strings.HasPrefix(outs[0], "Success. The patch changes nothing") {
		t.Fatalf("first call: %q", outs[0])
	}
	if strings.Contains(outs[1], "[REPEATED TOOL CALLS - STOP]") || !strings.Contains(outs[2], "[REPEATED TOOL CALLS - STOP]") {
		t.Errorf("notice on the wrong call: %q", outs[:3])
	}
	for i, o := range outs[2:] {
		if !strings.Contains(o, "[REPEATED TOOL CALLS - STOP]\nThis is call number "+string(rune('3'+i))+" in a row") {
			t.Errorf("call %d: %q", i+3, o)
		}
	}
}
