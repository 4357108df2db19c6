package owner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// statOf builds a stat line the way the kernel prints one: pid, the
// command name in parentheses, then the fields from 3 on, with state and
// start time (field 22) where the kernel puts them.
func statOf(pid int, name string, state byte, start uint64) string {
	f := make([]string, 50)
	for i := range f {
		f[i] = strconv.Itoa(i + 3)
	}
	f[0] = string(state)
	f[19] = strconv.FormatUint(start, 10)
	return fmt.Sprintf("%d (%s) %s\n", pid, name, strings.Join(f, " "))
}

func TestParseStatFindsStateAndStartTimeWhateverTheCommandName(t *testing.T) {
	for _, name := range []string{
		"bash",
		"tmux: server",
		"a b c",
		"(sd-pam)",
		"x) (y",
		")",
		"((",
		"))",
		"",
		"two\nlines",
		") R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22",
		"Web Content",
		"kworker/0:1H-kb",
	} {
		t.Run(name, func(t *testing.T) {
			st, err := parseStat([]byte(statOf(4242, name, 'S', 987654321)))
			if err != nil {
				t.Fatal(err)
			}
			if st != (statLine{pid: 4242, state: 'S', start: 987654321}) {
				t.Fatalf("parsed %+v", st)
			}
		})
	}
}

func TestParseStatRefusesMalformedLines(t *testing.T) {
	good := statOf(7, "x", 'R', 5)
	for _, c := range []struct{ name, line string }{
		{"empty", ""},
		{"no parentheses", "7 x R 1 2 3"},
		{"no pid", "(x) R" + good[strings.Index(good, ")")+2:]},
		{"pid not a number", "q" + good[1:]},
		{"pid zero", "0" + good[1:]},
		{"no space before the name", "7(x)" + good[strings.Index(good, ")")+1:]},
		{"no space after the name", strings.Replace(good, ") ", ")", 1)},
		{"too few fields", "7 (x) R 1 2 3\n"},
		{"start time not a number", strings.Replace(good, " 21 5 23 ", " 21 5x 23 ", 1)},
		{"start time negative", strings.Replace(good, " 21 5 23 ", " 21 -5 23 ", 1)},
		{"state longer than a letter", strings.Replace(good, ") R ", ") RR ", 1)},
		{"state not a letter", strings.Replace(good, ") R ", ") ) ", 1)},
		{"closing parenthesis only", "7 x) R 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.line == good {
				t.Fatal("the case did not change the good line")
			}
			if st, err := parseStat([]byte(c.line)); err == nil {
				t.Fatalf("parsed %q as %+v, want an error", c.line, st)
			}
		})
	}
	// The table above must differ from a good line only where it says.
	if _, err := parseStat([]byte(good)); err != nil {
		t.Fatalf("the good line itself: %v", err)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("bash", byte('S'), uint64(123))
	f.Add("a) (b", byte('Z'), uint64(0))
	f.Add(") R 1 2", byte('R'), uint64(1<<63))
	f.Fuzz(func(t *testing.T, name string, state byte, start uint64) {
		if (state|0x20) < 'a' || (state|0x20) > 'z' {
			return // the kernel prints a letter
		}
		line := statOf(99, name, state, start)
		st, err := parseStat([]byte(line))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if st != (statLine{pid: 99, state: state, start: start}) {
			t.Fatalf("%q parsed as %+v", line, st)
		}
	})
}

func FuzzParseStatNeverPanics(f *testing.F) {
	f.Add([]byte(statOf(1, "init", 'S', 1)))
	f.Add([]byte("1 ("))
	f.Add([]byte(") 1 ("))
	f.Fuzz(func(t *testing.T, b []byte) {
		if st, err := parseStat(b); err == nil && st.pid <= 0 {
			t.Fatalf("%q parsed with pid %d", b, st.pid)
		}
	})
}

