// The controller on PostgreSQL, as real processes against a real server: a SQLite controller places
// the WASI cog on a real host; `heddle state migrate` (a real process) copies its state into an
// empty PostgreSQL database (refusing a non-empty one without --force); the controller restarted with
// `state: { kind: "postgres" }` serves the same nodes and instances from it; while the server is down
// it refuses requests with `store_unavailable` (503) and keeps running, and serves again once it is back.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SyncPg } from '@heddle/control-plane/postgres';
import { postgresSkipReason, startPostgres, type TestPostgres } from '@heddle/control-plane/testing';
import { generateKeyPair, loadKeyFile } from '@heddle/envelope';
import { ApiClient, ApiError } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Daemon,
  kill,
  spawnController,
  spawnHostDaemon,
  waitFor,
  wasiPackage,
  writeHostHome,
} from './daemon-fixtures.js';
import { runCaptured, tempDir } from './test-io.js';

const skip = postgresSkipReason();
const cwd = tempDir();
const home = join(cwd, 'ctl');
let pg: TestPostgres | undefined;
let host: Daemon | undefined;
let controller: Daemon | undefined;
let hostId = '';
let instanceId = '';

/** Resolves once process `pid` no longer exists (at most 10 s). */
async function gone(pid: number): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > until) throw new Error(`process ${pid} still runs`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function server(): TestPostgres {
  if (pg === undefined) throw new Error('no test server');
  return pg;
}

async function startController(): Promise<Daemon> {
  const d = spawnController(['controller', 'run', '--home', home], cwd);
  await waitFor(d, 'listening');
  return d;
}

async function stopController(): Promise<void> {
  const d = controller;
  if (d === undefined) return;
  d.proc.kill('SIGTERM');
  const code = await d.exited;
  expect(code, JSON.stringify(d.lines.slice(-6)) + d.stderr).toBe(0);
  controller = undefined;
}

/** Runs `heddle <args>` as a real process; its exit code and output. */
async function heddle(args: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  const d = spawnController(args, cwd);
  const code = await d.exited;
  return {
    code,
    out: d.lines.map((l) => (typeof l.text === 'string' ? l.text : JSON.stringify(l))).join('\n'),
    err: d.stderr,
  };
}

function setState(state: unknown): void {
  const path = join(home, 'controller.json');
  const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  writeFileSync(path, JSON.stringify({ ...config, state }));
}

beforeAll(async () => {
  if (skip !== undefined) return;
  pg = await startPostgres();
  const init = await runCaptured(['init', '--home', home, '--api-port', '0', '--json'], cwd);
  expect(init.code, init.err).toBe(0);
  // cast: `init --json` prints one object with the controller's public key.
  const { public_key } = JSON.parse(init.out) as { public_key: string };
  const hostHome = writeHostHome(join(cwd, 'host'), {
    hostKeys: generateKeyPair(),
    controllerKey: public_key,
    operatorKey: public_key,
  });
  hostId = hostHome.nodeId;
  host = spawnHostDaemon(['run', '--config', hostHome.config], cwd);
  const h = await waitFor(host, 'listening');
  controller = await startController();
  const client = ApiClient.fromHome(home);
  await client.addNode(String(h.url), { tier: 'paired' });
  const pkg = await wasiPackage(loadKeyFile(join(home, 'controller.key')));
  const placed = await client.place({ package_dir: pkg.dir, mode: { type: 'interval', secs: 30 } });
  expect(placed.status).toBe('placed');
  instanceId = placed.instance?.instance_id ?? '';
  await stopController();
}, 120_000);

afterAll(async () => {
  if (controller !== undefined) await kill(controller);
  if (host !== undefined) await kill(host);
  await pg?.stop();
});

describe.skipIf(skip !== undefined)('the controller on PostgreSQL (real processes, a real server)', () => {
  it('heddle state migrate copies the SQLite state and verifies the counts; a second run is refused without --force', async () => {
    const url = await server().createDatabase('migrated');
    const first = await heddle(['state', 'migrate', '--home', home, '--to', url, '--json']);
    expect(first.code, first.err).toBe(0);
    const result = JSON.parse(first.out) as { to: string; counts: Record<string, number> };
    expect(result.to).not.toContain(server().password); // the password is never printed
    expect(result.counts).toMatchObject({ targets: 1, orders: 1, placements: 1 });
    expect(result.counts.meta).toBeGreaterThanOrEqual(1); // the seal's state_seq goes along

    const again = await heddle(['state', 'migrate', '--home', home, '--to', url, '--json']);
    expect(again.code).toBe(3);
    expect(again.err).toContain('state_target_not_empty');
    const forced = await heddle(['state', 'migrate', '--home', home, '--to', url, '--force', '--json']);
    expect(forced.code, forced.err).toBe(0);
    expect((JSON.parse(forced.out) as { counts: Record<string, number> }).counts).toEqual(result.counts);
  }, 120_000);

  it('refuses a missing source (exit 3) and an unreachable server (exit 1) with stable codes', async () => {
    const missing = await runCaptured(
      ['state', 'migrate', '--from', join(cwd, 'nope.db'), '--to', server().url, '--json'],
      cwd,
    );
    expect(missing.code).toBe(3);
    expect(missing.err).toContain('state_source_missing');
    const down = new URL(server().url);
    down.port = '1';
    const unreachable = await runCaptured(
      ['state', 'migrate', '--home', home, '--to', down.toString(), '--json'],
      cwd,
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain('state_unavailable');
    const notUrl = await runCaptured(['state', 'migrate', '--home', home, '--to', 'mysql://x'], cwd);
    expect(notUrl.code).toBe(2);
  }, 60_000);

  it('runs on the migrated database (state.kind postgres, password_file); store_unavailable while the server is down (the daemon keeps running), serves again after, and shuts down cleanly (exit 0)', async () => {
    const url = new URL(`${server().url.replace(/\/[^/]*$/, '')}/migrated`);
    writeFileSync(join(home, 'pg.password'), `${server().password}\n`, { mode: 0o600 });
    url.password = '';
    setState({ kind: 'postgres', url: url.toString(), password_file: 'pg.password', call_timeout_ms: 3000 });
    controller = await startController();
    expect(controller.lines.find((l) => l.msg === 'state on PostgreSQL')).toBeDefined();
    const client = ApiClient.fromHome(home);
    expect((await client.nodes()).map((n) => n.node_id)).toEqual([hostId]);
    expect((await client.instances()).map((p) => p.instance_id)).toEqual([instanceId]);

    // The controller's own connections: the fault has landed once their backends are gone too.
    const probe = new SyncPg({ connectionString: server().url });
    const backends = probe
      .query("SELECT pid FROM pg_stat_activity WHERE application_name = 'heddle-controller'")
      .rows.map((r) => Number(r.pid));
    probe.close();
    expect(backends.length).toBeGreaterThan(0);
    await server().kill();
    for (const pid of backends) await gone(pid);
    const refused = await client.nodes().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(controller.proc.exitCode).toBeNull();
    await server().restart();
    expect((await client.nodes()).map((n) => n.node_id)).toEqual([hostId]);
    expect(controller.proc.exitCode).toBeNull();
    await stopController();
  }, 120_000);

  it('refuses to start against a server that cannot be reached (state_unavailable, exit 1)', async () => {
    setState({
      kind: 'postgres',
      host: '127.0.0.1',
      port: 1,
      database: 'x',
      user: 'heddle',
      call_timeout_ms: 2000,
    });
    const d = spawnController(['controller', 'run', '--home', home], cwd);
    expect(await d.exited).toBe(1);
    expect(d.stderr + JSON.stringify(d.lines)).toContain('state_unavailable');
  }, 60_000);
});
