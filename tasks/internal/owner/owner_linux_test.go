//go:build linux

package owner

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a child process that waits for its stdin to
// close: run with childEnv set, it does that and exits.
const childEnv = "SLIM_OWNER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startChild starts a child that runs until killed or its stdin closes.
func startChild(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestSelfIsCompleteAndAlive(t *testing.T) {
	id := Self()
	host, _ := os.Hostname()
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	if id.PID != os.Getpid() || id.StartTime == 0 || id.BootID != strings.TrimSpace(string(boot)) || id.Host != host {
		t.Fatalf("Self() = %+v", id)
	}
	if alive, err := Alive(id); !alive || err != nil {
		t.Fatalf("Alive(Self()) = %v, %v", alive, err)
	}
	if of, err := Of(id.PID); err != nil || !of.Same(id) {
		t.Fatalf("Of(own pid) = %+v, %v; want %+v", of, err, id)
	}
}

func TestALivePidWithAnotherStartTimeIsNotAlive(t *testing.T) {
	// What a reused pid looks like: the number exists, the process is
	// another one.
	for _, d := range []int64{-1, 1, 100} {
		id := Self()
		id.StartTime = uint64(int64(id.StartTime) + d)
		if alive, err := Alive(id); alive || err != nil {
			t.Fatalf("start time off by %d: Alive = %v, %v; want false, nil", d, alive, err)
		}
	}
}

func TestAnotherBootIDIsNotAlive(t *testing.T) {
	id := Self()
	id.BootID = "00000000-0000-0000-0000-000000000000"
	if alive, err := Alive(id); alive || err != nil {
		t.Fatalf("Alive = %v, %v; want false, nil", alive, err)
	}
}

func TestADeadChildIsNotAlive(t *testing.T) {
	child := startChild(t)
	id, err := Of(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := Alive(id); !alive || err != nil {
		t.Fatalf("running child: Alive = %v, %v", alive, err)
	}
	child.Process.Kill()
	child.Wait()
	if alive, err := Alive(id); alive || err != nil {
		t.Fatalf("reaped child: Alive = %v, %v; want false, nil", alive, err)
	}
}

func TestAZombieChildIsNotAlive(t *testing.T) {
	child := startChild(t)
	id, err := Of(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	child.Process.Kill()
	// Not waited for: the pid stays in the table as a zombie until Wait.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := system().stat(id.PID)
		if err != nil {
			t.Fatalf("the unreaped child left the table: %v", err)
		}
		if st.state == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed child is still in state %c", st.state)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if alive, err := Alive(id); alive || err != nil {
		t.Fatalf("zombie: Alive = %v, %v; want false, nil", alive, err)
	}
}
