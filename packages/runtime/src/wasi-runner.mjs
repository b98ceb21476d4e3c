// The WASI runner of @heddle/runtime: runs one WebAssembly module under node:wasi (preview1) in its
// own process, so that the WASI adapter can kill it (an infinite loop in wasm blocks this process's
// event loop, never the host's). Spawned by wasi-process.ts as
//   node --no-warnings --max-old-space-size=N wasi-runner.mjs
// with, on stdin, a 4-byte big-endian length, that many bytes of JSON config, then the module bytes
// (never argv: the config holds the guest's environment, its ingest token included, and argv is
// world-readable in /proc/<pid>/cmdline); the guest's stdout/stderr on fd 1/2 and status lines (JSON)
// on fd 3.
// Config: {args: string[], env: {[k]: string}, preopens: {[guestPath]: hostDir},
//          importedMemory?: {module, name, initial, maximum}, capPages: number}
// Exit codes: the guest's exit code; 134 when the guest trapped; 125 when the module could not be
// compiled or instantiated.
import { lstatSync, openSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { WASI } from 'node:wasi';
import { Worker } from 'node:worker_threads';

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
/** WASI errno ENOTCAPABLE: what the guest gets for path_symlink and path_link. */
const ENOTCAPABLE = 76;

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
    writeSync(3, `${JSON.stringify(event)}\n`);
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
let wasi;
try {
  const input = await readStdin();
  if (input.length < 4) throw new Error('no config header on stdin');
  const headerEnd = 4 + input.readUInt32BE(0);
  config = JSON.parse(input.subarray(4, headerEnd).toString('utf8'));
  const bytes = input.subarray(headerEnd);
  for (const dir of Object.values(config.preopens ?? {})) {
    if (lstatSync(dir).isSymbolicLink()) throw new Error(`data dir is a symbolic link: ${dir}`);
    assertNoSymlinks(dir);
  }
  const module = await WebAssembly.compile(bytes);
  wasi = new WASI({
    version: 'preview1',
    args: config.args ?? [],
    env: config.env ?? {},
    preopens: config.preopens ?? {},
    stdin: openSync('/dev/null', 'r'),
    stdout: 1,
    stderr: 2,
    returnOnExit: true,
  });
  const imports = wasi.getImportObject();
  // No links from inside the sandbox: node:wasi checks a symlink's target only lexically, so a chain
  // of links (l -> x/y/../.., then x/y -> .) escapes the preopened directory.
  const preview1 = imports.wasi_snapshot_preview1;
  preview1.path_symlink = () => ENOTCAPABLE;
  preview1.path_link = () => ENOTCAPABLE;
  if (config.importedMemory) {
    const m = config.importedMemory;
    memory = new WebAssembly.Memory({ initial: m.initial, maximum: m.maximum });
    imports[m.module] = { ...(imports[m.module] ?? {}), [m.name]: memory };
  }
  instance = await WebAssembly.instantiate(module, imports);
  if (memory === undefined && instance.exports.memory instanceof WebAssembly.Memory) {
    memory = instance.exports.memory;
  }
} catch (err) {
  status({ event: 'error', message: String(err?.message ?? err) });
  process.exit(125);
}

status({ event: 'started', memoryPages: pages() });
try {
  // An imported memory is not among the exports; node:wasi reads `exports.memory`, so give it one.
  const target =
    instance.exports.memory instanceof WebAssembly.Memory
      ? instance
      : { exports: { ...instance.exports, memory } };
  const code = wasi.start(target);
  status({ event: 'exit', code, memoryPages: pages(), capPages: config.capPages });
  process.exitCode = code & 0xff;
} catch (err) {
  status({
    event: 'trap',
    message: String(err?.message ?? err),
    memoryPages: pages(),
    capPages: config.capPages,
  });
  process.exitCode = 134;
}
