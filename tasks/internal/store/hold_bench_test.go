package store

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/internal/atomicfile"
	"github.com/slimgate/slim/internal/filelock"
	"github.com/slimgate/slim/internal/statedir"
)

// The hold benchmark: rounds of holdCallers processes started together,
// each doing one Update the way one `slim tasks` call would, on a
// document of holdJobs jobs. Each round of the store is paired with a
// round of the bare rewrite (the same lock, the same document read and
// written back whole with atomicfile.WriteFile, both fsyncs under the
// lock, no decoding or encoding), in alternating order, so machine noise
// falls evenly on both and the ratio says how much of the hold is the
// store's own work.
const holdCallers, holdJobs = 8, 1000

// BenchmarkUpdate8Processes reports the lock's hold and wait times of
// separate processes doing one Update each, 8 at once, on a scope of
// 1,000 jobs (about 640 KB in all; each caller changes a running job, as
// a status, a message or a settler does), and the same percentiles for
// the bare rewrite of the document the Update rewrites (ref-*). One op is
// one round of each; the percentiles pool every caller of every round.
// archive-share is the share of Updates that read the archive, doc-KB the
// size of the document they wrote.
func BenchmarkUpdate8Processes(b *testing.B) {
	dir := benchStoreJobs(b, Options{}, holdJobs).Dir()
	var store, bare []holdResult
	for i := range b.N {
		if i%2 == 0 {
			store = append(store, holdRound(b, "one", dir)...)
			bare = append(bare, holdRound(b, "bare", dir)...)
		} else {
			bare = append(bare, holdRound(b, "bare", dir)...)
			store = append(store, holdRound(b, "one", dir)...)
		}
	}
	b.StopTimer()
	pick := func(rs []holdResult, f func(Timing) time.Duration) []time.Duration {
		ds := make([]time.Duration, len(rs))
		for i, r := range rs {
			ds[i] = f(r.Timing)
		}
		return ds
	}
	hold := func(t Timing) time.Duration { return t.Hold }
	wait := func(t Timing) time.Duration { return t.Wait }
	for _, m := range []struct {
		name string
		ts   []holdResult
		f    func(Timing) time.Duration
		ps   []float64
	}{
		{"hold", store, hold, []float64{.5, .9, .99}},
		{"wait", store, wait, []float64{.5, .9, .99}},
		{"read", store, func(t Timing) time.Duration { return t.Read }, []float64{.5, .99}},
		{"encode", store, func(t Timing) time.Duration { return t.Encode }, []float64{.5, .99}},
		{"write", store, func(t Timing) time.Duration { return t.Write }, []float64{.5, .99}},
		{"sync", store, func(t Timing) time.Duration { return t.Sync }, []float64{.5, .99}},
		{"ref-hold", bare, hold, []float64{.5, .9, .99}},
		{"ref-wait", bare, wait, []float64{.5, .9, .99}},
	} {
		ds := pick(m.ts, m.f)
		for _, p := range m.ps {
			b.ReportMetric(ms(percentile(ds, p)), fmt.Sprintf("%s-p%d-ms", m.name, int(p*100)))
		}
	}
	gcs := 0
	for _, r := range store {
		if r.gcs > 0 {
			gcs++
		}
	}
	archived := 0
	for _, r := range store {
		if r.Archived {
			archived++
		}
	}
	b.ReportMetric(float64(len(store)), "callers")
	b.ReportMetric(float64(gcs)/float64(len(store)), "gc-share")
	b.ReportMetric(float64(archived)/float64(len(store)), "archive-share")
	b.ReportMetric(float64(store[0].Bytes)/1024, "doc-KB")
}

// holdResult is what one caller reports: its timing and how many
// garbage collections ran during its Update.
type holdResult struct {
	Timing
	gcs uint32
}

