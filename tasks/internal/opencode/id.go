package opencode

import (
	"crypto/rand"
	"time"
)

// NewMessageID returns a message id a client may choose for a prompt
// (Prompt.MessageID), so it can find its own message in the transcript
// later (HasID). It has the shape of the ids an OpenCode server makes:
// "msg_", 12 hex digits, 14 random base62 characters.
//
// A server's message ids sort by creation time as strings: the 12 hex
// digits are the low 48 bits of Unix milliseconds × 4096 plus a counter
// of the ids made in that millisecond. NewMessageID uses the same clock
// with the counter at its top (4095), so its id sorts after every id the
// server made in the same millisecond or before, and before every id it
// makes from the next millisecond on: the prompt's user message lands
// after the transcript's last message, and the server's reply after it.
// That holds when the server reads the same clock (a server on the same
// machine does); make the id just before sending the prompt, since a
// server's ids made meanwhile would sort after it. Like the server's own,
// the order breaks once every 2^36 ms (about 2.2 years), when the 48 bits
// wrap around.
func NewMessageID() string {
	var random [randomChars]byte
	_, _ = rand.Read(random[:]) // never fails (it aborts the program instead)
	return messageIDAt(time.Now(), random)
}

const (
	randomChars = 14
	base62      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// messageIDAt is the id NewMessageID makes at now with these random
// bytes.
func messageIDAt(now time.Time, random [randomChars]byte) string {
	const hex = "0123456789abcdef"
	stamp := uint64(now.UnixMilli())*4096 + 4095
	b := make([]byte, 0, 4+12+randomChars)
	b = append(b, "msg_"...)
	for shift := 44; shift >= 0; shift -= 4 {
		b = append(b, hex[stamp>>uint(shift)&15])
	}
	for _, r := range random {
		b = append(b, base62[int(r)%len(base62)])
	}
	return string(b)
}
