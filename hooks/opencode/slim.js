// slim-managed: opencode plugin, protocol 1 (written by `slim hooks install --opencode`; remove with `slim hooks uninstall --opencode`)
//
// The thin OpenCode plugin for slim. It holds no policy of its own: for a
// tool call it runs `slim hook before` / `slim hook after` once each, sends
// one JSON request on stdin and applies the one JSON response slim prints.
// Which tools need which phase is slim's answer too: at load, `slim version
// --json` gives a phase table, and a phase the table leaves out for a tool
// is not run (slim would only have answered pass). Without a usable table
// every phase runs for every tool. The call waits for an after's answer
// only when that answer can change it: slim's table says afters change
// only repeated calls (afterChanges), and the call repeats an earlier one
// of its session (see afterWaits); otherwise the after is sent and the
// call returns. Events are forwarded to `slim hook
// event`. It also registers two tools, ast_grep_search and
// ast_grep_replace, which run `slim search ast|replace --json` in the
// session directory: structural search and a replace that stays inside the
// worktree and writes every file or none. A third, webfetch, takes the place
// of the host's own: `slim fetch` plans the call, the host's webfetch
// permission is asked for the URLs of that plan, then `slim fetch` runs it.
// In apply mode (off unless slim.json beside this file or SLIM_APPLY turns
// it on) a fourth, apply_patch, takes the place of the host's: one `slim
// hook apply` checks the patch, says which edit permission to ask, and
// after the plugin asked writes every file or none.
//
// When slim fails (non-zero exit, bad JSON, timeout, too much output), every
// tool call passes except apply_patch, which is blocked (and in apply mode
// not written): a patch slim could not check must not reach the files. A slim that is not found, or that speaks
// another protocol, disables the plugin altogether. The timeout is a hard
// deadline: slim runs in its own process group, and when the timer fires the
// whole group is killed and the call is answered at once, even if a process
// slim started still holds its output open.
//
// One resident `slim hook serve` answers the hooks and runs the tools'
// commands, so that a call starts no process; a hook the call waits for
// goes down its synchronous channel (two FIFOs), whose answer is read
// without returning to the host's event loop (see syncPipe).
//
// Only Node built-ins are imported, so the host never has to install a
// dependency for this file.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import {
  accessSync,
  appendFileSync,
  closeSync,
  constants as fsConstants,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const PROTOCOL = 1;
const DEFAULT_TIMEOUT_MS = 5000;
const MAX_STDOUT_BYTES = 64 << 20;
const MAX_STDERR_BYTES = 64 << 10;
// How long the pipes may stay open after slim exited before its answer is
// taken as it stands.
const EXIT_GRACE_MS = 200;
// Tools whose before hook fails closed: when slim cannot give an answer, the
// call is blocked instead of run unchecked.
const FAIL_CLOSED_TOOLS = new Set(["apply_patch"]);
// Process groups exist only on POSIX systems; on Windows slim is killed alone.
const GROUPS = process.platform !== "win32";
// One registry per process, shared by every copy of this file (a project copy
// and a global copy are two modules), so hooks are registered once per directory.
const REGISTRY_KEY = Symbol.for("slim.opencode.plugin.registry");

// The ast-grep tools: slim stops ast-grep after 300 s and answers, so the
// plugin waits a little longer than that before it gives up on slim.
const AST_TIMEOUT_MS = 330000;
// After an abort slim gets SIGTERM (a replace being written rolls back) and
// this long to exit before the group is killed.
const ABORT_GRACE_MS = 5000;
// Agents that only read: ast_grep_replace is refused for them. The host's
// own plan agent, its explore subagent, and any named in
// SLIM_READ_ONLY_AGENTS (comma-separated).
const READ_ONLY_AGENTS = ["plan", "explore"];

// The webfetch tool: the model's timeout in seconds when it names none,
// and the most slim accepts. The plugin waits that long plus a margin (slim
// answers a fetch that ran out of time itself), and, when a prompt sends the
// page to a secondary model, which has time limits of its own, longer still.
const FETCH_DEFAULT_TIMEOUT_S = 30;
const FETCH_MAX_TIMEOUT_S = 120;
const FETCH_MARGIN_MS = 15000;
const FETCH_PROMPT_MARGIN_MS = 120000;

// Event types forwarded to `slim hook event`. Streaming events (message parts)
// fire many times a second and carry nothing slim acts on.
const FORWARDED_EVENTS = new Set(["session.deleted", "session.idle", "session.status"]);

function registry() {
  let r = globalThis[REGISTRY_KEY];
  if (!(r instanceof Map)) {
    r = new Map();
    globalThis[REGISTRY_KEY] = r;
  }
  return r;
}

function makeLogger(client) {
  const file = process.env.SLIM_PLUGIN_LOG;
  return (level, message, extra) => {
    const line = { time: new Date().toISOString(), level, message, ...(extra || {}) };
    if (file) {
      try {
        appendFileSync(file, JSON.stringify(line) + "\n");
      } catch {
        // logging must never break a tool call
      }
    }
    try {
      const log = client && client.app && client.app.log;
      if (typeof log === "function") {
        const p = log.call(client.app, { body: { service: "slim", level, message, extra } });
        if (p && typeof p.catch === "function") p.catch(() => {});
      }
    } catch {
      // same
    }
  };
}

function isExecutable(file) {
  try {
    if (!statSync(file).isFile()) return false;
    if (process.platform === "win32") return true;
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// findSlim returns the slim binary to run: SLIM_BIN when set, else the first
// `slim` on PATH (with PATHEXT on Windows), else "".
function findSlim() {
  const fromEnv = process.env.SLIM_BIN;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : "";
  const dirs = (process.env.PATH || process.env.Path || "").split(path.delimiter).filter(Boolean);
  const exts =
    process.platform === "win32"
      ? (process.env.PATHEXT || ".EXE;.CMD;.BAT;.COM").split(";").filter(Boolean).concat([""])
      : [""];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.join(dir, "slim" + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return "";
}

// The wake interval: how long an orchestrator session stays idle before
// slim is asked whether to wake it. Five minutes unless
// SLIM_TASKS_WAKE_INTERVAL_MS says otherwise (at least a second).
const WAKE_DEFAULT_MS = 300000;
// The sender's reads (5 s each), its status read and its send (10 s) fit
// well within this; killing it later than its own deadlines is harmless.
const WAKE_LIMIT_MS = 60000;
const ON_WORDS = ["1", "true", "yes", "on"];
const OFF_WORDS = ["0", "false", "no", "off"];

function wakeIntervalMs() {
  const raw = (process.env.SLIM_TASKS_WAKE_INTERVAL_MS || "").trim();
  const n = Number(raw);
  return raw && Number.isInteger(n) && n >= 1000 && n <= 2147483647 ? n : WAKE_DEFAULT_MS;
}

function timeoutMs() {
  const n = Number.parseInt(process.env.SLIM_HOOK_TIMEOUT_MS || "", 10);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_TIMEOUT_MS;
}

// killTree kills child and, on POSIX, every process in its group (slim runs
// as a group leader, so anything it started is in the group unless it left).
function killTree(child) {
  if (GROUPS && child.pid) {
    try {
      process.kill(-child.pid, "SIGKILL");
      return;
    } catch {
      // the group is gone already; fall back to the child itself
    }
  }
  try {
    child.kill("SIGKILL");
  } catch {
    // already gone
  }
}

// termTree asks child and its process group to stop (SIGTERM).
function termTree(child) {
  try {
    if (GROUPS && child.pid) process.kill(-child.pid, "SIGTERM");
    else child.kill("SIGTERM");
  } catch {
    // already gone
  }
}

// runResult is a result in run's shape, with extra's fields set.
function runResult(extra) {
  return { code: null, signal: null, stdout: "", stderr: "", timedOut: false, error: null, ...extra };
}

// run spawns bin with args, writes input (a string, may be empty) to its
// stdin and resolves with {code, signal, stdout, stderr, timedOut, error}. It
// never rejects, and it resolves no later than limitMs after the spawn: when
// the timer fires, or the output grows past MAX_STDOUT_BYTES, the process
// group is killed and the promise resolves at once, without waiting for the
// pipes to close.
//
// An abort signal, when given, sends SIGTERM to the group (slim rolls back a
// write in progress and exits) and kills it ABORT_GRACE_MS later.
function run(bin, args, input, limitMs, abortSignal) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(bin, args, {
        cwd: process.cwd(),
        shell: false,
        windowsHide: true,
        detached: GROUPS,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      resolve({ code: null, stdout: "", stderr: "", timedOut: false, error });
      return;
    }
    const out = [];
    const err = [];
    let outBytes = 0;
    let errBytes = 0;
    let settled = false;
    const result = (extra) => runResult({ stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), ...extra });
    let abortTimer = null;
    const onAbort = () => {
      try {
        if (GROUPS && child.pid) process.kill(-child.pid, "SIGTERM");
        else child.kill("SIGTERM");
      } catch {
        // already gone
      }
      abortTimer = setTimeout(() => killTree(child), ABORT_GRACE_MS);
    };
    const finish = (r) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (abortTimer) clearTimeout(abortTimer);
      if (abortSignal) abortSignal.removeEventListener("abort", onAbort);
      resolve(r);
      // Nothing more is read: drop the pipes so a process that outlived the
      // kill cannot keep this one busy.
      for (const s of [child.stdin, child.stdout, child.stderr]) {
        try {
          s.destroy();
        } catch {
          // already closed
        }
      }
    };
    const timer = setTimeout(() => {
      killTree(child);
      finish(result({ timedOut: true }));
    }, limitMs);
    child.stdout.on("data", (b) => {
      if (settled) return;
      outBytes += b.length;
      if (outBytes > MAX_STDOUT_BYTES) {
        killTree(child);
        finish(result({ error: new Error(`slim printed more than ${MAX_STDOUT_BYTES} bytes`) }));
        return;
      }
      out.push(b);
    });
    child.stderr.on("data", (b) => {
      if (errBytes < MAX_STDERR_BYTES) err.push(b);
      errBytes += b.length;
    });
    for (const s of [child.stdin, child.stdout, child.stderr]) {
      s.on("error", () => {
        // slim exited before reading everything, or the pipe was dropped;
        // the exit code tells the rest
      });
    }
    child.on("error", (error) => finish(result({ stdout: "", stderr: "", error })));
    child.on("exit", (code, signal) => {
      // slim is done: whatever it left running in its group goes too, so the
      // pipes close now rather than when that process exits. A process that
      // left the group may still hold them: slim's answer is already in the
      // pipe, so it is taken after a short grace period instead of waiting.
      if (GROUPS) killTree(child);
      setTimeout(() => finish(result({ code, signal })), EXIT_GRACE_MS).unref();
    });
    child.on("close", (code, signal) => finish(result({ code, signal })));
    if (abortSignal) {
      if (abortSignal.aborted) onAbort();
      else abortSignal.addEventListener("abort", onAbort, { once: true });
    }
    try {
      child.stdin.end(input);
    } catch {
      // reported through the exit code
    }
  });
}

