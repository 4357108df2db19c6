package rescue

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/slimgate/slim/internal/safefs"
)

// This file is apply mode: every file is written or none, through the
// transactional writer of internal/safefs on the tree opened before the
// first check. Each write is compare-and-swap against the bytes read, every
// parent directory must still be the one the check saw (device and inode),
// and any failure, an interrupt included, puts back the original inodes and
// removes the directories slim created. After a SIGKILL each file is old or
// new; a temporary or kept sibling may remain.

// plan lists the changes of r in first-touch order, with the physical path
// of each for messages.
func (w *world) plan(r *resolution) ([]safefs.Change, map[string]string, error) {
	srcOf := map[string]*lineage{}
	for _, l := range r.lineages {
		if l.dest != "" {
			srcOf[l.dest] = l
		}
	}
	var out []safefs.Change
	abs := map[string]string{}
	for _, key := range r.touched {
		s := w.snaps[key]
		final := r.final(key)
		if s == nil {
			return nil, nil, internalErr(nil, "no snapshot for %s", key)
		}
		if final == nil && !s.exists {
			continue
		}
		c := safefs.Change{Data: final, Old: s.file()}
		if l := srcOf[key]; final != nil && l != nil && l.origin != "" && l.origin != key {
			c.Like = l.src.file() // a moved file keeps its mode and owner
		}
		if final != nil && s.exists && bytes.Equal(final, s.data) && (c.Like == nil || sameMode(c.Like, c.Old)) {
			continue // nothing changes
		}
		// The guard's Rel, not a lexical Rel of the physical path: a target
		// may lie below the top by file identity while spelt another way
		// (a case variant, a bind mount), where filepath.Rel gives "../".
		v, ok := w.keyVerdicts[key]
		rel, err := w.guard.RelToTop(v)
		if !ok || err != nil || w.tree == nil {
			return nil, nil, &Error{Kind: Blocked, Code: CodeOutsideWorkspace,
				Message: "apply_patch blocked: patch contains path outside workspace root: " + key}
		}
		c.Rel = rel
		abs[rel] = key
		out = append(out, c)
	}
	return out, abs, nil
}

func sameMode(a, b *safefs.File) bool {
	return a != nil && b != nil && a.Info.Mode() == b.Info.Mode()
}

// apply writes the changes of r, all or none.
func (w *world) apply(ctx context.Context, r *resolution, beforeStep func(int)) error {
	changes, abs, err := w.plan(r)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	err = w.tree.Apply(changes, safefs.ApplyOptions{Context: ctx, BeforeStep: beforeStep})
	if err == nil {
		return nil
	}
	name := func(rel string) string {
		if a, ok := abs[rel]; ok {
			return a
		}
		return filepath.Join(w.guard.Top(), rel)
	}
	var ce *safefs.ConflictError
	var we *safefs.WriteError
	var fe *safefs.Error
	switch {
	case errors.As(err, &we) && len(we.Incomplete) > 0:
		// Whatever stopped the patch, what the model must hear first is
		// that not every file is as it was.
		return internalErr(err, "could not write %s: %v; the rollback was incomplete, so these files are not as they were: %s",
			name(we.Rel), we.Err, strings.Join(we.Incomplete, "; "))
	case errors.As(err, &ce):
		switch ce.What {
		case "appeared":
			return verifyErr("File appeared since the patch was checked: %s", name(ce.Rel))
		case "disappeared":
			return verifyErr("File disappeared since it was read: %s", name(ce.Rel))
		}
		return verifyErr("File changed since it was read: %s", name(ce.Rel))
	case errors.As(err, &we):
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(we.Err, ctxErr) {
			return internalErr(err, "interrupted before %s was written; every file was restored", name(we.Rel))
		}
		if errors.As(we.Err, &fe) {
			return w.treeErr(name(we.Rel), fe)
		}
		return internalErr(err, "could not write %s: %v; every file was restored", name(we.Rel), we.Err)
	case errors.As(err, &fe):
		return w.treeErr(name(fe.Rel), fe)
	}
	return internalErr(err, "could not apply the patch: %v", err)
}
