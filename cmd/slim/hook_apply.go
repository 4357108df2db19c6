package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slimgate/slim/format"
	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/slimerr"
)

// maxReplyBytes bounds the plugin's approval line.
const maxReplyBytes = 4096

// runApplyHook is `slim hook apply`: apply mode's whole apply_patch call,
// as a conversation of JSON lines on stdin and stdout (the request, slim's
// ask, the plugin's approval, slim's result). SIGINT and SIGTERM end it at
// any point: before the write nothing is written, during it everything
// written is put back.
func runApplyHook(e *env) (err error) {
	ctx, stop := e.interruptible()
	defer stop()
	defer func() {
		// A failure of slim itself still ends the conversation with an
		// answer the model can read. A write in progress was put back
		// (the transaction rolls back on a panic); one that had finished
		// stays, so the message does not claim either.
		if p := recover(); p != nil {
			e.log.Error().Interface("panic", p).Msg("hook apply: internal failure")
			err = applyAnswer(e, protocol.ApplyAnswer{V: protocol.Version, Action: protocol.Block,
				Message: fmt.Sprintf("apply_patch internal error: slim failed while applying this patch (%v); read the files it names before you patch them again", p)})
		}
	}()
	in := bufio.NewReaderSize(e.stdin, 64<<10)
	req, err := protocol.ReadLine(in)
	if tl := (*protocol.TooLargeError)(nil); errors.As(err, &tl) {
		return applyAnswer(e, protocol.ApplyAnswer{V: protocol.Version, Action: protocol.Block,
			Message: fmt.Sprintf("apply_patch blocked: the request is larger than %d MiB, the most slim reads, so the patch was not checked; split it into smaller patches", tl.Limit>>20)})
	}
	if err == nil {
		err = req.Validate(protocol.Apply)
	}
	if err != nil {
		return hookFail(e, &slimerr.Error{Kind: slimerr.Usage, Code: slimerr.CodeUsage, Message: err.Error(), Err: err})
	}
	d := newDispatcher(e)
	d.Format = func(dir string, files []string) []hooks.FormatReport { return formatFiles(e, dir, files) }
	d.BeforeWrite = applyPause(ctx, e.cfg.getenv("SLIM_APPLY_PAUSE_MS"))
	approve := func(ask *protocol.EditAsk) (bool, error) {
		if err := applyAnswer(e, protocol.ApplyAnswer{V: protocol.Version, Action: protocol.Ask, Ask: ask}); err != nil {
			return false, err
		}
		return readApproval(ctx, in)
	}
	return applyAnswer(e, d.Apply(ctx, req, approve))
}

// applyAnswer writes one line of the apply conversation, at once.
func applyAnswer(e *env, a protocol.ApplyAnswer) error {
	if err := e.writeJSON(a); err != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook apply: write: %w", err))
	}
	return nil
}

// readApproval waits for the plugin's reply line; only {"approve": true}
// approves. A signal, end of input or anything else is no approval.
func readApproval(ctx context.Context, in *bufio.Reader) (bool, error) {
	type reply struct {
		ok  bool
		err error
	}
	got := make(chan reply, 1)
	go func() {
		line, err := in.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(line) == 0 {
			got <- reply{false, fmt.Errorf("no reply: %w", err)}
			return
		}
		if len(line) > maxReplyBytes {
			got <- reply{false, errors.New("the reply is too long")}
			return
		}
		var r protocol.ApplyReply
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			got <- reply{false, fmt.Errorf("bad reply: %w", err)}
			return
		}
		got <- reply{r.Approve, nil}
	}()
	select {
	case r := <-got:
		return r.ok, r.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// formatFiles runs, on each file an apply wrote, the formatters OpenCode
// would run after its own write, from the session directory dir. A
// configuration that cannot be read, or a formatter that fails, is
// reported per file; nothing here undoes the apply. Files no formatter
// applies to, and all files when formatting is off, are left out.
func formatFiles(e *env, dir string, files []string) []hooks.FormatReport {
	if len(files) == 0 {
		return nil
	}
	h, err := newFormatHostAt(e, dir, format.DefaultTimeout)
	if err != nil {
		var out []hooks.FormatReport
		for _, f := range files {
			out = append(out, hooks.FormatReport{Path: f, Error: "not formatted: " + fmtError(err).Error()})
		}
		return out
	}
	ctx, stop := e.interruptible()
	defer stop()
	var out []hooks.FormatReport
	for _, f := range files {
		r, err := h.host.Run(ctx, f)
		if err != nil {
			out = append(out, hooks.FormatReport{Path: f, Error: "not formatted: " + fmtError(err).Error()})
			continue
		}
		if !r.Enabled || (len(r.Steps) == 0 && r.DetectionError == "") {
			continue
		}
		fr := hooks.FormatReport{Path: f, Formatters: []string{}, Changed: r.Changed}
		if r.EOLFlipped {
			fr.EOLFlipped, fr.EOLBefore, fr.EOLAfter = true, string(r.EOLBefore), string(r.EOLAfter)
		}
		if r.DetectionError != "" {
			fr.Error = "not formatted: " + r.DetectionError
		}
		for _, st := range r.Steps {
			fr.Formatters = append(fr.Formatters, st.Name)
			if st.Failed && fr.Error == "" {
				fr.Error = fmt.Sprintf("%s failed: %s", st.Name, st.Error)
			}
		}
		out = append(out, fr)
	}
	return out
}