// ---- the resident slim ----

// Requests larger than this go to a process of their own, as before the
// resident slim: they are rare (a large patch), and a frame that size is
// not worth holding up the pipe for.
const SERVE_MAX_BYTES = 1 << 20;
// After this many unexpected exits of the resident slim the plugin stops
// starting it again and runs one process per call for good.
const SERVE_MAX_STARTS = 3;

// runReply turns the resident slim's answer to a run into run's result:
// the exit code and output of the command, as a process would give them.
function runReply(reply) {
  if (!Number.isInteger(reply.exit)) return runResult({ error: new Error("slim's resident answer to a command has no exit code") });
  return runResult({
    code: reply.exit,
    stdout: typeof reply.stdout === "string" ? reply.stdout : "",
    stderr: typeof reply.stderr === "string" ? reply.stderr : "",
  });
}

// SYNC_BLOCK_MS bounds how long a hook blocks the host's event loop while
// it waits on the resident slim's synchronous channel; an answer that
// takes longer is waited for without blocking, up to the hook's timeout.
const SYNC_BLOCK_MS = 250;

// syncCell is what a synchronous wait sleeps on: nothing ever wakes it,
// so Atomics.wait returns at its timeout.
const syncCell = new Int32Array(new SharedArrayBuffer(4));

// syncPipe is the plugin's end of the resident slim's synchronous channel
// (`slim hook serve --sync DIR`): the FIFO DIR/request for frames, DIR/reply
// for their answers, opened without blocking, and read and written with
// plain system calls. A hook that must wait for its answer waits here
// (waitSync) without returning to the host's event loop, which would first
// run whatever other work the host has queued: 10-30 ms a call in a busy
// session, against the fraction of a millisecond slim takes. Until the
// resident has made DIR/request, ready() is false and calls take the
// resident's stdin and stdout. Once both FIFOs are open their names are
// removed (the descriptors stay good), so nothing is left behind.
// send(id, frame, settle) queues a frame; settle gets the parsed answer,
// or null when the channel is gone (the resident exited or printed
// garbage). Answers no one waits for synchronously are picked up by a
// timer, every millisecond while any is outstanding.
function syncPipe(dir) {
  let req = -1;
  let rep = -1;
  let dead = false;
  const out = []; // frames not yet written whole, the first from offset off
  let off = 0;
  const read = replyReader();
  const chunk = Buffer.alloc(64 << 10);
  const waiting = new Map();
  let timer = null;
  const removeNames = () => rmSync(dir, { recursive: true, force: true });
  const die = () => {
    if (dead) return;
    dead = true;
    for (const fd of [req, rep]) {
      if (fd < 0) continue;
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    req = rep = -1;
    if (timer) clearTimeout(timer);
    const settles = [...waiting.values()];
    waiting.clear();
    for (const settle of settles) settle(null);
  };
  const open = () => {
    if (!existsSync(path.join(dir, "request"))) return false;
    try {
      rep = openSync(path.join(dir, "reply"), fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      req = openSync(path.join(dir, "request"), fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
    } catch {
      // The resident is gone or not done making the channel.
      if (rep >= 0) closeSync(rep);
      rep = req = -1;
      return false;
    }
    try {
      unlinkSync(path.join(dir, "request"));
      unlinkSync(path.join(dir, "reply"));
      removeNames();
    } catch {
      // the resident removes what is left when it exits
    }
    return true;
  };
  // step writes what it can and reads every answer there is; false once
  // the channel is gone.
  const step = () => {
    if (dead) return false;
    if (req < 0) return true; // not open yet: nothing sent, nothing to read
    try {
      while (out.length > 0) {
        off += writeSync(req, out[0], off);
        if (off < out[0].length) break;
        out.shift();
        off = 0;
      }
    } catch (e) {
      if (e.code !== "EAGAIN") {
        die();
        return false;
      }
    }
    for (;;) {
      let n;
      try {
        n = readSync(rep, chunk, 0, chunk.length, null);
      } catch (e) {
        if (e.code === "EAGAIN") break;
        die();
        return false;
      }
      if (n === 0) {
        // No writer is left: the resident exited.
        die();
        return false;
      }
      const { replies, error } = read(chunk.subarray(0, n));
      for (const reply of replies) {
        const settle = isPlainObject(reply) ? waiting.get(reply.id) : undefined;
        if (!settle) continue;
        waiting.delete(reply.id);
        settle(reply);
      }
      if (error) {
        die();
        return false;
      }
    }
    return true;
  };
  const tick = () => {
    timer = null;
    if (step() && (waiting.size > 0 || out.length > 0)) schedule();
  };
  const schedule = () => {
    if (!timer && !dead) timer = setTimeout(tick, 1);
  };
  return {
    ready() {
      return !dead && (req >= 0 || open());
    },
    send(id, frame, settle) {
      waiting.set(id, settle);
      out.push(frame);
      step();
      schedule();
    },
    // waitSync sleeps in short steps, reading answers, until done() or
    // until the clock passes until; it reports done().
    waitSync(until, done) {
      for (let n = 0; !done(); n++) {
        if (!step() || performance.now() >= until) return done();
        Atomics.wait(syncCell, 0, 0, n < 25 ? 0.02 : 0.25);
        step();
      }
      return true;
    },
    // pump reads the answers that are there, now.
    pump() {
      step();
    },
    forget(id) {
      waiting.delete(id);
    },
    close() {
      die();
      removeNames();
    },
  };
}

// replyReader splits what the resident slim writes into its answers, one
// JSON line each: read(bytes) returns the answers complete so far and, when
// the stream can no longer be trusted (too much without a line end, a line
// that is not JSON), the reason; the answers before a bad line still count.
function replyReader() {
  const decoder = new StringDecoder("utf8");
  let buf = "";
  return (bytes) => {
    const replies = [];
    buf += decoder.write(bytes);
    if (buf.length > MAX_STDOUT_BYTES) return { replies, error: "it printed too much" };
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        replies.push(JSON.parse(line));
      } catch {
        return { replies, error: "it printed a line that is not JSON" };
      }
    }
    return { replies, error: "" };
  };
}

// hookReply turns the resident slim's answer line to a hook request into
// call's result.
function hookReply(reply) {
  if (isPlainObject(reply.answer)) return { answer: reply.answer };
  if (isPlainObject(reply.error)) return { failure: `slim refused the request (${reply.error.code}): ${reply.error.message}` };
  return { failure: "slim's resident answer has neither answer nor error" };
}

// residentSlim keeps one `slim hook serve` running for this plugin and
// answers hook requests through it: one JSON line {id, phase, request} out,
// one {id, answer|error} back, so that a tool call starts no process.
// call(phase, body, limitMs) resolves with {answer}, {failure, stderr}, or
// {gone: true} when there is no usable resident slim (never started, it
// exited, too many restarts), and then the caller runs its own process.
// A request that is not answered within limitMs is a failure, and the
// resident slim is killed (and started again by the next call): a slim
// that hangs on one request must not hang the next. With syncOn (slim
// lists "serve-sync") it is started with a synchronous channel (syncPipe),
// which now() uses.
function residentSlim(bin, log, syncOn) {
  let child = null;
  let starts = 0;
  let seq = 0;
  let closed = false;
  // id -> {phase, settle, reply}; phase is "run" for a tool's command.
  const pending = new Map();
  // Runs that timed out: no longer awaited, but the resident must still
  // answer them (the stopped command's answer) or be killed.
  const stopped = new Set();
  // lost settles the calls the resident slim will not answer. A before
  // only reads, so it runs again as a process of its own; an after or an
  // event may already have been counted, so it is not run twice: it
  // fails, which lets the call pass. A run may have done part of its work
  // (a task started, a file written and rolled back): it is not run again
  // either, and fails with the reason.
  const lost = (why) => {
    stopped.clear();
    for (const [, p] of pending) {
      if (p.phase === "before") p.settle({ gone: true });
      else if (p.phase === "run") p.settle(runResult({ error: new Error(why) }));
      else p.settle({ failure: why });
    }
    pending.clear();
  };
  // kill stops the resident slim c and settles what it will not answer.
  // With a tool's command in flight it is asked to stop first (SIGTERM to
  // its group: each command stops as on SIGTERM as a process, a replace
  // being written is rolled back) and killed ABORT_GRACE_MS later, so that
  // a hook's timeout or another command's hang does not cut a write short.
  const kill = (c, why) => {
    if (c.slimSync) c.slimSync.close();
    if (child === c) child = null;
    let runs = stopped.size > 0;
    for (const [, p] of pending) if (p.phase === "run") runs = true;
    lost(why);
    log("info", `resident slim stopped: ${why}`, {});
    if (!runs) {
      killTree(c);
      return;
    }
    termTree(c);
    setTimeout(() => killTree(c), ABORT_GRACE_MS).unref();
  };
  const start = () => {
    if (starts >= SERVE_MAX_STARTS) return null;
    starts++;
    let c;
    let syncDir = "";
    try {
      if (syncOn) syncDir = mkdtempSync(path.join(tmpdir(), "slim-serve-"));
    } catch (e) {
      log("info", `no synchronous channel to the resident slim (${e})`, {});
    }
    try {
      const args = syncDir ? ["hook", "serve", "--sync", syncDir] : ["hook", "serve"];
      c = spawn(bin, args, { cwd: process.cwd(), shell: false, windowsHide: true, detached: GROUPS, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      if (syncDir) rmSync(syncDir, { recursive: true, force: true });
      log("info", `resident slim could not start (${e}); one process per call`, {});
      starts = SERVE_MAX_STARTS;
      return null;
    }
    if (syncDir) c.slimSync = syncPipe(syncDir);
    const read = replyReader();
    let errText = "";
    c.stdout.on("data", (b) => {
      if (child !== c) return;
      const { replies, error } = read(b);
      for (const reply of replies) {
        if (isPlainObject(reply)) stopped.delete(reply.id);
        const p = isPlainObject(reply) ? pending.get(reply.id) : undefined;
        if (!p) continue;
        pending.delete(reply.id);
        if (p.phase === "run") p.settle(runReply(reply));
        else p.settle(hookReply(reply));
      }
      if (error) kill(c, error);
    });
    c.stderr.on("data", (b) => {
      if (errText.length < MAX_STDERR_BYTES) errText += b.toString("utf8");
    });
    for (const st of [c.stdin, c.stdout, c.stderr]) {
      st.on("error", () => {
        // the exit says the rest
      });
      if (typeof st.unref === "function") st.unref();
    }
    c.on("error", () => {
      if (child === c) kill(c, "it could not run");
    });
    // Answers still in the pipe when it exits are read first: the calls
    // left are settled once its output is closed.
    c.stdout.on("close", () => {
      // Answers it wrote before it exited are still in the reply FIFO.
      if (c.slimSync) {
        c.slimSync.pump();
        c.slimSync.close();
      }
      if (child !== c) return;
      child = null;
      lost("the resident slim exited before it answered");
      if (!closed) log("info", `resident slim exited${errText ? ": " + errText.trim().slice(0, 500) : ""}`, {});
    });
    // The host may exit whenever it is done: the resident slim does not
    // keep it alive, and leaves when its input closes.
    if (typeof c.unref === "function") c.unref();
    child = c;
    return c;
  };
  return {
    // now sends a hook request down the synchronous channel and, with
    // block, waits for its answer there for up to SYNC_BLOCK_MS without
    // yielding to the host's event loop. It returns the result call would
    // resolve with, or a promise of it (an answer not there by then, or
    // block false), or null when the channel cannot be used (not offered,
    // not open yet, gone): then the caller uses call. The timeout and its
    // kill are call's.
    now(phase, body, limitMs, block) {
      if (closed || !syncOn || Buffer.byteLength(body) > SERVE_MAX_BYTES) return null;
      const c = child || start();
      const pipe = c && c.slimSync;
      if (!pipe || !pipe.ready()) return null;
      const id = ++seq;
      const t0 = performance.now();
      let result = null;
      let later = null;
      pipe.send(id, Buffer.from(`{"id":${id},"phase":${JSON.stringify(phase)},"request":${body}}\n`), (reply) => {
        // A before only reads: without an answer it runs as a process.
        result = reply !== null ? hookReply(reply) : phase === "before" ? { gone: true } : { failure: "the resident slim exited before it answered" };
        if (later) later(result);
      });
      if (block && pipe.waitSync(t0 + Math.min(limitMs, SYNC_BLOCK_MS), () => result !== null)) return result;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          if (result !== null) return;
          pipe.forget(id);
          result = { failure: "slim timed out and was killed" };
          resolve(result);
          kill(c, "a request timed out");
        }, Math.max(0, t0 + limitMs - performance.now()));
        later = (v) => {
          clearTimeout(timer);
          resolve(v);
        };
        if (result !== null) later(result);
      });
    },
    // pump settles the synchronous channel's answers that have arrived.
    pump() {
      if (child && child.slimSync) child.slimSync.pump();
    },
    call(phase, body, limitMs) {
      if (closed || Buffer.byteLength(body) > SERVE_MAX_BYTES) return Promise.resolve({ gone: true });
      const c = child || start();
      if (!c) return Promise.resolve({ gone: true });
      const id = ++seq;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          if (!pending.has(id)) return;
          pending.delete(id);
          resolve({ failure: "slim timed out and was killed" });
          kill(c, "a request timed out");
        }, limitMs);
        pending.set(id, {
          phase,
          settle: (v) => {
            clearTimeout(timer);
            resolve(v);
          },
        });
        try {
          c.stdin.write(`{"id":${id},"phase":${JSON.stringify(phase)},"request":${body}}\n`);
        } catch {
          pending.delete(id);
          clearTimeout(timer);
          resolve({ gone: true });
        }
      });
    },
    // exec runs one of slim's tool commands (args after "slim", input on
    // its stdin) in the resident slim, and resolves as run does, with
    // {code, signal, stdout, stderr, timedOut, error}, or with {gone: true}
    // when there is no usable resident slim (nothing was sent; the caller
    // runs a process). At limitMs it resolves timed out and asks the
    // resident to stop the command; abortSignal asks the same and waits
    // for the command's own answer, as SIGTERM does for a process. A
    // resident that has not answered a stopped command ABORT_GRACE_MS
    // later is killed.
    exec(args, input, limitMs, abortSignal) {
      let frame;
      try {
        frame = JSON.stringify({ args, stdin: input });
      } catch {
        return Promise.resolve({ gone: true });
      }
      if (closed || Buffer.byteLength(frame) > SERVE_MAX_BYTES) return Promise.resolve({ gone: true });
      const c = child || start();
      if (!c) return Promise.resolve({ gone: true });
      const id = ++seq;
      return new Promise((resolve) => {
        let graceTimer = null;
        const stopRun = () => {
          try {
            c.stdin.write(`{"id":${id},"cancel":true}\n`);
          } catch {
            // the exit settles the call
          }
          if (!graceTimer) {
            graceTimer = setTimeout(() => {
              if (child === c && (pending.has(id) || stopped.has(id))) kill(c, "it did not stop a command it was asked to stop");
              stopped.delete(id);
            }, ABORT_GRACE_MS);
            graceTimer.unref();
          }
        };
        const onAbort = () => stopRun();
        const done = (v) => {
          clearTimeout(timer);
          if (abortSignal) abortSignal.removeEventListener("abort", onAbort);
          resolve(v);
        };
        const timer = setTimeout(() => {
          if (!pending.has(id)) return;
          pending.delete(id);
          // The answer is no longer awaited, but the resident must still
          // give one (the stopped command's) within the grace period.
          stopped.add(id);
          stopRun();
          done(runResult({ timedOut: true }));
        }, limitMs);
        pending.set(id, {
          phase: "run",
          settle: (v) => {
            if (graceTimer) clearTimeout(graceTimer);
            done(v);
          },
        });
        try {
          c.stdin.write(`{"id":${id},"run":${frame}}\n`);
        } catch {
          pending.delete(id);
          clearTimeout(timer);
          resolve({ gone: true });
          return;
        }
        if (abortSignal) {
          if (abortSignal.aborted) onAbort();
          else abortSignal.addEventListener("abort", onAbort, { once: true });
        }
      });
    },
    // close ends the resident slim's input, so it answers the calls in
    // flight and leaves; it is killed if it is still there ABORT_GRACE_MS
    // later. Later calls run a process of their own.
    close() {
      closed = true;
      const c = child;
      if (!c) return;
      // The synchronous channel stays open: the answers to the calls in
      // flight there are read until the resident exits.
      try {
        c.stdin.end();
      } catch {
        // already closed
      }
      setTimeout(() => {
        if (child === c) kill(c, "it did not leave after the plugin was disposed");
      }, ABORT_GRACE_MS).unref();
    },
  };
}

