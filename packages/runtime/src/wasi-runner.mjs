// The WASI runner of @heddle/runtime: runs one WebAssembly module under node:wasi (preview1) in its
// own process, so that the WASI adapter can kill it (an infinite loop in wasm blocks this process's
// event loop, never the host's). Spawned by wasi-process.ts as
//   node --no-warnings --max-old-space-size=N wasi-runner.mjs '<json config>'
// with the module bytes on stdin, the guest's stdout/stderr on fd 1/2 and status lines (JSON) on fd 3.
// Config: {args: string[], env: {[k]: string}, preopens: {[guestPath]: hostDir},
//          importedMemory?: {module, name, initial, maximum}, capPages: number}
// Exit codes: the guest's exit code; 134 when the guest trapped; 125 when the module could not be
// compiled or instantiated.
import { openSync, writeSync } from 'node:fs';
import { WASI } from 'node:wasi';

const PAGE = 65536;

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

const config = JSON.parse(process.argv[2] ?? '{}');
let memory;
const pages = () => (memory === undefined ? null : memory.buffer.byteLength / PAGE);

let instance;
let wasi;
try {
  const bytes = await readStdin();
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
