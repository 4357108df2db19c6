// Tests for the thin OpenCode plugin (node --test hooks/opencode/).
//
// The plugin runs against a fake host object (the same shapes OpenCode 1.18
// passes) and the real slim binary, built here with `go build`. A few failure
// modes that the real binary cannot produce on demand (hanging, a wrong
// protocol, garbage output) use small shell scripts standing in for slim.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, copyFileSync, existsSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "..", "..");
const REGISTRY_KEY = Symbol.for("slim.opencode.plugin.registry");

let work;
let realSlim;
let pluginSeq = 0;

// loadPlugin imports a fresh copy of slim.js (a new module instance, as a
// project copy and a global copy would be) and returns its one export.
async function loadPlugin(settings) {
  const dir = path.join(work, `copy-${++pluginSeq}`);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "slim.mjs");
  copyFileSync(path.join(here, "slim.js"), file);
  if (settings !== undefined && settings !== null) writeFileSync(path.join(dir, "slim.json"), typeof settings === "string" ? settings : JSON.stringify(settings));
  const mod = await import(pathToFileURL(file).href);
  const exported = Object.values(mod);
  assert.equal(exported.length, 1, "the plugin must export exactly one function");
  assert.equal(typeof exported[0], "function");
  return exported[0];
}

function fakeSlim(name, body) {
  const file = path.join(work, `fake-${name}`);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

// A fake slim that answers `version --json` correctly and then prints
// $FAKE_ANSWER for every hook, recording each request in $FAKE_LOG.
function scriptedSlim() {
  return fakeSlim(
    "scripted",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1}'; exit 0; fi
cat >> "$FAKE_LOG"; echo >> "$FAKE_LOG"
printf '%s' "$FAKE_ANSWER"
exit \${FAKE_EXIT:-0}`,
  );
}

function readRequests(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

function hostInput(directory) {
  return { directory, worktree: directory, serverUrl: new URL("http://127.0.0.1:4096"), project: {}, client: undefined };
}

const savedEnv = { ...process.env };

before(() => {
  work = mkdtempSync(path.join(tmpdir(), "slim-plugin-test-"));
  const bin = path.join(work, "bin");
  mkdirSync(bin);
  realSlim = path.join(bin, "slim");
  execFileSync("go", ["build", "-o", realSlim, "./cmd/slim"], {
    cwd: repoRoot,
    env: { ...process.env, CGO_ENABLED: "0" },
    stdio: ["ignore", "inherit", "inherit"],
  });
});

after(() => {
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
  Object.assign(process.env, savedEnv);
  delete globalThis[REGISTRY_KEY];
  process.env.SLIM_STATE_DIR = mkdtempSync(path.join(work, "state-"));
  process.env.SLIM_PLUGIN_LOG = path.join(work, "plugin.log");
  delete process.env.SLIM_HOOK_TIMEOUT_MS;
  delete process.env.SLIM_OUTSIDE;
  delete process.env.SLIM_APPLY;
  delete process.env.SLIM_APPLY_PAUSE_MS;
});

function project() {
  const dir = mkdtempSync(path.join(work, "proj-"));
  return dir;
}

test("real slim: a grep on a missing path is blocked with slim's message unchanged", async () => {
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  assert.equal(typeof hooks["tool.execute.before"], "function");
  const output = { args: { pattern: "x", path: "no-such-dir" } };
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "grep", sessionID: "ses_block", callID: "c1" }, output),
    (err) => {
      assert.ok(err.message.startsWith(`Search path does not exist: ${path.join(dir, "no-such-dir")} (from "no-such-dir").`), err.message);
      return true;
    },
  );
  assert.deepEqual(output.args, { pattern: "x", path: "no-such-dir" });
});

test("real slim: a stale absolute path is re-anchored by editing output.args in place", async () => {
  process.env.SLIM_BIN = realSlim;
  const base = project();
  const dir = path.join(base, "w", "proj");
  mkdirSync(path.join(dir, "src"), { recursive: true });
  const hooks = await (await loadPlugin())(hostInput(dir));
  const args = { pattern: "TODO", path: "/old/home/proj/src", include: "*.go" };
  const output = { args };
  await hooks["tool.execute.before"]({ tool: "grep", sessionID: "ses_mut", callID: "c1" }, output);
  assert.equal(output.args, args, "the args object must be the same object");
  assert.deepEqual(args, { pattern: "TODO", path: path.join(dir, "src"), include: "*.go" });
});

test("real slim: an existing path passes with args untouched", async () => {
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  mkdirSync(path.join(dir, "sub"));
  const hooks = await (await loadPlugin())(hostInput(dir));
  const args = { pattern: "*.js", path: "sub" };
  await hooks["tool.execute.before"]({ tool: "glob", sessionID: "ses_pass", callID: "c1" }, { args });
  assert.deepEqual(args, { pattern: "*.js", path: "sub" });
});

test("real slim: the loop notice is appended to a string output", async () => {
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const outputs = [];
  for (let i = 1; i <= 3; i++) {
    const args = { filePath: path.join(dir, "a.txt") };
    const callID = `call_${i}`;
    await hooks["tool.execute.before"]({ tool: "read", sessionID: "ses_loop", callID }, { args });
    const output = { title: "a.txt", output: "same content\n", metadata: {} };
    await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_loop", callID, args }, output);
    outputs.push(output.output);
  }
  assert.equal(outputs[0], "same content\n");
  assert.ok(outputs[2].startsWith("same content\n"), outputs[2]);
  assert.ok(outputs[2].includes("[REPEATED TOOL CALLS - STOP]"), outputs[2]);
});

test("real slim: a non-string output is never touched", async () => {
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  let last;
  for (let i = 1; i <= 4; i++) {
    const args = { q: "x" };
    await hooks["tool.execute.before"]({ tool: "mcp_search", sessionID: "ses_mcp", callID: `m${i}` }, { args });
    last = { output: { content: [{ type: "text", text: "r" }] } };
    await hooks["tool.execute.after"]({ tool: "mcp_search", sessionID: "ses_mcp", callID: `m${i}`, args }, last);
  }
  assert.deepEqual(last.output, { content: [{ type: "text", text: "r" }] });
});

test("real slim: events are forwarded and answered without error", async () => {
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_x" } } } });
  await hooks.event({ event: { type: "message.part.updated", properties: {} } });
  const log = existsSync(process.env.SLIM_PLUGIN_LOG) ? readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8") : "";
  assert.ok(!log.includes('"phase":"event"'), `event forwarding logged a failure:\n${log}`);
});

test("real slim: apply_patch outside the project, or too large to read, is blocked with slim's reason", async () => {
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c1" }, { args: { patchText: "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch" } }),
    /^Error: apply_patch blocked: /,
  );
  assert.ok(!existsSync(path.join(dir, "..", "escape.txt")));
  // slim stops reading at its limit and answers; the rest of the write fails
  // quietly on the closed pipe.
  const huge = "*** Begin Patch\n*** Add File: big.txt\n" + "+x\n".repeat(17 << 20) + "*** End Patch";
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c2" }, { args: { patchText: huge } }),
    /^Error: apply_patch blocked: the request is larger than 64 MiB/,
  );
  const args = { filePath: "x".repeat(70 << 20) };
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c3" }, { args });
  assert.equal(args.filePath.length, 70 << 20);
});

test("slim found on PATH when SLIM_BIN is unset", async () => {
  delete process.env.SLIM_BIN;
  process.env.PATH = path.dirname(realSlim) + path.delimiter + (savedEnv.PATH || "");
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  assert.equal(typeof hooks["tool.execute.before"], "function");
});

test("slim missing: the plugin registers nothing and logs why", async () => {
  process.env.SLIM_BIN = path.join(work, "does-not-exist");
  const hooks = await (await loadPlugin())(hostInput(project()));
  assert.deepEqual(hooks, {});
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /slim not found/);

  delete process.env.SLIM_BIN;
  process.env.PATH = path.join(work, "empty-path-dir");
  assert.deepEqual(await (await loadPlugin())(hostInput(project())), {});
});

test("protocol mismatch: the plugin disables itself", async () => {
  process.env.SLIM_BIN = fakeSlim("proto2", `echo '{"version":"9","protocol":2}'`);
  const hooks = await (await loadPlugin())(hostInput(project()));
  assert.deepEqual(hooks, {});
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /protocol 1; the plugin is disabled/);

  process.env.SLIM_BIN = fakeSlim("noversion", `exit 2`);
  assert.deepEqual(await (await loadPlugin())(hostInput(project())), {});
});

// Answers of a scripted slim that give the plugin nothing it can use.
const FAILURES = [
  { answer: '{"v":1,"action":"block","message":"no"}', exit: "1" },
  { answer: '{"v":1,"action":"block","message":"no"}', exit: "2" },
  { answer: '{"v":1,"action":"block","message":"no"}', exit: "5" },
  { answer: '{"error":{"kind":"usage","code":"usage","message":"hook request: larger than 67108864 bytes"}}', exit: "2" },
  { answer: "not json", exit: "0" },
  { answer: "[1]", exit: "0" },
  { answer: '{"v":2,"action":"block","message":"no"}', exit: "0" },
  { answer: '{"v":1,"action":"block"}', exit: "0" },
  { answer: '{"v":1,"action":"mutate","args":"nope"}', exit: "0" },
  { answer: '{"v":1,"action":"append","append":"x"}', exit: "0" },
  { answer: '{"v":1,"action":"explode"}', exit: "0" },
  { answer: "", exit: "0" },
];

test("timeout: a hanging slim is killed; a grep passes and an apply_patch is blocked", async () => {
  process.env.SLIM_BIN = fakeSlim(
    "hang",
    `if [ "$1" = version ]; then echo '{"protocol":1}'; exit 0; fi
exec sleep 30`,
  );
  process.env.SLIM_HOOK_TIMEOUT_MS = "300";
  const hooks = await (await loadPlugin())(hostInput(project()));
  const args = { path: "x" };
  const t0 = Date.now();
  await hooks["tool.execute.before"]({ tool: "grep", sessionID: "s", callID: "c" }, { args });
  const output = { output: "text" };
  await hooks["tool.execute.after"]({ tool: "grep", sessionID: "s", callID: "c", args }, output);
  assert.ok(Date.now() - t0 < 10000, "the hook waited for the hanging slim");
  assert.deepEqual(args, { path: "x" });
  assert.equal(output.output, "text");
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c2" }, { args: { patchText: "p" } }),
    /^Error: apply_patch blocked: .*timed out/,
  );
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /timed out/);
});

test("fail open: non-zero exit, bad JSON, a wrong v and a message-less block all pass for a read", async () => {
  process.env.SLIM_BIN = scriptedSlim();
  process.env.FAKE_LOG = path.join(work, "fail-open.log");
  const hooks = await (await loadPlugin())(hostInput(project()));
  for (const c of FAILURES) {
    process.env.FAKE_ANSWER = c.answer;
    process.env.FAKE_EXIT = c.exit;
    for (const tool of ["grep", "read"]) {
      const args = { path: "p" };
      await hooks["tool.execute.before"]({ tool, sessionID: "s", callID: "c" }, { args });
      assert.deepEqual(args, { path: "p" }, JSON.stringify({ tool, ...c }));
    }
  }
  process.env.FAKE_ANSWER = '{"v":1,"action":"block","message":"never in after"}';
  process.env.FAKE_EXIT = "0";
  const out = { output: "o" };
  await hooks["tool.execute.after"]({ tool: "grep", sessionID: "s", callID: "c", args: {} }, out);
  assert.equal(out.output, "o");
  await hooks["tool.execute.after"]({ tool: "apply_patch", sessionID: "s", callID: "c", args: {} }, out);
  assert.equal(out.output, "o");
});

test("fail closed: every failure that gives no usable answer blocks apply_patch", async () => {
  process.env.SLIM_BIN = scriptedSlim();
  process.env.FAKE_LOG = path.join(work, "fail-closed.log");
  const hooks = await (await loadPlugin())(hostInput(project()));
  for (const c of FAILURES) {
    process.env.FAKE_ANSWER = c.answer;
    process.env.FAKE_EXIT = c.exit;
    const args = { patchText: "*** Begin Patch\n*** End Patch" };
    await assert.rejects(
      hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args }),
      (err) => {
        assert.match(err.message, /^apply_patch blocked: slim could not check this call \(.+\), so it was not run\./, JSON.stringify(c));
        return true;
      },
    );
    assert.deepEqual(args, { patchText: "*** Begin Patch\n*** End Patch" });
  }
  // slim's own answers still decide.
  for (const [answer, want] of [
    ['{"v":1,"action":"pass"}', "pass"],
    ['{"v":1,"action":"block","message":"apply_patch blocked: outside"}', "apply_patch blocked: outside"],
  ]) {
    process.env.FAKE_ANSWER = answer;
    process.env.FAKE_EXIT = "0";
    const run = hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args: { patchText: "p" } });
    if (want === "pass") await run;
    else await assert.rejects(run, { message: want });
  }
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /blocking/);
});

test("fail closed: output past the limit blocks apply_patch and lets a read pass", async () => {
  process.env.SLIM_BIN = fakeSlim(
    "flood",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1}'; exit 0; fi
cat > /dev/null
head -c 70000000 /dev/zero | tr '\\0' ' '`,
  );
  const hooks = await (await loadPlugin())(hostInput(project()));
  await assert.rejects(hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args: { patchText: "p" } }), /more than \d+ bytes/);
  const args = { filePath: "a" };
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c" }, { args });
  assert.deepEqual(args, { filePath: "a" });
});

