// A Cognitum Seed through the operator CLI: `node add-seed`, `place store:<id>@<version>`, `ps`, `stop`,
// `unload`, in process against the real operator API over a real control plane and the Seed simulator
// on 127.0.0.1 over HTTPS (its certificate pinned by SPKI).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@heddle/cli-kit';
import type { ControlPlane } from '@heddle/control-plane';
import { openPlane, type TestPlane, tempDir } from '@heddle/control-plane/testing';
import { ApiServer } from '@heddle/operator-api';
import { saveToken } from '@heddle/seed-adapter';
import { seedDriver } from '@heddle/seed-adapter/controller';
import { SeedSimulator, selfSignedCert } from '@heddle/seed-adapter/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planeHandlers } from '../api-handlers.js';
import { runCli } from '../cli.js';
import { NODE_ADD_SEED } from '../defs/node.js';
import type { CliIo } from '../io.js';
import { JSON_OUTPUTS } from '../json-outputs.js';

const TOKEN = 'seed-cli-token-0123456789';
let sim: SeedSimulator;
let p: TestPlane;
let api: ApiServer;
let cwd: string;
let home: string;

beforeAll(async () => {
  sim = await SeedSimulator.start({
    https: selfSignedCert('seed-cli'),
    tokens: [TOKEN],
    installDelayMs: 20,
    tickMs: 50,
  });
  p = await openPlane(undefined, {}, undefined, { drivers: [seedDriver()] });
  api = await ApiServer.listen({
    // cast: the fixtures are imported from the control plane's source, the handlers' types from its build (the same class).
    handlers: planeHandlers(p.plane as unknown as ControlPlane),
    auth: { token: 'api-token' },
    log: new Logger(() => {}),
    port: 0,
  });
  cwd = tempDir('heddle-seed-e2e-');
  home = join(cwd, 'home');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(
    join(home, 'api.json'),
    JSON.stringify({ url: api.url, pid: process.pid, node_id: p.plane.nodeId }),
    { mode: 0o600 },
  );
  writeFileSync(join(home, 'api.token'), 'api-token', { mode: 0o600 });
  saveToken(join(cwd, 'seed.token'), TOKEN);
});
afterAll(async () => {
  await api?.close(1000);
  await p?.close();
  await sim?.close();
});

async function heddle(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), cwd };
  const code = await runCli([...argv, '--home', home], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('heddle with a Cognitum Seed', () => {
  it('adds the Seed, places a store-pinned cog on it, lists, stops and unloads it; the token is never printed', async () => {
    const bad = await heddle([
      'node',
      'add-seed',
      sim.url,
      '--pin-spki',
      'cd'.repeat(32),
      '--token-file',
      'seed.token',
      '--tier',
      'paired',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('is not the pinned');
    const added = await heddle([
      'node',
      'add-seed',
      sim.url,
      '--pin-spki',
      sim.spki as string,
      '--token-file',
      'seed.token',
      '--tier',
      'paired',
      '--json',
    ]);
    expect(added.code, added.err).toBe(0);
    JSON_OUTPUTS['node add-seed']?.parse(JSON.parse(added.out));
    const node = (JSON.parse(added.out) as { node: { node_id: string; routes: string[] } }).node;
    expect(node.routes).toEqual(['remote.api']);
    const placed = await heddle(['place', 'store:vibration@0.4.1', '--json']);
    expect(placed.code, placed.err).toBe(0);
    JSON_OUTPUTS.place?.parse(JSON.parse(placed.out));
    const id = (JSON.parse(placed.out) as { instance: { instance_id: string; node_id: string } }).instance
      .instance_id;
    const ps = await heddle(['ps']);
    expect(ps.out).toContain(id);
    expect(ps.out).toContain('vibration');
    expect((await heddle(['stop', id])).code).toBe(0);
    expect((await heddle(['unload', id])).code).toBe(0);
    expect(sim.installed().some((c) => c.id === 'vibration')).toBe(false);
    const drift = await heddle(['place', 'store:thermal@9.0.0']);
    expect(drift.code).toBe(1);
    for (const r of [bad, added, placed, ps, drift]) expect(r.out + r.err).not.toContain(TOKEN);
  });

  it('the store syntax node add-seed documents is the one place accepts (and --store is not)', async () => {
    const documented = /heddle place (store:<id>@<version>)/.exec(NODE_ADD_SEED.description)?.[1];
    expect(documented).toBe('store:<id>@<version>');
    const dry = await heddle(['place', 'store:thermal@1.0.3', '--console=--once', '--dry-run', '--json']);
    expect(dry.code, dry.err).toBe(0);
    expect((await heddle(['place', '--store', 'thermal@1.0.3'])).code).toBe(2);
  });

  it('a token revoked on the Seed shows in node ls after a refresh', async () => {
    sim.revokeTokens(TOKEN);
    await heddle(['node', 'refresh']);
    const ls = await heddle(['node', 'ls']);
    expect(ls.code).toBe(0);
    expect(ls.out).toMatch(/token refused: the Seed no longer accepts the token/);
    expect(ls.out).not.toContain(TOKEN);
  });
});
