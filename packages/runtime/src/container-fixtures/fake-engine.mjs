#!/usr/bin/env node
// A FAKE container engine for tests: the subset of the docker CLI that the container adapter uses,
// following the docker CLI reference (exit codes, output shapes). Containers are real child processes
// run by a detached "shim" (like containerd-shim) that captures output into a json-file style log and
// records the exit status. State lives under $FAKE_ENGINE_STATE:
//   calls.jsonl            every argv this CLI was called with (one JSON array per line)
//   images.json            local images: { "<repo>@sha256:<hex>": { Architecture, Os, Entrypoint, Env } }
//   registry.json          images `pull` can fetch (same shape)
//   containers/<name>.json container config; <name>.run.json run state; <name>.log json-file log
// Behaviour switches (environment): FAKE_ENGINE_ARCH (server arch, default amd64), FAKE_ENGINE_NO_SERVER=1
// (`version` prints "Server": null and exits 1, as docker does without a daemon), FAKE_ENGINE_STOP_NOKILL=1
// (`stop` sends SIGTERM but never escalates, so the adapter's own `kill` is exercised).
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const STATE = process.env.FAKE_ENGINE_STATE;
if (!STATE) {
  process.stderr.write('fake-engine: FAKE_ENGINE_STATE is not set\n');
  process.exit(125);
}
const CDIR = join(STATE, 'containers');
mkdirSync(CDIR, { recursive: true });
const argv = process.argv.slice(2);
if (argv[0] !== '__shim') appendFileSync(join(STATE, 'calls.jsonl'), `${JSON.stringify(argv)}\n`);