// alive reports whether pid is a live process (a zombie, killed but not yet
// reaped, counts as gone).
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch (e) {
    if (e.code === "ENOENT") return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("timeout is a hard deadline: a wrapper whose child holds stdout is answered on time and its group killed", { skip: process.platform === "win32" }, async () => {
  const pids = path.join(work, "wrapper.pids");
  // The wrapper stays the direct child; sleep inherits its stdout and would
  // keep the pipe open for 30 s after the wrapper alone is killed.
  process.env.SLIM_BIN = fakeSlim(
    "wrapper",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1}'; exit 0; fi
cat > /dev/null
sleep 30 &
echo $! >> "${pids}"
wait`,
  );
  process.env.SLIM_HOOK_TIMEOUT_MS = "1000";
  const hooks = await (await loadPlugin())(hostInput(project()));

  let t0 = Date.now();
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c1" }, { args: { patchText: "p" } }),
    /^Error: apply_patch blocked: slim could not check this call \(slim timed out and was killed\)/,
  );
  let elapsed = Date.now() - t0;
  assert.ok(elapsed >= 900 && elapsed < 5000, `apply_patch answered after ${elapsed} ms with a 1000 ms timeout`);

  t0 = Date.now();
  const args = { filePath: "a" };
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c2" }, { args });
  elapsed = Date.now() - t0;
  assert.ok(elapsed < 5000, `read answered after ${elapsed} ms with a 1000 ms timeout`);
  assert.deepEqual(args, { filePath: "a" });

  const started = readFileSync(pids, "utf8").split("\n").filter(Boolean).map(Number);
  assert.equal(started.length, 2);
  const deadline = Date.now() + 3000;
  while (started.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(started.filter(alive), [], "the sleep children outlived the timeout");
});

test("a child left running after slim exits does not hold the answer", { skip: process.platform === "win32" }, async () => {
  process.env.SLIM_BIN = fakeSlim(
    "leaver",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1}'; exit 0; fi
cat > /dev/null
sleep 30 &
printf '%s' '{"v":1,"action":"mutate","args":{"patchText":"rescued"}}'`,
  );
  process.env.SLIM_HOOK_TIMEOUT_MS = "10000";
  const hooks = await (await loadPlugin())(hostInput(project()));
  const t0 = Date.now();
  const args = { patchText: "stale" };
  await hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args });
  const elapsed = Date.now() - t0;
  assert.ok(elapsed < 5000, `answered after ${elapsed} ms`);
  assert.deepEqual(args, { patchText: "rescued" });
});

