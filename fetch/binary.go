package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slimgate/slim/fetch/internal/binsave"
)

// binary handles a binary response: metadata only when it is over the
// download limit (an explicit type with a longer Content-Length is not
// read at all), else counted and dropped, or saved with SaveBinary. The
// limit applies to the bytes actually read, so a body without
// Content-Length cannot slip past it.
func (f *fetcher) binary(ctx context.Context, resp *http.Response, e *entry, mt string, sniff []byte) (*entry, error) {
	e.Kind = "binary"
	e.SaveBinary = f.req.SaveBinary
	if mt == "application/octet-stream" {
		// The magic bytes give the download a better kind and name.
		if k := sniffedType(sniff); binsave.IsBinaryType(k) {
			mt = k
		}
	}
	e.BinaryKind = binsave.Kind(mt)
	if e.BinaryKind == "" {
		e.BinaryKind = "binary" // a type of its own whose bytes are not text
	}
	limit := int64(MaxBinaryBytes)
	if f.req.SaveBinary {
		limit = MaxBodyBytes
	}
	e.DownloadLimit = limit
	if e.ContentLength != nil && *e.ContentLength > limit {
		resp.Body.Close()
		e.MetadataOnly = true
		return e, nil
	}
	if !f.req.SaveBinary {
		_, over, err := countBody(ctx, resp, limit)
		if err != nil {
			return nil, err
		}
		e.MetadataOnly = over
		return e, nil
	}
	data, over, err := readBody(ctx, resp, limit)
	if err != nil {
		return nil, err
	}
	if over {
		e.MetadataOnly = true
		return e, nil
	}
	base := f.cfg.BinaryDir
	if base == "" {
		base = os.TempDir()
	}
	dir, err := binsave.Dir(base)
	if err != nil {
		return nil, newErr(Internal, CodeBinaryUnsavable, "Cannot save the download: "+err.Error(), err)
	}
	name := e.Filename
	ext := binsave.Extension(mt, sniff)
	if name == "" {
		name = "webfetch-" + itoa(f.cfg.now().UnixMilli()) + "." + ext
	}
	path, err := binsave.Save(dir, name, data, ext)
	if err != nil {
		return nil, newErr(Internal, CodeBinaryUnsavable, err.Error(), err)
	}
	sum := sha256.Sum256(data)
	e.SavedPath, e.SavedSize, e.SavedSHA256 = filepath.Clean(path), int64(len(data)), hex.EncodeToString(sum[:])
	return e, nil
}

// sniffedType is the media type the first bytes of a body show.
func sniffedType(b []byte) string {
	t := http.DetectContentType(b)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return t
}

// sameFile reports whether path is still a regular file of size bytes
// with the given SHA-256 (a saved download a cache hit can point to again).
func sameFile(path string, size int64, sum string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return false
	}
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(fh, size+1)); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == sum
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
