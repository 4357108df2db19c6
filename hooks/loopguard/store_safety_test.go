package loopguard

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// within fails the test when fn does not return within d, so a hook that
// hangs on a planted file shows up as a failure. fn only stores results;
// the test checks them after within returns.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

var readArgs = map[string]any{"filePath": "a.go"}

// refusingRecord is a session file under which the next identical read is
// refused.
func refusingRecord(t *testing.T, session string) []byte {
	t.Helper()
	st := newState(session)
	st.Last = Last{Args: fingerprint("read", readArgs), Runs: refuseAt + 1, Output: "x"}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRefusingRecordRefuses(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	p := s.Path("s")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, refusingRecord(t, "s"), 0o600)
	if refusal, err := (&Guard{Store: s}).Before("read", "s", readArgs); err != nil || refusal == "" {
		t.Fatalf("refusal %q, err %v; the fixture record should refuse", refusal, err)
	}
}

func TestOversizeStateFileIsAnEmptySession(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	p := s.Path("s")
	os.MkdirAll(filepath.Dir(p), 0o700)
	// A valid refusing record padded past the bound with JSON whitespace.
	big := append(refusingRecord(t, "s"), bytes.Repeat([]byte(" "), maxFileSize)...)
	if err := os.WriteFile(p, big, 0o600); err != nil {
		t.Fatal(err)
	}
	var refusal string
	var err error
	within(t, 5*time.Second, func() { refusal, err = (&Guard{Store: s}).Before("read", "s", readArgs) })
	if err != nil || refusal != "" {
		t.Fatalf("refusal %q, err %v; an oversize file must read as an empty session", refusal, err)
	}
	within(t, 5*time.Second, func() { _, err = (&Guard{Store: s}).After("read", "s", readArgs, "x") })
	if err != nil {
		t.Fatalf("after: %v", err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() > maxFileSize {
		t.Fatalf("the oversize file was not replaced: %v %v", fi, err)
	}
}

func TestSparseHugeStateFileIsNotRead(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	p := s.Path("s")
	os.MkdirAll(filepath.Dir(p), 0o700)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(16 << 30); err != nil {
		f.Close()
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	var err2, err3 error
	within(t, 5*time.Second, func() {
		_, err2 = (&Guard{Store: s}).Before("read", "s", readArgs)
		_, err3 = (&Guard{Store: s}).After("read", "s", readArgs, "x")
	})
	if err2 != nil || err3 != nil {
		t.Fatalf("before: %v, after: %v", err2, err3)
	}
}