test("a process that left slim's group and holds stdout does not hold the answer", { skip: process.platform === "win32" }, async (t) => {
  try {
    execFileSync("sh", ["-c", "command -v setsid"], { stdio: "ignore" });
  } catch {
    t.skip("no setsid here");
    return;
  }
  const pids = path.join(work, "escaper.pids");
  process.env.SLIM_BIN = fakeSlim(
    "escaper",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1}'; exit 0; fi
cat > /dev/null
setsid sh -c 'echo $$ >> "${pids}"; exec sleep 30' &
while [ ! -s "${pids}" ]; do sleep 0.05; done
printf '%s' '{"v":1,"action":"mutate","args":{"patchText":"rescued"}}'`,
  );
  process.env.SLIM_HOOK_TIMEOUT_MS = "10000";
  const hooks = await (await loadPlugin())(hostInput(project()));
  const t0 = Date.now();
  const args = { patchText: "stale" };
  await hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, { args });
  const elapsed = Date.now() - t0;
  for (const pid of readFileSync(pids, "utf8").split("\n").filter(Boolean).map(Number)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  assert.ok(elapsed < 5000, `answered after ${elapsed} ms`);
  assert.deepEqual(args, { patchText: "rescued" });
});

test("request shape: host, tool, ids, args, output and status are sent", async () => {
  process.env.SLIM_BIN = scriptedSlim();
  process.env.FAKE_LOG = path.join(work, "shape.log");
  process.env.FAKE_ANSWER = '{"v":1,"action":"pass"}';
  const dir = project();
  const hooks = await (await loadPlugin())({ ...hostInput(dir), worktree: "/" });
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "call_1" }, { args: { command: "ls" } });
  await hooks["tool.execute.after"](
    { tool: "bash", sessionID: "ses_1", callID: "call_1", args: { command: "ls" } },
    { title: "ls", output: "a\n", metadata: { exit: 0 }, status: "completed" },
  );
  const [b, a] = readRequests(process.env.FAKE_LOG);
  assert.deepEqual(b, {
    v: 1,
    phase: "before",
    host: { flavor: "v1", platform: process.platform, directory: dir, worktree: "/", cwd: process.cwd(), serverUrl: "http://127.0.0.1:4096/" },
    tool: "bash",
    sessionID: "ses_1",
    callID: "call_1",
    args: { command: "ls" },
  });
  assert.equal(a.phase, "after");
  assert.equal(a.output, "a\n");
  assert.equal(a.status, "completed");
  assert.deepEqual(a.args, { command: "ls" });
  assert.ok(!("title" in a) && !("metadata" in a));
});

test("mutate deletes removed keys and keeps the same object", async () => {
  process.env.SLIM_BIN = scriptedSlim();
  process.env.FAKE_LOG = path.join(work, "mutate.log");
  process.env.FAKE_ANSWER = '{"v":1,"action":"mutate","args":{"patchText":"new","extra":1}}';
  const hooks = await (await loadPlugin())(hostInput(project()));
  const args = { patchText: "old", stale: true };
  const output = { args };
  await hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c" }, output);
  assert.equal(output.args, args);
  assert.deepEqual(args, { patchText: "new", extra: 1 });
});

test("append is skipped when the output is no longer a string", async () => {
  process.env.SLIM_BIN = scriptedSlim();
  process.env.FAKE_LOG = path.join(work, "append.log");
  process.env.FAKE_ANSWER = '{"v":1,"action":"append","append":"\\nnote"}';
  const hooks = await (await loadPlugin())(hostInput(project()));
  const s = { output: "text" };
  await hooks["tool.execute.after"]({ tool: "read", sessionID: "s", callID: "c", args: {} }, s);
  assert.equal(s.output, "text\nnote");
  const o = { output: { parts: [] } };
  await hooks["tool.execute.after"]({ tool: "read", sessionID: "s", callID: "c", args: {} }, o);
  assert.deepEqual(o.output, { parts: [] });
});

test("one registration per directory across a project and a global copy", async () => {
  process.env.SLIM_BIN = scriptedSlim();
  process.env.FAKE_LOG = path.join(work, "twice.log");
  process.env.FAKE_ANSWER = '{"v":1,"action":"pass"}';
  const dir = project();
  const projectCopy = await (await loadPlugin())(hostInput(dir));
  const globalCopy = await (await loadPlugin())(hostInput(dir));
  assert.equal(typeof projectCopy["tool.execute.before"], "function");
  assert.deepEqual(globalCopy, {});
  const other = await (await loadPlugin())(hostInput(project()));
  assert.equal(typeof other["tool.execute.before"], "function", "another directory registers its own hooks");
  const [x, y] = await Promise.all([(await loadPlugin())(hostInput(dir + "-c")), (await loadPlugin())(hostInput(dir + "-c"))]);
  assert.equal([x, y].filter((h) => typeof h["tool.execute.before"] === "function").length, 1, "concurrent copies register once");
  await projectCopy.dispose();
  const again = await (await loadPlugin())(hostInput(dir));
  assert.equal(typeof again["tool.execute.before"], "function", "after dispose the directory can register again");
});

// ---- the phase table ----

// A fake slim that answers `version --json` with $FAKE_VERSION and every
// hook with pass, appending each hook request (phase and tool) to
// $FAKE_LOG: one line per process the plugin started for a hook.
function countingSlim() {
  return fakeSlim(
    "counting",
    `if [ "$1" = version ]; then printf '%s' "$FAKE_VERSION"; exit 0; fi
cat >> "$FAKE_LOG"; echo >> "$FAKE_LOG"
printf '%s' '{"v":1,"action":"pass"}'`,
  );
}

// The phase table the real slim gives.
function realPhases() {
  return JSON.parse(execFileSync(realSlim, ["version", "--json"], { encoding: "utf8" })).phases;
}

// One of each kind of call: tools with a guard before they run, tools only
// counted after, the host's task tool and the background task tools; each
// runs before, then after, as the host does.
const MIXED_CALLS = ["bash", "read", "Read", "apply_patch", "grep", "glob", "edit", "webfetch", "mcp_tool", "task", "task_status", "wait_for_user", "TASK_RESULT"];

async function runMixed(hooks) {
  for (const [i, tool] of MIXED_CALLS.entries()) {
    const args = { filePath: "a.txt", patchText: "*** Begin Patch\n*** End Patch", pattern: "x" };
    await hooks["tool.execute.before"]({ tool, sessionID: "s", callID: `c${i}` }, { args });
    await hooks["tool.execute.after"]({ tool, sessionID: "s", callID: `c${i}`, args }, { output: "out" });
  }
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "s" } } });
}

function spawned(log) {
  return readRequests(log).map((r) => `${r.phase} ${r.phase === "event" ? r.event.type : r.tool}`);
}

test("phase table: a phase slim does not need starts no process; the others start one each", async () => {
  process.env.SLIM_BIN = countingSlim();
  process.env.FAKE_LOG = path.join(work, "phases-real.log");
  process.env.FAKE_VERSION = JSON.stringify({ version: "t", protocol: 1, phases: realPhases() });
  const hooks = await (await loadPlugin())(hostInput(project()));
  await runMixed(hooks);
  assert.deepEqual(spawned(process.env.FAKE_LOG), [
    "after bash",
    "before read", "after read",
    "before Read", "after Read",
    "before apply_patch", "after apply_patch",
    "before grep", "after grep",
    "before glob", "after glob",
    "after edit",
    "after webfetch",
    "after mcp_tool",
    "after task",
    "event session.idle",
  ]);
});

test("phase table: a table that says so skips any phase of any tool, except the before of apply_patch", async () => {
  process.env.SLIM_BIN = countingSlim();
  process.env.FAKE_LOG = path.join(work, "phases-custom.log");
  process.env.FAKE_VERSION = JSON.stringify({
    version: "t",
    protocol: 1,
    phases: { default: [], tools: { apply_patch: ["before"], bash: ["before", "after"], read: ["after"], future_tool: ["before", "something-new"] } },
  });
  const hooks = await (await loadPlugin())(hostInput(project()));
  for (const tool of ["bash", "read", "apply_patch", "edit", "future_tool"]) {
    const args = {};
    await hooks["tool.execute.before"]({ tool, sessionID: "s", callID: "c" }, { args });
    await hooks["tool.execute.after"]({ tool, sessionID: "s", callID: "c", args }, { output: "out" });
  }
  assert.deepEqual(spawned(process.env.FAKE_LOG), ["before bash", "after bash", "after read", "before apply_patch", "before future_tool"]);
});

// Version answers whose table cannot be used: each makes the plugin run
// every phase for every tool, as without a table.
const BAD_TABLES = [
  undefined,
  null,
  [],
  "before",
  { default: ["after"] },
  { default: ["after"], tools: [] },
  { default: "after", tools: {} },
  { tools: {} },
  { default: ["after"], tools: { bash: "after" } },
  { default: ["after"], tools: { bash: [1] } },
  { default: ["after"], tools: { Bash: [] } },
  { default: ["after"], tools: { apply_patch: ["after"] } },
  { default: [], tools: {} },
];

test("phase table: missing or unusable, every tool call runs every phase", async () => {
  process.env.SLIM_BIN = countingSlim();
  for (const [i, phases] of BAD_TABLES.entries()) {
    delete globalThis[REGISTRY_KEY];
    process.env.FAKE_LOG = path.join(work, `phases-bad-${i}.log`);
    const answer = { version: "t", protocol: 1 };
    if (phases !== undefined) answer.phases = phases;
    process.env.FAKE_VERSION = JSON.stringify(answer);
    const hooks = await (await loadPlugin())(hostInput(project()));
    await runMixed(hooks);
    const want = MIXED_CALLS.flatMap((tool) => [`before ${tool}`, `after ${tool}`]).concat(["event session.idle"]);
    assert.deepEqual(spawned(process.env.FAKE_LOG), want, `table ${JSON.stringify(phases)}`);
  }
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /every tool call runs every phase/);
});

test("real slim with its phase table: a bash call runs slim once, and the 6th identical read is still refused before it runs", async () => {
  const log = path.join(work, "real-spawns.log");
  process.env.SLIM_BIN = fakeSlim("real-counting", `printf '%s\\n' "$*" >> "${log}"\nexec "${realSlim}" "$@"`);
  // One process per call: the resident slim (below) is off here.
  process.env.SLIM_SERVE = "0";
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const results = [];
  for (let i = 1; i <= 7; i++) {
    const args = { filePath: path.join(dir, "a.txt") };
    const callID = `read_${i}`;
    try {
      await hooks["tool.execute.before"]({ tool: "read", sessionID: "ses_real", callID }, { args });
    } catch (e) {
      results.push(String(e.message).startsWith('Refusing to execute "read"') ? "R" : `error ${e.message}`);
      continue;
    }
    const output = { output: "same content\n" };
    await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_real", callID, args }, output);
    results.push(output.output.includes("[REPEATED TOOL CALLS - STOP]") ? "N" : ".");
    // A bash call between the reads, in a session of its own (so that it
    // does not break the reads' run): slim needs only its after, and still
    // counts it.
    const bashArgs = { command: "ls" };
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_bash", callID: `bash_${i}` }, { args: bashArgs });
    const bashOut = { output: "a.txt\n" };
    await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_bash", callID: `bash_${i}`, args: bashArgs }, bashOut);
    if (i === 3) assert.ok(bashOut.output.includes("[REPEATED TOOL CALLS - STOP]"), "bash counted from its afters alone");
  }
  assert.equal(results.join(""), "..NNNRR");
  const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
  assert.deepEqual(lines.filter((l) => l === "hook before").length, 7, "one before per read, none for bash");
  assert.deepEqual(lines.filter((l) => l === "hook after").length, 5 + 5, "an after per read that ran and per bash call");
});

test("the plugin imports only Node built-ins", () => {
  const src = readFileSync(path.join(here, "slim.js"), "utf8");
  const specs = [...src.matchAll(/^\s*import\s[^"']*["']([^"']+)["']/gm)].map((m) => m[1]);
  assert.ok(specs.length > 0);
  for (const s of specs) assert.ok(s.startsWith("node:"), `non built-in import ${s}`);
  assert.ok(!/require\(/.test(src), "no require()");
  assert.match(src.split("\n")[0], /^\/\/ slim-managed: /);
});

// ---- the ast-grep tools ----

// The real ast-grep: SLIM_AST_GREP, else the one scripts/e2e-setup.sh
// installs. Without one these tests skip, unless SLIM_E2E=require.
function findAstGrep() {
  const p = savedEnv.SLIM_AST_GREP || path.join(repoRoot, "e2e", "node_modules", ".bin", "ast-grep");
  try {
    execFileSync(p, ["--version"], { stdio: "ignore" });
    return p;
  } catch {
    return "";
  }
}
const astGrep = findAstGrep();
const needAstGrep = (t) => {
  if (astGrep) return false;
  if ((savedEnv.SLIM_E2E || "").toLowerCase() === "require") assert.fail("SLIM_E2E=require: no ast-grep (run scripts/e2e-setup.sh)");
  t.skip("no ast-grep (run scripts/e2e-setup.sh, or set SLIM_AST_GREP)");
  return true;
};

function astProject() {
  const dir = project();
  writeFileSync(path.join(dir, "app.py"), 'def main():\n    print("hello")\n');
  writeFileSync(path.join(dir, "crlf.py"), "def f(x):\r\n    print(x)\r\n");
  mkdirSync(path.join(dir, "outside-sibling"), { recursive: true });
  return dir;
}

function toolCtx(dir, extra = {}) {
  const asked = [];
  return {
    asked,
    ctx: {
      sessionID: "ses_ast",
      messageID: "msg_1",
      callID: "call_ast",
      agent: "build",
      directory: dir,
      worktree: dir,
      abort: new AbortController().signal,
      metadata() {},
      async ask(req) {
        asked.push(req);
      },
      ...extra,
    },
  };
}

async function astHooks(dir) {
  process.env.SLIM_BIN = realSlim;
  process.env.SLIM_AST_GREP = astGrep;
  return (await loadPlugin())(hostInput(dir));
}

test("ast tools: registered with their argument schemas; only pattern, lang and rewrite are required", async () => {
  process.env.SLIM_BIN = realSlim;
  const hooks = await (await loadPlugin())(hostInput(project()));
  assert.deepEqual(Object.keys(hooks.tool).sort(), [
    "ast_grep_replace",
    "ast_grep_search",
    "task_cancel",
    "task_message",
    "task_result",
    "task_revive",
    "task_status",
    "wait_for_user",
    "webfetch",
  ]);
  const search = hooks.tool.ast_grep_search;
  assert.deepEqual(Object.keys(search.args), ["pattern", "lang", "paths", "globs", "context"]);
  assert.equal(search.args.lang.enum.length, 25);
  assert.deepEqual(Object.keys(hooks.tool.ast_grep_replace.args), ["pattern", "rewrite", "lang", "paths", "globs", "dryRun"]);
  for (const [id, required] of [["ast_grep_search", ["pattern", "lang"]], ["ast_grep_replace", ["pattern", "rewrite", "lang"]]]) {
    const output = { description: hooks.tool[id].description, parameters: {}, jsonSchema: { required: Object.keys(hooks.tool[id].args) } };
    await hooks["tool.definition"]({ toolID: id }, output);
    assert.deepEqual(output.jsonSchema.required, required, id);
    assert.deepEqual(Object.keys(output.jsonSchema.properties), Object.keys(hooks.tool[id].args));
  }
  const other = { jsonSchema: null };
  await hooks["tool.definition"]({ toolID: "read" }, other);
  assert.equal(other.jsonSchema, null, "another tool's schema is left alone");
});

test("ast tools: not registered when slim is missing", async () => {
  process.env.SLIM_BIN = path.join(work, "does-not-exist");
  const hooks = await (await loadPlugin())(hostInput(project()));
  assert.equal(hooks.tool, undefined);
});

test("ast_grep_search runs in the session directory and returns slim's text", async (t) => {
  if (needAstGrep(t)) return;
  const dir = astProject();
  const hooks = await astHooks(project()); // the plugin's own directory is another one
  const { ctx } = toolCtx(dir);
  const r = await hooks.tool.ast_grep_search.execute({ pattern: "print($A)", lang: "python" }, ctx);
  assert.equal(typeof r.output, "string");
  assert.match(r.output, /^Found 2 matches in 2 files\n/);
  assert.match(r.output, /\napp\.py\n {2}2: print\("hello"\)\n/);
  assert.equal(r.metadata.total, 2);
  const one = await hooks.tool.ast_grep_search.execute({ pattern: "print($A)", lang: "python", paths: "app.py", context: 1 }, ctx);
  assert.match(one.output, /^Found 1 match in 1 file\n\napp\.py\n {2}1- def main\(\):\n {2}2: {5}print\("hello"\)\n$/);
  const none = await hooks.tool.ast_grep_search.execute({ pattern: "def $F($$$A):", lang: "python" }, ctx);
  assert.match(none.output, /^No matches found\.\nHint: A Python def or class pattern must not end with a colon/);
  await assert.rejects(hooks.tool.ast_grep_search.execute({ pattern: "x", lang: "klingon" }, ctx), /not one of the languages/);
  await assert.rejects(hooks.tool.ast_grep_search.execute({ lang: "go" }, ctx), /pattern is required/);
  await assert.rejects(hooks.tool.ast_grep_search.execute({ pattern: "x", lang: "go", paths: ["nope"] }, ctx), /^Error: Search path does not exist: /);
});

test("ast_grep_search finds ast-grep in the project's node_modules/.bin", async (t) => {
  if (needAstGrep(t)) return;
  const dir = astProject();
  mkdirSync(path.join(dir, "node_modules", ".bin"), { recursive: true });
  execFileSync("ln", ["-s", astGrep, path.join(dir, "node_modules", ".bin", "ast-grep")]);
  process.env.SLIM_BIN = realSlim;
  delete process.env.SLIM_AST_GREP;
  process.env.PATH = "/usr/bin:/bin";
  const hooks = await (await loadPlugin())(hostInput(dir));
  const r = await hooks.tool.ast_grep_search.execute({ pattern: "print($A)", lang: "python", paths: ["app.py"] }, toolCtx(dir).ctx);
  assert.match(r.output, /^Found 1 match in 1 file/);
});

test("ast_grep_replace: a dry run by default, asking nothing and writing nothing", async (t) => {
  if (needAstGrep(t)) return;
  const dir = astProject();
  const hooks = await astHooks(dir);
  const { ctx, asked } = toolCtx(dir);
  for (const dryRun of [undefined, true, "false", 0]) {
    const r = await hooks.tool.ast_grep_replace.execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun }, ctx);
    assert.match(r.output, /^\[dry run\] 2 replacements in 2 files\n/, String(dryRun));
    assert.match(r.metadata.diff, /^--- a\/app\.py\n/);
  }
  assert.equal(asked.length, 0);
  assert.equal(readFileSync(path.join(dir, "app.py"), "utf8"), 'def main():\n    print("hello")\n');
});

test("ast_grep_replace with dryRun false asks for the edit permission, then writes every file", async (t) => {
  if (needAstGrep(t)) return;
  const dir = astProject();
  const hooks = await astHooks(dir);
  const { ctx, asked } = toolCtx(dir);
  const r = await hooks.tool.ast_grep_replace.execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false }, ctx);
  assert.match(r.output, /^\[applied\] 2 replacements in 2 files\n/);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].permission, "edit");
  assert.deepEqual(asked[0].patterns.sort(), ["app.py", "crlf.py"]);
  assert.match(asked[0].metadata.diff, /\+    log\("hello"\)/);
  assert.equal(readFileSync(path.join(dir, "app.py"), "utf8"), 'def main():\n    log("hello")\n');
  assert.equal(readFileSync(path.join(dir, "crlf.py"), "utf8"), "def f(x):\r\n    log(x)\r\n");
});

test("ast_grep_replace: a refused permission writes nothing", async (t) => {
  if (needAstGrep(t)) return;
  const dir = astProject();
  const hooks = await astHooks(dir);
  const { ctx } = toolCtx(dir, {
    async ask() {
      throw new Error("The user rejected permission to use this specific tool call.");
    },
  });
  await assert.rejects(
    hooks.tool.ast_grep_replace.execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false }, ctx),
    /rejected permission/,
  );
  assert.equal(readFileSync(path.join(dir, "app.py"), "utf8"), 'def main():\n    print("hello")\n');
  const { ctx: noAsk } = toolCtx(dir, { ask: undefined });
  await assert.rejects(
    hooks.tool.ast_grep_replace.execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false }, noAsk),
    /no way to ask for the edit permission/,
  );
  assert.equal(readFileSync(path.join(dir, "app.py"), "utf8"), 'def main():\n    print("hello")\n');
});

test("ast_grep_replace is denied for read-only agents", async (t) => {
  if (needAstGrep(t)) return;
  const dir = astProject();
  const hooks = await astHooks(dir);
  process.env.SLIM_READ_ONLY_AGENTS = "reviewer, auditor";
  for (const agent of ["plan", "explore", "reviewer"]) {
    const { ctx, asked } = toolCtx(dir, { agent });
    await assert.rejects(
      hooks.tool.ast_grep_replace.execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python", dryRun: false }, ctx),
      new RegExp(`denied for the read-only agent "${agent}"`),
    );
    assert.equal(asked.length, 0);
  }
  const { ctx } = toolCtx(dir, { agent: "plan" });
  const r = await hooks.tool.ast_grep_search.execute({ pattern: "print($A)", lang: "python" }, ctx);
  assert.match(r.output, /^Found 2 matches/, "a read-only agent may still search");
  assert.equal(readFileSync(path.join(dir, "app.py"), "utf8"), 'def main():\n    print("hello")\n');
});

test("ast_grep_replace outside the worktree is blocked with slim's message", async (t) => {
  if (needAstGrep(t)) return;
  const dir = astProject();
  const hooks = await astHooks(dir);
  const { ctx, asked } = toolCtx(dir);
  await assert.rejects(
    hooks.tool.ast_grep_replace.execute({ pattern: "print($A)", rewrite: "log($A)", lang: "python", paths: [".."], dryRun: false }, ctx),
    /^Error: ast_grep_replace blocked: the path "\.\." /,
  );
  assert.equal(asked.length, 0);
});

test("ast tools: an abort sends slim SIGTERM and the call ends", { skip: process.platform === "win32" }, async () => {
  const marker = path.join(work, "abort.marker");
  process.env.SLIM_BIN = fakeSlim(
    "abortable",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1}'; exit 0; fi
trap 'echo term > "${marker}"; exit 1' TERM
sleep 30 & wait`,
  );
  const hooks = await (await loadPlugin())(hostInput(project()));
  const ac = new AbortController();
  const { ctx } = toolCtx(project(), { abort: ac.signal });
  const t0 = Date.now();
  const call = hooks.tool.ast_grep_search.execute({ pattern: "x", lang: "go" }, ctx);
  setTimeout(() => ac.abort(), 300);
  await assert.rejects(call, /ast_grep_search: slim exited with 1 without an answer/);
  assert.ok(Date.now() - t0 < 5000, `the aborted call took ${Date.now() - t0} ms`);
  assert.equal(readFileSync(marker, "utf8").trim(), "term");
});

