package store

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// benchStore opens a store holding a busy scope: 100 jobs, of which the
// first benchRunning run and the rest are settled, 10 leases with their
// ops, 40 settled ops and 50 tombstones (about 70 KB in all; the live
// document is the running jobs, the leases and the ops, the archive the
// rest).
func benchStore(b testing.TB, o Options) *Store { return benchStoreJobs(b, o, 100) }

// benchRunning is how many of a benchmark scope's jobs run: as many as
// the callers of the hold benchmark touch, and twice as many as
// maxSettledLive.
const benchRunning = 32

// benchStoreJobs is benchStore with n jobs (1,000 make about 640 KB).
func benchStoreJobs(b testing.TB, o Options, n int) *Store {
	s := openT(b, o)
	self := owner.Self()
	err := s.Update(func(st *State) error {
		for i := range n {
			id := "ses_" + strconv.Itoa(i)
			st.Live[id] = &Job{
				TaskID: id, ParentSessionID: "ses_parent", Agent: "explorer", Alias: "exp-" + strconv.Itoa(i+1),
				Description: "look for the retry loop in the client", State: JobReconciled, TerminalState: JobCompleted,
				Generation: st.NextGeneration(), LaunchedAt: time.Now(), UpdatedAt: time.Now(),
				ResultSummary: strings.Repeat("found it in client/retry.go ", 8),
				ContextFiles:  []ContextFile{{Path: "client/retry.go", LineCount: 240}},
			}
			if i < benchRunning {
				// As long as a settled one: a running job's summary is
				// empty, but its lengths are the same order.
				j := st.Live[id]
				j.State, j.TerminalState, j.LastLiveBusyAt = JobRunning, "", time.Now()
			}
		}
		for i := range 50 {
			id := "op_" + strconv.Itoa(i)
			task := "ses_" + strconv.Itoa(i)
			if _, err := st.AddOp(OpRequest{ID: id, Kind: OpMessage, TaskID: task, Generation: 1, LeaseToken: "tok" + id, Owner: self}, time.Now()); err != nil {
				return err
			}
			if i < 10 {
				if _, err := st.AcquireLease(LeaseRequest{TaskID: task, Kind: LeaseMessage, Token: "tok" + id, Generation: 1, OpID: id, Owner: self}, time.Now()); err != nil {
					return err
				}
			} else {
				st.Ops[id].Phase, st.Ops[id].Outcome, st.Ops[id].SettledAt = PhaseSettled, OutcomeAccepted, time.Now()
			}
			st.Archive().Tombstones["ses_gone_"+strconv.Itoa(i)] = &Tombstone{Epoch: st.NextEpoch(), At: time.Now(), Reason: "session.deleted"}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// touch is a typical tool transaction: revalidate a running job and
// change it.
func touch(st *State) error {
	j := st.Live["ses_7"]
	j.UpdatedAt = time.Now()
	j.ActivityRevision++
	return nil
}

// percentile returns the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchUpdate runs b.N Updates from callers goroutines, each with its own
// Store (as separate processes would have), and reports the latency and
// lock hold time percentiles.
func benchUpdate(b *testing.B, callers int) {
	var mu sync.Mutex
	var holds, waits, lat []time.Duration
	obs := func(t Timing) {
		mu.Lock()
		holds, waits = append(holds, t.Hold), append(waits, t.Wait)
		mu.Unlock()
	}
	dir := benchStore(b, Options{}).Dir()
	stores := make([]*Store, callers)
	for i := range stores {
		s, err := Open(dir, Options{Observe: obs, LockTimeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		stores[i] = s
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	next := make(chan struct{})
	go func() {
		for range b.N {
			next <- struct{}{}
		}
		close(next)
	}()
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				start := time.Now()
				if err := s.Update(touch); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(ms(percentile(lat, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(ms(percentile(holds, 0.50)), "hold-p50-ms")
	b.ReportMetric(ms(percentile(holds, 0.99)), "hold-p99-ms")
	b.ReportMetric(ms(percentile(waits, 0.99)), "wait-p99-ms")
}

// BenchmarkUpdate is one caller's transaction on a 70 KB document: lock,
// read, decode, change, encode, write, fsync, rename, fsync the directory.
func BenchmarkUpdate(b *testing.B) { benchUpdate(b, 1) }

// BenchmarkUpdate8Callers is the same with 8 callers contending for the
// lock; latency includes the wait, hold time does not.
func BenchmarkUpdate8Callers(b *testing.B) { benchUpdate(b, 8) }

// BenchmarkView is a lock-free read of the same document.
func BenchmarkView(b *testing.B) {
	s := benchStore(b, Options{})
	b.ResetTimer()
	for b.Loop() {
		if err := s.View(func(*State) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
