package owner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procTable decides liveness from a Linux-style process table mounted at
// dir (normally /proc; empty where there is none), seen from the host named
// host. It holds no state of its own, so tests point it at a fake table.
type procTable struct {
	dir  string
	host string
}

// maxStat bounds a read of /proc/<pid>/stat (a real one is under 400
// bytes; the command name is at most 64).
const maxStat = 4096

// self returns the calling process's identity.
func (p procTable) self() Identity {
	id := Identity{PID: os.Getpid(), Host: p.host}
	if st, err := p.stat(id.PID); err == nil {
		id.StartTime = st.start
	}
	if b, err := p.bootID(); err == nil {
		id.BootID = b
	}
	return id
}

// of returns the identity of the running process pid.
func (p procTable) of(pid int) (Identity, error) {
	if pid <= 0 {
		return Identity{}, newErr(Invalid, CodeBadPID, nil, "pid %d names no process", pid)
	}
	st, err := p.stat(pid)
	if err != nil {
		return Identity{}, err
	}
	boot, err := p.bootID()
	if err != nil {
		return Identity{}, err
	}
	return Identity{PID: pid, StartTime: st.start, BootID: boot, Host: p.host}, nil
}

// alive implements Alive over the table.
func (p procTable) alive(id Identity) (bool, error) {
	switch {
	case id.PID <= 0:
		return false, newErr(Invalid, CodeBadPID, nil, "pid %d names no process", id.PID)
	case id.Host == "" || p.host == "":
		return false, newErr(Unknown, CodeIncomplete, nil, "%s: the host is not known", id)
	case id.Host != p.host:
		return false, newErr(Unknown, CodeOtherHost, nil, "%s: another host's processes cannot be checked from %s", id, p.host)
	case id.StartTime == 0 || id.BootID == "":
		return false, newErr(Unknown, CodeIncomplete, nil, "%s: recorded without a start time or boot id", id)
	}
	boot, err := p.bootID()
	if err != nil {
		return false, err
	}
	if boot != id.BootID {
		// The machine rebooted: every process of the recorded boot is gone.
		return false, nil
	}
	st, err := p.stat(id.PID)
	if errors.Is(err, errGone) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// A zombie has exited and only waits for its parent to collect it;
	// it can do nothing more, so it counts as gone.
	if st.state == 'Z' || st.state == 'X' || st.start != id.StartTime {
		return false, nil
	}
	return true, nil
}

// errGone is the cause when the pid has no entry in the table.
var errGone = errors.New("no such process")

// stat reads and parses the table's stat entry for pid.
func (p procTable) stat(pid int) (statLine, error) {
	if p.dir == "" {
		return statLine{}, newErr(Unknown, CodeUnsupported, nil, "pid %d: this platform has no process table to read", pid)
	}
	path := filepath.Join(p.dir, strconv.Itoa(pid), "stat")
	b, err := readBounded(path, maxStat)
	switch {
	case errors.Is(err, fs.ErrNotExist) || vanished(err):
		return statLine{}, newErr(Unknown, CodeGone, errGone, "pid %d", pid)
	case err != nil:
		return statLine{}, newErr(Unknown, CodeUnreadable, err, "pid %d", pid)
	}
	st, err := parseStat(b)
	if err != nil {
		return statLine{}, newErr(Unknown, CodeUnreadable, err, "%s", path)
	}
	if st.pid != pid {
		return statLine{}, newErr(Unknown, CodeUnreadable, nil, "%s names pid %d", path, st.pid)
	}
	return st, nil
}

// bootID reads the id of the current boot.
func (p procTable) bootID() (string, error) {
	if p.dir == "" {
		return "", newErr(Unknown, CodeUnsupported, nil, "this platform has no boot id to read")
	}
	path := filepath.Join(p.dir, "sys", "kernel", "random", "boot_id")
	b, err := readBounded(path, 128)
	if err != nil {
		return "", newErr(Unknown, CodeUnreadable, err, "cannot read the boot id")
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", newErr(Unknown, CodeUnreadable, nil, "%s is empty", path)
	}
	return id, nil
}

// readBounded reads path, which must hold at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes", path, max)
	}
	return b, nil
}

// statLine is what liveness needs from a stat entry.
type statLine struct {
	pid   int    // field 1
	state byte   // field 3: R, S, D, Z, X, …
	start uint64 // field 22: start time in clock ticks since boot
}

// parseStat parses the contents of /proc/<pid>/stat. The second field is
// the command name in parentheses, and the name itself may contain spaces,
// parentheses and newlines: "1 (a) b) R …". The name runs from the first
// "(" to the last ")", since no later field can hold a parenthesis; the
// fields after it are split on spaces.
func parseStat(b []byte) (statLine, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 2 || end < open || b[open-1] != ' ' {
		return statLine{}, errors.New("stat: no command name in parentheses")
	}
	pid, err := strconv.Atoi(string(b[:open-1]))
	if err != nil || pid <= 0 {
		return statLine{}, fmt.Errorf("stat: bad pid %q", b[:open-1])
	}
	rest := b[end+1:]
	if len(rest) == 0 || rest[0] != ' ' {
		return statLine{}, errors.New("stat: no fields after the command name")
	}
	// Fields 3 onwards; field n is at index n-3.
	fields := strings.Fields(string(rest))
	if len(fields) < 20 {
		return statLine{}, fmt.Errorf("stat: %d fields after the command name, want at least 20", len(fields))
	}
	if c := fields[0]; len(c) != 1 || (c[0]|0x20) < 'a' || (c[0]|0x20) > 'z' {
		return statLine{}, fmt.Errorf("stat: bad state %q (the kernel prints one letter)", fields[0])
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return statLine{}, fmt.Errorf("stat: bad start time %q", fields[19])
	}
	return statLine{pid: pid, state: fields[0][0], start: start}, nil
}