// ---- the webfetch tool ----

// A documentation page: navigation, an article with a Go code block, and a
// footer. slim keeps the article and drops the rest.
const DOC_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Installing Widgets</title></head>
<body>
<nav><ul><li><a href="/">NAVLINK Home</a></li><li><a href="/blog">NAVLINK Blog</a></li><li><a href="/about">NAVLINK About</a></li></ul></nav>
<main><article>
<h1>Installing Widgets</h1>
<p>Widgets are installed with a single command. This guide explains every step of the installation
in detail, so that a first-time reader can follow it without any prior knowledge of widgets.</p>
<p>First download the release for your platform, then unpack it into a directory on your PATH. The
widget binary needs no configuration file; it reads its settings from the environment.</p>
<pre><code class="language-go">package main

func main() { widgets.Install() }
</code></pre>
<p>After the installation, run the widget once to check that it starts. It prints its version and exits.</p>
</article></main>
<footer><p>FOOTERTEXT Copyright Widgets Inc.</p></footer>
</body></html>
`;

// docServer serves DOC_PAGE at /docs/install.html (and a page that never
// answers at /hang) on 127.0.0.1, and records every request it gets.
async function docServer(t) {
  const { createServer } = await import("node:http");
  const seen = [];
  const hanging = [];
  const srv = createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, ua: req.headers["user-agent"] || "" });
    if (req.url === "/hang") {
      hanging.push(res);
      return;
    }
    if (req.url !== "/docs/install.html") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(DOC_PAGE);
  });
  await new Promise((ok) => srv.listen(0, "127.0.0.1", ok));
  t.after(() => {
    for (const res of hanging) res.destroy();
    srv.closeAllConnections();
    srv.close();
  });
  return { base: `http://127.0.0.1:${srv.address().port}`, seen };
}

// recordingSlim runs the real slim and records each fetch: as a process,
// its arguments (one line) and stdin (the next line) in the returned log
// file; through the resident slim, the frames it was sent, in the log file
// with ".frames" appended.
function recordingSlim() {
  const log = path.join(work, `argv-${++pluginSeq}.log`);
  const bin = fakeSlim(
    `recording-${pluginSeq}`,
    `if [ "$1" = fetch ]; then
  in=$(cat)
  printf '%s\\n' "$*" >> "${log}"
  printf '%s\\n' "$in" >> "${log}"
  printf '%s' "$in" | "${realSlim}" "$@"
  exit $?
fi
if [ "$1 $2" = "hook serve" ]; then
  tee -a "${log}.frames" | "${realSlim}" "$@"
  exit $?
fi
exec "${realSlim}" "$@"`,
  );
  return { bin, log };
}

// fetchCalls lists the fetches recordingSlim saw, {argv, stdin, served},
// processes first, then the resident slim's runs in the order sent.
function fetchCalls(log) {
  const out = [];
  if (existsSync(log)) {
    const lines = readFileSync(log, "utf8").split("\n");
    for (let i = 0; i + 1 < lines.length; i += 2) out.push({ argv: lines[i], stdin: lines[i + 1], served: false });
  }
  if (existsSync(log + ".frames")) {
    for (const line of readFileSync(log + ".frames", "utf8").split("\n").filter(Boolean)) {
      const f = JSON.parse(line);
      if (f.run && f.run.args[0] === "fetch") out.push({ argv: f.run.args.join(" "), stdin: f.run.stdin, served: true });
    }
  }
  return out;
}

function fetchEnv(allowPrivate) {
  process.env.SLIM_CACHE_DIR = mkdtempSync(path.join(work, "fetch-cache-"));
  if (allowPrivate) process.env.SLIM_FETCH_ALLOW_PRIVATE = "1";
  else delete process.env.SLIM_FETCH_ALLOW_PRIVATE;
}

test("webfetch: registered with every argument; the model's schema requires only url", async () => {
  process.env.SLIM_BIN = realSlim;
  const hooks = await (await loadPlugin())(hostInput(project()));
  const wf = hooks.tool.webfetch;
  assert.deepEqual(Object.keys(wf.args), ["url", "format", "timeout", "prompt", "extract_main", "prefer_llms_txt", "include_metadata", "save_binary"]);
  assert.deepEqual(wf.args.format.enum, ["markdown", "text", "html"]);
  assert.deepEqual(wf.args.prefer_llms_txt.enum, ["auto", "always", "never"]);
  assert.match(wf.description, /markdown/);
  assert.match(wf.description, /redirect to another host is not followed/);
  assert.match(wf.description, /save_binary/);
  const ours = { description: wf.description, parameters: {}, jsonSchema: { required: Object.keys(wf.args) } };
  await hooks["tool.definition"]({ toolID: "webfetch" }, ours);
  assert.deepEqual(ours.jsonSchema.required, ["url"]);
  assert.deepEqual(Object.keys(ours.jsonSchema.properties), Object.keys(wf.args));
  // The host asks for its own webfetch first; that definition stays as it is.
  const builtin = { description: "Fetches content from a specified URL", parameters: {}, jsonSchema: null };
  await hooks["tool.definition"]({ toolID: "webfetch" }, builtin);
  assert.equal(builtin.jsonSchema, null);
});

