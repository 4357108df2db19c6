package filelock

import (
	"errors"
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
