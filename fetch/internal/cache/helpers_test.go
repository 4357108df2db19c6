package cache

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// The test binary doubles as the helper process for the tests that need
// several real processes: run with helperEnv set, it does one job and exits
// instead of running the tests.
const (
	helperEnv    = "SLIM_CACHE_TEST_HELPER"
	helperDirEnv = "SLIM_CACHE_TEST_DIR"
	helperArgEnv = "SLIM_CACHE_TEST_ARG"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode, os.Getenv(helperDirEnv), os.Getenv(helperArgEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper returns a command that runs this test binary as a helper.
func helper(t *testing.T, mode, dir, arg string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDirEnv+"="+dir, helperArgEnv+"="+arg)
	return cmd
}

// runHelper is a helper process's job.
func runHelper(mode, dir, arg string) error {
	switch mode {
	case "writer":
		return writerJob(dir, arg)
	case "hold-lock":
		// Hold the sweep lock until stdin closes.
		l := flock.New(filepath.Join(dir, "v1", lockName))
		ok, err := l.TryLock()
		if err != nil || !ok {
			return fmt.Errorf("lock: %v %v", ok, err)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		return nil
	case "stall":
		// Store a new payload but stop for good just before the rename.
		s, err := Open(Options{Dir: dir})
		if err != nil {
			return err
		}
		s.beforeRename = func(tmp string) {
			fmt.Println("ready", tmp)
			time.Sleep(time.Hour)
		}
		return s.Put([]string{arg}, &Entry{Payload: signed("stalled", 0, 1<<20)})
	case "rewrite":
		// Store ever new large payloads under one key until killed.
		s, err := Open(Options{Dir: dir})
		if err != nil {
			return err
		}
		fmt.Println("started")
		for gen := 1; ; gen++ {
			if err := s.Put([]string{arg}, &Entry{Payload: signed("rewrite", gen, 1<<20)}); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// writerJob is one of the concurrent writers: it stores and reads back a
// shared key (with an alias) and keys of its own, under a cap small enough
// that sweeps evict while the others write.
func writerJob(dir, arg string) error {
	id, _ := strconv.Atoi(arg)
	s, err := Open(Options{Dir: dir, MaxBytes: 400_000})
	if err != nil {
		return err
	}
	shared, alias := Key("shared"), Key("shared", "final")
	for i := range 25 {
		p := signed(fmt.Sprintf("writer-%d", id), i, 4000)
		if err := s.Put([]string{shared, alias}, &Entry{ETag: `"x"`, Payload: p}); err != nil {
			return fmt.Errorf("put shared: %w", err)
		}
		own := Key("own", arg, strconv.Itoa(i))
		if err := s.Put([]string{own}, &Entry{Payload: p}); err != nil {
			return fmt.Errorf("put own: %w", err)
		}
		for _, k := range []string{shared, alias, own} {
			e, st, err := s.Get(k)
			if err != nil || st != Fresh {
				return fmt.Errorf("get %.8s: %v %v", k, st, err)
			}
			if err := checkSigned(e.Payload); err != nil {
				return fmt.Errorf("get %.8s: %w", k, err)
			}
		}
	}
	return nil
}

// signed makes a payload of about size bytes of random text that carries
// its own checksum, so a reader can tell an intact payload from a torn one
// whoever wrote it.
func signed(who string, gen, size int) json.RawMessage {
	raw := make([]byte, size*3/4)
	rand.Read(raw)
	data := base64.StdEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(data))
	b, _ := json.Marshal(map[string]any{"who": who, "gen": gen, "data": data, "sum": hex.EncodeToString(sum[:])})
	return b
}

func checkSigned(p json.RawMessage) error {
	var v struct {
		Who  string `json:"who"`
		Gen  int    `json:"gen"`
		Data string `json:"data"`
		Sum  string `json:"sum"`
	}
	if err := json.Unmarshal(p, &v); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(v.Data))
	if v.Who == "" || hex.EncodeToString(sum[:]) != v.Sum {
		return fmt.Errorf("payload of %q gen %d does not match its checksum", v.Who, v.Gen)
	}
	return nil
}

func whoGen(t *testing.T, p json.RawMessage) (string, int) {
	t.Helper()
	if err := checkSigned(p); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Who string `json:"who"`
		Gen int    `json:"gen"`
	}
	json.Unmarshal(p, &v)
	return v.Who, v.Gen
}

// readLine reads one line from r within d.
func readLine(t *testing.T, r io.Reader, d time.Duration) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	select {
	case l := <-ch:
		return l
	case <-time.After(d):
		t.Fatalf("no line from the helper within %v", d)
		return ""
	}
}

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// open opens a store in a new directory with a test clock; edit adjusts
// the options.
func open(t testing.TB, edit func(*Options)) (*Store, *clock) {
	t.Helper()
	c := newClock()
	o := Options{Dir: filepath.Join(t.TempDir(), "cache"), Now: c.Now}
	if edit != nil {
		edit(&o)
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func mustPut(t testing.TB, s *Store, e *Entry, keys ...string) {
	t.Helper()
	if err := s.Put(keys, e); err != nil {
		t.Fatal(err)
	}
}

// treeFiles returns every file below dir with its size.
func treeFiles(t testing.TB, dir string) map[string]int64 {
	t.Helper()
	files := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files[p] = fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func treeSize(t testing.TB, dir string) int64 {
	var n int64
	for _, sz := range treeFiles(t, dir) {
		n += sz
	}
	return n
}

func temps(t testing.TB, dir string) []string {
	var out []string
	for p := range treeFiles(t, dir) {
		if strings.HasPrefix(filepath.Base(p), tempPrefix) {
			out = append(out, p)
		}
	}
	return out
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func kindOf(err error) Kind {
	if e, ok := AsError(err); ok {
		return e.Kind
	}
	return ""
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }
