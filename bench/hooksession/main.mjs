// bench/hook.sh's session driver: what the OpenCode plugin's hooks cost a
// session of 60 mixed tool calls, with slim's phase table and without it.
//
// Usage: node main.mjs PLUGIN SLIM SESSIONS [BASESLIM]
//
// Each session runs, one call after another as a model's turns do, the
// plugin's tool.execute.before and tool.execute.after for 60 calls: 24
// read, 6 grep, 4 glob, 12 bash, 8 edit, 2 write and 4 todowrite, in a
// fixed shuffled order, every one with arguments of its own (no loop
// guard notice, no refusal), in a fresh session. It prints the median wall
// time of a session and of a call for:
//   - the plugin as it is: the resident slim (`slim hook serve`, started
//     once) answers every hook, and slim's phase table applies;
//   - the plugin with one process per hook call (SLIM_SERVE=0), as before
//     the resident slim: the befores of most tools start no process;
//   - the same with the table ignored too (every call runs both phases,
//     as before the table existed);
//   - with BASESLIM, the plugin without table in front of that slim (an
//     older one, whose before also writes the loop guard's state);
//   - node starting /bin/true 60 times, one after another, for scale.
// The sessions of each variant are interleaved.

import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pluginFile, slim, sessionsArg, baseSlim] = process.argv.slice(2);
const sessions = Number.parseInt(sessionsArg || "9", 10);
const work = mkdtempSync(path.join(tmpdir(), "slim-hooksession-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

const MIX = { read: 24, grep: 6, glob: 4, bash: 12, edit: 8, write: 2, todowrite: 4 };
const CALLS = Object.entries(MIX).flatMap(([tool, n]) => Array.from({ length: n }, (_, i) => ({ tool, i })));
// A fixed shuffle, so every session and variant makes the same calls.
for (let i = CALLS.length - 1, seed = 7; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  const j = seed % (i + 1);
  [CALLS[i], CALLS[j]] = [CALLS[j], CALLS[i]];
}

const project = path.join(work, "project");
mkdirSync(path.join(project, "src"), { recursive: true });
for (let i = 0; i < 24; i++) writeFileSync(path.join(project, "src", `f${i}.go`), `package src // ${i}\n`);

function argsOf({ tool, i }) {
  switch (tool) {
    case "read": return { filePath: path.join(project, "src", `f${i}.go`) };
    case "grep": return { pattern: `needle${i}`, path: path.join(project, "src") };
    case "glob": return { pattern: `**/*${i}.go`, path: project };
    case "bash": return { command: `ls src/f${i}.go`, description: "list" };
    case "edit": return { filePath: path.join(project, "src", `f${i}.go`), oldString: "package", newString: "package" };
    case "write": return { filePath: path.join(project, `new${i}.txt`), content: "x\n" };
    default: return { todos: [{ content: `step ${i}`, status: "pending" }] };
  }
}

// A copy of the plugin that ignores slim's phase table, as a slim without
// one would make it.
function withoutTable(file) {
  const src = readFileSync(file, "utf8");
  const patched = src.replace("const plan = phasePlan(probe.answer);", 'const plan = { reason: "ignored by the benchmark" };');
  if (patched === src) throw new Error("cannot find where the plugin reads the phase table");
  return patched;
}

let copies = 0;
async function load(source, bin, env = {}) {
  const file = path.join(work, `plugin-${++copies}.mjs`);
  if (source === null) copyFileSync(pluginFile, file);
  else writeFileSync(file, source);
  const mod = await import(pathToFileURL(file).href);
  process.env.SLIM_BIN = bin;
  Object.assign(process.env, env);
  delete globalThis[Symbol.for("slim.opencode.plugin.registry")];
  const hooks = await Object.values(mod)[0]({ directory: project, worktree: project, serverUrl: new URL("http://127.0.0.1:4096") });
  for (const k of Object.keys(env)) delete process.env[k];
  if (typeof hooks["tool.execute.before"] !== "function") throw new Error(`the plugin did not load with ${bin}`);
  return hooks;
}

let sessionSeq = 0;
async function session(v) {
  const hooks = v.hooks;
  process.env.SLIM_STATE_DIR = v.state; // slim gets the plugin's environment at each start
  const sessionID = `ses_bench_${++sessionSeq}`;
  const t0 = process.hrtime.bigint();
  for (const [n, call] of CALLS.entries()) {
    const args = argsOf(call);
    const callID = `call_${n}`;
    await hooks["tool.execute.before"]({ tool: call.tool, sessionID, callID }, { args });
    await hooks["tool.execute.after"]({ tool: call.tool, sessionID, callID, args }, { title: "", output: `result ${n}\n`, metadata: {} });
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function spawnTrue() {
  return new Promise((resolve) => spawn("/bin/true", [], { stdio: "ignore" }).on("close", resolve));
}

async function trueSession() {
  const t0 = process.hrtime.bigint();
  for (let n = 0; n < CALLS.length; n++) await spawnTrue();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const perCall = { SLIM_SERVE: "0" };
const variants = [
  { name: "plugin, resident slim", hooks: await load(null, slim) },
  { name: "plugin, a process per call", hooks: await load(null, slim, perCall) },
  { name: "plugin, a process per call, no table", hooks: await load(withoutTable(pluginFile), slim, perCall) },
];
if (baseSlim) variants.push({ name: "plugin, table ignored, BASE slim", hooks: await load(withoutTable(pluginFile), baseSlim, perCall) });
for (const [k, v] of variants.entries()) v.state = path.join(work, `state-${k}`);
const times = variants.map(() => []);
const trues = [];
for (let s = 0; s < sessions + 1; s++) {
  for (const [k, v] of variants.entries()) {
    const ms = await session(v);
    if (s > 0) times[k].push(ms); // the first is a warm-up
  }
  const ms = await trueSession();
  if (s > 0) trues.push(ms);
}

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const ref = median(times[0]);
console.log(`session of ${CALLS.length} tool calls (${Object.entries(MIX).map(([t, n]) => `${n} ${t}`).join(", ")}), ${sessions} sessions each`);
console.log(`${"variant".padEnd(40)} ${"session".padStart(10)} ${"per call".padStart(10)} ${"ratio".padStart(7)}`);
for (const [k, v] of variants.entries()) {
  const m = median(times[k]);
  console.log(`${v.name.padEnd(40)} ${(m.toFixed(0) + " ms").padStart(10)} ${((m / CALLS.length).toFixed(1) + " ms").padStart(10)} ${(m / ref).toFixed(2).padStart(6)}x`);
}
const t = median(trues);
console.log(`${"node spawning /bin/true, 60 times".padEnd(40)} ${(t.toFixed(0) + " ms").padStart(10)} ${((t / CALLS.length).toFixed(1) + " ms").padStart(10)} ${(t / ref).toFixed(2).padStart(6)}x`);

// The resident slims leave with their input; close them so node exits now.
process.exit(0);
