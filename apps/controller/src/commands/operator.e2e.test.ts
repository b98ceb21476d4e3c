// End to end: the operator commands in process against the real operator API server (src/api), over
// a real control plane (SQLite, chain, gate) and real hosts on 127.0.0.1 (the control plane's test
// fixtures: host service, WASI and native runtimes behind a WebSocket server).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@heddle/cli-kit';
import type { ControlPlane } from '@heddle/control-plane';
import {
  examplePackage,
  openPlane,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from '@heddle/control-plane/testing';
import { ApiServer } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planeHandlers } from '../api-handlers.js';
import { runCli } from '../cli.js';
import { stripAnsi } from '../format/colour.js';
import type { CliIo } from '../io.js';
import { ErrorOutputSchema, JSON_OUTPUTS } from '../json-outputs.js';

let both: TestHost;
let wasiOnly: TestHost;
let p: TestPlane;
let api: ApiServer;
let home: string;
let cwd: string;
let wasiPkg: string;
let nativePkg: string;

beforeAll(async () => {
  [both, wasiOnly, p, wasiPkg, nativePkg] = await Promise.all([
    startHost(['native', 'wasi']),
    startHost(['wasi']),
    openPlane(),
    examplePackage('wasi-cog'),
    examplePackage('hello-cog', true),
  ]);
  const plane = p.plane;
  api = await ApiServer.listen({
    handlers: planeHandlers(plane),
    token: 'cli-test-token',
    log: new Logger(() => {}),
    port: 0,
  });
  cwd = tempDir('heddle-cli-e2e-');
  home = join(cwd, 'home');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(
    join(home, 'api.json'),
    JSON.stringify({ url: api.url, pid: process.pid, node_id: p.plane.nodeId }),
    {
      mode: 0o600,
    },
  );
  writeFileSync(join(home, 'api.token'), 'cli-test-token', { mode: 0o600 });
});

afterAll(async () => {
  await api?.close(1000);
  await p?.close();
  await both?.close();
  await wasiOnly?.close();
});

interface Run {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
  readonly raw: string[];
}

async function heddle(argv: string[], extra: Partial<CliIo> = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const raw: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    errRaw: (t) => raw.push(t),
    cwd,
    env: {},
    ...extra,
  };
  const code = await runCli([...argv, '--home', home], io);
  // HEDDLE_CLI_DUMP=<file>: append every run's output there, to read what operators see.
  const dump = process.env.HEDDLE_CLI_DUMP;
  if (dump !== undefined) {
    appendFileSync(
      dump,
      [`$ heddle ${argv.join(' ')}  (exit ${code})`, ...out, ...err.map((l) => `[err] ${l}`), ''].join('\n'),
    );
  }
  return { code, out, err, raw };
}

/** Runs with --json, checks exit 0 and one line validated against the command's schema. */
async function json<T = Record<string, unknown>>(command: string, argv: string[]): Promise<T> {
  const r = await heddle([...argv, '--json']);
  expect(r.err, `${command}: ${r.err.join('\n')}`).toEqual([]);
  expect(r.code).toBe(0);
  expect(r.out).toHaveLength(1);
  const schema = JSON_OUTPUTS[command];
  if (schema === undefined) throw new Error(`no schema for ${command}`);
  return schema.parse(JSON.parse(r.out[0] as string)) as T;
}

async function jsonError(argv: string[], exit: number) {
  const r = await heddle([...argv, '--json']);
  expect(r.code, `${argv.join(' ')}: ${r.err.join('\n')}`).toBe(exit);
  expect(r.out).toEqual([]);
  expect(r.err).toHaveLength(1);
  return ErrorOutputSchema.parse(JSON.parse(r.err[0] as string)).error;
}

let bothId: string;
let wasiId: string;
let instance: string;