test("webfetch: asks for the plan's URLs, then returns slim's markdown; the context goes on the command line", async (t) => {
  fetchEnv(true);
  const srv = await docServer(t);
  const rec = recordingSlim();
  process.env.SLIM_BIN = rec.bin;
  const pluginDir = project();
  const hooks = await (await loadPlugin())(hostInput(pluginDir));
  const sessionDir = project();
  const titles = [];
  const { ctx, asked } = toolCtx(sessionDir, { sessionID: "ses_fetch", metadata: (m) => titles.push(m.title) });
  const url = `${srv.base}/docs/install.html#step-2`;
  const r = await hooks.tool.webfetch.execute({ url, prefer_llms_txt: "never" }, ctx);

  assert.equal(asked.length, 1);
  const https = srv.base.replace("http:", "https:") + "/docs/install.html";
  const http = srv.base + "/docs/install.html";
  assert.deepEqual(asked[0], {
    permission: "webfetch",
    patterns: [https, http],
    always: [https, http],
    metadata: { url: https, requested_url: url, fallback_url: http, llms_probe_enabled: false, format: "markdown", prompt: undefined },
  });
  assert.deepEqual(titles, [`webfetch ${https}`]);

  assert.ok(r.output.startsWith(`---\nrequested_url: ${JSON.stringify(url)}\n`), r.output.slice(0, 300));
  assert.match(r.output, /Widgets are installed with a single command\./);
  assert.match(r.output, /```go\npackage main\n/);
  assert.ok(!r.output.includes("NAVLINK") && !r.output.includes("FOOTERTEXT"), r.output);
  assert.equal(r.title, "Installing Widgets");
  assert.match(r.metadata.contentType, /^text\/html/);
  assert.equal(r.metadata.truncated, false);

  const calls = fetchCalls(rec.log);
  assert.equal(calls.length, 2);
  assert.ok(calls.every((c) => c.served), "both fetches ran in the resident slim");
  assert.equal(calls[0].argv, "fetch --json --plan -");
  assert.equal(calls[1].argv, `fetch --json --opencode-url http://127.0.0.1:4096/ --session-id ses_fetch --directory ${sessionDir} -`);
  for (const c of calls) assert.deepEqual(JSON.parse(c.stdin), { url, prefer_llms_txt: "never" });
  assert.deepEqual(srv.seen.map((s) => s.url), ["/docs/install.html"]);
  assert.match(srv.seen[0].ua, /^slim-fetch\//);

  // Without a session directory the plugin's own directory is the one.
  const { ctx: bare } = toolCtx(sessionDir, { directory: undefined, sessionID: undefined });
  await hooks.tool.webfetch.execute({ url, prefer_llms_txt: "never" }, bare);
  assert.equal(fetchCalls(rec.log)[3].argv, `fetch --json --opencode-url http://127.0.0.1:4096/ --directory ${pluginDir} -`);
});

test("webfetch: a refused permission, or a host that cannot ask, fetches nothing", async (t) => {
  fetchEnv(true);
  const srv = await docServer(t);
  const rec = recordingSlim();
  process.env.SLIM_BIN = rec.bin;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const url = `${srv.base}/docs/install.html`;
  const { ctx } = toolCtx(dir, {
    async ask() {
      throw new Error("The user has specified a rule which prevents you from using this specific tool call.");
    },
  });
  await assert.rejects(hooks.tool.webfetch.execute({ url }, ctx), /^Error: The user has specified a rule/);
  assert.deepEqual(fetchCalls(rec.log).map((c) => c.argv), ["fetch --json --plan -"]);
  const { ctx: noAsk } = toolCtx(dir, { ask: undefined });
  await assert.rejects(hooks.tool.webfetch.execute({ url }, noAsk), /no way to ask for the webfetch permission, so nothing was fetched/);
  assert.equal(fetchCalls(rec.log).length, 1, "without a way to ask, not even the plan runs");
  assert.deepEqual(srv.seen, []);
});

test("webfetch: slim's errors reach the model unchanged; a bad argument asks nothing", async (t) => {
  fetchEnv(false);
  const srv = await docServer(t);
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const { ctx, asked } = toolCtx(dir);
  for (const [args, want] of [
    [{ url: "ftp://example.com/x" }, /^Error: url "ftp:\/\/example\.com\/x": only http and https URLs can be fetched/],
    [{ url: "https://example.com/", timeout: 500 }, /^Error: timeout must be more than 0 and at most 120 seconds/],
    [{ url: "https://example.com/", format: "pdf" }, /^Error: format must be markdown, text or html/],
    [{}, /^Error: url is required/],
  ]) {
    await assert.rejects(hooks.tool.webfetch.execute(args, ctx), want, JSON.stringify(args));
  }
  assert.equal(asked.length, 0);
  // Loopback is refused by slim's address policy unless the operator opened it.
  await assert.rejects(hooks.tool.webfetch.execute({ url: `${srv.base}/docs/install.html` }, ctx), (err) => {
    assert.match(err.message, /loopback/);
    assert.match(err.message, /SLIM_FETCH_ALLOW_PRIVATE=1/);
    return true;
  });
  assert.equal(asked.length, 1, "the permission is asked before the fetch");
  assert.deepEqual(srv.seen, []);
});

test("webfetch: a slim that answers no JSON fails with its exit status and stderr", async () => {
  process.env.SLIM_BIN = fakeSlim(
    "fetch-broken",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1,"features":["fetch"]}'; exit 0; fi
cat > /dev/null
for a in "$@"; do if [ "$a" = --plan ]; then echo '{"url":"https://example.com/","requested_url":"https://example.com/","llms_probe_enabled":false,"patterns":["https://example.com/"],"always":["https://example.com/"],"allowed_origins":["https://example.com"],"format":"markdown"}'; exit 0; fi; done
echo "panic: something broke" >&2
exit 3`,
  );
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const { ctx, asked } = toolCtx(dir);
  await assert.rejects(hooks.tool.webfetch.execute({ url: "https://example.com/" }, ctx), /^Error: webfetch: slim exited with 3 without an answer: panic: something broke$/);
  assert.deepEqual(asked[0].patterns, ["https://example.com/"]);
});

test("webfetch: a slim without fetch leaves the host's own webfetch in place", async () => {
  process.env.SLIM_BIN = fakeSlim("nofetch", `if [ "$1" = version ]; then echo '{"version":"t","protocol":1,"features":["search"]}'; exit 0; fi
exit 2`);
  const hooks = await (await loadPlugin())(hostInput(project()));
  assert.equal(hooks.tool.webfetch, undefined);
  assert.ok(hooks.tool.ast_grep_search, "the other tools stay");
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /this slim has no fetch/);
});

test("webfetch: an abort stops slim and the call ends", { skip: process.platform === "win32" }, async (t) => {
  fetchEnv(true);
  const srv = await docServer(t);
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const ac = new AbortController();
  const { ctx } = toolCtx(dir, { abort: ac.signal });
  const t0 = Date.now();
  const call = hooks.tool.webfetch.execute({ url: `${srv.base}/hang`, prefer_llms_txt: "never" }, ctx);
  const deadline = Date.now() + 10000;
  while (!srv.seen.some((s) => s.url === "/hang") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(srv.seen.some((s) => s.url === "/hang"), "slim never reached the page");
  ac.abort();
  await assert.rejects(call, /^Error: /);
  assert.ok(Date.now() - t0 < 15000, `the aborted call took ${Date.now() - t0} ms (its fetch timeout is 30 s)`);
});

// ---- the background task tools ----

// fakeHost starts the fake OpenCode server (fixtures/cmd/fakeopencode) and
// returns its base URL; it stops with the test.
let fakeBin;
async function fakeHost(t) {
  if (!fakeBin) {
    fakeBin = path.join(work, "bin", "fakeopencode");
    execFileSync("go", ["build", "-o", fakeBin, "./fixtures/cmd/fakeopencode"], { cwd: repoRoot, env: { ...process.env, CGO_ENABLED: "0" }, stdio: ["ignore", "inherit", "inherit"] });
  }
  const { spawn } = await import("node:child_process");
  const child = spawn(fakeBin, [], { stdio: ["pipe", "pipe", "inherit"] });
  t.after(() => child.kill());
  const url = await new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (b) => {
      buf += b;
      const i = buf.indexOf("\n");
      if (i >= 0) resolve(buf.slice(0, i).trim());
    });
    child.on("exit", (code) => reject(new Error(`fakeopencode exited ${code}`)));
  });
  const control = async (method, p, body) => {
    const r = await fetch(url + "/__fake" + p, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    assert.ok(r.ok, `${method} ${p}: ${r.status} ${await r.text()}`);
  };
  return { url, control };
}

const TASK_TOOL_NAMES = ["task_status", "task_result", "task_message", "task_cancel", "task_revive", "wait_for_user"];

test("task tools: registered with their schemas when slim has them", async () => {
  process.env.SLIM_BIN = realSlim;
  const hooks = await (await loadPlugin())(hostInput(project()));
  for (const name of TASK_TOOL_NAMES) {
    const tool = hooks.tool[name];
    assert.ok(tool, name);
    const out = { description: tool.description, parameters: {} };
    await hooks["tool.definition"]({ toolID: name }, out);
    assert.equal(out.jsonSchema.type, "object", name);
    assert.ok(out.jsonSchema.required.length >= 1, name);
  }
  process.env.SLIM_BIN = fakeSlim("notasks", `if [ "$1" = version ]; then echo '{"version":"t","protocol":1,"features":["search","fetch"]}'; exit 0; fi
exit 2`);
  delete globalThis[REGISTRY_KEY];
  const old = await (await loadPlugin())(hostInput(project()));
  for (const name of TASK_TOOL_NAMES) assert.equal(old.tool[name], undefined, name);
});

test("task tools: a background task the host's task tool started is tracked and answered for", async (t) => {
  const { url, control } = await fakeHost(t);
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())({ ...hostInput(dir), serverUrl: new URL(url) });
  await control("POST", "/session", { id: "ses_kid1", parentID: "ses_boss" });
  await hooks["tool.execute.after"](
    { tool: "task", sessionID: "ses_boss", callID: "call_t1", args: { description: "Map auth", prompt: "find it", subagent_type: "explorer", background: true } },
    { title: "Map auth", output: '<task id="ses_kid1" state="running">\n<summary>Background task started</summary>\n</task>', metadata: {} },
  );
  const { ctx } = toolCtx(dir, { sessionID: "ses_boss", agent: "orchestrator" });
  const status = await hooks.tool.task_status.execute({ task_id: "exp-1" }, ctx);
  assert.match(status.output, /^Task exp-1 \(ses_kid1\)\nstate: /);
  await assert.rejects(hooks.tool.task_result.execute({ task_id: "exp-9" }, ctx), /^Error: Unknown task ID or alias: exp-9$/);
  // Another session does not see it.
  const other = toolCtx(dir, { sessionID: "ses_other", agent: "orchestrator" }).ctx;
  await assert.rejects(hooks.tool.task_status.execute({ task_id: "exp-1" }, other), /Unknown task ID or alias: exp-1/);
});

test("wait_for_user: arms the wait for an orchestrator and refuses other agents", async (t) => {
  const { url } = await fakeHost(t);
  process.env.SLIM_BIN = realSlim;
  const dir = project();
  const hooks = await (await loadPlugin())({ ...hostInput(dir), serverUrl: new URL(url) });
  const { ctx } = toolCtx(dir, { sessionID: "ses_boss", agent: "orchestrator" });
  const r = await hooks.tool.wait_for_user.execute({ reason: "  run   the migration  " }, ctx);
  assert.equal(
    r.output,
    "state: waiting_for_user\nprotocol: oh-my-opencode-slim.wait_for_user.v1\nreason: run the migration\n\nEnd this turn now. Do not call more tools until the user responds.",
  );
  const fixer = toolCtx(dir, { sessionID: "ses_boss", agent: "fixer" }).ctx;
  await assert.rejects(hooks.tool.wait_for_user.execute({ reason: "x" }, fixer), /^Error: wait_for_user can only be used by orchestrator$/);
  await assert.rejects(hooks.tool.wait_for_user.execute({ reason: "   " }, ctx), /^Error: wait_for_user requires a non-empty reason$/);
});

test("chat messages and status events carry what the task tools need", async () => {
  process.env.SLIM_BIN = scriptedSlim();
  process.env.FAKE_LOG = path.join(work, "events.log");
  process.env.FAKE_ANSWER = '{"v":1,"action":"pass"}';
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const user = { message: { id: "msg_u1", role: "user" }, parts: [{ type: "text", text: "done, go on" }] };
  const injected = { message: { id: "msg_u2", role: "user" }, parts: [{ type: "text", text: "wake", synthetic: true, metadata: { "oh-my-opencode-slim.internalInitiator": true } }] };
  const synthetic = { message: { id: "msg_u3", role: "user" }, parts: [{ type: "text", text: "x", synthetic: true }] };
  await hooks["chat.message"]({ sessionID: "ses_boss", agent: "orchestrator", messageID: "msg_u1" }, user);
  await hooks["chat.message"]({ sessionID: "ses_boss", agent: "orchestrator" }, injected);
  await hooks["chat.message"]({ sessionID: "ses_boss" }, synthetic);
  await hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_kid", status: { type: "busy" } } } });
  const reqs = readRequests(process.env.FAKE_LOG);
  assert.deepEqual(reqs.map((r) => r.event), [
    { type: "chat.message", sessionID: "ses_boss", messageID: "msg_u1", agent: "orchestrator", external: "true" },
    { type: "chat.message", sessionID: "ses_boss", messageID: "msg_u2", agent: "orchestrator", external: "false" },
    { type: "chat.message", sessionID: "ses_boss", messageID: "msg_u3", external: "false" },
    { type: "session.status", sessionID: "ses_kid", status: "busy" },
  ]);
});

// A fake slim with the tasks feature that records every `tasks wake` it is
// run for (its arguments, one line each, in $FAKE_WAKES) and answers it
// $FAKE_WAKE with exit $FAKE_WAKE_EXIT; hook phases pass.
function wakeSlim() {
  return fakeSlim(
    "wake",
    `if [ "$1" = version ]; then echo '{"version":"t","protocol":1,"features":["tasks"]}'; exit 0; fi
if [ "$1" = tasks ] && [ "$2" = wake ]; then echo "$*" >> "$FAKE_WAKES"; printf '%s\\n' "$FAKE_WAKE"; exit \${FAKE_WAKE_EXIT:-0}; fi
cat > /dev/null; printf '%s' '{"v":1,"action":"pass"}'`,
  );
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const wakeRuns = () => (existsSync(process.env.FAKE_WAKES) ? readFileSync(process.env.FAKE_WAKES, "utf8").split("\n").filter(Boolean) : []);

test("an idle spell runs slim tasks wake once after the wake interval, and a busy, a chat message or slim's answer ends it", async () => {
  process.env.SLIM_BIN = wakeSlim();
  process.env.FAKE_WAKES = path.join(work, `wakes-${++pluginSeq}.log`);
  process.env.FAKE_WAKE = "sent msg_wake1";
  process.env.SLIM_TASKS_WAKE_INTERVAL_MS = "1000";
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const idle = (id) => hooks.event({ event: { type: "session.idle", properties: { sessionID: id } } });
  const busy = (id) => hooks.event({ event: { type: "session.status", properties: { sessionID: id, status: { type: "busy" } } } });

  await idle("ses_boss");
  await sleep(600);
  assert.deepEqual(wakeRuns(), [], "a wake before the interval");
  await sleep(900);
  assert.deepEqual(wakeRuns(), [`tasks wake --session ses_boss --directory ${dir} --server-url http://127.0.0.1:4096/`]);
  await sleep(1200);
  assert.equal(wakeRuns().length, 1, "slim's answer did not end the spell");

  // A busy (or a chat message) before the interval: no wake.
  await idle("ses_boss");
  await sleep(300);
  await busy("ses_boss");
  await idle("ses_kid");
  await sleep(200);
  await hooks["chat.message"]({ sessionID: "ses_kid", agent: "explorer" }, { message: { id: "msg_k", role: "user" }, parts: [] });
  await sleep(1000);
  assert.equal(wakeRuns().length, 1, "a wake after the spell ended");

  // A failed run is tried again each interval while the spell lasts.
  process.env.FAKE_WAKE_EXIT = "1";
  await idle("ses_boss");
  await sleep(2400);
  assert.equal(wakeRuns().length, 3, "a failed wake is not tried again");
  await busy("ses_boss");
  await sleep(1200);
  assert.equal(wakeRuns().length, 3, "a busy did not end a failing spell");
  await hooks.dispose();
});

test("SLIM_TASKS_WAKE=0, or a value slim does not take as on, starts no wake timer", async () => {
  for (const value of ["0", "maybe"]) {
    delete globalThis[REGISTRY_KEY];
    process.env.SLIM_BIN = wakeSlim();
    process.env.FAKE_WAKES = path.join(work, `wakes-${++pluginSeq}.log`);
    process.env.SLIM_TASKS_WAKE = value;
    process.env.SLIM_TASKS_WAKE_INTERVAL_MS = "1000";
    const hooks = await (await loadPlugin())(hostInput(project()));
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_boss" } } });
    await sleep(1300);
    assert.deepEqual(wakeRuns(), [], `SLIM_TASKS_WAKE=${value}`);
    await hooks.dispose();
  }
});

// ---- apply mode ----

const BOM = "\ufeff";

function applyProject() {
  const dir = project();
  writeFileSync(path.join(dir, "crlf.txt"), "one\r\ntwo\r\nthree\r\n");
  writeFileSync(path.join(dir, "bom.txt"), BOM + "alpha\nbeta\n");
  writeFileSync(path.join(dir, "nofinal.txt"), "first\nlast");
  return dir;
}

const APPLY_PATCH =
  "*** Begin Patch\n" +
  "*** Update File: crlf.txt\n@@\n one\n-two\n+TWO\n three\n" +
  "*** Update File: bom.txt\n@@\n-alpha\n+ALPHA\n beta\n" +
  "*** Update File: nofinal.txt\n@@\n first\n-last\n+LAST\n" +
  "*** Add File: sub/new.txt\n+hello\n" +
  "*** End Patch";

function snapshotFiles(dir, names) {
  return Object.fromEntries(names.map((n) => [n, existsSync(path.join(dir, n)) ? readFileSync(path.join(dir, n)).toString("latin1") : null]));
}

async function applyHooks(dir, settings = { apply: true }) {
  process.env.SLIM_BIN = realSlim;
  return (await loadPlugin(settings))(hostInput(dir));
}

test("apply mode: off unless the settings file or SLIM_APPLY turns it on", async () => {
  const dir = project();
  assert.equal((await applyHooks(dir, null)).tool.apply_patch, undefined);
  delete globalThis[REGISTRY_KEY];
  assert.equal(typeof (await applyHooks(dir, { apply: true })).tool.apply_patch.execute, "function");
  delete globalThis[REGISTRY_KEY];
  assert.equal((await applyHooks(dir, { apply: false })).tool.apply_patch, undefined);
  delete globalThis[REGISTRY_KEY];
  process.env.SLIM_APPLY = "0";
  assert.equal((await applyHooks(dir, { apply: true })).tool.apply_patch, undefined);
  delete globalThis[REGISTRY_KEY];
  process.env.SLIM_APPLY = "1";
  assert.equal(typeof (await applyHooks(dir, null)).tool.apply_patch.execute, "function");
  delete globalThis[REGISTRY_KEY];
  delete process.env.SLIM_APPLY;
  // A malformed file leaves apply mode off and says why in the log.
  writeFileSync(process.env.SLIM_PLUGIN_LOG, "");
  assert.equal((await applyHooks(dir, "{not json")).tool.apply_patch, undefined);
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /apply mode setting ignored: .*slim\.json is not valid JSON/);
  delete globalThis[REGISTRY_KEY];
  assert.equal((await applyHooks(dir, { apply: "yes" })).tool.apply_patch, undefined);
  delete globalThis[REGISTRY_KEY];
  // A slim that cannot apply keeps the host's own tool.
  process.env.SLIM_BIN = fakeSlim("noapply", `if [ "$1" = version ]; then echo '{"version":"t","protocol":1,"features":["search"]}'; exit 0; fi
exit 1`);
  assert.equal((await (await loadPlugin({ apply: true }))(hostInput(dir))).tool.apply_patch, undefined);
});

test("apply mode: asks the edit permission once for the relative paths, then writes every file byte for byte", async () => {
  const dir = applyProject();
  const hooks = await applyHooks(dir);
  const { ctx, asked } = toolCtx(dir);
  const r = await hooks.tool.apply_patch.execute({ patchText: APPLY_PATCH }, ctx);
  assert.equal(r.output, "Success. Updated the following files:\nM crlf.txt\nM bom.txt\nM nofinal.txt\nA sub/new.txt");
  assert.equal(r.title, "Success. Updated the following files:");
  assert.equal(asked.length, 1);
  assert.equal(asked[0].permission, "edit");
  assert.deepEqual(asked[0].patterns, ["crlf.txt", "bom.txt", "nofinal.txt", "sub/new.txt"]);
  assert.deepEqual(asked[0].always, ["*"]);
  assert.equal(asked[0].metadata.filepath, "crlf.txt, bom.txt, nofinal.txt, sub/new.txt");
  assert.match(asked[0].metadata.diff, /^--- a\/crlf\.txt\n\+\+\+ b\/crlf\.txt\n@@ -1,3 \+1,3 @@\n one\n-two\n\+TWO\n three\n\n--- a\/bom\.txt/);
  assert.deepEqual(
    r.metadata.files.map((f) => [f.filePath, f.relativePath, f.type, f.additions, f.deletions]),
    [
      [path.join(dir, "crlf.txt"), "crlf.txt", "update", 1, 1],
      [path.join(dir, "bom.txt"), "bom.txt", "update", 1, 1],
      [path.join(dir, "nofinal.txt"), "nofinal.txt", "update", 1, 1],
      [path.join(dir, "sub", "new.txt"), "sub/new.txt", "add", 1, 0],
    ],
  );
  assert.match(r.metadata.files[2].patch, /-last\n\\ No newline at end of file\n\+LAST\n\\ No newline at end of file\n$/);
  assert.equal(r.metadata.diff, asked[0].metadata.diff);
  assert.deepEqual(snapshotFiles(dir, ["crlf.txt", "bom.txt", "nofinal.txt", "sub/new.txt"]), {
    "crlf.txt": "one\r\nTWO\r\nthree\r\n",
    "bom.txt": Buffer.from(BOM + "ALPHA\nbeta\n").toString("latin1"),
    "nofinal.txt": "first\nLAST",
    "sub/new.txt": "hello\n",
  });
});

test("apply mode: a patch whose second file fails writes nothing, asks nothing, and says why", async () => {
  const dir = applyProject();
  const hooks = await applyHooks(dir);
  const { ctx, asked } = toolCtx(dir);
  const before = snapshotFiles(dir, ["crlf.txt", "bom.txt"]);
  await assert.rejects(
    hooks.tool.apply_patch.execute({ patchText: "*** Begin Patch\n*** Update File: crlf.txt\n@@\n-two\n+TWO\n*** Update File: bom.txt\n@@\n-gamma\n+GAMMA\n*** End Patch" }, ctx),
    /^Error: apply_patch verification failed: .*bom\.txt/,
  );
  assert.equal(asked.length, 0);
  assert.deepEqual(snapshotFiles(dir, ["crlf.txt", "bom.txt"]), before);
});

test("apply mode: a rejected permission writes nothing; a host that cannot ask gets no write", async () => {
  const dir = applyProject();
  const hooks = await applyHooks(dir);
  const before = snapshotFiles(dir, ["crlf.txt", "bom.txt", "nofinal.txt", "sub/new.txt"]);
  const { ctx } = toolCtx(dir, {
    async ask() {
      throw new Error("The user rejected permission to use this specific tool call.");
    },
  });
  await assert.rejects(hooks.tool.apply_patch.execute({ patchText: APPLY_PATCH }, ctx), /rejected permission/);
  const { ctx: noAsk } = toolCtx(dir, { ask: undefined });
  await assert.rejects(hooks.tool.apply_patch.execute({ patchText: APPLY_PATCH }, noAsk), /no way to ask for the edit permission/);
  await assert.rejects(hooks.tool.apply_patch.execute({}, toolCtx(dir).ctx), /^Error: patchText is required$/);
  assert.deepEqual(snapshotFiles(dir, ["crlf.txt", "bom.txt", "nofinal.txt", "sub/new.txt"]), before);
});

test("apply mode: a file edited while the user was asked stops the apply; the edit survives", async () => {
  const dir = applyProject();
  const hooks = await applyHooks(dir);
  const { ctx } = toolCtx(dir, {
    async ask() {
      writeFileSync(path.join(dir, "bom.txt"), BOM + "alpha\nbeta\nsomeone else's line\n");
    },
  });
  await assert.rejects(
    hooks.tool.apply_patch.execute({ patchText: APPLY_PATCH }, ctx),
    /^Error: apply_patch verification failed: File changed since the patch was shown for approval: .*bom\.txt; nothing was written/,
  );
  assert.equal(readFileSync(path.join(dir, "crlf.txt"), "utf8"), "one\r\ntwo\r\nthree\r\n");
  assert.equal(readFileSync(path.join(dir, "bom.txt"), "utf8"), BOM + "alpha\nbeta\nsomeone else's line\n");
  assert.ok(!existsSync(path.join(dir, "sub")));
});

test("apply mode: the host's abort in the middle of an apply puts every file back", { skip: process.platform === "win32" }, async () => {
  const dir = applyProject();
  const hooks = await applyHooks(dir);
  const before = snapshotFiles(dir, ["crlf.txt", "bom.txt", "nofinal.txt", "sub/new.txt"]);
  process.env.SLIM_APPLY_PAUSE_MS = "30000";
  const abort = new AbortController();
  const { ctx } = toolCtx(dir, { abort: abort.signal });
  const call = hooks.tool.apply_patch.execute({ patchText: APPLY_PATCH }, ctx);
  // The first file is written, then slim waits before the second one.
  const deadline = Date.now() + 20000;
  while (readFileSync(path.join(dir, "crlf.txt"), "utf8") === "one\r\ntwo\r\nthree\r\n") {
    assert.ok(Date.now() < deadline, "the first file was never written");
    await new Promise((r) => setTimeout(r, 20));
  }
  abort.abort();
  await assert.rejects(call, /^Error: apply_patch internal error: interrupted before .* was written; every file was restored/);
  assert.deepEqual(snapshotFiles(dir, ["crlf.txt", "bom.txt", "nofinal.txt", "sub/new.txt"]), before);
});

test("apply mode: the before hook leaves apply_patch to the tool, which still blocks a path outside", async () => {
  const dir = applyProject();
  const hooks = await applyHooks(dir);
  const escape = { patchText: "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch" };
  await hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c1" }, { args: escape });
  await assert.rejects(hooks.tool.apply_patch.execute(escape, toolCtx(dir).ctx), /^Error: apply_patch blocked: /);
  assert.ok(!existsSync(path.join(dir, "..", "escape.txt")));
});

test("apply mode: the host's own apply_patch description is given to the replacement", async () => {
  const dir = project();
  const hooks = await applyHooks(dir);
  const own = hooks.tool.apply_patch.description;
  const mine = { description: own, parameters: {} };
  await hooks["tool.definition"]({ toolID: "apply_patch" }, mine);
  assert.equal(mine.description, own, "nothing to copy before the host showed its own");
  await hooks["tool.definition"]({ toolID: "apply_patch" }, { description: "HOST GRAMMAR", parameters: {} });
  const again = { description: own, parameters: {} };
  await hooks["tool.definition"]({ toolID: "apply_patch" }, again);
  assert.equal(again.description, "HOST GRAMMAR");
});

test("apply mode: a slim that hangs, dies or answers nonsense fails the call with a message that says so", { skip: process.platform === "win32" }, async () => {
  const dir = applyProject();
  const version = `if [ "$1" = version ]; then echo '{"version":"t","protocol":1,"features":["apply"]}'; exit 0; fi`;
  const cases = [
    ["hang", `${version}\nsleep 30`, /^Error: apply_patch: slim did not answer in time and was stopped$/],
    ["die", `${version}\necho boom >&2; exit 1`, /^Error: apply_patch: slim exited with 1 without a result: boom$/],
    ["nonsense", `${version}\necho '{"v":1,"action":"pass"}'`, /^Error: apply_patch: slim exited with 0 without a result$/],
    ["hang after the ask", `${version}\necho '{"v":1,"action":"ask","ask":{"permission":"edit","patterns":["crlf.txt"],"always":["*"],"metadata":{}}}'; sleep 30`, /^Error: apply_patch: slim was stopped \(SIGTERM\) without a result$/],
  ];
  process.env.SLIM_HOOK_TIMEOUT_MS = "500";
  for (const [name, body, want] of cases) {
    delete globalThis[REGISTRY_KEY];
    process.env.SLIM_BIN = fakeSlim(`apply-${name.replace(/ /g, "-")}`, body);
    const hooks = await (await loadPlugin({ apply: true }))(hostInput(dir));
    const { ctx } = toolCtx(dir);
    if (name === "hang after the ask") {
      // The apply itself has 300 s; abort it as the host would.
      const abort = new AbortController();
      ctx.abort = abort.signal;
      setTimeout(() => abort.abort(), 300);
    }
    await assert.rejects(hooks.tool.apply_patch.execute({ patchText: APPLY_PATCH }, ctx), want, name);
  }
});

// ---- the resident slim ----

// readsAndRefusal runs seven identical reads through the plugin's hooks and
// returns one letter per read: . ran, N ran with the loop notice, R refused.
async function readsAndRefusal(hooks, dir, session) {
  const results = [];
  for (let i = 1; i <= 7; i++) {
    const args = { filePath: path.join(dir, "a.txt") };
    const callID = `${session}_${i}`;
    try {
      await hooks["tool.execute.before"]({ tool: "read", sessionID: session, callID }, { args });
    } catch (e) {
      results.push(String(e.message).startsWith('Refusing to execute "read"') ? "R" : `error ${e.message}`);
      continue;
    }
    const output = { output: "same content\n" };
    await hooks["tool.execute.after"]({ tool: "read", sessionID: session, callID, args }, output);
    results.push(output.output.includes("[REPEATED TOOL CALLS - STOP]") ? "N" : ".");
  }
  return results.join("");
}

function spawnLog(name) {
  const log = path.join(work, `${name}.log`);
  process.env.SLIM_BIN = fakeSlim(name, `printf '%s %s\\n' "$$" "$*" >> "${log}"\nexec "${realSlim}" "$@"`);
  // The synchronous channel's directory is new each time: "hook serve
  // --sync DIR" is logged as "hook serve --sync".
  return () =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => l.replace(/^\d+ /, "").replace(/^hook serve --sync \S+$/, "hook serve --sync"))
      : [];
}