// fakeTable writes a process table holding the given stat lines and boot
// id, and returns it as seen from host "h1".
func fakeTable(t *testing.T, boot string, stats map[int]string) procTable {
	t.Helper()
	dir := t.TempDir()
	if boot != "" {
		p := filepath.Join(dir, "sys", "kernel", "random", "boot_id")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(boot+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pid, line := range stats {
		os.MkdirAll(filepath.Join(dir, strconv.Itoa(pid)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(pid), "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return procTable{dir: dir, host: "h1"}
}

func TestAliveOverAProcessTable(t *testing.T) {
	const boot = "0f6c5cb8-1d6b-4c0e-9a43-5b0e7a0c1e11"
	table := fakeTable(t, boot, map[int]string{
		10: statOf(10, "settler (slim) tasks", 'S', 5000),
		11: statOf(11, "zombie", 'Z', 6000),
		12: statOf(12, "dead", 'X', 6001),
		13: statOf(14, "lies about its pid", 'S', 7000),
		15: "15 (garbage",
		16: statOf(16, "disk wait", 'D', 8000),
	})
	id := func(pid int, start uint64) Identity {
		return Identity{PID: pid, StartTime: start, BootID: boot, Host: "h1"}
	}
	with := func(i Identity, f func(*Identity)) Identity { f(&i); return i }
	for _, c := range []struct {
		name  string
		table procTable
		id    Identity
		alive bool
		code  string // "" when the answer is decided
	}{
		{"running with the recorded start time", table, id(10, 5000), true, ""},
		{"uninterruptible sleep is running", table, id(16, 8000), true, ""},
		{"the pid now belongs to a later process", table, id(10, 4999), false, ""},
		{"no such pid", table, id(20, 5000), false, ""},
		{"a zombie", table, id(11, 6000), false, ""},
		{"an exiting process", table, id(12, 6001), false, ""},
		{"a reboot since", table, with(id(10, 5000), func(i *Identity) { i.BootID = "another-boot" }), false, ""},
		{"another host", table, with(id(10, 5000), func(i *Identity) { i.Host = "h2" }), false, CodeOtherHost},
		{"no host recorded", table, with(id(10, 5000), func(i *Identity) { i.Host = "" }), false, CodeIncomplete},
		{"no start time recorded", table, id(10, 0), false, CodeIncomplete},
		{"no boot id recorded", table, with(id(10, 5000), func(i *Identity) { i.BootID = "" }), false, CodeIncomplete},
		{"pid zero", table, id(0, 5000), false, CodeBadPID},
		{"negative pid", table, id(-3, 5000), false, CodeBadPID},
		{"an entry naming another pid", table, id(13, 7000), false, CodeUnreadable},
		{"a malformed entry", table, id(15, 1), false, CodeUnreadable},
		{"no boot id in the table", fakeTable(t, "", map[int]string{10: statOf(10, "x", 'S', 5000)}), id(10, 5000), false, CodeUnreadable},
		{"no process table on this platform", procTable{host: "h1"}, id(10, 5000), false, CodeUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			alive, err := c.table.alive(c.id)
			if alive != c.alive {
				t.Errorf("alive = %v, want %v", alive, c.alive)
			}
			if c.code == "" {
				if err != nil {
					t.Fatalf("err = %v, want a decided answer", err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != c.code {
				t.Fatalf("err = %v, want code %s", err, c.code)
			}
		})
	}
}

func TestOfAndSelfReadTheTable(t *testing.T) {
	const boot = "b00t"
	pid := os.Getpid()
	table := fakeTable(t, boot, map[int]string{pid: statOf(pid, "slim test", 'R', 424242), 30: statOf(30, "other", 'S', 31)})
	if got, want := table.self(), (Identity{PID: pid, StartTime: 424242, BootID: boot, Host: "h1"}); got != want {
		t.Fatalf("self = %+v, want %+v", got, want)
	}
	if got, err := table.of(30); err != nil || got != (Identity{PID: 30, StartTime: 31, BootID: boot, Host: "h1"}) {
		t.Fatalf("of(30) = %+v, %v", got, err)
	}
	if _, err := table.of(31); err == nil {
		t.Fatal("of a missing pid succeeded")
	} else if e, _ := AsError(err); e == nil || e.Code != CodeGone {
		t.Fatalf("of a missing pid: %v, want code %s", err, CodeGone)
	}
	// Without a table, Self still names the process; what it cannot read
	// stays empty, so Alive answers unknown.
	bare := procTable{host: "h1"}.self()
	if bare.PID != pid || bare.StartTime != 0 || bare.BootID != "" {
		t.Fatalf("self without a table = %+v", bare)
	}
	if alive, err := (procTable{host: "h1"}).alive(bare); alive || err == nil {
		t.Fatalf("alive without a table = %v, %v; want unknown", alive, err)
	}
}