describe('heddle operator commands against a real controller API', () => {
  it('node add, ls and refresh', async () => {
    const a = await json<{ node: { node_id: string } }>('node add', [
      'node',
      'add',
      both.url,
      '--tier',
      'paired',
    ]);
    bothId = a.node.node_id;
    expect(bothId).toBe(both.service.nodeId);
    const human = await heddle([
      'node',
      'add',
      wasiOnly.url,
      '--tier',
      'pinned',
      '--key',
      Buffer.from(wasiOnly.keys.publicKey).toString('hex'),
    ]);
    expect(human.code).toBe(0);
    wasiId = wasiOnly.service.nodeId;
    expect(human.out[0]).toMatch(
      new RegExp(`^added ${wasiId} at ws://.*tier pinned.*\\(pinned\\), routes wasi$`),
    );

    const ls = await heddle(['node', 'ls']);
    expect(ls.code).toBe(0);
    expect(ls.out[0]).toMatch(/^NODE +TIER +LIVENESS +VERSION +ROUTES +INSTANCES +LABELS +SEEN +URL$/);
    expect(ls.out).toHaveLength(3);
    expect(ls.out.join('\n')).not.toContain('\u001b[');
    const tty = await heddle(['node', 'ls'], { isTty: true });
    expect(tty.out.join('\n')).toContain('\u001b[32malive\u001b[39m');
    expect(tty.out.map((l) => stripAnsi(l).split(/ +/)[0])).toEqual(ls.out.map((l) => l.split(/ +/)[0]));
    const noColor = await heddle(['node', 'ls'], { isTty: true, env: { NO_COLOR: '1' } });
    expect(noColor.out.join('\n')).not.toContain('\u001b[');

    const ids = (await json<{ nodes: { node_id: string }[] }>('node ls', ['node', 'ls'])).nodes.map(
      (n) => n.node_id,
    );
    expect(ids.sort()).toEqual([bothId, wasiId].sort());
    await json('node refresh', ['node', 'refresh']);
  });

  it('node add refuses a bad URL (exit 3, field named) and an unreachable node (exit 1)', async () => {
    const down = await jsonError(['node', 'add', 'ws://127.0.0.1:9', '--tier', 'paired'], 1);
    expect(down.code).toBe('unreachable');
    expect(down.message).toContain('lists this controller');
    const bad = await jsonError(['node', 'add', 'http://nowhere', '--tier', 'paired'], 3);
    expect(bad).toMatchObject({ code: 'invalid_input', field: 'url' });
  });

  it('place --dry-run --explain decides without placing', async () => {
    const r = await heddle(['place', wasiPkg, '--dry-run', '--explain']);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^dry run: wasi-cog: placed on [0-9a-f]{32}/);
    expect(r.out[1]).toMatch(/^NODE +VERDICT +VARIANT +SCORE +DETAIL$/);
    expect(
      r.out
        .slice(2)
        .map((l) => l.split(/ +/)[1])
        .sort(),
    ).toEqual(['candidate', 'chosen']);
    const j = await json<{ status: string; decision_id: null }>('place', ['place', wasiPkg, '--dry-run']);
    expect(j).toMatchObject({ status: 'dry_run', decision_id: null });
    expect((await json<{ instances: unknown[] }>('ps', ['ps'])).instances).toEqual([]);
  });

  it('place shows the transfer progress and the placement', async () => {
    const r = await heddle(['place', wasiPkg, '--prefer', wasiId, '--explain', '--mode', 'once']);
    expect(r.code, r.err.join('\n')).toBe(0);
    const progress = r.err.filter((l) => l.startsWith('sending to '));
    expect(progress.at(-1)).toMatch(new RegExp(`^sending to ${wasiId.slice(0, 8)} \\[#+\\] 100%`));
    expect(r.raw).toEqual([]);
    const m = /^placed wasi-cog@[\d.]+ as (\S+) on ([0-9a-f]{32}) \(/.exec(r.out[0] ?? '');
    expect(m, r.out.join('\n')).not.toBeNull();
    instance = m?.[1] as string;
    expect(m?.[2]).toBe(wasiId);
    expect(r.out[1]).toMatch(/^decision [0-9a-f]{64}, order o-[0-9a-f]{16}$/);
    expect(r.out.join('\n')).toMatch(/\nNODE +VERDICT/);
  });

  it('ps, status and logs', async () => {
    const ps = await heddle(['ps']);
    expect(ps.out[0]).toMatch(/^INSTANCE +WORKLOAD +NODE +STATE +DESIRED +AGE$/);
    expect(ps.out[1]).toContain(instance);
    expect(ps.out[1]).toContain(wasiId.slice(0, 8));
    const listed = await json<{ instances: { instance_id: string }[] }>('ps', ['ps']);
    expect(listed.instances.map((i) => i.instance_id)).toEqual([instance]);

    const st = await json<{ placement: { instance_id: string } }>('status', ['status', instance]);
    expect(st.placement.instance_id).toBe(instance);
    const human = await heddle(['status', instance]);
    expect(human.out[0]).toMatch(new RegExp(`^instance: +${instance}$`));
    expect(human.out.some((l) => /^host\.\w+/.test(l))).toBe(true);

    let lines: string[] = [];
    for (let i = 0; i < 50 && lines.length === 0; i += 1) {
      lines = (await json<{ lines: string[] }>('logs', ['logs', instance, '--lines', '10'])).lines;
      if (lines.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(lines.length).toBeGreaterThan(0);
    const text = await heddle(['logs', instance]);
    expect(text.out).toEqual(lines.slice(-100));
  });

  it('logs --follow prints only new lines and stops on interrupt', async () => {
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 1300);
    const r = await heddle(['logs', instance, '--follow', '--json'], { signal: ac.signal });
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.out.length).toBeGreaterThanOrEqual(1);
    for (const l of r.out) JSON_OUTPUTS.logs?.parse(JSON.parse(l));
  });

  it('an unplaceable order names every node’s reason (exit 1)', async () => {
    const r = await heddle(['place', nativePkg, '--node', wasiId]);
    expect(r.code).toBe(1);
    expect(r.err[0]).toMatch(/^heddle place: hello-cog: .*heddle place --dry-run --explain/);
    expect(r.err.slice(1).some((l) => l.startsWith(`  ${wasiId}: `))).toBe(true);
    const e = await jsonError(['place', nativePkg, '--avoid', bothId, '--node', wasiId], 1);
    expect(e.code).toBe('unplaceable');
    expect(Object.keys(e.reasons ?? {})).toContain(wasiId);
  });

  it('unknown instances and nodes say where to look (exit 3)', async () => {
    const e = await jsonError(['status', 'no-such-instance'], 3);
    expect(e.code).toBe('unknown_instance');
    const h = await heddle(['stop', 'no-such-instance']);
    expect(h.code).toBe(3);
    expect(h.err[0]).toMatch(/^heddle stop: no instance no-such-instance .*heddle ps/);
    const n = await jsonError(['node', 'rm', 'ab'.repeat(16)], 3);
    expect(n.code).toBe('unknown_node');
    expect(n.message).toContain('node ls');
  });

  it('stop, start, unload and ps --all', async () => {
    const stopped = await json<{ placement: { state: string } }>('stop', [
      'stop',
      instance,
      '--grace-ms',
      '500',
    ]);
    expect(stopped.placement.state).toBe('stopped');
    const started = await heddle(['start', instance]);
    expect(started.code, started.err.join('\n')).toBe(0);
    expect(started.out[0]).toMatch(new RegExp(`^started ${instance} `));
    const busy = await heddle(['unload', instance]);
    expect(busy.code).toBe(1);
    expect(busy.err[0]).toMatch(/^heddle unload: .*stop it first/);
    const again = await heddle(['stop', instance]);
    expect(again.code, again.err.join('\n')).toBe(0);
    expect(again.out[0]).toMatch(new RegExp(`^stopped ${instance} .*: stopped$`));
    expect(again.out[1]).toMatch(/^evidence: exit code .*signal/);
    const unloaded = await json<{ placement: { state: string } }>('unload', ['unload', instance]);
    expect(unloaded.placement.state).toBe('unloaded');
    const ps = await heddle(['ps']);
    expect(ps.out[0]).toMatch(/^no instances/);
    expect(ps.out[1]).toContain('--all');
    const all = await json<{ instances: { state: string }[] }>('ps', ['ps', '--all']);
    expect(all.instances.map((i) => i.state)).toEqual(['unloaded']);
  });

  it('node rm is refused while the node has placements, and forgets it with --force', async () => {
    const placed = await json<{ status: string; instance: { state: string } }>('place', [
      'place',
      wasiPkg,
      '--node',
      wasiId,
      '--no-start',
      '--mode',
      'interval:60',
    ]);
    expect(placed).toMatchObject({ status: 'placed', instance: { state: 'placed' } });
    const refused = await jsonError(['node', 'rm', wasiId], 3);
    expect(refused.field).toBe('node');
    const r = await json<{ node: { node_id: string } }>('node rm', ['node', 'rm', wasiId, '--force']);
    expect(r.node.node_id).toBe(wasiId);
  });

  it('a wrong token is bad input (exit 3)', async () => {
    writeFileSync(join(home, 'api.token'), 'wrong');
    try {
      const e = await jsonError(['ps'], 3);
      expect(e.code).toBe('unauthorized');
    } finally {
      writeFileSync(join(home, 'api.token'), 'cli-test-token');
    }
  });
});