// converse runs one `slim hook apply`, a conversation of JSON lines: it
// writes input (the request line) and keeps slim's stdin open. When slim's
// first line arrives, onFirst gets it parsed and resolves with the reply
// line to send, or null to send none; either way stdin is then closed, and
// a slim that got no approval writes nothing. It resolves with {lines,
// code, signal, stderr, timedOut, error} once slim exits, and never
// rejects. firstLimitMs bounds the wait for the first line and restLimitMs
// the rest after the reply; the time onFirst takes (a person answering a
// prompt) is not bounded here. When restLimitMs passes or abortSignal
// fires, slim gets SIGTERM (an apply in progress is rolled back) and its
// group is killed ABORT_GRACE_MS later; a slim that never sends its first
// line is killed at firstLimitMs.
function converse(bin, args, input, firstLimitMs, restLimitMs, abortSignal, onFirst) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(bin, args, { cwd: process.cwd(), shell: false, windowsHide: true, detached: GROUPS, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      resolve({ lines: [], code: null, signal: null, stderr: "", timedOut: false, error });
      return;
    }
    const lines = [];
    const decoder = new StringDecoder("utf8");
    let pending = "";
    let outBytes = 0;
    const err = [];
    let errBytes = 0;
    let settled = false;
    let timer = null;
    let killTimer = null;
    let replied = false;
    const parse = (line) => {
      try {
        return JSON.parse(line);
      } catch {
        return { unparsed: line };
      }
    };
    const finish = (extra) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      if (abortSignal) abortSignal.removeEventListener("abort", terminate);
      pending += decoder.end();
      if (pending.trim() !== "") lines.push(parse(pending));
      resolve({ lines, code: null, signal: null, stderr: Buffer.concat(err).toString("utf8"), timedOut: false, error: null, ...extra });
      for (const st of [child.stdin, child.stdout, child.stderr]) {
        try {
          st.destroy();
        } catch {
          // already closed
        }
      }
    };
    // terminate asks slim to stop (it rolls back), then kills its group.
    function terminate() {
      try {
        if (GROUPS && child.pid) process.kill(-child.pid, "SIGTERM");
        else child.kill("SIGTERM");
      } catch {
        // already gone
      }
      if (!killTimer) {
        killTimer = setTimeout(() => {
          killTree(child);
          finish({ timedOut: true });
        }, ABORT_GRACE_MS);
      }
    }
    timer = setTimeout(() => {
      killTree(child);
      finish({ timedOut: true });
    }, firstLimitMs);
    const reply = (line) => {
      if (settled) return;
      try {
        if (typeof line === "string") child.stdin.end(line + "\n");
        else child.stdin.end();
      } catch {
        // slim is gone; its exit tells the rest
      }
      timer = setTimeout(terminate, restLimitMs);
    };
    child.stdout.on("data", (b) => {
      if (settled) return;
      outBytes += b.length;
      if (outBytes > MAX_STDOUT_BYTES) {
        killTree(child);
        finish({ error: new Error(`slim printed more than ${MAX_STDOUT_BYTES} bytes`) });
        return;
      }
      pending += decoder.write(b);
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        lines.push(parse(pending.slice(0, nl)));
        pending = pending.slice(nl + 1);
        if (!replied) {
          replied = true;
          clearTimeout(timer);
          Promise.resolve()
            .then(() => onFirst(lines[0]))
            .catch(() => null)
            .then(reply);
        }
      }
    });
    child.stderr.on("data", (b) => {
      if (errBytes < MAX_STDERR_BYTES) err.push(b);
      errBytes += b.length;
    });
    for (const st of [child.stdin, child.stdout, child.stderr]) {
      st.on("error", () => {
        // slim exited before reading everything; the exit code tells the rest
      });
    }
    child.on("error", (error) => finish({ error }));
    child.on("exit", (code, signal) => {
      if (GROUPS) killTree(child);
      setTimeout(() => finish({ code, signal }), EXIT_GRACE_MS).unref();
    });
    child.on("close", (code, signal) => finish({ code, signal }));
    if (abortSignal) {
      if (abortSignal.aborted) terminate();
      else abortSignal.addEventListener("abort", terminate, { once: true });
    }
    try {
      child.stdin.write(input);
    } catch {
      // reported through the exit code
    }
  });
}