test("resident slim: every hook goes through one slim hook serve, with the same answers as a process per call", async () => {
  const spawned = spawnLog("resident-counting");
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  assert.equal(await readsAndRefusal(hooks, dir, "ses_res"), "..NNNRR");
  // apply_patch's check is served too: an outside patch is refused.
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "p1" }, { args: { patchText: "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch" } }),
    /^Error: apply_patch blocked: /,
  );
  await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_res" } } } });
  assert.deepEqual(spawned(), ["version --json", "hook serve --sync"]);
  await hooks.dispose();
});

test("resident slim: when it dies the next calls run a process each and a new one starts; SLIM_SERVE=0 never starts it", { skip: process.platform === "win32" }, async () => {
  const spawned = spawnLog("resident-dying");
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_d", callID: "b0", args: { command: "ls" } }, { output: "x" });
  const pidLine = readFileSync(path.join(work, "resident-dying.log"), "utf8").split("\n").find((l) => / hook serve( --sync \S+)?$/.test(l));
  process.kill(Number(pidLine.split(" ")[0]), "SIGKILL");
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await readsAndRefusal(hooks, dir, "ses_dying"), "..NNNRR");
  const lines = spawned();
  assert.equal(lines.filter((l) => l === "hook serve --sync").length, 2, "a new resident slim after the first died");
  await hooks.dispose();

  delete globalThis[REGISTRY_KEY];
  const spawnedOff = spawnLog("resident-off");
  process.env.SLIM_SERVE = "0";
  const off = await (await loadPlugin())(hostInput(project()));
  await off["tool.execute.after"]({ tool: "bash", sessionID: "ses_o", callID: "b1", args: { command: "ls" } }, { output: "x" });
  assert.deepEqual(spawnedOff(), ["version --json", "hook after"]);
});

