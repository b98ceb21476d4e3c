// A controller daemon and a hollow-host fleet in another process, for the hollow-host benchmarks
// (hollow-place.bench.mjs, hollow-failover.bench.mjs). Built CLIs: `pnpm build` first. The fleet is
// enrolled as real hosts are: `heddle-hollow run --enrol <controller home>` adds every host with
// POST /v1/nodes and its key (docs/hollow.md).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '@heddle/operator-api';

const root = new URL('..', import.meta.url).pathname;
const HEDDLE = join(root, 'apps/controller/dist/bin.js');
const HOLLOW = join(root, 'apps/hollow/dist/bin.js');
const POLICY = {
  version: 1,
  name: 'bench',
  rules: [
    {
      id: 'all',
      effect: 'permit',
      actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
  ],
};

function cli(dir, bin, args) {
  const r = spawnSync(process.execPath, [bin, ...args, '--json'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr || r.stdout}`);
  return JSON.parse(r.stdout);
}

/** Spawns a daemon; `lines` collects its JSON lines; `waitFor(pred)` resolves with the first line that fits. */
function daemon(dir, bin, args, stdin = 'ignore', nodeFlags = []) {
  const proc = spawn(process.execPath, [...nodeFlags, bin, ...args], {
    cwd: dir,
    stdio: [stdin, 'pipe', 'pipe'],
  });
  const lines = [];
  const waiters = [];
  let buf = '';
  let stderr = '';
  proc.stderr.on('data', (c) => {
    stderr += c;
  });
  proc.stdout.on('data', (c) => {
    buf += c;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let j;
      try {
        j = JSON.parse(text);
      } catch {
        continue;
      }
      lines.push(j);
      for (const w of [...waiters]) {
        if (w.pred(j)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(j);
        }
      }
    }
  });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const waitFor = (pred, what, ms = 600_000) =>
    new Promise((resolve, reject) => {
      const found = lines.find(pred);
      if (found) return resolve(found);
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms; stderr ${stderr}`)), ms);
      waiters.push({
        pred,
        resolve: (j) => {
          clearTimeout(timer);
          resolve(j);
        },
      });
      exited.then((code) => reject(new Error(`${args[0]} exited ${code} before ${what}: ${stderr}`)));
    });
  return { proc, lines, waitFor };
}

/**
 * Starts a controller (`heddle init` + `heddle controller run`, with `lifecycle`) and `hosts` hollow
 * hosts in another process, enrolled; builds and signs examples/native-cog. Returns the API client,
 * the package directory, the fleet's control (`control(cmd)` sends one control line and resolves with
 * its answer) and `close()`.
 */
export async function startCluster({
  hosts,
  deadAfterSecs = 10,
  refreshSecs = 10,
  chain = 'file',
  startLatencyMs = 0,
}) {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-hollow-bench-'));
  chmodSync(dir, 0o711);
  const procs = [];
  // HEDDLE_BENCH_CPU_PROF=<dir>: the controller runs with --cpu-prof and is stopped with SIGTERM (a
  // clean exit writes the profile into <dir>) before the rest is killed.
  const profDir = process.env.HEDDLE_BENCH_CPU_PROF;
  let controllerExit;
  const close = async () => {
    if (profDir !== undefined && procs[0] !== undefined && controllerExit !== undefined) {
      procs[0].kill('SIGTERM');
      await Promise.race([controllerExit, new Promise((r) => setTimeout(r, 30_000))]);
    }
    for (const p of procs) p.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const publisher = cli(dir, HEDDLE, ['keygen', '--out', 'publisher.key']);
    writeFileSync(
      join(dir, 'trust.json'),
      JSON.stringify({
        schema: 'heddle.trust.v1',
        keys: [{ id: 'p', role: 'publisher', public_key: publisher.public_key }],
      }),
    );
    writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY));
    const ctl = cli(dir, HEDDLE, [
      'init',
      '--home',
      'controller',
      '--trust',
      'trust.json',
      '--policy',
      'policy.json',
      '--api-port',
      '0',
    ]);
    const cfgPath = join(dir, 'controller', 'controller.json');
    const cfg = JSON.parse(readFileSync(cfgPath, 'utf8'));
    cfg.refresh_secs = refreshSecs;
    cfg.lifecycle = { dead_after_secs: deadAfterSecs, reschedule_backoff_secs: 1 };
    writeFileSync(cfgPath, JSON.stringify(cfg));
    cli(dir, HEDDLE, [
      'pkg',
      'build',
      join(root, 'examples/native-cog'),
      '-o',
      'cog',
      '--key',
      'publisher.key',
    ]);
    const c = daemon(
      dir,
      HEDDLE,
      ['controller', 'run', '--home', 'controller'],
      'ignore',
      profDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`],
    );
    procs.push(c.proc);
    controllerExit = new Promise((r) => c.proc.on('exit', r));
    await c.waitFor((j) => j.msg === 'listening', 'controller listening', 60_000);
    const t0 = performance.now();
    const h = daemon(
      dir,
      HOLLOW,
      [
        'run',
        '--dir',
        'hollow',
        '--count',
        String(hosts),
        '--controller',
        ctl.public_key,
        '--trust',
        'trust.json',
        '--policy',
        'policy.json',
        '--chain',
        chain,
        '--start-latency-ms',
        String(startLatencyMs),
        '--enrol',
        'controller',
      ],
      'pipe',
    );
    procs.push(h.proc);
    const listening = await h.waitFor((j) => j.msg === 'listening', 'hollow hosts listening');
    const enrolled = await h.waitFor((j) => j.msg === 'enrolled', 'hollow hosts enrolled', 4 * 3600_000);
    const setupMs = performance.now() - t0;
    let seq = 0;
    const control = async (cmd) => {
      const mark = ++seq;
      const before = h.lines.length;
      h.proc.stdin.write(`${JSON.stringify(cmd)}\n`);
      const answer = await h.waitFor(
        (j) => h.lines.indexOf(j) >= before && (j.cmd === cmd.cmd || j.ok === false),
        `control ${mark}`,
      );
      if (answer.ok !== true) throw new Error(`control ${JSON.stringify(cmd)}: ${JSON.stringify(answer)}`);
      return answer;
    };
    const api = ApiClient.fromHome(join(dir, 'controller'));
    return {
      api,
      dir,
      packageDir: join(dir, 'cog'),
      hostsFile: JSON.parse(readFileSync(join(dir, 'hollow', 'hosts.json'), 'utf8')).hosts,
      startMs: listening.ms,
      enrolMs: enrolled.ms,
      setupMs,
      control,
      controllerPid: c.proc.pid,
      hollowPid: h.proc.pid,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Runs `fn(i)` for i = 0.. with `concurrency` in flight until `n` were started or `fn` returns false
 * (no more work); resolves with the number that succeeded and the errors.
 */
export async function inFlight(n, concurrency, fn) {
  let next = 0;
  let ok = 0;
  let done = false;
  const errors = [];
  const worker = async () => {
    while (!done && next < n) {
      const i = next++;
      try {
        if ((await fn(i)) === false) done = true;
        else ok++;
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return { ok, errors };
}

/**
 * CPU time (user + system, ms) process `pid` has used so far, from /proc (Linux); undefined
 * elsewhere. On a shared machine CPU time is the figure the load inflates least.
 */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields 14 and 15 (utime, stime) in clock ticks; after the name they are at 11 and 12
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}
