package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/slimerr"
)

// `slim hook serve` is the resident form of `slim hook before|after|event`
// and of the commands behind the plugin's own tools: the OpenCode plugin
// starts it once and sends every request down its stdin, so that a tool
// call starts no slim process. Each line in is one frame:
//
//	{"id": N, "phase": P, "request": {...}}   a hook request
//	{"id": N, "run": {"args": [...], "stdin": "..."}}
//	                                         a tool's command (servedCommand)
//	{"id": N, "cancel": true}                end run N, as SIGTERM ends a process
//
// Each line out answers one hook request, {"id": N, "answer": {...}} or
// {"id": N, "error": {kind, code, message}}, the same answer and error
// `slim hook P` would print, or one run, {"id": N, "exit": C, "stdout":
// "...", "stderr": "..."}, what `slim ARGS` would have printed and exited
// with. A cancel frame gets no line of its own: the run it ends answers
// as that command does when interrupted (a write in progress rolled back).
// Requests are answered concurrently, each with its own dispatcher or
// command tree and budget, in the order they finish: at most serveWorkers
// hook requests and, apart from them, serveRuns runs at once, so a slow
// fetch never holds up a hook. End of input ends the server once every
// request in flight is answered; SIGINT or SIGTERM cancels the runs in
// flight, answers everything, and then ends it.
//
// A frame that cannot be read (not JSON, no id, a line over the limit, a
// run of a command the plugin never sends) ends the server with an error:
// the plugin then falls back to one process per call, so a broken stream
// can never answer for the wrong request.
//
// With --sync DIR the server also reads hook requests from the FIFO
// DIR/request and writes their answers to DIR/reply (syncChannel): the
// same frames and answers, on a channel of their own, for a caller that
// waits for its answer without returning to its event loop (the plugin's
// before hook, which the host otherwise answers only once its other work
// is done). Runs and cancels do not go there.

// serveWorkers bounds the hook requests answered at once.
const serveWorkers = 8

// syncDrainTime is how long the server still reads the synchronous
// channel after stdin ended: what was written before is already there.
const syncDrainTime = 100 * time.Millisecond

// serveRuns bounds the commands run at once; more wait their turn.
const serveRuns = 8

// maxFrameBytes bounds one line: a request at its limit plus the frame.
const maxFrameBytes = protocol.MaxRequestBytes + 4096

// maxRunStdout bounds what one run may print (the largest page slim
// fetches is 10 MiB); maxRunStderr bounds the stderr kept (the rest is
// dropped, as the plugin drops it).
const (
	maxRunStdout = 16 << 20
	maxRunStderr = 64 << 10
)

type serveFrame struct {
	ID      *int64          `json:"id"`
	Phase   protocol.Phase  `json:"phase"`
	Request json.RawMessage `json:"request"`
	Run     *serveRun       `json:"run"`
	Cancel  bool            `json:"cancel"`
}

// serveRun is a run frame's command: its arguments after "slim" and its
// standard input.
type serveRun struct {
	Args  []string `json:"args"`
	Stdin string   `json:"stdin"`
}