// applyAnswer reads the result of one `slim hook apply` from its last
// line, or throws the message the model should read: slim's refusal as it
// is, else what became of the process. Nothing here lets a patch through:
// the host's own tool is not there to fall back on.
function applyAnswer(r) {
  if (r.error) throw new Error(`apply_patch: slim could not run: ${r.error.message || r.error}`);
  const last = r.lines.length > 0 ? r.lines[r.lines.length - 1] : null;
  if (isPlainObject(last) && isPlainObject(last.error)) throw new Error(last.error.message || `apply_patch failed (${last.error.code})`);
  if (isPlainObject(last) && last.action === "block") throw new Error(typeof last.message === "string" && last.message ? last.message : "apply_patch blocked");
  if (isPlainObject(last) && last.action === "result" && typeof last.output === "string") return last;
  if (r.timedOut) throw new Error("apply_patch: slim did not answer in time and was stopped");
  const why = r.code === null ? `was stopped (${r.signal})` : `exited with ${r.code}`;
  throw new Error(`apply_patch: slim ${why} without a result${r.stderr ? ": " + r.stderr.trim().slice(0, 2000) : ""}`);
}

// parseAnswer returns the JSON object slim printed when it exited 0, or
// explains in reason why the answer is ignored.
function parseAnswer(result) {
  if (result.error) return { reason: `slim could not run: ${result.error.message || result.error}` };
  if (result.timedOut) return { reason: "slim timed out and was killed" };
  if (result.code !== 0) {
    return { reason: `slim exited with ${result.code === null ? "signal " + result.signal : result.code}`, stderr: result.stderr.slice(0, 2000) };
  }
  let answer;
  try {
    answer = JSON.parse(result.stdout);
  } catch {
    return { reason: "slim printed no valid JSON" };
  }
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
    return { reason: "slim's answer is not a JSON object" };
  }
  return { answer };
}

function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// phasePlan reads the phase table of slim's version answer,
// {default: [phase...], tools: {name: [phase...]}} with lower-cased names
// (a call's tool is looked up lower-cased; a tool not listed has the
// default phases), and returns {needs}, needs(tool, phase) saying whether
// that phase of that tool runs slim. A table that is missing or malformed,
// or that would skip the before of a tool that fails closed, gives
// {reason} instead, saying why: then every phase runs for every tool, as
// before slim had a table.
function phasePlan(answer) {
  const t = answer && answer.phases;
  if (t === undefined) return { reason: "slim gave no phase table" };
  const list = (v) => (Array.isArray(v) && v.every((x) => typeof x === "string") ? new Set(v) : null);
  if (!isPlainObject(t) || !isPlainObject(t.tools)) return { reason: "slim's phase table is not an object with tools" };
  const fallback = list(t.default);
  if (!fallback) return { reason: "slim's phase table has no default list" };
  const tools = new Map();
  for (const [name, v] of Object.entries(t.tools)) {
    const phases = list(v);
    if (!phases || name !== name.toLowerCase()) return { reason: `slim's phase table is malformed at ${JSON.stringify(name)}` };
    tools.set(name, phases);
  }
  const of = (tool) => tools.get(typeof tool === "string" ? tool.toLowerCase() : "") || fallback;
  for (const tool of FAIL_CLOSED_TOOLS) {
    if (!of(tool).has("before")) return { reason: `slim's phase table skips the before of ${tool}` };
  }
  return { needs: (tool, phase) => of(tool).has(phase) };
}

// replaceInPlace makes target hold exactly the keys of source. The host runs
// the tool with its own reference to the args object, so assigning a new
// object to output.args would be ignored.
function replaceInPlace(target, source) {
  for (const key of Object.keys(target)) {
    if (!Object.prototype.hasOwnProperty.call(source, key)) delete target[key];
  }
  Object.assign(target, source);
}


// ---- which afters the call waits for ----

// canonicalJSON is args as slim reads them: what JSON.stringify sends,
// with object keys sorted at every depth and strings made well-formed
// (slim's JSON decoder reads a lone surrogate as U+FFFD, so two strings
// that differ only there are one string to slim; of two keys that become
// one, the later wins, as in slim). Values slim reads as equal give equal
// texts.
function canonicalJSON(v) {
  const text = JSON.stringify(v);
  if (text === undefined) return "";
  const wf = (x) => (typeof x.toWellFormed === "function" ? x.toWellFormed() : x);
  const write = (x) => {
    if (Array.isArray(x)) return "[" + x.map(write).join(",") + "]";
    if (x !== null && typeof x === "object") {
      const fields = new Map();
      for (const [k, y] of Object.entries(x)) fields.set(wf(k), y);
      return "{" + [...fields.keys()].sort().map((k) => JSON.stringify(k) + ":" + write(fields.get(k))).join(",") + "}";
    }
    return JSON.stringify(typeof x === "string" ? wf(x) : x);
  };
  return write(JSON.parse(text));
}

// callKey identifies a call as slim's loop guard compares them: its tool
// (in any case) and its arguments.
function callKey(tool, args) {
  return createHash("sha256")
    .update(String(tool || "").toLowerCase() + "\0" + canonicalJSON(args))
    .digest("hex");
}

// afterWaits decides, per session, whether a tool call waits for slim's
// answer to its after. Waiting is what costs: the host records a call's
// result only after its after hooks return, and an after hook that waits
// for an answer hands the host's event loop back, so the call's result
// waits behind whatever the host does meanwhile, 10-30 ms a call on a busy
// machine where slim answers in about 1 ms. slim's after changes a call
// in one way only: its loop guard appends a notice to the result of a call
// that repeats, with the same arguments and result, the calls just before
// it in the session. So an after is waited for when its tool and arguments
// repeat any call this plugin saw in the session (not only the last one:
// parallel calls may reach slim in another order than they were sent), and
// while no after of the session has been answered here (a session from an
// earlier host process may be in the middle of a run). Every other after
// is sent, and the call returns without its answer; the session's next
// before, or apply, first waits for those answers, so it still reads every
// count an earlier after made. This holds only for afters the resident
// slim answers (see the after hook).
function afterWaits() {
  const sessions = new Map();
  const of = (id) => {
    const key = typeof id === "string" ? id : "";
    let s = sessions.get(key);
    if (!s) {
      s = { seen: new Set(), answered: false, inflight: new Set() };
      sessions.set(key, s);
    }
    return s;
  };
  return {
    // wait records the after of a call and reports whether the call must
    // wait for its answer.
    wait(sessionID, tool, args) {
      const s = of(sessionID);
      let key;
      try {
        key = callKey(tool, args);
      } catch {
        // Arguments JSON cannot encode: the request fails the same way,
        // and the call reports it as always.
        return true;
      }
      const repeat = s.seen.has(key);
      s.seen.add(key);
      return repeat || !s.answered;
    },
    // answered notes that an after of the session has its answer.
    answered(sessionID) {
      of(sessionID).answered = true;
    },
    // unawaited keeps p, an after no call waits for, until it settles.
    unawaited(sessionID, p) {
      const s = of(sessionID);
      s.inflight.add(p);
      p.finally(() => s.inflight.delete(p));
    },
    // settled resolves once the session's afters that no call waited for
    // have their answers.
    async settled(sessionID) {
      const s = sessions.get(typeof sessionID === "string" ? sessionID : "");
      if (s && s.inflight.size > 0) await Promise.all([...s.inflight]);
    },
    forget(sessionID) {
      sessions.delete(typeof sessionID === "string" ? sessionID : "");
    },
  };
}

// ---- the ast-grep tools ----

// stringList reads a tool argument that should be a list of strings; the
// host validates nothing, so a lone string counts as a list of one.
function stringList(v, name) {
  if (v === undefined || v === null) return [];
  if (typeof v === "string") return v === "" ? [] : [v];
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.filter((x) => x !== "");
  throw new Error(`${name} must be a list of strings`);
}

function requireString(v, name, tool) {
  if (typeof v !== "string" || v === "") throw new Error(`${tool}: ${name} is required and must be a string`);
  return v;
}

function readOnlyAgents() {
  const extra = (process.env.SLIM_READ_ONLY_AGENTS || "").split(",").map((s) => s.trim()).filter(Boolean);
  return new Set([...READ_ONLY_AGENTS, ...extra]);
}

// nodeBins are the node_modules/.bin directories slim may find ast-grep in
// after PATH: the session directory's, the worktree's, and the one beside
// this plugin's config directory (.opencode/node_modules/.bin).
function nodeBins(...dirs) {
  let here = "";
  try {
    here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin");
  } catch {
    // not loaded from a file
  }
  const out = [];
  for (const d of [...dirs.filter(Boolean).map((d) => path.join(d, "node_modules", ".bin")), here]) {
    if (d && !out.includes(d)) out.push(d);
  }
  return out;
}

const SEARCH_DESCRIPTION =
  "Search code structurally with ast-grep: the pattern is code with metavariables ($NAME matches one node, " +
  "$$$NAME any number of nodes) and must parse as one complete node of the language, for example " +
  "`console.log($MSG)`, `def $FUNC($$$ARGS)` or `if err != nil { return $E }`. Matches are listed by file with " +
  "their line numbers (at most 500). Runs in the session directory.";
const REPLACE_DESCRIPTION =
  "Rewrite code structurally with ast-grep: every match of the pattern is replaced by the rewrite, in which the " +
  "pattern's metavariables stand for what they matched (for example pattern `console.log($MSG)`, rewrite " +
  "`logger.info($MSG)`). By default (dryRun true) it only shows the changes; with dryRun false it writes them, " +
  "every file or none, and only inside the worktree. Files keep their line endings.";