const readJson = (p, d) => {
  try {
    return JSON.parse(readFileSync(p, 'utf8'));
  } catch {
    return d;
  }
};
const writeJson = (p, v) => {
  const tmp = `${p}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(v));
  renameSync(tmp, p);
};
const fail = (msg, code = 1) => {
  process.stderr.write(`Error response from daemon: ${msg}\n`);
  process.exit(code);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cfgPath = (n) => join(CDIR, `${n}.json`);
const runPath = (n) => join(CDIR, `${n}.run.json`);
const logPath = (n) => join(CDIR, `${n}.log`);
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const runOf = (n) => readJson(runPath(n), { running: false });
const isRunning = (n) => {
  const r = runOf(n);
  return r.running === true && typeof r.Pid === 'number' && alive(r.Pid);
};
const zero = '0001-01-01T00:00:00Z';

function findContainer(ref) {
  if (existsSync(cfgPath(ref))) return ref;
  for (const f of readdirSync(CDIR)) {
    if (!f.endsWith('.json') || f.endsWith('.run.json')) continue;
    const c = readJson(join(CDIR, f), null);
    if (c && (c.Id === ref || c.Id.startsWith(ref))) return c.Name;
  }
  return undefined;
}

function inspectObj(name) {
  const c = readJson(cfgPath(name), null);
  const r = runOf(name);
  const running = isRunning(name);
  let status = 'created';
  if (running) status = 'running';
  else if (r.StartedAt) status = 'exited';
  return {
    Id: c.Id,
    Name: `/${name}`,
    Created: c.Created,
    Args: c.Args,
    Image: c.Config.Image,
    State: {
      Status: status,
      Running: running,
      Paused: false,
      OOMKilled: r.OOMKilled === true,
      Dead: false,
      Pid: running ? r.Pid : 0,
      ExitCode: running ? 0 : (r.ExitCode ?? 0),
      Error: '',
      StartedAt: r.StartedAt ?? zero,
      FinishedAt: running ? zero : (r.FinishedAt ?? zero),
    },
    Config: c.Config,
    HostConfig: c.HostConfig,
  };
}

const VALUE_FLAGS = new Set([
  '--name',
  '--network',
  '--memory',
  '--memory-swap',
  '--cpus',
  '--pids-limit',
  '--user',
  '--security-opt',
  '--cap-drop',
  '-v',
  '-e',
  '--label',
  '--tmpfs',
  '--platform',
  '--log-driver',
  '--log-opt',
]);
const BOOL_FLAGS = new Set(['--read-only']);

function parseBytes(s) {
  const m = /^(\d+)([bkmg]?)$/i.exec(s);
  if (!m) fail(`invalid size: '${s}'`, 125);
  const mult = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase()];
  return Number(m[1]) * mult;
}

// The json-file (and local) driver's options, as docker documents them: max-size (a size with an
// optional k/m/g unit; default -1, unbounded) and max-file (an integer >= 1, default 1, only with
// max-size). Any other key is refused like docker does ("unknown log opt").
function checkLogConfig(driver, opts) {
  if (!['json-file', 'local', 'k8s-file'].includes(driver))
    fail(`logger: no log driver named '${driver}' is registered`, 125);
  for (const k of Object.keys(opts)) {
    if (!['max-size', 'max-file'].includes(k)) fail(`unknown log opt '${k}' for ${driver} log driver`, 125);
  }
  if (opts['max-size'] !== undefined) parseBytes(opts['max-size']);
  if (opts['max-file'] !== undefined) {
    const n = Number(opts['max-file']);
    if (!/^\d+$/.test(opts['max-file']) || n < 1) fail('max-file cannot be less than 1', 125);
    if (n > 1 && opts['max-size'] === undefined) fail('max-file can only be set when max-size is set', 125);
  }
  return { Type: driver, Config: opts };
}

/** Rotation bounds of a container's log, from its LogConfig: bytes per file (Infinity) and files. */
function logBounds(c) {
  const o = c.HostConfig.LogConfig?.Config ?? {};
  return {
    maxSize: o['max-size'] === undefined ? Number.POSITIVE_INFINITY : parseBytes(o['max-size']),
    maxFile: o['max-file'] === undefined ? 1 : Number(o['max-file']),
  };
}

/** The log files of a container, oldest first: <name>.log.<n-1> ... <name>.log.1, <name>.log. */
function logFiles(name) {
  const out = [];
  for (let i = 32; i >= 1; i--) if (existsSync(`${logPath(name)}.${i}`)) out.push(`${logPath(name)}.${i}`);
  if (existsSync(logPath(name))) out.push(logPath(name));
  return out;
}

function create(args) {
  const o = { env: [], labels: {}, binds: [], securityOpt: [], capDrop: [], tmpfs: {}, logOpts: {} };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('-')) break;
    if (BOOL_FLAGS.has(a)) {
      o[a] = true;
      continue;
    }
    if (!VALUE_FLAGS.has(a)) fail(`unknown flag: ${a}`, 125);
    const v = args[++i];
    if (v === undefined) fail(`flag needs an argument: ${a}`, 125);
    if (a === '-e') {
      if (v.includes('=')) o.env.push(v);
      else if (process.env[v] !== undefined) o.env.push(`${v}=${process.env[v]}`);
    } else if (a === '--label') {
      const eq = v.indexOf('=');
      o.labels[eq < 0 ? v : v.slice(0, eq)] = eq < 0 ? '' : v.slice(eq + 1);
    } else if (a === '-v') o.binds.push(v);
    else if (a === '--security-opt') o.securityOpt.push(v);
    else if (a === '--cap-drop') o.capDrop.push(v);
    else if (a === '--log-opt') {
      const eq = v.indexOf('=');
      if (eq <= 0) fail(`invalid log opt: ${v}`, 125);
      o.logOpts[v.slice(0, eq)] = v.slice(eq + 1);
    } else if (a === '--tmpfs') {
      const c = v.indexOf(':');
      o.tmpfs[c < 0 ? v : v.slice(0, c)] = c < 0 ? '' : v.slice(c + 1);
    } else o[a] = v;
  }
  const image = args[i];
  if (image === undefined) fail('"create" requires at least 1 argument.', 125);
  const logConfig = checkLogConfig(o['--log-driver'] ?? 'json-file', o.logOpts);
  const img = readJson(join(STATE, 'images.json'), {})[image];
  if (!img) fail(`No such image: ${image}`, 125);
  const name = o['--name'] ?? `c${Date.now().toString(36)}`;
  if (existsSync(cfgPath(name)))
    fail(`Conflict. The container name "/${name}" is already in use by container`, 125);
  const id = `${Buffer.from(name).toString('hex').padEnd(64, '0').slice(0, 64)}`;
  const cmd = args.slice(i + 1);
  writeJson(cfgPath(name), {
    Id: id,
    Name: name,
    Created: new Date().toISOString(),
    Args: cmd,
    Config: {
      Image: image,
      User: o['--user'] ?? '',
      Env: [...(img.Env ?? []), ...o.env],
      Entrypoint: img.Entrypoint ?? [],
      Cmd: cmd,
      Labels: o.labels,
    },
    HostConfig: {
      NetworkMode: o['--network'] ?? 'bridge',
      ReadonlyRootfs: o['--read-only'] === true,
      Memory: o['--memory'] ? parseBytes(o['--memory']) : 0,
      MemorySwap: o['--memory-swap'] ? parseBytes(o['--memory-swap']) : 0,
      NanoCpus: o['--cpus'] ? Math.round(Number(o['--cpus']) * 1e9) : 0,
      PidsLimit: o['--pids-limit'] ? Number(o['--pids-limit']) : null,
      SecurityOpt: o.securityOpt,
      CapDrop: o.capDrop,
      Binds: o.binds,
      Tmpfs: o.tmpfs,
      LogConfig: logConfig,
    },
  });
  process.stdout.write(`${id}\n`);
}

async function start(ref) {
  const name = findContainer(ref);
  if (!name) fail(`No such container: ${ref}`);
  if (isRunning(name)) return void process.stdout.write(`${ref}\n`);
  writeJson(runPath(name), { ...runOf(name), running: false, starting: true });
  const self = fileURLToPath(import.meta.url);
  spawn(process.execPath, [self, '__shim', name], {
    detached: true,
    stdio: 'ignore',
    env: process.env,
  }).unref();
  for (let i = 0; i < 200; i++) {
    const r = runOf(name);
    if (r.starting !== true) break;
    await sleep(10);
  }
  process.stdout.write(`${ref}\n`);
}

async function shim(name) {
  const c = readJson(cfgPath(name), null);
  if (!c) process.exit(1);
  const [prog, ...rest] = [...c.Config.Entrypoint, ...c.Config.Cmd];
  const env = Object.fromEntries(
    c.Config.Env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const child = spawn(prog === 'node' ? process.execPath : prog, rest, {
    env,
    cwd: STATE,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const startedAt = new Date().toISOString();
  const prev = runOf(name);
  const safeWrite = (v) => {
    try {
      writeJson(runPath(name), v);
    } catch {
      // Removed with rm -f while running.
    }
  };
  safeWrite({
    ...prev,
    starting: false,
    running: true,
    Pid: child.pid,
    StartedAt: startedAt,
    OOMKilled: false,
  });
  let seq = 0;
  const pending = { stdout: '', stderr: '' };
  const bounds = logBounds(c);
  let size = existsSync(logPath(name)) ? statSync(logPath(name)).size : 0;
  // json-file rotation: when the current file would pass max-size, <name>.log becomes <name>.log.1 (the
  // older ones shift up) and the oldest beyond max-file is removed; with max-file 1 the file is cut.
  const rotate = () => {
    const keep = bounds.maxFile - 1;
    if (keep <= 0) rmSync(logPath(name), { force: true });
    else {
      rmSync(`${logPath(name)}.${keep}`, { force: true });
      for (let i = keep - 1; i >= 1; i--) {
        if (existsSync(`${logPath(name)}.${i}`))
          renameSync(`${logPath(name)}.${i}`, `${logPath(name)}.${i + 1}`);
      }
      renameSync(logPath(name), `${logPath(name)}.1`);
    }
    size = 0;
  };
  const emit = (stream, line) => {
    const t = `${new Date().toISOString().slice(0, 23)}${String(seq++).padStart(6, '0')}Z`;
    const rec = `${JSON.stringify({ log: `${line}\n`, stream, time: t })}\n`;
    try {
      if (size > 0 && size + Buffer.byteLength(rec) > bounds.maxSize) rotate();
      appendFileSync(logPath(name), rec);
      size += Buffer.byteLength(rec);
    } catch {}
  };
  for (const stream of ['stdout', 'stderr']) {
    child[stream].on('data', (b) => {
      const parts = (pending[stream] + b.toString('utf8')).split('\n');
      pending[stream] = parts.pop();
      for (const p of parts) emit(stream, p);
    });
  }
  let oom = false;
  const limit = c.HostConfig.Memory;
  const watch = setInterval(() => {
    if (!limit) return;
    try {
      const st = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(st)?.[1] ?? 0);
      if (kb * 1024 > limit) {
        oom = true;
        child.kill('SIGKILL');
      }
    } catch {}
  }, 25);
  child.on('close', (code, signal) => {
    clearInterval(watch);
    for (const s of ['stdout', 'stderr']) if (pending[s] !== '') emit(s, pending[s]);
    const exit = code ?? 128 + (constants.signals[signal] ?? 0);
    safeWrite({
      starting: false,
      running: false,
      Pid: child.pid,
      StartedAt: startedAt,
      FinishedAt: new Date().toISOString(),
      ExitCode: exit,
      OOMKilled: oom,
    });
    process.exit(0);
  });
}

async function waitStopped(name, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const r = runOf(name);
    if (r.running !== true && r.starting !== true) return true;
    if (typeof r.Pid === 'number' && !alive(r.Pid) && r.running === true) {
      await sleep(20);
      continue;
    }
    await sleep(20);
  }
  return false;
}

async function stop(args) {
  let t = 10;
  let ref;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-t' || args[i] === '--time') t = Number(args[++i]);
    else ref = args[i];
  }
  const name = findContainer(ref);
  if (!name) fail(`No such container: ${ref}`);
  if (isRunning(name)) {
    const pid = runOf(name).Pid;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {}
    const ok = await waitStopped(name, t * 1000);
    if (!ok && process.env.FAKE_ENGINE_STOP_NOKILL !== '1') {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
      await waitStopped(name, 5000);
    }
  }
  process.stdout.write(`${ref}\n`);
}

async function kill(ref) {
  const name = findContainer(ref);
  if (!name) fail(`No such container: ${ref}`);
  if (!isRunning(name)) fail(`cannot kill container: ${ref}: container ${ref} is not running`);
  try {
    process.kill(runOf(name).Pid, 'SIGKILL');
  } catch {}
  await waitStopped(name, 5000);
  process.stdout.write(`${ref}\n`);
}

async function wait(ref) {
  const name = findContainer(ref);
  if (!name) fail(`No such container: ${ref}`);
  for (;;) {
    const r = runOf(name);
    if (r.running !== true && r.starting !== true) break;
    await sleep(25);
  }
  process.stdout.write(`${runOf(name).ExitCode ?? 0}\n`);
}

function logs(args) {
  let tail = Number.POSITIVE_INFINITY;
  let ts = false;
  let ref;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--tail' || args[i] === '-n') {
      const v = args[++i];
      tail = v === 'all' ? Number.POSITIVE_INFINITY : Number(v);
    } else if (args[i] === '--timestamps' || args[i] === '-t') ts = true;
    else ref = args[i];
  }
  const name = findContainer(ref);
  if (!name) fail(`No such container: ${ref}`);
  const lines = [];
  for (const f of logFiles(name)) {
    try {
      lines.push(
        ...readFileSync(f, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      );
    } catch {}
  }
  const picked = Number.isFinite(tail) ? lines.slice(Math.max(0, lines.length - tail)) : lines;
  for (const l of picked) {
    const text = ts ? `${l.time} ${l.log}` : l.log;
    (l.stream === 'stderr' ? process.stderr : process.stdout).write(text);
  }
}

function rm(args) {
  for (const ref of args.filter((a) => !a.startsWith('-'))) {
    const name = findContainer(ref);
    if (!name) {
      if (!args.includes('-f') && !args.includes('--force')) fail(`No such container: ${ref}`);
      continue;
    }
    if (isRunning(name)) {
      if (!args.includes('-f')) fail(`cannot remove container "/${name}": container is running`, 1);
      try {
        process.kill(runOf(name).Pid, 'SIGKILL');
      } catch {}
    }
    for (const p of [cfgPath(name), runPath(name), ...logFiles(name)]) rmSync(p, { force: true });
    process.stdout.write(`${ref}\n`);
  }
}

function ps(args) {
  const filters = [];
  for (let i = 0; i < args.length; i++) if (args[i] === '--filter') filters.push(args[++i]);
  const all = args.includes('-a') || args.includes('--all');
  for (const f of readdirSync(CDIR)) {
    if (!f.endsWith('.json') || f.endsWith('.run.json')) continue;
    const name = f.slice(0, -5);
    const ins = inspectObj(name);
    if (!all && !ins.State.Running) continue;
    const labels = ins.Config.Labels;
    const ok = filters.every((flt) => {
      if (!flt.startsWith('label=')) return false;
      const kv = flt.slice(6);
      const eq = kv.indexOf('=');
      return eq < 0 ? kv in labels : labels[kv.slice(0, eq)] === kv.slice(eq + 1);
    });
    if (!ok) continue;
    const row = {
      ID: ins.Id.slice(0, 12),
      Image: ins.Image,
      Names: name,
      State: ins.State.Status,
      Status: ins.State.Running ? 'Up' : `Exited (${ins.State.ExitCode})`,
      Labels: Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    };
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
}

const [cmd, ...rest] = argv;
switch (cmd) {
  case 'version': {
    const noServer = process.env.FAKE_ENGINE_NO_SERVER === '1';
    const client = { Version: '28.0.0-fake', Os: 'linux', Arch: 'amd64' };
    const server = noServer
      ? null
      : { Version: '28.0.0-fake', Os: 'linux', Arch: process.env.FAKE_ENGINE_ARCH ?? 'amd64' };
    process.stdout.write(`${JSON.stringify({ Client: client, Server: server })}\n`);
    if (noServer) fail('Cannot connect to the Docker daemon at unix:///var/run/docker.sock.');
    break;
  }
  case 'image': {
    if (rest[0] !== 'inspect') fail(`unknown image command ${rest[0]}`, 125);
    const refs = rest.slice(1).filter((a) => !a.startsWith('-'));
    const images = readJson(join(STATE, 'images.json'), {});
    const found = refs.map((r) => images[r]);
    if (found.some((x) => x === undefined)) {
      process.stdout.write('[]\n');
      fail(`No such image: ${refs.find((r) => images[r] === undefined)}`);
    }
    const out = refs.map((r) => ({
      Id: `sha256:${r.split('@sha256:')[1] ?? ''}`,
      RepoDigests: [r],
      Architecture: images[r].Architecture,
      Os: images[r].Os ?? 'linux',
    }));
    process.stdout.write(`${JSON.stringify(out)}\n`);
    break;
  }
  case 'pull': {
    const ref = rest.filter((a) => !a.startsWith('-'))[0];
    const reg = readJson(join(STATE, 'registry.json'), {});
    if (!reg[ref]) fail(`pull access denied for ${ref}, repository does not exist`);
    const images = readJson(join(STATE, 'images.json'), {});
    images[ref] = reg[ref];
    writeJson(join(STATE, 'images.json'), images);
    process.stdout.write(`Status: Downloaded newer image for ${ref}\n`);
    break;
  }
  case 'create':
    create(rest);
    break;
  case 'start':
    await start(rest[0]);
    break;
  case '__shim':
    await shim(rest[0]);
    break;
  case 'stop':
    await stop(rest);
    break;
  case 'kill':
    await kill(rest.filter((a) => !a.startsWith('-'))[0]);
    break;
  case 'wait':
    await wait(rest[0]);
    break;
  case 'inspect': {
    const refs = rest.filter(
      (a, i) => !a.startsWith('-') && rest[i - 1] !== '--format' && rest[i - 1] !== '--type',
    );
    const names = refs.map(findContainer);
    if (names.some((n) => n === undefined)) {
      process.stdout.write('[]\n');
      fail(`No such object: ${refs[names.indexOf(undefined)]}`);
    }
    process.stdout.write(`${JSON.stringify(names.map(inspectObj))}\n`);
    break;
  }
  case 'logs':
    logs(rest);
    break;
  case 'rm':
    rm(rest);
    break;
  case 'ps':
    ps(rest);
    break;
  default:
    fail(`unknown command "${cmd}" for "docker"`, 125);
}
