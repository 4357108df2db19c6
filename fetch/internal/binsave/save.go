package binsave

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// MaxAttempts is how many names Save tries: the name itself, then
// name-1 ... name-999.
const MaxAttempts = 1000

// maxSavedBytes bounds a saved file's name in bytes, the common file
// system limit.
const maxSavedBytes = 255

// Save writes body to a new file in dir and returns its path. The name is
// sanitized first (an empty name becomes FallbackName with mimeExt). The
// file is created exclusively, with mode 0600, through a handle on dir
// that no name can escape, so an earlier download is never overwritten
// and a planted link is never followed.
//
// When the name is taken, Save tries stem-1.ext up to stem-999.ext; a name
// without an extension gets "."+mimeExt on those tries. A taken name whose
// file already holds exactly body (a regular file of the same size and
// bytes) is the answer: fetching the same download twice gives one file,
// not a copy per fetch. After MaxAttempts names, Save gives up with
// CodeNoFreeName.
func Save(dir, name string, body []byte, mimeExt string) (string, error) {
	if !validExt(mimeExt) {
		mimeExt = ""
	}
	if name == "" {
		name = FallbackName(time.Now(), mimeExt)
	}
	name = Sanitize(name)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", newErr(Internal, CodeWriteFailed, "cannot open the download directory "+dir+": "+err.Error(), err)
	}
	defer root.Close()
	stem, ext := nameParts(name)
	suffixExt := ext
	if ext == "" && mimeExt != "" {
		suffixExt = "." + mimeExt
	}
	for i := 0; i < MaxAttempts; i++ {
		cand := name
		if i > 0 {
			cand = fit(stem, "-"+strconv.Itoa(i)+suffixExt, MaxNameRunes, maxSavedBytes)
		}
		f, err := root.OpenFile(cand, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			if err := write(f, body); err != nil {
				_ = root.Remove(cand)
				return "", newErr(Internal, CodeWriteFailed, "cannot write "+filepath.Join(dir, cand)+": "+err.Error(), err)
			}
			return filepath.Join(dir, cand), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", newErr(Internal, CodeWriteFailed, "cannot create "+filepath.Join(dir, cand)+": "+err.Error(), err)
		}
		if holds(root, cand, body) {
			return filepath.Join(dir, cand), nil
		}
	}
	return "", newErr(Internal, CodeNoFreeName, NoFreeNameMessage, nil)
}

// write fills f with body, makes its mode exactly 0600 (the umask can only
// have narrowed it) and closes it.
func write(f *os.File, body []byte) error {
	_, err := f.Write(body)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// holds reports whether name in root is a regular file whose bytes are
// exactly body.
func holds(root *os.Root, name string, body []byte) bool {
	fi, err := root.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(body)) {
		return false
	}
	f, err := root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	rest := body
	for {
		n, err := io.ReadFull(f, buf)
		if n > len(rest) || !bytes.Equal(buf[:n], rest[:n]) {
			return false
		}
		rest = rest[n:]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return len(rest) == 0
		}
		if err != nil {
			return false
		}
	}
}

// validExt accepts a short extension of ASCII letters and digits.
func validExt(ext string) bool {
	if ext == "" || len(ext) > maxExtRunes-1 {
		return false
	}
	for i := 0; i < len(ext); i++ {
		c := ext[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