// astArgs are the ast tools' arguments. languages are the values of lang,
// as slim's version answer lists them (slim checks lang in any case).
function astArgs(withRewrite, languages) {
  const args = {
    pattern: { type: "string", description: "The AST pattern, with $VAR and $$$VAR metavariables; it must be a complete node" },
  };
  if (withRewrite) args.rewrite = { type: "string", description: "The replacement, using the pattern's metavariables" };
  args.lang = { type: "string", description: "The language of the files to search" };
  if (languages.length > 0) args.lang.enum = languages;
  args.paths = { type: "array", items: { type: "string" }, description: 'Files or directories to search, relative to the project (default ["."])' };
  args.globs = { type: "array", items: { type: "string" }, description: "Globs that include files, or exclude them with a leading !" };
  if (withRewrite) {
    args.dryRun = { type: "boolean", description: "Only show the changes (default true); false writes them" };
  } else {
    args.context = { type: "number", description: "Lines of context to show around each match" };
  }
  return args;
}

// astSchema is the schema the model sees: only the pattern, the language
// (and the rewrite) are required; the plain argument shape would make
// every argument required.
function astSchema(withRewrite, languages) {
  return {
    type: "object",
    properties: astArgs(withRewrite, languages),
    required: withRewrite ? ["pattern", "rewrite", "lang"] : ["pattern", "lang"],
  };
}

// toolAnswer reads the JSON answer of one slim run for a tool, or throws
// the error the model should read: slim's own message when it gave one,
// else what became of the process (with the start of its stderr).
function toolAnswer(tool, result, limitMs) {
  if (result.error) throw new Error(`${tool}: slim could not run: ${result.error.message || result.error}`);
  if (result.timedOut) throw new Error(`${tool}: slim did not answer within ${Math.round(limitMs / 1000)} s and was stopped`);
  let answer;
  try {
    answer = JSON.parse(result.stdout);
  } catch {
    const why = result.code === null ? `was stopped (${result.signal})` : `exited with ${result.code}`;
    throw new Error(`${tool}: slim ${why} without an answer${result.stderr ? ": " + result.stderr.trim().slice(0, 2000) : ""}`);
  }
  if (answer && answer.error) throw new Error(answer.error.message || `${tool} failed (${answer.error.code})`);
  if (!isPlainObject(answer)) throw new Error(`${tool}: slim gave no output`);
  return answer;
}

// ---- the webfetch tool ----

const FETCH_DESCRIPTION =
  "Fetch a web page and read its main content. By default you get the page as markdown with navigation, " +
  "sidebars and footers removed (code blocks keep their language), behind a metadata block (--- requested_url, " +
  "final_url, title, ... ---); format text or html, extract_main false (the whole page) and include_metadata " +
  "false change that. A redirect to another host is not followed: the result names the redirect URL, and you " +
  "call webfetch again with that URL if you want it. Documentation sites may be answered from their llms.txt " +
  "(prefer_llms_txt). A binary file (PDF, image, archive) is described, not shown; save_binary true also saves " +
  "it and gives its path. With a prompt, a smaller model answers the prompt from the page instead. Private and " +
  "loopback addresses are refused unless the user allowed them.";

function fetchArgs() {
  return {
    url: { type: "string", description: "The http or https URL to fetch" },
    format: { type: "string", enum: ["markdown", "text", "html"], description: "The format of the content (default markdown)" },
    timeout: { type: "number", description: "Seconds for the whole fetch (default 30, at most 120)" },
    prompt: { type: "string", description: "A question or extraction task a smaller model answers from the page instead of returning it" },
    extract_main: { type: "boolean", description: "Keep only the main content (default true); false converts the whole page" },
    prefer_llms_txt: { type: "string", enum: ["auto", "always", "never"], description: "Use the site's llms.txt instead of the page: auto (documentation sites, the default), always, never" },
    include_metadata: { type: "boolean", description: "Put the metadata block before the content (default true)" },
    save_binary: { type: "boolean", description: "Save a binary file (up to 10 MiB) and return its path (default false)" },
  };
}

// fetchSchema is the schema the model sees: only url is required (the
// plain argument shape would make every argument required).
function fetchSchema() {
  return { type: "object", properties: fetchArgs(), required: ["url"] };
}

// fetchContext are the host's context flags of `slim fetch`: the server a
// secondary model is reached through, the calling session and its
// directory. They come from the host, never from the model's arguments.
function fetchContext(pctx, pluginDir, tctx) {
  const out = [];
  if (pctx.serverUrl) out.push("--opencode-url", String(pctx.serverUrl));
  if (tctx && typeof tctx.sessionID === "string" && tctx.sessionID) out.push("--session-id", tctx.sessionID);
  const dir = (tctx && typeof tctx.directory === "string" && tctx.directory) || pluginDir;
  if (dir) out.push("--directory", dir);
  return out;
}

// fetchLimitMs is how long the plugin waits for `slim fetch`: the fetch's
// own time limit (slim refuses one out of range, so it is only clamped
// here) plus a margin, more when a prompt brings in the secondary model.
function fetchLimitMs(args, plan) {
  const n = Number(args.timeout);
  const s = args.timeout !== undefined && args.timeout !== null && Number.isFinite(n) && n > 0 ? Math.min(n, FETCH_MAX_TIMEOUT_S) : FETCH_DEFAULT_TIMEOUT_S;
  const prompt = typeof plan.prompt === "string" && plan.prompt.trim() !== "";
  return Math.ceil(s * 1000) + FETCH_MARGIN_MS + (prompt ? FETCH_PROMPT_MARGIN_MS : 0);
}

// externalUserMessage reports whether a chat message came from the user:
// a user message with at least one part the user wrote (text, a file or an
// image, not synthetic) and no part slim or another plugin injected.
function externalUserMessage(output) {
  if (!output || !Array.isArray(output.parts) || output.parts.length === 0) return false;
  const role = isPlainObject(output.message) ? output.message.role : undefined;
  if (role !== undefined && role !== "user") return false;
  let real = false;
  for (const part of output.parts) {
    if (!isPlainObject(part)) continue;
    const meta = isPlainObject(part.metadata) ? part.metadata : {};
    const nested = isPlainObject(meta["oh-my-opencode-slim"]) ? meta["oh-my-opencode-slim"] : {};
    if (meta["oh-my-opencode-slim.internalInitiator"] === true || nested.internalInitiator === true || meta.compaction_continue === true) return false;
    if (part.synthetic === true) continue;
    if ((part.type === "text" && typeof part.text === "string" && part.text.trim() !== "") || part.type === "file" || part.type === "image") real = true;
  }
  return real;
}

// ---- apply mode: the apply_patch tool ----

// In apply mode the plugin registers a tool named apply_patch, which takes
// the place of the host's own: slim applies the patch itself, every file or
// none, byte for byte (line endings, final newline and BOM kept), and runs
// the formatters the host would have run. It is off unless the settings
// file beside this plugin (slim.json, written by `slim hooks install
// --opencode --apply`) says {"apply": true}; SLIM_APPLY=1 or 0 in the
// host's environment overrides the file.
const SETTINGS_FILE = "slim.json";
const MAX_SETTINGS_BYTES = 64 << 10;
// An apply, with the formatters it runs (10 s each at most), gets this
// long before slim is asked to stop (SIGTERM rolls a write in progress
// back); it is killed ABORT_GRACE_MS later.
const APPLY_TIMEOUT_MS = 300000;

const APPLY_ARGS = {
  patchText: { type: "string", description: "The full patch text that describes all changes to be made" },
};

// The host's own description of apply_patch (its patch grammar) replaces
// this one as soon as the host shows it (see tool.definition); this one is
// for a host that does not.
const APPLY_DESCRIPTION =
  "Edit files with a patch. The patch is plain text in this envelope:\n" +
  "*** Begin Patch\n[one or more file operations]\n*** End Patch\n" +
  "Each file operation starts with a header line naming its action:\n" +
  "*** Add File: <path> creates a file; every line after it is the new content, each prefixed with +.\n" +
  "*** Delete File: <path> removes a file; nothing follows.\n" +
  "*** Update File: <path> changes a file in place, optionally followed by *** Move to: <new path> to rename it. " +
  "Its changes come in chunks: an @@ line (optionally naming a line such as a function header, to say where), " +
  "then the chunk's lines, each prefixed with a space (a line kept as it is), - (a line removed) or + (a line added). " +
  "Give about three kept lines around each change so the place is unique; *** End of File after a chunk ties it to the end of the file.\n" +
  "Example:\n*** Begin Patch\n*** Add File: notes.txt\n+first line\n*** Update File: src/app.py\n@@ def greet():\n" +
  "-    print(\"Hi\")\n+    print(\"Hello\")\n*** Delete File: old.txt\n*** End Patch\n" +
  "Remember: every action needs its header, and added lines need the + prefix, in a new file too. " +
  "Every file of a patch is written or none is.";

// applySetting reads whether apply mode is on: SLIM_APPLY when it is set,
// else the settings file beside this plugin. It returns {on, from}.
function applySetting() {
  const env = (process.env.SLIM_APPLY || "").trim().toLowerCase();
  if (ON_WORDS.includes(env)) return { on: true, from: "SLIM_APPLY" };
  if (OFF_WORDS.includes(env)) return { on: false, from: "SLIM_APPLY" };
  let file;
  try {
    file = path.join(path.dirname(fileURLToPath(import.meta.url)), SETTINGS_FILE);
  } catch {
    return { on: false, from: "" };
  }
  let text;
  try {
    const st = statSync(file);
    if (!st.isFile()) return { on: false, from: "", error: `${file} is not a regular file` };
    if (st.size > MAX_SETTINGS_BYTES) return { on: false, from: "", error: `${file} is larger than ${MAX_SETTINGS_BYTES} bytes` };
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (e && e.code === "ENOENT") return { on: false, from: "" };
    return { on: false, from: "", error: `${file} could not be read (${e})` };
  }
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    return { on: false, from: "", error: `${file} is not valid JSON` };
  }
  if (!isPlainObject(v) || (v.apply !== undefined && typeof v.apply !== "boolean")) {
    return { on: false, from: "", error: `${file}: "apply" must be true or false` };
  }
  return { on: v.apply === true, from: file };
}

// ---- the background task tools ----

