//go:build linux

package rescue

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A racer exchanges a directory and a link to .git or to a nested
// repository (renameat2 RENAME_EXCHANGE, atomically, as fast as it can)
// while patches that update a file in that directory are applied. No run
// may write into the link's target, and no temporary or kept sibling may
// remain. The loop is bounded in runs and time.
func TestRaceDirectoryExchangedWithLink(t *testing.T) {
	for _, target := range []string{".git", "nested"} {
		t.Run(target, func(t *testing.T) { raceExchange(t, target) })
	}
}

func raceExchange(t *testing.T, target string) {
	repo := gitRepo(t)
	writeFile(t, filepath.Join(repo, "d", "config"), "[core]\n")
	writeFile(t, filepath.Join(repo, "nested", ".git", "config"), "[core]\n")
	if err := os.Symlink(target, filepath.Join(repo, "lnk")); err != nil {
		t.Fatal(err)
	}
	guarded := filepath.Join(repo, target, "config")
	gitConfig, _ := os.ReadFile(guarded)
	d, lnk := filepath.Join(repo, "d"), filepath.Join(repo, "lnk")
	if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, lnk, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				// Leave d as the directory.
				if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, lnk, unix.RENAME_EXCHANGE)
				}
				return
			default:
			}
			unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, lnk, unix.RENAME_EXCHANGE)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	patch := []byte(wrap("*** Update File: d/config\n@@\n [core]\n+\tfsmonitor = \"touch pwned\"\n"))
	applied, refused := 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 200 && time.Now().Before(deadline); i++ {
		_, err := Process(patch, Options{Directory: repo, Apply: true})
		if err == nil {
			applied++
		} else {
			refused++
		}
		if now, _ := os.ReadFile(guarded); string(now) != string(gitConfig) {
			close(stop)
			wg.Wait()
			t.Fatalf("run %d wrote into %s:\n%s", i, guarded, now)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d applied, %d refused", applied, refused)
	filepath.Walk(repo, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), ".slim-") {
			t.Errorf("left behind %s", p)
		}
		return nil
	})
}
