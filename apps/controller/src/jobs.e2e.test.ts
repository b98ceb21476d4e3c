// Declarative jobs against real daemons (issue 20's "done when"): one controller daemon (a child
// process, ticking every second, a node dead after 4 s unreachable) and real `heddle-host` daemons
// (child processes, each leading its own process group), driven by the `heddle` CLI. The three tests
// share the controller and run in order: the spread job's host death leaves a dead node that the
// system job must skip, and the rolling update runs beside both jobs. Where instances run is read from
// each host's own records (its instances.json) or the process table, never from the controller.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nativePackage } from '@heddle/control-plane/testing';
import { generateKeyPair, loadKeyFile } from '@heddle/envelope';
import type { JobStatusAnswer, JobVersionAnswer } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Daemon,
  kill,
  killGroup,
  spawnController,
  spawnHostDaemon,
  waitFor,
  wasiPackage,
  writeHostHome,
} from './daemon-fixtures.js';
import { JSON_OUTPUTS } from './json-outputs.js';
import { runCaptured, tempDir } from './test-io.js';

const cwd = tempDir();
const home = join(cwd, 'ctl');
let controller: Daemon;
let controllerKey = '';
let chainFile = '';
/** The controller's policy, its permit rule widened to egress (a native workload cannot be held to lan). */
let policy = '';

/** A host daemon of the test: its node id, data directory and label. */
interface Host {
  readonly name: string;
  readonly nodeId: string;
  readonly dataDir: string;
  readonly room: string;
  daemon: Daemon;
}
const hosts: Host[] = [];

// Five hosts over three rooms: a 3-count job spread over `room` takes one per room. The test kills the
// r3 host (alone in its room): the replacement goes to a free r1 or r2 host, keeping both of those
// rooms served. (Killing the r1 holder would leave one right place, the other r1 host; but the
// reconciler replaces an instance while its node is only suspect, when the engine still counts the
// instance being replaced in r1, so that choice is a tie today: see /work/notes/20k.md.)
const ROOMS = ['r1', 'r1', 'r2', 'r2', 'r3'];
const LOAD_TIMEOUT_MS = 90_000;

async function heddle(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return runCaptured([...argv, '--home', home], cwd);
}

async function json<T>(command: string, ...argv: string[]): Promise<T> {
  const r = await heddle(...argv, '--json');
  expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
  const schema = JSON_OUTPUTS[command];
  if (schema === undefined) throw new Error(`no --json schema for ${command}`);
  // cast: validated by the command's --json schema
  return schema.parse(JSON.parse(r.out)) as T;
}

const status = async (name: string): Promise<JobStatusAnswer> =>
  (await json<{ job: JobStatusAnswer }>('job status', 'job', 'status', name)).job;

