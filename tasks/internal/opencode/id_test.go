package opencode

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
)

// hostID makes a message id as an OpenCode server does: "msg_", the low
// 48 bits of milliseconds*4096 + the counter of ids made in that
// millisecond as 12 hex digits, then 14 random base62 characters.
func hostID(ms int64, counter uint64, random string) string {
	return fmt.Sprintf("msg_%012x", (uint64(ms)*4096+counter)&(1<<48-1)) + random
}

func repeat(b byte) (out [randomChars]byte) {
	for i := range out {
		out[i] = b
	}
	return out
}

func TestNewMessageIDHasTheServersShape(t *testing.T) {
	shape := regexp.MustCompile(`^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$`)
	before := time.Now().UnixMilli()
	id := NewMessageID()
	after := time.Now().UnixMilli()
	if !shape.MatchString(id) {
		t.Fatalf("NewMessageID() = %q, not msg_ + 12 hex digits + 14 base62 characters", id)
	}
	stamp, _ := strconv.ParseUint(id[4:16], 16, 64)
	if stamp&4095 != 4095 || stamp>>12 < uint64(before)&(1<<36-1) || stamp>>12 > uint64(after)&(1<<36-1) {
		t.Errorf("the id's time %x is not the clock's (%d..%d) with the counter at 4095", stamp, before, after)
	}
	if other := NewMessageID(); other == id {
		t.Errorf("two ids are the same: %s", id)
	}
}

func TestNewMessageIDSortsBetweenTheServersEarlierAndLaterIDs(t *testing.T) {
	now := time.UnixMilli(1_780_000_000_123)
	ms := now.UnixMilli()
	lowest, highest := messageIDAt(now, repeat(0)), messageIDAt(now, repeat(61))
	if lowest != "msg_"+fmt.Sprintf("%012x", (uint64(ms)*4096+4095)&(1<<48-1))+"00000000000000" || highest[16:] != "zzzzzzzzzzzzzz" {
		t.Fatalf("messageIDAt = %q … %q", lowest, highest)
	}
	for _, earlier := range []struct {
		ms      int64
		counter uint64
	}{{ms - 1000, 1}, {ms - 1, 1}, {ms - 1, 4095}, {ms, 1}, {ms, 2}, {ms, 100}, {ms, 4094}} {
		if h := hostID(earlier.ms, earlier.counter, "zzzzzzzzzzzzzz"); h >= lowest {
			t.Errorf("the server's id %s (ms %d, counter %d) sorts after ours %s", h, earlier.ms-ms, earlier.counter, lowest)
		}
	}
	for _, later := range []int64{ms + 1, ms + 1000} {
		if h := hostID(later, 1, "00000000000000"); h <= highest {
			t.Errorf("the server's id %s (ms +%d) sorts before ours %s", h, later-ms, highest)
		}
	}
}

func TestTheServerTakesANewMessageID(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{DurationMS: 1}}}, Config{})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_id"})
	id := NewMessageID()
	p := textPrompt("revive")
	p.MessageID = id
	if err := c.PromptAsync(testCtx(t), "ses_id", p); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Messages(testCtx(t), "ses_id", 0)
	if err != nil || !HasID(msgs, id) {
		t.Fatalf("the transcript %v (%v) lacks the prompt's id %s", ids(msgs), err, id)
	}
	err = c.PromptAsync(testCtx(t), "ses_id", p)
	wantErr(t, err, Rejected, CodeRejected, 409, "")
}
