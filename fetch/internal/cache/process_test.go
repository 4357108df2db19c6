package cache

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPutSucceedsAndSkipsTheSweepWhileAnotherProcessHoldsTheLock(t *testing.T) {
	const capBytes = 100_000
	s, _ := open(t, func(o *Options) { o.MaxBytes = capBytes })
	holder := helper(t, "hold-lock", filepath.Dir(s.root), "")
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	var stderr bytes.Buffer
	holder.Stderr = &stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	if l := readLine(t, stdout, 30*time.Second); l != "locked" {
		t.Fatalf("helper said %q: %s", l, stderr.String())
	}
	for i := range 6 {
		if err := s.Put([]string{Key("p", strconv.Itoa(i))}, &Entry{Payload: signed("p", i, 30_000)}); err != nil {
			t.Fatalf("Put %d with the lock held elsewhere: %v", i, err)
		}
	}
	if n := treeSize(t, s.root); n <= capBytes {
		t.Fatalf("the cache holds %d bytes: a sweep ran although the lock was held", n)
	}
	if err := s.Sweep(); kindOf(err) != Busy {
		t.Fatalf("Sweep with the lock held elsewhere = %v, want Busy", err)
	}
	stdin.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("helper: %v: %s", err, stderr.String())
	}
	mustPut(t, s, &Entry{Payload: signed("p", 6, 30_000)}, Key("p", "6"))
	if n := treeSize(t, s.root); n > capBytes {
		t.Fatalf("after the lock was released the cache still holds %d bytes", n)
	}
}

func TestConcurrentWritersInSeparateProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	const writers = 8
	cmds := make([]*exec.Cmd, writers)
	outs := make([]*bytes.Buffer, writers)
	for i := range cmds {
		cmds[i] = helper(t, "writer", dir, strconv.Itoa(i))
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %d: %v: %s", i, err, outs[i].String())
		}
	}
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if tmp := temps(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	n := 0
	for _, sub := range []string{s.entries, s.alias} {
		des, _ := os.ReadDir(sub)
		for _, de := range des {
			k := strings.TrimSuffix(de.Name(), ".json.gz")
			e, st, err := s.Get(k)
			if err != nil || st != Fresh {
				t.Errorf("%s: %v %v", de.Name(), st, err)
				continue
			}
			if err := checkSigned(e.Payload); err != nil {
				t.Errorf("%s: %v", de.Name(), err)
			}
			n++
		}
	}
	// 8×25 own entries of about 3 KB each do not fit under the writers'
	// 400 KB cap, so their sweeps evicted while others wrote.
	if _, st, _ := s.Get(Key("shared", "final")); st != Fresh || n < 3 || n > 150 {
		t.Fatalf("the shared alias is %v; %d readable files in all", st, n)
	}
	t.Logf("%d entries and aliases remain", n)
}

func TestAWriterKilledBeforeItsRenameLeavesTheOldEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	k := Key("page")
	mustPut(t, s, &Entry{ETag: `"old"`, Payload: signed("old", 0, 10_000)}, k)
	w := helper(t, "stall", dir, k)
	stdout, _ := w.StdoutPipe()
	var stderr bytes.Buffer
	w.Stderr = &stderr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	line := readLine(t, stdout, 60*time.Second)
	tmp, ok := strings.CutPrefix(line, "ready ")
	if !ok || !exists(tmp) {
		w.Process.Kill()
		t.Fatalf("helper said %q: %s", line, stderr.String())
	}
	w.Process.Kill()
	w.Wait()

	e, st, err := s.Get(k)
	if err != nil || st != Fresh || e.ETag != `"old"` {
		t.Fatalf("after the kill: %v %v %v", e, st, err)
	}
	if who, _ := whoGen(t, e.Payload); who != "old" {
		t.Fatalf("the entry is %q's", who)
	}
	if left := temps(t, dir); len(left) != 1 || left[0] != tmp {
		t.Fatalf("temporary files %v, want just the killed writer's %s", left, tmp)
	}
	if err := s.Sweep(); err != nil || !exists(tmp) {
		t.Fatalf("a young temporary file was swept (%v)", err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(tmp, old, old)
	if err := s.Sweep(); err != nil || exists(tmp) {
		t.Fatalf("an hour-old temporary file survived the sweep (%v)", err)
	}
}

func TestAWriterKilledAtAnyMomentLeavesAnIntactEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	k := Key("page")
	seen := map[string]int{}
	for _, d := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond} {
		mustPut(t, s, &Entry{Payload: signed("old", 0, 100_000)}, k)
		w := helper(t, "rewrite", dir, k)
		stdout, _ := w.StdoutPipe()
		var stderr bytes.Buffer
		w.Stderr = &stderr
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		if l := readLine(t, stdout, 60*time.Second); l != "started" {
			w.Process.Kill()
			t.Fatalf("helper said %q: %s", l, stderr.String())
		}
		time.Sleep(d)
		w.Process.Kill()
		w.Wait()
		e, st, err := s.Get(k)
		if err != nil || st != Fresh {
			t.Fatalf("killed after %v: %v %v", d, st, err)
		}
		who, gen := whoGen(t, e.Payload)
		seen[fmt.Sprint(who, gen)]++
	}
	t.Logf("entries found after the kills: %v", seen)
}
