// Labels, constraints, spread, cordon and drain end to end: a real controller daemon and two real
// `heddle-host` daemons (child processes), driven by the `heddle` CLI. Labels and cordon survive a
// SIGKILL of the controller; a drain empties a node and the chain holds each move.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, loadKeyFile } from '@heddle/envelope';
import { ApiClient, type DrainReportSchema } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  type Daemon,
  kill,
  spawnController,
  spawnHostDaemon,
  waitFor,
  wasiPackage,
  writeHostHome,
} from '../daemon-fixtures.js';
import { JSON_OUTPUTS } from '../json-outputs.js';
import { runCaptured, tempDir } from '../test-io.js';

const cwd = tempDir();
const home = join(cwd, 'ctl');
let controller: Daemon;
const hosts: Daemon[] = [];
let kitchen = '';
let hall = '';
let secs = 20;

async function heddle(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return runCaptured([...argv, '--home', home], cwd);
}

async function json<T>(command: string, ...argv: string[]): Promise<T> {
  const r = await heddle(...argv, '--json');
  expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
  // cast: validated by the command's --json schema
  return JSON_OUTPUTS[command]?.parse(JSON.parse(r.out)) as T;
}

/** Places a fresh order of one package (a new interval: a distinct instance). */
async function place(pkg: string, ...flags: string[]): Promise<{ node_id: string; instance_id: string }> {
  const r = await json<{ instance: { node_id: string; instance_id: string } }>(
    'place',
    'place',
    pkg,
    '--mode',
    `interval:${secs++}`,
    ...flags,
  );
  return r.instance;
}

beforeAll(async () => {
  const init = await runCaptured(['init', '--home', home, '--api-port', '0', '--json'], cwd);
  expect(init.code, init.err).toBe(0);
  // cast: `init --json` prints one object with the controller's public key.
  const { public_key } = JSON.parse(init.out) as { public_key: string };
  const homes = ['a', 'b'].map((n) =>
    writeHostHome(join(cwd, n), {
      hostKeys: generateKeyPair(),
      controllerKey: public_key,
      operatorKey: public_key,
    }),
  );
  for (const h of homes) hosts.push(spawnHostDaemon(['run', '--config', h.config], cwd));
  controller = spawnController(['controller', 'run', '--home', home], cwd);
  const listening = await Promise.all([
    ...hosts.map((h) => waitFor(h, 'listening')),
    waitFor(controller, 'listening'),
  ]);
  for (const l of listening.slice(0, 2)) {
    const r = await heddle('node', 'add', String(l.url), '--tier', 'paired');
    expect(r.code, r.err).toBe(0);
  }
  [kitchen, hall] = homes.map((h) => h.nodeId) as [string, string];
}, 30_000);

afterAll(async () => {
  await Promise.all([kill(controller), ...hosts.map((h) => kill(h))]);
});

describe('node labels, cordon and drain through the CLI and real daemons', () => {
  it('labels steer places: a constraint and a spread place as expected; labels and cordon survive a SIGKILL', async () => {
    expect((await heddle('node', 'label', kitchen, 'room=kitchen', 'camera=yes')).code).toBe(0);
    expect((await heddle('node', 'label', hall, 'room=hall')).code).toBe(0);
    const bad = await heddle('node', 'label', hall, 'Room=x', '--json');
    expect([bad.code, JSON.parse(bad.err).error.field]).toEqual([3, 'labels']);
    const pkg = (await wasiPackage(loadKeyFile(join(home, 'controller.key')))).dir;
    // A constraint: only the kitchen takes it, whatever the scores.
    for (let i = 0; i < 2; i++) {
      expect((await place(pkg, '--constraint', 'label.room=kitchen')).node_id).toBe(kitchen);
    }
    // Spread over the room: the kitchen holds two of this workload, so the hall gets the next two.
    expect((await place(pkg, '--spread', 'room')).node_id).toBe(hall);
    expect((await place(pkg, '--spread', 'room')).node_id).toBe(hall);
    const ls = await heddle('node', 'ls');
    expect(ls.out).toMatch(new RegExp(`${kitchen}.*camera=yes,room=kitchen`));
    // Cordon; a SIGKILLed controller comes back with the cordon and the labels.
    expect((await heddle('node', 'cordon', hall)).code).toBe(0);
    await kill(controller);
    controller = spawnController(['controller', 'run', '--home', home], cwd);
    await waitFor(controller, 'listening');
    await ApiClient.fromHome(home).refreshNodes();
    const node = await ApiClient.fromHome(home).node(hall);
    expect(node).toMatchObject({ cordoned: true, labels: { room: 'hall' } });
    const refused = await heddle(
      'place',
      pkg,
      '--mode',
      `interval:${secs++}`,
      '--constraint',
      'label.room=hall',
      '--explain',
    );
    expect(refused.code).toBe(1);
    expect(`${refused.out}\n${refused.err}`).toMatch(/cordoned/);
    expect((await heddle('node', 'uncordon', hall)).code).toBe(0);
  }, 60_000);

  it('drain empties a node: its instances run elsewhere, it is cordoned, and the chain has the moves', async () => {
    const before = (await ApiClient.fromHome(home).instances()).filter(
      (i) => i.node_id === hall && i.state !== 'unloaded',
    );
    expect(before.length).toBe(2);
    // The moved instances keep the kitchen constraint-free orders (spread), so the kitchen takes them.
    const report = await json<z.infer<typeof DrainReportSchema>>('node drain', 'node', 'drain', hall);
    expect(report.cordoned).toBe(true);
    expect(report.left).toEqual([]);
    expect(report.moved.map((m) => m.instance_id).sort()).toEqual(before.map((i) => i.instance_id).sort());
    const client = ApiClient.fromHome(home);
    const after = await client.instances();
    expect(after.filter((i) => i.node_id === hall && i.state !== 'unloaded')).toEqual([]);
    for (const m of report.moved) {
      expect(m.to_node_id).toBe(kitchen);
      expect(after.find((i) => i.instance_id === m.to_instance_id)).toMatchObject({
        node_id: kitchen,
        state: 'running',
      });
    }
    expect((await client.node(hall)).cordoned).toBe(true);
    const chain = readFileSync(join(home, 'chain.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"kind":"workload.migrate"'));
    for (const m of report.moved) {
      expect(
        chain.some(
          (l) => l.includes(`"to_instance_id":"${m.to_instance_id}"`) && l.includes('"phase":"drain"'),
        ),
      ).toBe(true);
    }
  }, 60_000);
});