// The tools slim gives the orchestrator over background tasks (the host's
// own task tool starts them; slim tracks them from its output). Each runs
// `slim tasks CMD` with one JSON request on stdin; slim's answer is the
// text the model reads, and a refusal is thrown with slim's message.
const TASK_ID_ARG = { type: "string", description: "The task ID (ses_...) or its alias (exp-1, fix-2, ...)" };
const TASK_TOOLS = {
  task_status: {
    cmd: "status",
    limitMs: 30000,
    description:
      "Show a background task's state: busy or retry while the host runs it, its outcome (completed, error, cancelled) " +
      "once it finished, or the last known state marked unconfirmed when the host cannot confirm it; also its agent, " +
      "when it last showed activity and whether it may be stuck. It never waits and never changes the task.",
    args: { task_id: TASK_ID_ARG },
    required: ["task_id"],
  },
  task_result: {
    cmd: "result",
    limitMs: 30000,
    description:
      "Read the final answer of a finished background task. A task still running is reported as running (wait for it); " +
      "a failed or cancelled one is an error that says so. It never prompts the task.",
    args: { task_id: TASK_ID_ARG },
    required: ["task_id"],
  },
  task_message: {
    cmd: "message",
    limitMs: 30000,
    description:
      "Queue a short note (at most 500 characters) for a running background task without interrupting or restarting it; " +
      "it reads the note when it next looks at its messages.",
    args: { task_id: TASK_ID_ARG, message: { type: "string", description: "The note, 1-500 characters" } },
    required: ["task_id", "message"],
  },
  task_cancel: {
    cmd: "cancel",
    limitMs: 60000,
    description:
      "Stop a running background task's current run and verify that it stayed stopped. The session is kept, so " +
      "task_revive can resume it later; edits it made are not undone.",
    args: { task_id: TASK_ID_ARG, reason: { type: "string", description: "Why, kept with the task (optional)" } },
    required: ["task_id"],
  },
  task_revive: {
    cmd: "revive",
    limitMs: 90000,
    description:
      "Resume a finished, failed, cancelled or stopped background task in its own session with a new instruction (a " +
      "running one is cancelled first). Do not launch a duplicate task instead.",
    args: { task_id: TASK_ID_ARG, prompt: { type: "string", description: "The new instruction for the task" } },
    required: ["task_id", "prompt"],
  },
  wait_for_user: {
    cmd: "wait-for-user",
    limitMs: 30000,
    description:
      "Call as your final action after you have given the user manual steps to carry out, to wait for them: nothing " +
      "wakes you until the user writes again. Not for waiting on background tasks; for a quick choice ask a question instead.",
    args: { reason: { type: "string", description: "What you are waiting for the user to do, 1-500 characters" } },
    required: ["reason"],
  },
};

// taskRequest is the request `slim tasks` reads: the model's arguments and
// the call's place in the host, which never comes from the model.
function taskRequest(args, tctx, pctx, pluginDir) {
  const t = tctx || {};
  const context = {
    sessionID: typeof t.sessionID === "string" ? t.sessionID : "",
    directory: (typeof t.directory === "string" && t.directory) || pluginDir || process.cwd(),
  };
  if (typeof t.agent === "string" && t.agent) context.agent = t.agent;
  if (typeof t.callID === "string" && t.callID) context.callID = t.callID;
  if (typeof t.messageID === "string" && t.messageID) context.messageID = t.messageID;
  return { args: isPlainObject(args) ? args : {}, context, host: { serverUrl: pctx.serverUrl ? String(pctx.serverUrl) : "", flavor: "v1" } };
}

// taskAnswer turns one `slim tasks` run into the tool's text, or throws
// the message the model should read.
function taskAnswer(tool, result, limitMs) {
  if (result.error) throw new Error(`${tool}: slim could not run: ${result.error.message || result.error}`);
  if (result.timedOut) throw new Error(`${tool}: slim did not answer within ${Math.round(limitMs / 1000)} s and was stopped`);
  if (result.code === 0) return result.stdout.replace(/\n$/, "");
  const msg = result.stderr.trim().slice(0, 4000);
  if (result.code === 1 && msg) throw new Error(msg);
  const why = result.code === null ? `was stopped (${result.signal})` : `exited with ${result.code}`;
  throw new Error(`${tool}: slim ${why}${msg ? ": " + msg : ""}`);
}