describe('heddle alerts', () => {
  it('lists an alert, acknowledges it, hides it, and refuses an unknown id', async () => {
    const alert = {
      alert_id: 'al-0123456789abcdef',
      instance_id: 'i-alerted',
      node_id: 'a'.repeat(32),
      order_id: 'o-0123456789abcdef',
      reason: 'pinned' as const,
      detail: 'wasi-cog@0.1.0 is not moved: its order is pinned to its node',
      raised_at_ms: Date.now() - 5_000,
      acked_at_ms: null,
    };
    p.store.putAlert(alert);
    const listed = await json<{ alerts: { alert_id: string }[] }>('alerts', ['alerts']);
    expect(listed.alerts.map((a) => a.alert_id)).toEqual([alert.alert_id]);
    const table = (await heddle(['alerts'])).out.map(stripAnsi);
    expect(table[0]).toMatch(/^ALERT\s+REASON\s+INSTANCE\s+NODE\s+AGE/);
    expect(table[1]).toContain('pinned');
    expect(table[2]).toContain('its order is pinned');

    const acked = await json<{ alert: { acked_at_ms: number | null } }>('alerts ack', [
      'alerts',
      'ack',
      alert.alert_id,
    ]);
    expect(acked.alert.acked_at_ms).toEqual(expect.any(Number));
    expect((await json<{ alerts: unknown[] }>('alerts', ['alerts'])).alerts).toEqual([]);
    const all = await json<{ alerts: { acked_at_ms: number | null }[] }>('alerts', ['alerts', '--all']);
    expect(all.alerts).toHaveLength(1);
    expect((await jsonError(['alerts', 'ack', 'al-ffffffffffffffff'], 3)).code).toBe('unknown_alert');
    expect((await heddle(['alerts', 'bogus'])).code).toBe(2);
  });
});
