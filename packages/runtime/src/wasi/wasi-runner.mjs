// The WASI runner of @heddle/runtime: runs one WebAssembly module under WASI preview1 in its own
// process, so that the WASI adapter can kill it (an infinite loop in wasm blocks this process's event
// loop, never the host's). WASI is wasi-preview1.mjs (beside this file), not node:wasi: node:wasi keeps
// a stale view of guest memory across memory.grow, and a guest that grows its memory and then writes
// crashes Node 20 with SIGSEGV. Spawned by wasi-process.ts as
//   [/bin/sh -c 'ulimit ...; exec "$0" "$@"'] node --no-warnings --max-old-space-size=N wasi-runner.mjs
// (as an unprivileged user on a root host) with, on stdin, a 4-byte big-endian length, that many bytes
// of JSON config, then the module bytes (never argv: the config holds the guest's environment, its
// ingest token included, and argv is world-readable in /proc/<pid>/cmdline); the guest's stdout/stderr
// on fd 1/2 and status lines (JSON) on fd 3.
// Config: {args: string[], env: {[k]: string}, preopens: {[guestPath]: hostDir},
//          importedMemory?: {module, name, initial, maximum}, capPages: number}
// A preopen's host dir is `/proc/self/fd/<n>` when the host passed the directory as descriptor n.
// Exit codes: the guest's exit code; 134 when the guest trapped; 125 when the module could not be
// compiled or instantiated.
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createPreview1, WasiExit, writeAllSync } from './wasi-preview1.mjs';

// The run belongs to the host that started it: when that process dies (kill -9 included) the run
// must not outlive it, or a restarted host would report the instance lost while it still runs and a
// controller could place a second copy. The guest blocks this thread, so a watchdog thread checks
// every 200 ms whether the parent is gone (reparented, or a zombie not yet reaped) and kills the run.
const watchdog = new Worker(
  `const { existsSync, readFileSync } = require('node:fs');
const parent = ${process.ppid};
const proc = existsSync('/proc/self/stat');
const zombie = () => {
  try {
    return readFileSync('/proc/' + parent + '/stat', 'utf8').replace(/^.*\\) /s, '')[0] === 'Z';
  } catch (err) {
    return err.code === 'ENOENT';
  }
};
setInterval(() => {
  if (process.ppid !== parent || (proc && zombie())) process.kill(process.pid, 'SIGKILL');
}, 200);`,
  { eval: true },
);
watchdog.unref();

const PAGE = 65536;

/**
 * Throws when `dir` holds a symbolic link anywhere below it: node:wasi follows symlinks, so one in a
 * preopened directory leads the guest outside it. (The adapter checks before spawning too.)
 */
function assertNoSymlinks(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) throw new Error(`data dir holds a symbolic link: ${path}`);
    if (st.isDirectory()) assertNoSymlinks(path);
  }
}

function status(event) {
  try {
    writeAllSync(3, Buffer.from(`${JSON.stringify(event)}\n`));
  } catch {
    // fd 3 is absent when the runner is started by hand: status is best effort.
  }
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks);
}

let config = {};
let memory;
const pages = () => (memory === undefined ? null : memory.buffer.byteLength / PAGE);

let instance;
try {
  const input = await readStdin();
  if (input.length < 4) throw new Error('no config header on stdin');
  const headerEnd = 4 + input.readUInt32BE(0);
  config = JSON.parse(input.subarray(4, headerEnd).toString('utf8'));
  const bytes = input.subarray(headerEnd);
  for (const dir of Object.values(config.preopens ?? {})) {
    // A /proc/self/fd/<n> preopen is a directory the host opened with O_DIRECTORY | O_NOFOLLOW (that
    // path is itself a link, to that directory); any other is checked here.
    const passed = dir.startsWith('/proc/self/fd/');
    if (!passed && lstatSync(dir).isSymbolicLink()) throw new Error(`data dir is a symbolic link: ${dir}`);
    if (!statSync(dir).isDirectory()) throw new Error(`data dir is not a directory: ${dir}`);
    assertNoSymlinks(dir);
  }
  const module = await WebAssembly.compile(bytes);
  // Every call asks for the memory (and its current buffer) again: nothing is kept across a grow.
  const preview1 = createPreview1({
    args: config.args ?? [],
    env: config.env ?? {},
    preopens: config.preopens ?? {},
    stdout: 1,
    stderr: 2,
    getMemory: () => {
      if (memory === undefined) throw new RangeError('the module has no memory');
      return memory;
    },
  });
  const imports = { wasi_snapshot_preview1: preview1 };
  if (config.importedMemory) {
    const m = config.importedMemory;
    memory = new WebAssembly.Memory({ initial: m.initial, maximum: m.maximum });
    imports[m.module] = { ...(imports[m.module] ?? {}), [m.name]: memory };
  }
  instance = await WebAssembly.instantiate(module, imports);
  if (memory === undefined && instance.exports.memory instanceof WebAssembly.Memory) {
    memory = instance.exports.memory;
  }
  if (typeof instance.exports._start !== 'function') throw new Error('the module exports no _start');
} catch (err) {
  status({ event: 'error', message: String(err?.message ?? err) });
  process.exit(125);
}

status({ event: 'started', memoryPages: pages() });
let code = 0;
try {
  instance.exports._start();
} catch (err) {
  if (!(err instanceof WasiExit)) {
    status({
      event: 'trap',
      message: String(err?.message ?? err),
      memoryPages: pages(),
      capPages: config.capPages,
    });
    process.exit(134);
  }
  code = err.code;
}
status({ event: 'exit', code, memoryPages: pages(), capPages: config.capPages });
process.exit(code & 0xff);