// holdRound starts holdCallers helpers in mode ("one" or "bare"), waits
// until each has said it is ready, lets them all go at once and returns
// their timings.
func holdRound(b testing.TB, mode, dir string) []holdResult {
	type proc struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		stdout *bufio.Reader
		stderr bytes.Buffer
	}
	ps := make([]*proc, holdCallers)
	for i := range ps {
		p := &proc{cmd: helper(b, mode, dir, "ses_"+strconv.Itoa(i))}
		p.stdin, _ = p.cmd.StdinPipe()
		out, _ := p.cmd.StdoutPipe()
		p.stdout = bufio.NewReader(out)
		p.cmd.Stderr = &p.stderr
		if err := p.cmd.Start(); err != nil {
			b.Fatal(err)
		}
		ps[i] = p
	}
	for _, p := range ps {
		if l, _ := p.stdout.ReadString('\n'); l != "ready\n" {
			b.Fatalf("helper said %q: %s", l, p.stderr.String())
		}
	}
	for _, p := range ps {
		io.WriteString(p.stdin, "go\n")
	}
	ts := make([]holdResult, len(ps))
	for i, p := range ps {
		l, _ := p.stdout.ReadString('\n')
		t, err := parseResult(l)
		if werr := p.cmd.Wait(); err != nil || werr != nil {
			b.Fatalf("helper said %q (%v, %v): %s", l, err, werr, p.stderr.String())
		}
		ts[i] = t
	}
	return ts
}

// holdCaller is one caller of a round, in a helper process: it says
// "ready", waits for a line on stdin and then, in mode "one", runs one
// Update that touches job id, or in mode "bare" takes the lock, reads the
// document and writes it back whole. It prints its timing and the number
// of garbage collections during the transaction as one line.
func holdCaller(s *Store, mode, id string) error {
	var t Timing
	s.observe = func(tm Timing) { t = tm }
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var err error
	if mode == "one" {
		err = s.Update(func(st *State) error {
			j := st.Live[id]
			j.UpdatedAt = time.Now()
			j.ActivityRevision++
			return nil
		})
	} else {
		t, err = bareRewrite(s)
	}
	runtime.ReadMemStats(&after)
	if err != nil {
		return err
	}
	fmt.Println(formatResult(holdResult{t, after.NumGC - before.NumGC}))
	return nil
}

// bareRewrite is the reference transaction: the store's lock, its
// document read and written back unchanged with atomicfile.WriteFile.
func bareRewrite(s *Store) (Timing, error) {
	start := time.Now()
	lk, err := filelock.Acquire(s.lock, s.timeout)
	if err != nil {
		return Timing{}, err
	}
	locked := time.Now()
	raw, err := statedir.ReadFile(s.doc, s.max)
	if err == nil {
		err = atomicfile.WriteFile(s.doc, raw, 0o600)
	}
	lk.Unlock()
	return Timing{Wait: locked.Sub(start), Hold: time.Since(locked), Bytes: len(raw), Wrote: err == nil}, err
}

func formatResult(r holdResult) string {
	t := r.Timing
	archived := 0
	if t.Archived {
		archived = 1
	}
	return fmt.Sprint(int64(t.Wait), int64(t.Hold), int64(t.Read), int64(t.Encode), int64(t.Write), int64(t.Sync), int64(r.gcs), archived, t.Bytes)
}

func parseResult(l string) (holdResult, error) {
	var ns [9]int64
	f := strings.Fields(l)
	if len(f) != len(ns) {
		return holdResult{}, fmt.Errorf("%d fields", len(f))
	}
	for i := range ns {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return holdResult{}, err
		}
		ns[i] = n
	}
	d := func(i int) time.Duration { return time.Duration(ns[i]) }
	t := Timing{Wait: d(0), Hold: d(1), Read: d(2), Encode: d(3), Write: d(4), Sync: d(5), Archived: ns[7] == 1, Bytes: int(ns[8])}
	return holdResult{t, uint32(ns[6])}, nil
}