type serveReply struct {
	ID     int64              `json:"id"`
	Answer *protocol.Response `json:"answer,omitempty"`
	Error  *slimerr.JSON      `json:"error,omitempty"`
	// Exit, Stdout and Stderr answer a run.
	Exit   *int   `json:"exit,omitempty"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// sync sends the reply down the synchronous channel.
	sync bool
}

// servedCommands are the commands the resident slim runs, by name
// (commandName): the commands behind the plugin's own tools, each of
// which runs the same in-process as in a process of its own. `slim
// version --json` lists them, so that the plugin sends only these; a run
// of anything else (installing hooks, the resident itself, a settler)
// ends the server.
//
// The task tools that take a lease (message, cancel, revive) are not
// among them: a lease is held in the name of the process, and taken back
// when that process is gone, so a run that ended without giving its lease
// back must not leave it held for as long as the resident lives.
var servedCommands = []string{
	"fetch",
	"search ast", "search replace", "search grep", "search glob",
	"tasks status", "tasks result", "tasks wait-for-user",
}

// servedCommand reports whether args (after "slim") name one of
// servedCommands.
func servedCommand(args []string) bool {
	return len(args) > 0 && slices.Contains(servedCommands, commandName(args))
}

func runServe(e *env, syncDir string) error {
	in := bufio.NewReaderSize(e.stdin, 256<<10)
	var sc *syncChannel
	if syncDir != "" {
		var err error
		if sc, err = openSyncChannel(syncDir); err != nil {
			return err
		}
		defer sc.close()
	}
	// A signal to the resident ends the runs in flight the way it ends a
	// command of its own process: their contexts are children of this one.
	signalled, stopSignals := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	// base also ends when the server must stop for a frame it cannot take:
	// the runs in flight then stop (a write rolled back) and answer at
	// once instead of running on while nothing reads the input.
	base, cancelRuns := context.WithCancel(signalled)
	defer cancelRuns()
	var (
		mu      sync.Mutex // one reply line at a time
		wg      sync.WaitGroup
		hookSem = make(chan struct{}, serveWorkers)
		runSem  = make(chan struct{}, serveRuns)
		werr    error
		runsMu  sync.Mutex
		runs    = map[int64]context.CancelFunc{}
	)
	write := func(r serveReply) {
		b, err := encodeReply(r)
		if err != nil {
			b, _ = encodeReply(serveReply{ID: r.ID, Error: slimerr.ToJSON(slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err))})
		}
		if r.sync {
			if err := sc.write(b); err != nil {
				// The caller stopped waiting (it then stops the resident
				// too): nothing else depends on this answer.
				e.log.Debug().Err(err).Msg("hook serve: a synchronous answer was not taken")
			}
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := e.stdout.Write(b); err != nil && werr == nil {
			werr = err
		}
	}
	e.printedJSON = true
	// Its runs include fetches, which want the collector set for pages;
	// the runs themselves change no setting of the process.
	collectForPages()
	e.log.Debug().Msg("hook serve: started")
	served, ran := 0, 0
	defer func() { e.log.Debug().Int("requests", served).Int("runs", ran).Msg("hook serve: input ended") }()

	// Frames are read on their own goroutine, so that a signal ends the
	// server while it waits for input.
	type frameLine struct {
		line []byte
		err  error
		sync bool // read from the synchronous channel, answered there
	}
	lines := make(chan frameLine)
	readFrames := func(in *bufio.Reader, onSync bool) {
		for {
			line, err := protocol.ReadBoundedLine(in, maxFrameBytes)
			select {
			case lines <- frameLine{line, err, onSync}:
			case <-base.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}
	go readFrames(in, false)
	if sc != nil {
		go readFrames(bufio.NewReaderSize(sc.req, 64<<10), true)
	}
	finish := func(err error) error {
		if err != nil {
			cancelRuns()
		}
		wg.Wait()
		if err == nil && werr != nil {
			err = slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook serve: write: %w", werr))
		}
		return err
	}
	stdinDone := false
	for {
		var fl frameLine
		select {
		case fl = <-lines:
		case <-signalled.Done():
			e.log.Debug().Msg("hook serve: signalled; answering the requests in flight")
			return finish(slimerr.New(slimerr.Internal, slimerr.CodeInternal, "hook serve: ended by a signal"))
		}
		if errors.Is(fl.err, io.EOF) && !fl.sync {
			if sc == nil {
				return finish(nil)
			}
			// Frames the plugin wrote to the synchronous channel before it
			// closed stdin are already in the FIFO: read them, then end.
			stdinDone = true
			if err := sc.req.SetReadDeadline(time.Now().Add(syncDrainTime)); err != nil {
				return finish(nil)
			}
			continue
		}
		if stdinDone && fl.sync && errors.Is(fl.err, os.ErrDeadlineExceeded) {
			return finish(nil)
		}
		if fl.err != nil {
			// The synchronous channel never ends of itself: this server
			// holds its write end too.
			return finish(slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: %v", fl.err))
		}
		var f serveFrame
		if err := json.Unmarshal(fl.line, &f); err != nil || f.ID == nil {
			return finish(slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: a frame must be {\"id\": N, \"phase\": P, \"request\": {...}}, {\"id\": N, \"run\": {...}} or {\"id\": N, \"cancel\": true} on one line"))
		}
		id := *f.ID
		if fl.sync && (f.Cancel || f.Run != nil) {
			return finish(slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: frame %d: the synchronous channel takes hook requests only", id))
		}
		switch {
		case f.Cancel:
			runsMu.Lock()
			if cancel, ok := runs[id]; ok {
				cancel()
			}
			runsMu.Unlock()
		case f.Run != nil:
			if !servedCommand(f.Run.Args) {
				return finish(slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: slim %s is not a command the resident slim runs", strings.Join(f.Run.Args, " ")))
			}
			ran++
			ctx, cancel := context.WithCancel(base)
			runsMu.Lock()
			if _, dup := runs[id]; dup {
				runsMu.Unlock()
				cancel()
				return finish(slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: run %d is already in flight", id))
			}
			runs[id] = cancel
			runsMu.Unlock()
			wg.Add(1)
			go func(r serveRun) {
				defer func() {
					runsMu.Lock()
					delete(runs, id)
					runsMu.Unlock()
					cancel()
					wg.Done()
				}()
				select {
				case runSem <- struct{}{}:
					defer func() { <-runSem }()
				case <-ctx.Done():
					// Cancelled while it waited for its turn: it never ran.
					code := slimerr.Internal.ExitCode()
					write(serveReply{ID: id, Exit: &code, Stderr: "slim: cancelled before it ran\n"})
					return
				}
				write(serveCommand(e, ctx, id, r))
			}(*f.Run)
		default:
			if len(f.Request) == 0 {
				return finish(slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: frame %d has no request", id))
			}
			served++
			wg.Add(1)
			// The slot is taken on the request's own goroutine, so that
			// cancel frames and signals get through while every slot is busy.
			go func(phase protocol.Phase, data []byte, onSync bool) {
				hookSem <- struct{}{}
				defer func() { <-hookSem; wg.Done() }()
				defer func() {
					if p := recover(); p != nil {
						e.log.Error().Interface("panic", p).Msg("hook serve: internal failure")
						write(serveReply{ID: id, sync: onSync, Error: slimerr.ToJSON(slimerr.New(slimerr.Internal, slimerr.CodeInternal, "hook: internal failure: %v", p))})
					}
				}()
				resp, herr := answerHook(e, phase, data)
				if herr != nil {
					write(serveReply{ID: id, sync: onSync, Error: slimerr.ToJSON(classify(herr))})
					return
				}
				write(serveReply{ID: id, sync: onSync, Answer: &resp})
			}(f.Phase, f.Request, fl.sync)
		}
	}
}

// serveCommand runs one command in this process, as `slim ARGS` would run
// with r.Stdin on its standard input, and returns its reply: the exit code
// and what it printed. A command that fails inside slim (a panic) answers
// as a process that failed would, with exit 1 and the reason on stderr.
func serveCommand(e *env, ctx context.Context, id int64, r serveRun) (reply serveReply) {
	stdout := &cappedBuffer{limit: maxRunStdout, fail: true}
	stderr := &cappedBuffer{limit: maxRunStderr}
	code := 0
	defer func() {
		if p := recover(); p != nil {
			e.log.Error().Interface("panic", p).Strs("args", r.Args).Msg("hook serve: internal failure in a run")
			fmt.Fprintf(stderr, "slim: internal failure: %v\n", p)
			code = slimerr.Internal.ExitCode()
		}
		if stdout.over {
			code = slimerr.Internal.ExitCode()
			stdout.buf.Reset()
			fmt.Fprintf(stderr, "slim: the command printed more than %d bytes\n", maxRunStdout)
		}
		reply = serveReply{ID: id, Exit: &code, Stdout: stdout.buf.String(), Stderr: stderr.buf.String()}
		// The command's name only: its arguments are the model's.
		e.log.Debug().Str("command", commandName(r.Args)).Int("exit", code).Msg("hook serve: ran")
	}()
	ce := &env{ctx: ctx, served: true, log: e.log, stdin: strings.NewReader(r.Stdin), stdout: stdout, stderr: stderr}
	code = runCLI(ce, append([]string{"slim"}, r.Args...))
	return reply
}

// maxReplyLine bounds one reply line: a run's capped output with JSON's
// escapes stays under it, and under the plugin's limit for a line.
const maxReplyLine = 48 << 20

// encodeReply is r as one line of JSON, its newline included. HTML
// characters are not escaped (the plugin reads JSON, not HTML), so a
// page's output keeps its size; a run's reply that would still pass
// maxReplyLine becomes the answer of a run whose output was too large.
func encodeReply(r serveReply) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	if b.Len() > maxReplyLine && r.Exit != nil {
		code := slimerr.Internal.ExitCode()
		return encodeReply(serveReply{ID: r.ID, Exit: &code, Stderr: fmt.Sprintf("slim: the command's answer is larger than the resident slim's %d-byte line\n", maxReplyLine)})
	}
	return b.Bytes(), nil
}

// commandName is the name of a served command (servedCommand's args),
// "search ast" or "fetch": never an argument of it, so not the URL a
// `fetch URL` names.
func commandName(args []string) string {
	n := 2
	if len(args) > 0 && args[0] == "fetch" {
		n = 1
	}
	return strings.Join(args[:min(n, len(args))], " ")
}

// cappedBuffer keeps at most limit bytes. Past it, a failing buffer
// refuses the write (the command's output is then wrong, and its run is
// answered as a failure), and a plain one drops the rest silently.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
	fail  bool
	over  bool
}

var errRunOutput = errors.New("output over the resident slim's limit")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	b.over = true
	if b.fail {
		return 0, errRunOutput
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	return len(p), nil
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

// serveSyncArg reads what follows `slim hook serve`: nothing, or --sync DIR
// (also --sync=DIR), the directory of the synchronous channel.
func serveSyncArg(args []string) (string, *slimerr.Error) {
	var dir string
	switch {
	case len(args) == 2 && args[0] == "--sync":
		dir = args[1]
	case len(args) == 1 && strings.HasPrefix(args[0], "--sync="):
		dir = strings.TrimPrefix(args[0], "--sync=")
	default:
		return "", slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: want no arguments or --sync DIR, got %q", strings.Join(args, " "))
	}
	if dir == "" {
		return "", slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve: --sync needs a directory")
	}
	return dir, nil
}
