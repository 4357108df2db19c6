package rescue

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// This file is the state of a dry run: a fingerprint of every file the
// patch read, so that an apply can be bound to the bytes a user approved.
// Between the dry run a permission prompt shows and the apply that follows
// it, someone may edit a file; the apply then recomputes the patch against
// the new bytes, and would write something nobody saw. With the state of
// the dry run passed back, the apply refuses instead.
//
// The state is "1:" followed by one 16-hex-digit field per touched file, in
// the order the patch first touches them: the first 8 bytes of the SHA-256
// of the file's physical path (links resolved) and its bytes, or of the
// path alone for a file that does not exist. A file that moved under the
// same name (a parent directory swapped for a link to a copy) is therefore
// a change too. One field per file lets the refusal name the file that
// changed.

const statePrefix = "1:"

const stateField = 16

// state returns the fingerprint of the files r read.
func (w *world) state(r *resolution) string {
	var b strings.Builder
	b.WriteString(statePrefix)
	for _, key := range r.touched {
		b.WriteString(w.field(key))
	}
	return b.String()
}

func (w *world) field(key string) string {
	h := sha256.New()
	h.Write([]byte(key))
	if s := w.snaps[key]; s != nil && s.exists {
		h.Write([]byte{1})
		h.Write(s.data)
	} else {
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:stateField/2])
}

// expect fails with a verification error when the files r read are not
// the ones want fingerprinted, naming the first file that differs.
func (w *world) expect(r *resolution, want string) error {
	fields, ok := strings.CutPrefix(want, statePrefix)
	if !ok || len(fields)%stateField != 0 {
		return &Error{Kind: Usage, Code: CodeUsage, Message: "the expected state is not one slim gave (it must come from a dry run's \"state\")"}
	}
	if len(fields)/stateField != len(r.touched) {
		return verifyErr("The files changed since the patch was shown for approval (it now touches %d files, then %d); nothing was written. Read the files again and make a new patch.", len(r.touched), len(fields)/stateField)
	}
	for i, key := range r.touched {
		if fields[i*stateField:(i+1)*stateField] != w.field(key) {
			name := key
			if a, ok := r.abs[key]; ok && a != "" {
				name = a
			}
			return verifyErr("File changed since the patch was shown for approval: %s; nothing was written. Read it again and make a new patch.", name)
		}
	}
	return nil
}