test("resident slim: a request it does not answer in time fails like a process that timed out, and it is replaced", { skip: process.platform === "win32" }, async () => {
  // A slim whose resident form reads and never answers.
  process.env.SLIM_BIN = fakeSlim(
    "resident-hang",
    `if [ "$1" = version ]; then exec "${realSlim}" "$@"; fi
if [ "$2" = serve ]; then echo started >> "${path.join(work, "hang.log")}"; exec sleep 60; fi
exec "${realSlim}" "$@"`,
  );
  process.env.SLIM_HOOK_TIMEOUT_MS = "400";
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "h1" }, { args: { patchText: "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch" } }),
    /^Error: apply_patch blocked: slim could not check this call \(slim timed out and was killed\)/,
  );
  // A read passes after the same timeout (fail open), through a new resident slim.
  const args = { filePath: path.join(dir, "a.txt") };
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "h2" }, { args });
  assert.equal(readFileSync(path.join(work, "hang.log"), "utf8").split("\n").filter(Boolean).length, 2);
  await hooks.dispose();
});

test("resident slim: the tools' commands run in it too, so a webfetch starts no process; SLIM_SERVE=0 runs them as processes", async (t) => {
  fetchEnv(true);
  const srv = await docServer(t);
  const spawned = spawnLog("resident-runs");
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const { ctx } = toolCtx(dir);
  const r = await hooks.tool.webfetch.execute({ url: `${srv.base}/docs/install.html`, prefer_llms_txt: "never" }, ctx);
  assert.match(r.output, /Widgets are installed with a single command\./);
  // slim's own failure reaches the model as from a process.
  await assert.rejects(hooks.tool.webfetch.execute({ url: "ftp://example.com/" }, ctx), /^Error: .*(http|scheme)/i);
  assert.deepEqual(spawned(), ["version --json", "hook serve --sync"]);
  await hooks.dispose();

  delete globalThis[REGISTRY_KEY];
  process.env.SLIM_SERVE = "0";
  fetchEnv(true); // a cache of its own: the same page, fetched again
  const spawnedOff = spawnLog("resident-runs-off");
  const off = await (await loadPlugin())(hostInput(dir));
  const r2 = await off.tool.webfetch.execute({ url: `${srv.base}/docs/install.html`, prefer_llms_txt: "never" }, toolCtx(dir).ctx);
  assert.equal(r2.output, r.output);
  assert.deepEqual(spawnedOff(), ["version --json", "fetch --json --plan -", `fetch --json --opencode-url http://127.0.0.1:4096/ --session-id ses_ast --directory ${dir} -`]);
});

test("resident slim: a run lost when it dies fails with the reason and is not run again", { skip: process.platform === "win32" }, async (t) => {
  fetchEnv(true);
  const srv = await docServer(t);
  const spawned = spawnLog("resident-run-lost");
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const call = hooks.tool.webfetch.execute({ url: `${srv.base}/hang`, prefer_llms_txt: "never" }, toolCtx(dir).ctx);
  const deadline = Date.now() + 10000;
  while (!srv.seen.some((s) => s.url === "/hang") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(srv.seen.some((s) => s.url === "/hang"), "slim never reached the page");
  const pidLine = readFileSync(path.join(work, "resident-run-lost.log"), "utf8").split("\n").find((l) => / hook serve( --sync \S+)?$/.test(l));
  process.kill(Number(pidLine.split(" ")[0]), "SIGKILL");
  await assert.rejects(call, /^Error: webfetch: slim could not run: the resident slim exited before it answered/);
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(spawned(), ["version --json", "hook serve --sync"], "the lost fetch was not run again as a process");
  assert.equal(srv.seen.filter((s) => s.url === "/hang").length, 1);
  await hooks.dispose();
});

// residentFake is a slim whose resident form is a script: it logs every
// frame and every SIGTERM it gets, passes every hook (or, with hangHooks,
// never answers one), never answers a run, and answers a cancel frame as a
// stopped command would when cancelAnswered is true.
function residentFake(name, cancelAnswered, { hangHooks = false } = {}) {
  const frames = path.join(work, `${name}.frames`);
  const terms = path.join(work, `${name}.terms`);
  const script = path.join(work, `${name}.mjs`);
  writeFileSync(
    script,
    `import { createInterface } from "node:readline";
import { appendFileSync } from "node:fs";
process.on("SIGTERM", () => appendFileSync(${JSON.stringify(terms)}, "TERM\\n"));
createInterface({ input: process.stdin }).on("line", (l) => {
  appendFileSync(${JSON.stringify(frames)}, l + "\\n");
  const f = JSON.parse(l);
  if (f.phase && !${hangHooks}) process.stdout.write(JSON.stringify({ id: f.id, answer: { v: 1, action: "pass" } }) + "\\n");
  else if (f.cancel && ${cancelAnswered}) process.stdout.write(JSON.stringify({ id: f.id, exit: 1, stderr: "stopped\\n" }) + "\\n");
});
`,
  );
  const spawned = spawnLog(name);
  const wrapper = process.env.SLIM_BIN;
  process.env.SLIM_BIN = fakeSlim(`${name}-outer`, `if [ "$1 $2" = "hook serve" ]; then "${wrapper}" version >/dev/null; printf '%s %s\\n' "$$" "$*" >> "${path.join(work, name + ".log")}"; exec "${process.execPath}" "${script}"; fi\nexec "${wrapper}" "$@"`);
  return {
    spawned,
    frames: () => (existsSync(frames) ? readFileSync(frames, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []),
    terms: () => (existsSync(terms) ? readFileSync(terms, "utf8").split("\n").filter(Boolean).length : 0),
  };
}

test("resident slim: a run past its limit fails as timed out and is cancelled; a resident that answers the cancel stays", { skip: process.platform === "win32" }, async () => {
  const fake = residentFake("resident-run-timeout", true);
  process.env.SLIM_HOOK_TIMEOUT_MS = "400";
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const t0 = Date.now();
  await assert.rejects(hooks.tool.webfetch.execute({ url: "https://example.com/" }, toolCtx(dir).ctx), /^Error: webfetch: slim did not answer within 0 s and was stopped/);
  assert.ok(Date.now() - t0 < 3000, `the call took ${Date.now() - t0} ms`);
  await new Promise((r) => setTimeout(r, 100));
  const runs = fake.frames().filter((f) => f.run);
  assert.equal(runs.length, 1);
  assert.deepEqual(runs[0].run.args, ["fetch", "--json", "--plan", "-"]);
  assert.deepEqual(fake.frames().filter((f) => f.cancel).map((f) => f.id), [runs[0].id]);
  // The same resident serves the next call, also once the stopped run's
  // grace period (5 s) is over: its answer came, so it is not killed.
  await new Promise((r) => setTimeout(r, 5600));
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "b", args: { command: "ls" } }, { output: "x" });
  assert.equal(fake.spawned().filter((l) => l === "hook serve --sync").length, 1);
  await hooks.dispose();
});

test("resident slim: the host's abort sends a cancel for the run and waits for the stopped command's answer", { skip: process.platform === "win32" }, async () => {
  const fake = residentFake("resident-run-abort", true);
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const abort = new AbortController();
  const t0 = Date.now();
  const search = hooks.tool.ast_grep_search.execute({ pattern: "print($A)", lang: "python" }, toolCtx(dir, { abort: abort.signal }).ctx);
  const deadline = Date.now() + 5000;
  while (!fake.frames().some((f) => f.run) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const runs = fake.frames().filter((f) => f.run);
  assert.equal(runs.length, 1, "the search was sent once");
  abort.abort();
  await assert.rejects(search, /^Error: ast_grep_search: slim exited with 1 without an answer: stopped$/);
  assert.ok(Date.now() - t0 < 3000, `the call took ${Date.now() - t0} ms`);
  assert.deepEqual(fake.frames().filter((f) => f.cancel).map((f) => f.id), [runs[0].id]);
  assert.equal(fake.spawned().filter((l) => l === "hook serve --sync").length, 1);
  await hooks.dispose();
});

test("resident slim: killed for a hook's timeout with a command in flight, it gets SIGTERM first, so the command can stop as it does on SIGTERM", { skip: process.platform === "win32" }, async () => {
  const fake = residentFake("resident-kill-term", false, { hangHooks: true });
  process.env.SLIM_HOOK_TIMEOUT_MS = "400";
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  const search = hooks.tool.ast_grep_search.execute({ pattern: "print($A)", lang: "python" }, toolCtx(dir).ctx);
  const deadline = Date.now() + 5000;
  while (!fake.frames().some((f) => f.run) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(fake.frames().some((f) => f.run), "the search was never sent");
  // A hook request the resident never answers: at its timeout the resident goes.
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "r" }, { args: { filePath: path.join(dir, "x") } });
  await assert.rejects(search, /^Error: ast_grep_search: slim could not run: a request timed out/);
  const until = Date.now() + 2000;
  while (fake.terms() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  assert.equal(fake.terms(), 1, "the resident was asked to stop before it was killed");
  await hooks.dispose();
});

test("resident slim: one that does not answer a cancelled run is killed after the grace period and replaced", { skip: process.platform === "win32" }, async () => {
  const fake = residentFake("resident-run-stuck", false);
  process.env.SLIM_HOOK_TIMEOUT_MS = "400";
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  await assert.rejects(hooks.tool.webfetch.execute({ url: "https://example.com/" }, toolCtx(dir).ctx), /did not answer within 0 s and was stopped/);
  await new Promise((r) => setTimeout(r, 5600));
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "b", args: { command: "ls" } }, { output: "x" });
  assert.equal(fake.spawned().filter((l) => l === "hook serve --sync").length, 2, "the stuck resident was replaced");
  await hooks.dispose();
});

test("apply mode: an apply_patch the plugin's tool did not run is logged, and later ones are checked before they run", async () => {
  const dir = applyProject();
  const hooks = await applyHooks(dir);
  const escape = { patchText: "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch" };
  // The replacement holds: the before leaves apply_patch to the tool.
  await hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c1" }, { args: escape });
  writeFileSync(process.env.SLIM_PLUGIN_LOG, "");
  // An after for a call the tool never ran: the host ran its own.
  await hooks["tool.execute.after"]({ tool: "apply_patch", sessionID: "s", callID: "c1", args: escape }, { output: "Success." });
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /the host ran its own apply_patch although apply mode replaces it/);
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "apply_patch", sessionID: "s", callID: "c2" }, { args: escape }),
    /^Error: apply_patch blocked: /,
  );
});

// A resident slim (hook serve) that answers each request on its own, in
// the background: an after after FAKE_AFTER_SLEEP seconds with
// $FAKE_AFTER_ANSWER, anything else at once with pass. It logs "recv
// PHASE" when a request arrives and "done PHASE" when it answers it.
// slowAfterResident is a slim whose resident form answers each after
// FAKE_AFTER_SLEEP seconds late with FAKE_AFTER_ANSWER, logging to
// FAKE_LOG; its phase table says afters change only repeated calls unless
// afterChanges is given ("" leaves the claim out).
function slowAfterResident(afterChanges = "repeats", afterAlways = null) {
  const phases = { default: ["after"], tools: { apply_patch: ["before", "after"], read: ["before", "after"], grep: ["before", "after"], glob: ["before", "after"] } };
  if (afterChanges) phases.afterChanges = afterChanges;
  if (afterAlways) phases.afterAlways = afterAlways;
  const version = JSON.stringify({ version: "t", protocol: 1, features: ["serve"], phases });
  return fakeSlim(
    `slow-after-resident-${afterChanges || "none"}${afterAlways ? "-always" : ""}`,
    `if [ "$1" = version ]; then printf '%s' '${version}'; exit 0; fi
[ "$1 $2" = "hook serve" ] || exit 1
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed 's/^{"id":\\([0-9]*\\),.*/\\1/')
  phase=$(printf '%s' "$line" | sed 's/^{"id":[0-9]*,"phase":"\\([a-z]*\\)".*/\\1/')
  echo "recv $phase" >> "$FAKE_LOG"
  (
    answer='{"v":1,"action":"pass"}'
    if [ "$phase" = after ]; then sleep "$FAKE_AFTER_SLEEP"; answer=$FAKE_AFTER_ANSWER; fi
    echo "done $phase" >> "$FAKE_LOG"
    printf '{"id":%s,"answer":%s}\\n' "$id" "$answer"
  ) &
done
wait`,
  );
}