/** Polls `check` (every 500 ms) until it returns a value, or fails naming `what` and the last job status. */
async function until<T>(what: string, check: () => Promise<T | undefined>, job?: string): Promise<T> {
  const end = Date.now() + LOAD_TIMEOUT_MS;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) {
      const seen = job === undefined ? '' : JSON.stringify(await status(job));
      throw new Error(`timed out waiting for ${what}; ${seen}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The job's status once `ok` holds for it. */
const untilStatus = (job: string, what: string, ok: (s: JobStatusAnswer) => boolean) =>
  until(
    what,
    async () => {
      const s = await status(job);
      return ok(s) ? s : undefined;
    },
    job,
  );

/** The instances a host's own records hold of the package `manifestHash` (its data_dir/instances.json). */
function recordedOn(h: Host, manifestHash: string): string[] {
  const file = join(h.dataDir, 'instances.json');
  if (!existsSync(file)) return [];
  // cast: the host's instances file (heddle.host-instances.v1); the test reads three fields
  const f = JSON.parse(readFileSync(file, 'utf8')) as {
    instances: { instance_id: string; manifest_hash: string; desired_running: boolean }[];
  };
  return f.instances
    .filter((i) => i.manifest_hash === manifestHash && i.desired_running)
    .map((i) => i.instance_id);
}

/** Which live hosts' records hold an instance of `manifestHash` (by host name), when each holds at most one. */
function holders(manifestHash: string, among: readonly Host[]): string[] {
  return among.filter((h) => recordedOn(h, manifestHash).length > 0).map((h) => h.name);
}

/**
 * Every live workload process in the process table that a host of this test started, by instance id:
 * a workload's environment carries `HEDDLE_INSTANCE_ID` and a `HEDDLE_DATA_DIR` under its host's data
 * directory (the host contract, docs/runtimes.md). Values: the process groups.
 */
function workloadGroups(): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  const prefix = `HEDDLE_DATA_DIR=${cwd}/`;
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let env: string[];
    let stat: string;
    try {
      env = readFileSync(`/proc/${name}/environ`, 'latin1').split('\0');
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (!env.some((e) => e.startsWith(prefix))) continue;
    const id = env.find((e) => e.startsWith('HEDDLE_INSTANCE_ID='))?.slice('HEDDLE_INSTANCE_ID='.length);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (id === undefined || fields[0] === 'Z') continue;
    const groups = out.get(id) ?? new Set<number>();
    groups.add(Number(fields[2]));
    out.set(id, groups);
  }
  return out;
}

/** Writes a host home (native and WASI, a short supervisor), starts its daemon, enrols and labels it. */
async function addHost(name: string, room: string): Promise<Host> {
  const dir = join(cwd, name);
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o711);
  const written = writeHostHome(dir, {
    hostKeys: generateKeyPair(),
    controllerKey,
    operatorKey: controllerKey,
    extra: {
      policy_file: 'policy.json',
      routes: ['native', 'wasi'],
      // Native workloads run as nobody under root (the directories above are open to it).
      native: process.getuid?.() === 0 ? { run_as_user: 'nobody' } : { allow_host_user: true },
      supervisor: { interval_ms: 250, max_restarts: 1, backoff_initial_ms: 100, backoff_max_ms: 200 },
    },
  });
  writeFileSync(join(dir, 'policy.json'), policy);
  const daemon = spawnHostDaemon(['run', '--config', written.config], cwd, { detached: true });
  const h: Host = { name, nodeId: written.nodeId, dataDir: join(dir, 'data'), room, daemon };
  hosts.push(h);
  const listening = await waitFor(daemon, 'listening', LOAD_TIMEOUT_MS);
  const added = await heddle('node', 'add', String(listening.url), '--tier', 'paired');
  expect(added.code, added.err).toBe(0);
  const labelled = await heddle('node', 'label', h.nodeId, `room=${room}`);
  expect(labelled.code, labelled.err).toBe(0);
  return h;
}

function writeJob(name: string, body: Record<string, unknown>): string {
  const file = join(cwd, 'jobs', `${name}.json`);
  mkdirSync(join(cwd, 'jobs'), { recursive: true });
  writeFileSync(file, JSON.stringify({ name, ...body }));
  return file;
}

beforeAll(async () => {
  chmodSync(cwd, 0o711);
  const init = await runCaptured(['init', '--home', home, '--api-port', '0', '--json'], cwd);
  expect(init.code, init.err).toBe(0);
  // cast: `init --json` prints one object with the controller's public key.
  controllerKey = (JSON.parse(init.out) as { public_key: string }).public_key;
  // cast: the controller.json init wrote (a JSON object)
  const config = JSON.parse(readFileSync(join(home, 'controller.json'), 'utf8')) as Record<string, unknown>;
  chainFile = join(home, String(config.chain_file));
  // cast: the policy init wrote (the default policy: its permit rule has max_network lan)
  const initPolicy = JSON.parse(readFileSync(join(home, String(config.policy_file)), 'utf8')) as {
    rules: Record<string, unknown>[];
  };
  policy = JSON.stringify({
    ...initPolicy,
    rules: initPolicy.rules.map((r) => (r.max_network === 'lan' ? { ...r, max_network: 'egress' } : r)),
  });
  writeFileSync(join(home, String(config.policy_file)), policy);
  writeFileSync(
    join(home, 'controller.json'),
    JSON.stringify({
      ...config,
      refresh_secs: 1,
      // Generous call timeouts (a loaded machine slows a live host); a dead one refuses at once.
      call_timeout_secs: 30,
      place_timeout_secs: 120,
      lifecycle: { dead_after_secs: 4, health_timeout_secs: 30 },
    }),
  );
  controller = spawnController(['controller', 'run', '--home', home], cwd);
  await waitFor(controller, 'listening', LOAD_TIMEOUT_MS);
  await Promise.all(ROOMS.map((room, i) => addHost(`h${i}`, room)));
}, 4 * LOAD_TIMEOUT_MS);

afterAll(async () => {
  await kill(controller);
  await Promise.all(hosts.map((h) => killGroup(h.daemon)));
  // Native workloads lead groups of their own and outlive their host: end what is left of them.
  for (const groups of workloadGroups().values()) {
    for (const g of groups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
});

const roomsOf = (names: readonly string[]): string[] =>
  names.map((n) => hosts.find((h) => h.name === n)?.room ?? '?').sort();

describe('declarative jobs against real daemons', () => {
  it(
    'a 3-count job spread over a label converges, and after a host dies (SIGKILL) re-converges with the spread kept',
    async () => {
      const keys = loadKeyFile(join(home, 'controller.key'));
      const pkg = await wasiPackage(keys);
      const file = writeJob('spread', {
        package: pkg.dir,
        mode: { type: 'interval', secs: 60 },
        count: 3,
        spread: 'room',
        update: { min_healthy_time_secs: 0 },
      });
      const run = await json<{ changed: boolean }>('job run', 'job', 'run', file);
      expect(run.changed).toBe(true);
      const first = await untilStatus(
        'spread',
        '3 healthy',
        (s) => s.healthy === 3 && s.rollout === 'complete',
      );
      expect(first).toMatchObject({ desired: 3, version: 1 });
      // The hosts' own records: one instance on each of three hosts, one per room.
      const before = await until('3 hosts recording the instances', async () => {
        const on = holders(pkg.manifestHash, hosts);
        return on.length === 3 ? on : undefined;
      });
      for (const h of hosts) expect(recordedOn(h, pkg.manifestHash).length).toBeLessThanOrEqual(1);
      expect(roomsOf(before)).toEqual(['r1', 'r2', 'r3']);
      const fromStatus = first.instances.map((i) => hosts.find((h) => h.nodeId === i.node_id)?.name).sort();
      expect(fromStatus).toEqual([...before].sort());

      // Kill the r3 host (its daemon and the workloads in its group, SIGKILL): r3 has no other host, so
      // the replacement goes to a free r1 or r2 host, and both of those rooms keep theirs.
      const victim = hosts.find((h) => h.room === 'r3' && before.includes(h.name));
      if (victim === undefined) throw new Error('no r3 holder');
      await killGroup(victim.daemon);
      expect(victim.daemon.proc.signalCode).toBe('SIGKILL');
      const alive = hosts.filter((h) => h !== victim);
      const after = await untilStatus(
        'spread',
        're-converged without the dead host',
        (s) =>
          s.healthy === 3 &&
          s.instances.length === 3 &&
          s.instances.every((i) => i.node_id !== victim.nodeId),
      );
      expect(after).toMatchObject({ desired: 3, version: 1 });
      const now = await until('the replacement recorded on a live host', async () => {
        const on = holders(pkg.manifestHash, alive);
        return on.length === 3 ? on : undefined;
      });
      for (const h of alive) expect(recordedOn(h, pkg.manifestHash).length).toBeLessThanOrEqual(1);
      const rooms = roomsOf(now);
      expect(new Set(rooms)).toEqual(new Set(['r1', 'r2']));
      expect(rooms.filter((r) => r === 'r1').length).toBeLessThanOrEqual(2);
      expect(rooms.filter((r) => r === 'r2').length).toBeLessThanOrEqual(2);
      // The survivors kept theirs (nothing moved but the lost one).
      for (const n of before.filter((x) => x !== victim.name)) expect(now).toContain(n);
    },
    4 * LOAD_TIMEOUT_MS,
  );

  it(
    'a system job runs on every eligible host, and a host started and enrolled later gets its instance',
    async () => {
      const keys = loadKeyFile(join(home, 'controller.key'));
      const pkg = await wasiPackage(keys);
      const file = writeJob('agent', {
        type: 'system',
        package: pkg.dir,
        mode: { type: 'interval', secs: 60 },
        update: { min_healthy_time_secs: 0 },
      });
      await json('job run', 'job', 'run', file);
      // Every live host (the one killed above is dead: not eligible).
      const alive = hosts.filter((h) => h.daemon.proc.exitCode === null && h.daemon.proc.signalCode === null);
      expect(alive).toHaveLength(4);
      const first = await untilStatus(
        'agent',
        '4 healthy',
        (s) => s.healthy === 4 && s.rollout === 'complete',
      );
      expect(first.desired).toBe(4);
      await until('an instance recorded on each live host', async () =>
        holders(pkg.manifestHash, alive).length === 4 ? true : undefined,
      );

      const late = await addHost('h5', 'r3');
      const grown = await untilStatus('agent', '5 healthy', (s) => s.healthy === 5 && s.desired === 5);
      expect(grown.instances.map((i) => i.node_id)).toContain(late.nodeId);
      await until('the late host recording its instance', async () =>
        recordedOn(late, pkg.manifestHash).length === 1 ? true : undefined,
      );
      // The service job did not move onto the new host (it holds its count already).
      expect((await status('spread')).instances.map((i) => i.node_id)).not.toContain(late.nodeId);
    },
    4 * LOAD_TIMEOUT_MS,
  );

  it(
    'a rolling update whose new version fails its health check reverts on its own: history, chain, old instances running',
    async () => {
      const keys = loadKeyFile(join(home, 'controller.key'));
      // Version 1: hello-cog as a native listener (it keeps running); healthy after 1 s of running.
      const update = { max_parallel: 1, health_check: { deadline_secs: 15 }, auto_revert: true };
      const v1File = writeJob('web', {
        package: await nativePackage(false, keys),
        count: 2,
        update: { ...update, min_healthy_time_secs: 1 },
      });
      await json('job run', 'job', 'run', v1File);
      const v1 = await untilStatus(
        'web',
        'version 1 complete',
        (s) => s.rollout === 'complete' && s.healthy === 2,
      );
      const v1Ids = v1.instances.map((i) => i.instance_id).sort();
      await until('version 1 running in the process table', async () => {
        const running = [...workloadGroups().keys()].sort();
        return JSON.stringify(running) === JSON.stringify(v1Ids) ? true : undefined;
      });

      // Version 2: its program exits with 3 at once (the host's supervisor gives up after one restart);
      // it would need 60 s of running to count as healthy, so it never does.
      const v2File = writeJob('web', {
        package: await nativePackage(true, keys),
        count: 2,
        update: { ...update, min_healthy_time_secs: 60 },
      });
      const v2 = await json<{ changed: boolean; job: JobStatusAnswer }>('job run', 'job', 'run', v2File);
      expect(v2).toMatchObject({ changed: true, job: { version: 2 } });
      const reverted = await untilStatus(
        'web',
        'the automatic revert to complete',
        (s) => s.version === 3 && s.rollout === 'complete',
      );
      expect(reverted.detail ?? '').toMatch(/^version 2 failed its health check: .*; reverted to version 1$/);
      expect(reverted).toMatchObject({ healthy: 2, desired: 2, stable_version: 3 });
      // Version 3 runs what version 1 ran: the same instances, adopted in place.
      expect(reverted.instances.map((i) => i.instance_id).sort()).toEqual(v1Ids);

      const history = await json<{ versions: JobVersionAnswer[] }>('job history', 'job', 'history', 'web');
      expect(history.versions.map((v) => [v.version, v.cause, v.reverted_from, v.current])).toEqual([
        [1, 'run', null, false],
        [2, 'run', null, false],
        [3, 'auto_revert', 1, true],
      ]);
      expect(history.versions[2]?.spec_hash).toBe(history.versions[0]?.spec_hash);
      const human = await heddle('job', 'history', 'web');
      expect(human.code, human.err).toBe(0);
      expect(human.out).toMatch(/auto_revert/);

      // The chain verifies and holds the automatic revert (kind workload.job, phase auto_revert).
      const verify = await runCaptured(['chain', 'verify', chainFile], cwd);
      expect(verify.code, verify.out + verify.err).toBe(0);
      const tail = await runCaptured(
        ['chain', 'tail', chainFile, '--kind', 'workload.job', '--n', '50', '--json'],
        cwd,
      );
      expect(tail.code, tail.err).toBe(0);
      // cast: `chain tail --json` prints {size, head, events}; a workload.job payload (docs/jobs.md)
      const { events } = JSON.parse(tail.out) as {
        events: { payload: { job: string; phase: string; version: number; reverted_from?: number | null } }[];
      };
      const jobEvents = events.map((e) => e.payload).filter((p) => p.job === 'web');
      expect(jobEvents.map((p) => p.phase)).toEqual([
        'run',
        'rollout_complete',
        'run',
        'auto_revert',
        'rollout_complete',
      ]);
      expect(jobEvents[3]).toMatchObject({ version: 3, reverted_from: 1 });

      // The old version's instances run (the process table), and nothing of version 2 does.
      await until('only version 1 instances running in the process table', async () => {
        const running = [...workloadGroups().keys()].sort();
        return JSON.stringify(running) === JSON.stringify(v1Ids) ? true : undefined;
      });

      const stopped = await json<{ job: JobStatusAnswer }>('job stop', 'job', 'stop', 'web');
      expect(stopped.job.desired).toBe(0);
    },
    4 * LOAD_TIMEOUT_MS,
  );
});
