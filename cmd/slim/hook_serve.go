package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/slimerr"
)

// `slim hook serve` is the resident form of `slim hook before|after|event`:
// the OpenCode plugin starts it once and sends every hook request down its
// stdin, so that a tool call starts no process. Each line in is one frame
// {"id": N, "phase": P, "request": {...}} and each line out one
// {"id": N, "answer": {...}} or {"id": N, "error": {kind, code, message}},
// the same answer and error `slim hook P` would print for that request.
// Requests are answered concurrently (at most serveWorkers at once), each
// with its own dispatcher and budget, in the order they finish. End of
// input ends the server once every request in flight is answered.
//
// A frame that cannot be read (not JSON, no id, a line over the limit)
// ends the server with an error: the plugin then falls back to one process
// per call, so a broken stream can never answer for the wrong request.

// serveWorkers bounds the requests answered at once.
const serveWorkers = 8

// maxFrameBytes bounds one line: a request at its limit plus the frame.
const maxFrameBytes = protocol.MaxRequestBytes + 4096

type serveFrame struct {
	ID      *int64          `json:"id"`
	Phase   protocol.Phase  `json:"phase"`
	Request json.RawMessage `json:"request"`
}

type serveReply struct {
	ID     int64              `json:"id"`
	Answer *protocol.Response `json:"answer,omitempty"`
	Error  *slimerr.JSON      `json:"error,omitempty"`
}

func runServe(e *env) error {
	in := bufio.NewReaderSize(e.stdin, 256<<10)
	var (
		mu   sync.Mutex // one reply line at a time
		wg   sync.WaitGroup
		sem  = make(chan struct{}, serveWorkers)
		werr error
	)
	write := func(r serveReply) {
		b, err := json.Marshal(r)
		if err != nil {
			b, _ = json.Marshal(serveReply{ID: r.ID, Error: slimerr.ToJSON(slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err))})
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := e.stdout.Write(append(b, '\n')); err != nil && werr == nil {
			werr = err
		}
	}
	e.printedJSON = true
	e.log.Debug().Msg("hook serve: started")
	served := 0
	defer func() { e.log.Debug().Int("requests", served).Msg("hook serve: input ended") }()
	for {
		line, err := protocol.ReadBoundedLine(in, maxFrameBytes)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			wg.Wait()
			return slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: %v", err)
		}
		var f serveFrame
		if err := json.Unmarshal(line, &f); err != nil || f.ID == nil || len(f.Request) == 0 {
			wg.Wait()
			return slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: a frame must be {\"id\": N, \"phase\": P, \"request\": {...}} on one line")
		}
		served++
		sem <- struct{}{}
		wg.Add(1)
		go func(id int64, phase protocol.Phase, data []byte) {
			defer func() { <-sem; wg.Done() }()
			defer func() {
				if p := recover(); p != nil {
					e.log.Error().Interface("panic", p).Msg("hook serve: internal failure")
					write(serveReply{ID: id, Error: slimerr.ToJSON(slimerr.New(slimerr.Internal, slimerr.CodeInternal, "hook: internal failure: %v", p))})
				}
			}()
			resp, herr := answerHook(e, phase, data)
			if herr != nil {
				write(serveReply{ID: id, Error: slimerr.ToJSON(classify(herr))})
				return
			}
			write(serveReply{ID: id, Answer: &resp})
		}(*f.ID, f.Phase, f.Request)
	}
	wg.Wait()
	if werr != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook serve: write: %w", werr))
	}
	return nil
}

// answerHook answers one hook request of phase, its JSON in data, as
// `slim hook PHASE` would: the response, or the error of a request slim
// cannot act on. The apply phase is a conversation and is never served.
func answerHook(e *env, phase protocol.Phase, data []byte) (protocol.Response, error) {
	req, err := protocol.Decode(data)
	if req, err = checkHookRequest(req, err, phase); err != nil {
		return protocol.Response{}, err
	}
	d := newDispatcher(e)
	ctx := newBudgetContext(d.PatchBudget)
	defer ctx.stop()
	return d.HandleContext(ctx, req), nil
}
