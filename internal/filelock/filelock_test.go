package filelock

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestAcquireCreatesAndReleases(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b", "x.lock")
	l, err := Acquire(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("lock file not created: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(p, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("relock after unlock: %v", err)
	}
	l2.Unlock()
}

func TestAcquireTimesOut(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	start := time.Now()
	_, err = Acquire(p, 50*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("waited far longer than the timeout")
	}
}

func TestMutualExclusion(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	var wg sync.WaitGroup
	inside := 0
	var mu sync.Mutex
	maxInside := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				l, err := Acquire(p, 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				if inside > maxInside {
					maxInside = inside
				}
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				inside--
				mu.Unlock()
				if j%5 == 4 {
					l.RemoveAndUnlock()
				} else {
					l.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if maxInside != 1 {
		t.Fatalf("%d holders at once, want 1", maxInside)
	}
}

func TestRemoveAndUnlockLetsWaiterLockNewFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l2, err := Acquire(p, 3*time.Second)
		if err == nil {
			defer l2.Unlock()
			fi1, _ := l2.f.Stat()
			fi2, err2 := os.Stat(p)
			if err2 != nil || !os.SameFile(fi1, fi2) {
				err = errors.New("waiter holds a lock on a file that is no longer at the path")
			}
		}
		got <- err
	}()
	time.Sleep(30 * time.Millisecond)
	if err := l.RemoveAndUnlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestAWaiterIsNotStarvedByAHolderThatLocksAgainAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		// A holder that asks for the lock again the moment it lets go,
		// as a process running transactions back to back does.
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			l, err := Acquire(p, 5*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			// Transactions of a few milliseconds, not in step with anything.
			time.Sleep(time.Duration(3000+rand.IntN(4000)) * time.Microsecond)
			l.Unlock()
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(20 * time.Millisecond)
	var worst time.Duration
	for i := range 10 {
		start := time.Now()
		l, err := Acquire(p, 2*time.Second)
		if err != nil {
			t.Fatalf("waiter %d: %v after %v", i, err, time.Since(start))
		}
		worst = max(worst, time.Since(start))
		l.Unlock()
	}
	// A blocked waiter is woken when the holder lets go, so it waits about
	// one transaction; a poller can miss the gap again and again.
	if worst > 300*time.Millisecond {
		t.Fatalf("a waiter waited %v for a lock held a few milliseconds at a time", worst)
	}
}

func TestAnAbandonedWaitNeverKeepsTheLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := Acquire(p, 20*time.Millisecond); !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
	}
	l.Unlock()
	// The abandoned waits get the lock once it is free and let go of it
	// at once, so a new caller gets it.
	for range 3 {
		l2, err := Acquire(p, 2*time.Second)
		if err != nil {
			t.Fatalf("after the abandoned waits: %v", err)
		}
		l2.Unlock()
	}
}

func TestAZeroTimeoutTriesOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := Acquire(p, 0); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a zero timeout waited %v", d)
	}
	l.Unlock()
	l, err = Acquire(p, 0)
	if err != nil {
		t.Fatalf("a free lock with a zero timeout: %v", err)
	}
	l.Unlock()
}