test("resident slim: an after of a tool the table lists in afterAlways is always waited for", { skip: process.platform === "win32" }, async () => {
  process.env.SLIM_BIN = slowAfterResident("repeats", ["task"]);
  process.env.FAKE_LOG = path.join(work, "always.log");
  process.env.FAKE_AFTER_SLEEP = "0.6";
  process.env.FAKE_AFTER_ANSWER = '{"v":1,"action":"append","append":"\\nnote"}';
  const hooks = await (await loadPlugin())(hostInput(project()));
  const afterCall = async (tool, callID, args) => {
    const output = { output: "text" };
    const start = Date.now();
    await hooks["tool.execute.after"]({ tool, sessionID: "s", callID, args }, output);
    return { output: output.output, ms: Date.now() - start };
  };
  await afterCall("read", "c0", { filePath: "first" }); // the session's first after is waited for anyway
  const read = await afterCall("read", "c1", { filePath: "new" });
  assert.equal(read.output, "text", "a new read waited for slim");
  const task = await afterCall("Task", "c2", { prompt: "a new one", subagent_type: "general" });
  assert.equal(task.output, "text\nnote", "a new task call did not wait for slim's note");
  assert.ok(task.ms >= 500, `the task call returned after ${task.ms} ms, before slim answered`);
  await hooks.dispose();
});

test("resident slim: a call waits for its after's answer only when it repeats an earlier call of its session; the next before waits for the afters in flight", { skip: process.platform === "win32" }, async () => {
  process.env.SLIM_BIN = slowAfterResident();
  process.env.FAKE_LOG = path.join(work, "unawaited.log");
  process.env.FAKE_AFTER_SLEEP = "0.6";
  process.env.FAKE_AFTER_ANSWER = '{"v":1,"action":"append","append":"\\nnote"}';
  writeFileSync(process.env.SLIM_PLUGIN_LOG, "");
  const hooks = await (await loadPlugin())(hostInput(project()));
  const afterCall = async (sessionID, callID, args) => {
    const output = { output: "text" };
    const start = Date.now();
    await hooks["tool.execute.after"]({ tool: "read", sessionID, callID, args }, output);
    return { output: output.output, ms: Date.now() - start };
  };
  const waited = (r, what) => {
    assert.equal(r.output, "text\nnote", `${what}: slim's append applied`);
    assert.ok(r.ms >= 500, `${what}: returned after ${r.ms} ms, before slim answered`);
  };
  const notWaited = (r, what) => {
    assert.equal(r.output, "text", `${what}: nothing applied`);
    assert.ok(r.ms < 400, `${what}: returned after ${r.ms} ms, so it waited for slim`);
  };
  // Nothing of the session has been answered here yet: its first after
  // is waited for (the session may be in the middle of a run).
  waited(await afterCall("s", "c1", { filePath: "a", limit: 5 }), "the session's first after");
  // A call that repeats no earlier one returns at once; slim's answer
  // (an append, which slim gives only for a repeat) is logged, not applied.
  notWaited(await afterCall("s", "c2", { filePath: "b" }), "a new call");
  // The next before waits for that after's answer, so it reads its count.
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c3" }, { args: { filePath: "c" } });
  assert.deepEqual(readFileSync(process.env.FAKE_LOG, "utf8").trim().split("\n"), ["recv after", "done after", "recv after", "done after", "recv before", "done before"]);
  assert.match(readFileSync(process.env.SLIM_PLUGIN_LOG, "utf8"), /slim's answer to an after the call did not wait for was not applied.*"action":"append"/);
  // Repeats of earlier calls, not only of the last one, are waited for,
  // whatever the order of their arguments' keys.
  waited(await afterCall("s", "c4", { filePath: "b" }), "a repeat of the last call");
  waited(await afterCall("s", "c5", { limit: 5, filePath: "a" }), "a repeat of an earlier call, keys in another order");
  notWaited(await afterCall("s", "c6", { filePath: "a", limit: 6 }), "another call");
  // Another session starts over.
  waited(await afterCall("t", "c7", { filePath: "b" }), "another session's first after");
  await hooks.dispose();

  // A slim whose table does not say that afters change only repeats: every
  // after is waited for.
  delete globalThis[REGISTRY_KEY];
  process.env.SLIM_BIN = slowAfterResident("");
  const strict = await (await loadPlugin())(hostInput(project()));
  for (const [i, args] of [{ filePath: "a" }, { filePath: "b" }, { filePath: "c" }].entries()) {
    const output = { output: "text" };
    const start = Date.now();
    await strict["tool.execute.after"]({ tool: "read", sessionID: "u", callID: `u${i}`, args }, output);
    assert.equal(output.output, "text\nnote", `call ${i}: slim's append applied`);
    assert.ok(Date.now() - start >= 500, `call ${i} did not wait for slim`);
  }
  await strict.dispose();
});

// ---- the resident slim's synchronous channel ----

// waitForSync makes before calls of a read until one is answered without
// a turn of the event loop (the resident has made its channel and the
// plugin has opened it), or fails the test.
async function waitForSync(hooks, dir) {
  for (let i = 0; i < 100; i++) {
    let turned = false;
    setImmediate(() => (turned = true));
    await hooks["tool.execute.before"]({ tool: "read", sessionID: "ses_warm", callID: `w${i}` }, { args: { filePath: path.join(dir, "a.txt") } });
    if (!turned) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail("no before was answered on the synchronous channel");
}

test("resident slim: a before is answered on its synchronous channel without a turn of the host's event loop, and leaves no file behind", { skip: process.platform === "win32" }, async () => {
  const spawned = spawnLog("resident-sync");
  process.env.TMPDIR = mkdtempSync(path.join(work, "tmp-"));
  const dir = project();
  writeFileSync(path.join(dir, "a.txt"), "a\n");
  const hooks = await (await loadPlugin())(hostInput(dir));
  await waitForSync(hooks, dir);
  // Every before of the loop guard's run is answered with no turn of the
  // event loop, and the answers are slim's: the afters count, the 6th
  // identical read is refused.
  const turns = [];
  const before = hooks["tool.execute.before"];
  hooks["tool.execute.before"] = async (input, output) => {
    let turned = false;
    setImmediate(() => (turned = true));
    try {
      return await before(input, output);
    } finally {
      turns.push(turned);
    }
  };
  assert.equal(await readsAndRefusal(hooks, dir, "ses_sync"), "..NNNRR");
  assert.deepEqual(turns, [false, false, false, false, false, false, false], "a before waited for a turn of the event loop");
  // A grep's refusal by the path pre-check comes back the same way.
  const grep = { args: { pattern: "x", path: "no-such-dir" } };
  await assert.rejects(before({ tool: "grep", sessionID: "s2", callID: "g1" }, grep), /^Error: Search path does not exist: /);
  assert.deepEqual(spawned(), ["version --json", "hook serve --sync"], "no process but the resident");
  // Both FIFOs were unlinked once open; the resident's directory is gone.
  assert.deepEqual(readdirSync(process.env.TMPDIR), []);
  await hooks.dispose();
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(readdirSync(process.env.TMPDIR), []);
});

// syncResident is a slim whose resident form is a script with a
// synchronous channel of its own: stdin's hook requests are passed at
// once; a request on the channel is logged ("recv PHASE") and passed
// FAKE_SYNC_BEFORE_MS / FAKE_SYNC_AFTER_MS later ("done PHASE"), or, with
// FAKE_SYNC_DIE set, a before there makes it exit. Everything else runs
// the real slim, logged as spawnLog logs it.
function syncResident(name) {
  const script = path.join(work, `${name}.mjs`);
  writeFileSync(
    script,
    `import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createInterface } from "node:readline";
const dir = process.argv[process.argv.indexOf("--sync") + 1];
const log = (l) => fs.appendFileSync(process.env.FAKE_LOG, l + "\\n");
execFileSync("mkfifo", ["-m", "600", path.join(dir, "reply"), path.join(dir, "request.new")]);
const rep = fs.openSync(path.join(dir, "reply"), "r+");
const req = fs.openSync(path.join(dir, "request.new"), "r+");
fs.renameSync(path.join(dir, "request.new"), path.join(dir, "request"));
const pass = (id) => JSON.stringify({ id, answer: { v: 1, action: "pass" } }) + "\\n";
createInterface({ input: fs.createReadStream(null, { fd: req }) }).on("line", (l) => {
  const f = JSON.parse(l);
  log("recv " + f.phase);
  if (f.phase === "before" && process.env.FAKE_SYNC_DIE) process.exit(3);
  const ms = Number(process.env[f.phase === "after" ? "FAKE_SYNC_AFTER_MS" : "FAKE_SYNC_BEFORE_MS"] || 0);
  setTimeout(() => {
    log("done " + f.phase);
    fs.writeSync(rep, pass(f.id));
  }, ms);
});
createInterface({ input: process.stdin })
  .on("line", (l) => process.stdout.write(pass(JSON.parse(l).id)))
  .on("close", () => process.exit(0));
`,
  );
  const spawned = spawnLog(name);
  const wrapper = process.env.SLIM_BIN;
  const phases = { default: ["after"], tools: { read: ["before", "after"] }, afterChanges: "repeats" };
  const version = JSON.stringify({ version: "t", protocol: 1, features: ["serve", "serve-sync"], phases });
  process.env.SLIM_BIN = fakeSlim(
    `${name}-outer`,
    `if [ "$1" = version ]; then printf '%s' '${version}'; exit 0; fi
if [ "$1 $2" = "hook serve" ]; then printf '%s %s\\n' "$$" "$*" >> "${path.join(work, name + ".log")}"; exec "${process.execPath}" "${script}" "$@"; fi
exec "${wrapper}" "$@"`,
  );
  process.env.FAKE_LOG = path.join(work, `${name}.fake`);
  writeFileSync(process.env.FAKE_LOG, "");
  return { spawned, log: () => readFileSync(process.env.FAKE_LOG, "utf8").trim().split("\n").filter(Boolean) };
}

// readyResident loads the plugin and returns its hooks once the resident's
// channel is there (a first call starts the resident).
async function readyResident() {
  const dir = project();
  const hooks = await (await loadPlugin())(hostInput(dir));
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_start" } } });
  for (let i = 0; i < 100 && !readdirSync(tmpdir()).some((n) => n.startsWith("slim-serve-") && existsSync(path.join(tmpdir(), n, "request"))); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return { hooks, dir };
}

test("resident slim: a synchronous answer that is late is waited for without blocking the host", { skip: process.platform === "win32" }, async () => {
  process.env.TMPDIR = mkdtempSync(path.join(work, "tmp-"));
  const fake = syncResident("sync-late");
  process.env.FAKE_SYNC_BEFORE_MS = "1200";
  const { hooks, dir } = await readyResident();
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 20);
  const start = Date.now();
  try {
    await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c1" }, { args: { filePath: path.join(dir, "a.txt") } });
  } finally {
    clearInterval(ticker);
  }
  assert.ok(Date.now() - start >= 1100, "the before returned before its answer");
  assert.ok(ticks >= 10, `the host's event loop ran only ${ticks} times while the before waited 1.2 s`);
  assert.deepEqual(fake.log(), ["recv before", "done before"]);
  assert.ok(!fake.spawned().includes("hook before"), "the late before was also run as a process");
  await hooks.dispose();
});

test("resident slim: a before whose resident dies on the synchronous channel runs as a process of its own", { skip: process.platform === "win32" }, async () => {
  process.env.TMPDIR = mkdtempSync(path.join(work, "tmp-"));
  const fake = syncResident("sync-die");
  process.env.FAKE_SYNC_DIE = "1";
  const { hooks, dir } = await readyResident();
  const grep = { args: { pattern: "x", path: "no-such-dir" } };
  // The real slim, run as a process, gives the answer: a block.
  await assert.rejects(hooks["tool.execute.before"]({ tool: "grep", sessionID: "s", callID: "g" }, grep), /^Error: Search path does not exist: /);
  assert.deepEqual(fake.log(), ["recv before"]);
  assert.ok(fake.spawned().includes("hook before"), `no process ran the before: ${fake.spawned()}`);
  await hooks.dispose();
});

test("resident slim: afters on the synchronous channel are answered before the session's next before is sent", { skip: process.platform === "win32" }, async () => {
  process.env.TMPDIR = mkdtempSync(path.join(work, "tmp-"));
  const fake = syncResident("sync-order");
  process.env.FAKE_SYNC_AFTER_MS = "500";
  const { hooks } = await readyResident();
  const after = async (callID, filePath) => {
    const start = Date.now();
    await hooks["tool.execute.after"]({ tool: "read", sessionID: "s", callID, args: { filePath } }, { output: "x" });
    return Date.now() - start;
  };
  assert.ok((await after("c1", "a")) >= 450, "the session's first after was not waited for");
  assert.ok((await after("c2", "b")) < 400, "a new call's after was waited for");
  await hooks["tool.execute.before"]({ tool: "read", sessionID: "s", callID: "c3" }, { args: { filePath: "c" } });
  assert.deepEqual(fake.log(), ["recv after", "done after", "recv after", "done after", "recv before", "done before"]);
  await hooks.dispose();
});