export const SlimPlugin = async (input) => {
  const ctx = input || {};
  const log = makeLogger(ctx.client);
  const directory = typeof ctx.directory === "string" ? ctx.directory : "";
  const reg = registry();
  if (reg.has(directory)) {
    log("info", "slim plugin already registered for this directory; this copy stays idle", { directory });
    return {};
  }
  // Claim the directory before the first await, so two copies initialised
  // at the same time cannot both register.
  const owner = Symbol("slim plugin instance");
  reg.set(directory, owner);
  const disable = (message, extra) => {
    if (reg.get(directory) === owner) reg.delete(directory);
    log("warn", message, extra);
    return {};
  };

  const bin = findSlim();
  if (!bin) {
    return disable("slim not found (set SLIM_BIN or put slim on PATH); the plugin is disabled", { directory });
  }
  const probe = parseAnswer(await run(bin, ["version", "--json"], "", timeoutMs()));
  if (!probe.answer || probe.answer.protocol !== PROTOCOL) {
    return disable("slim does not speak hook protocol 1; the plugin is disabled", {
      bin,
      reason: probe.reason || `protocol ${JSON.stringify(probe.answer && probe.answer.protocol)}`,
    });
  }

  // The ast-grep languages slim takes, from its version answer (no copy to
  // keep in step here).
  const languages = Array.isArray(probe.answer.languages) ? probe.answer.languages.filter((l) => typeof l === "string") : [];

  // Which phases of which tools run slim, from the same answer.
  const plan = phasePlan(probe.answer);
  if (!plan.needs) log("info", `${plan.reason}; every tool call runs every phase`, { bin });
  const needs = plan.needs || (() => true);

  // The resident slim answers the hook phases without a process per call,
  // when this slim offers it and SLIM_SERVE is not 0.
  const serveOff = OFF_WORDS.includes((process.env.SLIM_SERVE || "").trim().toLowerCase());
  // Where slim offers it (and SLIM_SERVE_SYNC is not 0), the hooks a call
  // waits for go down the resident's synchronous channel.
  const features = Array.isArray(probe.answer.features) ? probe.answer.features : [];
  const syncOff = OFF_WORDS.includes((process.env.SLIM_SERVE_SYNC || "").trim().toLowerCase());
  const syncOn = !syncOff && process.platform !== "win32" && features.includes("serve-sync");
  const resident = !serveOff && features.includes("serve") ? residentSlim(bin, log, syncOn) : null;

  // The resident slim also runs the commands behind the plugin's own tools
  // that slim says it serves (`served` in its version answer: "fetch",
  // "search ast", "tasks status", ...): such a tool call starts no slim
  // process either.
  const served = new Set(resident !== null && Array.isArray(probe.answer.served) ? probe.answer.served : []);

  // runTool runs one of slim's tool commands, in the resident slim when
  // slim serves it, else as a process of its own; either way the result
  // has run's shape.
  const runTool = async (argv, input, limitMs, abortSignal) => {
    if (served.has(argv[0] === "fetch" ? "fetch" : argv.slice(0, 2).join(" "))) {
      const r = await resident.exec(argv, input, limitMs, abortSignal);
      if (!r.gone) return r;
    }
    return run(bin, argv, input, limitMs, abortSignal);
  };

  const afters = afterWaits();
  // Whether a call may finish before its after's answer: only when slim's
  // phase table says that an after changes nothing but a repeated call.
  const aftersMayTrail = isPlainObject(probe.answer.phases) && probe.answer.phases.afterChanges === "repeats";
  // Tools whose after may change any call of theirs (the host's task, whose
  // output slim may add a note to): always waited for.
  const afterAlways = new Set(
    isPlainObject(probe.answer.phases) && Array.isArray(probe.answer.phases.afterAlways)
      ? probe.answer.phases.afterAlways.filter((t) => typeof t === "string")
      : [],
  );

  const host = () => ({
    flavor: "v1",
    platform: process.platform,
    directory,
    worktree: typeof ctx.worktree === "string" ? ctx.worktree : "",
    cwd: process.cwd(),
    serverUrl: ctx.serverUrl ? String(ctx.serverUrl) : "",
  });

  // ask runs one `slim hook <phase>` and returns {answer} with slim's answer,
  // or {failure} saying why there is none (logged by the caller). A call
  // that waits for the answer (wait "block": a before, an after whose
  // answer can change the call) has it from the resident slim's
  // synchronous channel when there is one; an after no call waits for
  // (wait "send") goes there too, so that the next before can pick up its
  // answer at once (resident.pump); events take the resident's stdin.
  const ask = async (phase, request, wait) => {
    let body;
    try {
      body = JSON.stringify(request);
    } catch (e) {
      return { failure: `the request could not be encoded (${e})` };
    }
    let answer;
    let served = resident && wait ? resident.now(phase, body, timeoutMs(), wait === "block") : null;
    if (served && typeof served.then === "function") served = await served;
    if (!served) served = resident ? await resident.call(phase, body, timeoutMs()) : { gone: true };
    if (served.gone) {
      const result = await run(bin, ["hook", phase], body, timeoutMs());
      const parsed = parseAnswer(result);
      if (!parsed.answer) return { failure: parsed.reason, stderr: parsed.stderr };
      answer = parsed.answer;
    } else if (served.failure) {
      return { failure: served.failure };
    } else {
      answer = served.answer;
    }
    if (answer.v !== PROTOCOL) return { failure: `slim answered with protocol version ${JSON.stringify(answer.v)}` };
    if (Array.isArray(answer.notes) && answer.notes.length > 0) {
      log("info", "slim notes", { phase, tool: request.tool, notes: answer.notes });
    }
    return { answer };
  };

  // askQuiet is ask for the phases that never stop a call: a failure is
  // logged and gives null.
  const askQuiet = async (phase, request, wait) => {
    const r = await ask(phase, request, wait);
    if (r.failure) {
      log("warn", `${r.failure}; passing`, { phase, tool: request.tool, callID: request.callID, stderr: r.stderr });
      return null;
    }
    return r.answer;
  };


  // runSearch runs one `slim search ast|replace --json` for a tool call and
  // returns slim's JSON answer, or throws with slim's message.
  const runSearch = async (tool, sub, args, tctx, extra) => {
    const dir = (tctx && typeof tctx.directory === "string" && tctx.directory) || directory || process.cwd();
    const wt = tctx && typeof tctx.worktree === "string" && tctx.worktree !== "/" ? tctx.worktree : "";
    const argv = ["search", sub, "--json", "--root", dir];
    argv.push("--pattern", requireString(args.pattern, "pattern", tool));
    argv.push("--lang", requireString(args.lang, "lang", tool));
    for (const p of stringList(args.paths, "paths")) argv.push("--paths", p);
    for (const g of stringList(args.globs, "globs")) argv.push("--globs", g);
    for (const d of nodeBins(dir, wt)) argv.push("--node-bin", d);
    argv.push(...extra);
    const answer = toolAnswer(tool, await runTool(argv, "", AST_TIMEOUT_MS, tctx && tctx.abort), AST_TIMEOUT_MS);
    if (typeof answer.output !== "string") throw new Error(`${tool}: slim gave no output`);
    return answer;
  };

  // runFetch runs one `slim fetch --json [--plan] -` with the tool's
  // arguments on stdin and returns slim's JSON answer, or throws with
  // slim's message. Only the host's context goes on the command line.
  const runFetch = async (args, tctx, opts) => {
    let input;
    try {
      input = JSON.stringify(args);
    } catch (e) {
      throw new Error(`webfetch: the arguments could not be encoded (${e})`);
    }
    const argv = ["fetch", "--json"];
    if (opts.plan) argv.push("--plan");
    else argv.push(...fetchContext(ctx, directory, tctx));
    argv.push("-");
    return toolAnswer("webfetch", await runTool(argv, input, opts.limitMs, tctx && tctx.abort), opts.limitMs);
  };

  const tools = {
    ast_grep_search: {
      description: SEARCH_DESCRIPTION,
      args: astArgs(false, languages),
      async execute(args, tctx) {
        args = isPlainObject(args) ? args : {};
        const extra = [];
        const n = Number(args.context);
        if (args.context !== undefined && args.context !== null && Number.isFinite(n) && n > 0) extra.push("--context", String(Math.floor(n)));
        const answer = await runSearch("ast_grep_search", "ast", args, tctx, extra);
        return {
          title: `ast-grep ${args.pattern}`,
          output: answer.output,
          metadata: { total: answer.total, files: answer.files, truncated: answer.truncated },
        };
      },
    },
    ast_grep_replace: {
      description: REPLACE_DESCRIPTION,
      args: astArgs(true, languages),
      async execute(args, tctx) {
        args = isPlainObject(args) ? args : {};
        const agent = tctx && typeof tctx.agent === "string" ? tctx.agent : "";
        if (agent && readOnlyAgents().has(agent)) {
          throw new Error(`ast_grep_replace is denied for the read-only agent "${agent}": it may search (ast_grep_search) but not change files.`);
        }
        if (typeof args.rewrite !== "string") throw new Error("ast_grep_replace: rewrite is required and must be a string");
        const rewrite = ["--rewrite", args.rewrite];
        // The host applies no defaults: only an explicit false writes.
        const dry = await runSearch("ast_grep_replace", "replace", args, tctx, rewrite);
        const files = Array.isArray(dry.files) ? dry.files : [];
        if (args.dryRun !== false || files.length === 0) {
          return { title: `ast-grep replace (dry run) ${args.pattern}`, output: dry.output, metadata: { diff: dry.diff || "", total: dry.total, dryRun: true } };
        }
        // The host asks nothing for a plugin tool by itself: ask for the
        // edit permission, as its own edit tools do, before writing. A host
        // that cannot be asked gets no write.
        if (!tctx || typeof tctx.ask !== "function") {
          throw new Error("ast_grep_replace: this host offers no way to ask for the edit permission, so nothing was written.");
        }
        await tctx.ask({
          permission: "edit",
          patterns: files.map((f) => f.path),
          always: ["*"],
          metadata: { diff: dry.diff || "", files: files.map((f) => f.abs) },
        });
        // Only the approved files may change; if the files moved on in the
        // meantime slim refuses rather than write something else.
        const approved = files.flatMap((f) => ["--approved", f.abs]);
        const applied = await runSearch("ast_grep_replace", "replace", args, tctx, [...rewrite, "--apply", ...approved]);
        return {
          title: `ast-grep replace ${args.pattern}`,
          output: applied.output,
          metadata: { diff: dry.diff || "", total: applied.total, files: (applied.files || []).map((f) => f.abs), dryRun: false },
        };
      },
    },
    webfetch: {
      description: FETCH_DESCRIPTION,
      args: fetchArgs(),
      async execute(args, tctx) {
        args = isPlainObject(args) ? args : {};
        // The host asks nothing for a plugin tool by itself, and a user's
        // webfetch rules must keep working: no way to ask, no fetch.
        if (!tctx || typeof tctx.ask !== "function") {
          throw new Error("webfetch: this host offers no way to ask for the webfetch permission, so nothing was fetched.");
        }
        // slim decides which URLs the call may contact (the page, its http
        // form, the site's llms.txt); the permission is asked for exactly those.
        const plan = await runFetch(args, tctx, { plan: true, limitMs: timeoutMs() });
        if (!Array.isArray(plan.patterns) || plan.patterns.length === 0 || typeof plan.url !== "string") {
          throw new Error("webfetch: slim gave no permission plan");
        }
        await tctx.ask({
          permission: "webfetch",
          patterns: plan.patterns,
          always: Array.isArray(plan.always) ? plan.always : plan.patterns,
          metadata: {
            url: plan.url,
            requested_url: plan.requested_url,
            fallback_url: plan.fallback_url,
            llms_probe_enabled: plan.llms_probe_enabled,
            format: plan.format,
            prompt: plan.prompt,
          },
        });
        try {
          if (typeof tctx.metadata === "function") tctx.metadata({ title: `webfetch ${plan.url}` });
        } catch {
          // a progress title is optional
        }
        const answer = await runFetch(args, tctx, { plan: false, limitMs: fetchLimitMs(args, plan) });
        if (answer.ok !== true || typeof answer.output !== "string") throw new Error("webfetch: slim gave no output");
        return {
          title: typeof answer.title === "string" && answer.title ? answer.title : plan.url,
          output: answer.output,
          metadata: isPlainObject(answer.metadata) ? answer.metadata : {},
        };
      },
    },
  };

  for (const [name, spec] of Object.entries(TASK_TOOLS)) {
    tools[name] = {
      description: spec.description,
      args: spec.args,
      async execute(args, tctx) {
        const input = JSON.stringify(taskRequest(args, tctx, ctx, directory));
        const output = taskAnswer(name, await runTool(["tasks", spec.cmd], input, spec.limitMs, tctx && tctx.abort), spec.limitMs);
        return { title: `${name}${isPlainObject(args) && typeof args.task_id === "string" ? " " + args.task_id : ""}`, output, metadata: {} };
      },
    };
  }

  // Apply mode: slim writes apply_patch's files itself. One `slim hook
  // apply` runs the whole call: it checks the patch, says which edit
  // permission to ask for (the host asks nothing for a plugin tool), and
  // once the plugin has asked and answers, writes exactly what was
  // approved and says what the model reads.
  const applySet = applySetting();
  if (applySet.error) log("warn", `apply mode setting ignored: ${applySet.error}`, {});
  const applyMode = applySet.on && features.includes("apply");
  if (applySet.on && !applyMode) log("info", "this slim cannot apply patches itself; the host's own apply_patch stays", { bin });
  let hostApplyDescription = "";
  // The calls this plugin's apply_patch ran. An apply_patch after hook for
  // any other call means the host ran its own tool despite the
  // replacement: from then on its calls are checked before they run, as
  // without apply mode.
  const appliedCalls = new Set();
  let replacementHeld = true;
  if (applyMode) {
    tools.apply_patch = {
      description: APPLY_DESCRIPTION,
      args: APPLY_ARGS,
      async execute(args, tctx) {
        args = isPlainObject(args) ? args : {};
        if (typeof args.patchText !== "string" || args.patchText === "") throw new Error("patchText is required");
        if (!tctx || typeof tctx.ask !== "function") {
          throw new Error("apply_patch: this host offers no way to ask for the edit permission, so nothing was written.");
        }
        const t = tctx;
        const callID = typeof t.callID === "string" ? t.callID : "";
        // The host runs no after hook for a call whose execute threw.
        if (callID) appliedCalls.add(callID);
        try {
          return await applyCall(t, args);
        } catch (e) {
          appliedCalls.delete(callID);
          throw e;
        }
      },
    };
  }

  // applyCall is apply mode's apply_patch call: one `slim hook apply`.
  async function applyCall(t, args) {
    const request = {
      v: PROTOCOL,
      phase: "apply",
      host: { ...host(), directory: (typeof t.directory === "string" && t.directory) || directory, worktree: typeof t.worktree === "string" ? t.worktree : host().worktree },
      tool: "apply_patch",
      sessionID: typeof t.sessionID === "string" ? t.sessionID : "",
      callID: typeof t.callID === "string" ? t.callID : "",
      args: { patchText: args.patchText },
    };
    await afters.settled(request.sessionID);
    let asked = null;
    const r = await converse(bin, ["hook", "apply"], JSON.stringify(request) + "\n", timeoutMs(), APPLY_TIMEOUT_MS, t.abort, async (first) => {
      if (!first || first.action !== "ask" || !isPlainObject(first.ask)) return null;
      // A refusal here (the user, or an edit rule) ends the call; slim
      // sees its input end and writes nothing.
      try {
        await t.ask(first.ask);
      } catch (e) {
        asked = e;
        return null;
      }
      return JSON.stringify({ approve: true });
    });
    if (asked) throw asked;
    const answer = applyAnswer(r);
    if (answer.notes && answer.notes.length > 0) log("info", "slim notes", { phase: "apply", tool: "apply_patch", notes: answer.notes });
    return {
      title: typeof answer.title === "string" ? answer.title : "",
      output: answer.output,
      metadata: isPlainObject(answer.metadata) ? answer.metadata : {},
    };
  }

  // A slim too old to fetch gets no webfetch: the host's own stays.
  if (!features.includes("fetch")) {
    delete tools.webfetch;
    log("info", "this slim has no fetch; the host's own webfetch stays", { bin });
  }
  if (!features.includes("tasks")) {
    for (const name of Object.keys(TASK_TOOLS)) delete tools[name];
    log("info", "this slim has no background task tools", { bin });
  }

  // Wakes. An orchestrator that went idle with work left (pending todos,
  // background tasks it waits on) would stay idle until the user came
  // back. Each idle spell of a session starts a timer; when it fires,
  // `slim tasks wake` asks the wake gate and sends one wake prompt if the
  // gate allows it. A busy, a chat message or a deletion ends the spell.
  // Any answer of slim's ends it too: every state that would let a later
  // wake through (a todo done, a task ended, the user's answer) makes the
  // session busy and idle again, which starts the next spell. Only a
  // failed run of slim (a failed send, or a host slim could not read) is
  // tried again, once per interval, while the spell lasts.
  //
  // Spells run only for the words slim takes as on: a value slim refuses
  // turns them off rather than run a failing sender forever.
  const wakeSetting = (process.env.SLIM_TASKS_WAKE || "").trim().toLowerCase();
  const wakeOn = features.includes("tasks") && (wakeSetting === "" || ON_WORDS.includes(wakeSetting));
  const wakeEvery = wakeIntervalMs();
  const spells = new Map(); // sessionID -> { timer }
  const endSpell = (sessionID) => {
    const spell = spells.get(sessionID);
    if (!spell) return;
    clearTimeout(spell.timer);
    spells.delete(sessionID);
  };
  const arm = (sessionID, spell) => {
    spell.timer = setTimeout(() => {
      wakeNow(sessionID, spell).catch((e) => log("warn", "wake failed", { session: sessionID, error: String(e) }));
    }, wakeEvery);
    if (typeof spell.timer.unref === "function") spell.timer.unref();
  };
  const startSpell = (sessionID) => {
    if (!wakeOn || !sessionID) return;
    endSpell(sessionID);
    const spell = {};
    spells.set(sessionID, spell);
    arm(sessionID, spell);
  };
  const wakeNow = async (sessionID, spell) => {
    const argv = ["tasks", "wake", "--session", sessionID, "--directory", directory || process.cwd()];
    if (ctx.serverUrl) argv.push("--server-url", String(ctx.serverUrl));
    const r = await run(bin, argv, "", WAKE_LIMIT_MS);
    const answer = r.stdout.trim();
    if (r.code === 0) {
      log("info", "wake", { session: sessionID, answer });
      if (spells.get(sessionID) === spell) spells.delete(sessionID);
      return;
    }
    log("warn", "wake failed", { session: sessionID, code: r.code, timedOut: r.timedOut, stderr: r.stderr.trim() });
    if (spells.get(sessionID) === spell) arm(sessionID, spell);
  };

  return {
    tool: tools,

    // The plain argument shape makes every argument required; give the
    // model the schemas in which only the pattern, language and rewrite
    // are, and only webfetch's url. The host calls this for its own
    // webfetch too (before this plugin's, which replaces it); that one's
    // schema is not touched.
    "tool.definition": async (hookInput, output) => {
      const id = hookInput && hookInput.toolID;
      if (!output) return;
      // The host shows its own apply_patch first: keep its description (the
      // patch grammar models were trained on) for the one that replaces it.
      if (id === "apply_patch" && applyMode) {
        if (output.description !== APPLY_DESCRIPTION) {
          if (typeof output.description === "string" && output.description) hostApplyDescription = output.description;
        } else if (hostApplyDescription) {
          output.description = hostApplyDescription;
        }
        return;
      }
      if (id === "ast_grep_search" || id === "ast_grep_replace") output.jsonSchema = astSchema(id === "ast_grep_replace", languages);
      else if (id === "webfetch" && output.description === FETCH_DESCRIPTION) output.jsonSchema = fetchSchema();
      else if (Object.prototype.hasOwnProperty.call(TASK_TOOLS, id) && output.description === TASK_TOOLS[id].description) {
        output.jsonSchema = { type: "object", properties: TASK_TOOLS[id].args, required: TASK_TOOLS[id].required };
      }
    },

    "tool.execute.before": async (hookInput, output) => {
      const tool = hookInput && hookInput.tool;
      const callID = hookInput && hookInput.callID;
      // slim looks at nothing of this tool before it runs: it would pass.
      if (!needs(tool, "before")) return;
      // In apply mode apply_patch is this plugin's tool, and `slim hook
      // apply` runs every check of the call (containment, rescue, the loop
      // guard) when the tool runs it; a rewrite here would only refuse what
      // apply mode can write exactly.
      if (applyMode && replacementHeld && tool === "apply_patch") return;
      // Without an answer the call runs, unless its tool fails closed: then
      // it is refused, because slim never checked it.
      const unanswered = (reason, stderr) => {
        if (FAIL_CLOSED_TOOLS.has(tool)) {
          log("warn", `${reason}; blocking`, { phase: "before", tool, callID, stderr });
          throw new Error(
            `${tool} blocked: slim could not check this call (${reason}), so it was not run. ` +
              "Try again; if it fails again, split the patch into smaller ones.",
          );
        }
        log("warn", `${reason}; passing`, { phase: "before", tool, callID, stderr });
      };
      // Answers of earlier afters already on the synchronous channel
      // settle now, so that waiting for them below costs no turn of the
      // host's event loop.
      if (resident) resident.pump();
      await afters.settled(hookInput && hookInput.sessionID);
      const r = await ask("before", {
        v: PROTOCOL,
        phase: "before",
        host: host(),
        tool,
        sessionID: hookInput && hookInput.sessionID,
        callID,
        args: output ? output.args : undefined,
      }, "block");
      if (r.failure) return unanswered(r.failure, r.stderr);
      const answer = r.answer;
      switch (answer.action) {
        case "pass":
          return;
        case "block":
          if (typeof answer.message === "string" && answer.message !== "") {
            throw new Error(answer.message);
          }
          return unanswered("slim answered block without a message");
        case "mutate":
          if (!output || !isPlainObject(output.args) || !isPlainObject(answer.args)) {
            return unanswered("slim's mutate answer cannot be applied in place");
          }
          replaceInPlace(output.args, answer.args);
          return;
        default:
          return unanswered(`slim answered ${JSON.stringify(answer.action)}, which before does not take`);
      }
    },

    "tool.execute.after": async (hookInput, output) => {
      try {
        if (!needs(hookInput && hookInput.tool, "after")) return;
        // In apply mode slim counts apply_patch for the loop guard itself.
        if (applyMode && hookInput && hookInput.tool === "apply_patch") {
          const id = hookInput.callID;
          if (appliedCalls.delete(id)) return;
          if (replacementHeld) {
            replacementHeld = false;
            log("error", "the host ran its own apply_patch although apply mode replaces it; its calls are checked before they run from now on", { callID: id });
          }
        }
        const request = {
          v: PROTOCOL,
          phase: "after",
          host: host(),
          tool: hookInput && hookInput.tool,
          sessionID: hookInput && hookInput.sessionID,
          callID: hookInput && hookInput.callID,
          args: hookInput ? hookInput.args : undefined,
          output: output ? output.output : undefined,
        };
        const status = output && typeof output.status === "string" ? output.status : hookInput && hookInput.status;
        if (typeof status === "string") request.status = status;
        // Only the resident slim takes an after no call waits for: there it
        // is one line on a pipe already open, while a process of its own
        // would be left running behind the call, and several could run at
        // once and count in another order than the calls ran.
        const mustWait = afterAlways.has(String(request.tool).toLowerCase()) || afters.wait(request.sessionID, request.tool, request.args);
        if (resident && aftersMayTrail && !mustWait) {
          const late = askQuiet("after", request, "send")
            .then((answer) => {
              afters.answered(request.sessionID);
              if (answer && answer.action !== "pass") {
                log("warn", "slim's answer to an after the call did not wait for was not applied", { tool: request.tool, callID: request.callID, action: answer.action });
              }
            })
            .catch((e) => log("warn", "after hook failed; passing", { error: String(e) }));
          afters.unawaited(request.sessionID, late);
          return;
        }
        const answer = await askQuiet("after", request, "block");
        afters.answered(request.sessionID);
        if (!answer || answer.action === "pass") return;
        if (answer.action === "append" && typeof answer.append === "string") {
          if (output && typeof output.output === "string") output.output += answer.append;
          return;
        }
        log("warn", "unexpected answer in after; passing", { tool: request.tool, action: answer.action });
      } catch (e) {
        log("warn", "after hook failed; passing", { error: String(e) });
      }
    },

    event: async ({ event } = {}) => {
      try {
        if (!event || !FORWARDED_EVENTS.has(event.type)) return;
        const p = isPlainObject(event.properties) ? event.properties : {};
        const info = isPlainObject(p.info) ? p.info : {};
        const sessionID = p.sessionID || (event.type.startsWith("session.") ? info.id : info.sessionID) || "";
        const forwarded = { type: event.type, sessionID };
        if (p.messageID) forwarded.messageID = p.messageID;
        if (event.type === "session.status" && isPlainObject(p.status) && typeof p.status.type === "string") forwarded.status = p.status.type;
        if (event.type === "session.deleted") afters.forget(sessionID);
        if (event.type === "session.idle") startSpell(sessionID);
        else if (event.type === "session.deleted" || (event.type === "session.status" && forwarded.status && forwarded.status !== "idle")) endSpell(sessionID);
        await askQuiet("event", { v: PROTOCOL, phase: "event", host: host(), sessionID, event: forwarded });
      } catch (e) {
        log("warn", "event forwarding failed", { error: String(e) });
      }
    },

    "chat.message": async (hookInput, output) => {
      try {
        const sessionID = hookInput && typeof hookInput.sessionID === "string" ? hookInput.sessionID : "";
        if (!sessionID) return;
        endSpell(sessionID); // a new turn: its own idle starts the next spell
        const forwarded = { type: "chat.message", sessionID };
        const messageID = hookInput.messageID || (output && isPlainObject(output.message) && output.message.id);
        if (messageID) forwarded.messageID = String(messageID);
        if (typeof hookInput.agent === "string" && hookInput.agent) forwarded.agent = hookInput.agent;
        forwarded.external = externalUserMessage(output) ? "true" : "false";
        await askQuiet("event", { v: PROTOCOL, phase: "event", host: host(), sessionID, event: forwarded });
      } catch (e) {
        log("warn", "chat.message forwarding failed", { error: String(e) });
      }
    },

    dispose: async () => {
      for (const id of [...spells.keys()]) endSpell(id);
      if (reg.get(directory) === owner) reg.delete(directory);
      if (resident) resident.close();
    },
  };
};
