// `heddle events` end to end (and the chain and decision routes the dashboard reads): the command in process against a real operator API server over a real
// control plane and a real host on 127.0.0.1.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyInclusion } from '@heddle/chain';
import { Logger } from '@heddle/cli-kit';
import {
  examplePackage,
  openPlane,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from '@heddle/control-plane/testing';
import { ApiClient, ApiServer } from '@heddle/operator-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planeHandlers } from '../api-handlers.js';
import { runCli } from '../cli.js';
import type { CliIo } from '../io.js';
import { EventLineSchema } from '../json-outputs.js';

let h: TestHost;
let p: TestPlane;
let api: ApiServer;
let home: string;

beforeAll(async () => {
  [h, p] = await Promise.all([startHost(['wasi']), openPlane()]);
  api = await ApiServer.listen({
    handlers: planeHandlers(p.plane, { chain: p.chain }),
    auth: { token: 'events-token' },
    log: new Logger(() => {}),
    port: 0,
    events: p.plane.events,
  });
  home = join(tempDir('heddle-events-'), 'home');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(
    join(home, 'api.json'),
    JSON.stringify({ url: api.url, pid: process.pid, node_id: p.plane.nodeId }),
  );
  writeFileSync(join(home, 'api.token'), 'events-token', { mode: 0o600 });
});

afterAll(async () => {
  await api?.close(1000);
  await p?.close();
  await h?.close();
});

function io(out: string[], err: string[] = []): CliIo {
  return { out: (l) => out.push(l), err: (l) => err.push(l), cwd: home, env: {} };
}

/** Resolves once `out` has `n` lines. */
async function lines(out: string[], n: number): Promise<void> {
  for (let i = 0; i < 500 && out.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(out.length).toBeGreaterThanOrEqual(n);
}

describe('heddle events', () => {
  it('prints one line per event as the plane publishes it (--json: the stream schema), until --count', async () => {
    const out: string[] = [];
    const run = runCli(['events', '--count', '3', '--json', '--home', home], io(out));
    await lines(out, 1); // stream.open: connected
    await p.plane.addNode(h.url, { tier: 'paired' });
    const r = await p.plane.place({
      package_dir: await examplePackage('wasi-cog', false, true),
      mode: { type: 'once' },
      start: false,
    });
    expect(await run).toBe(0);
    const events = out.map((l) => EventLineSchema.parse(JSON.parse(l)));
    expect(events.map((e) => e.type)).toEqual([
      'stream.open',
      'node.joined',
      'node.liveness_changed',
      'instance.placed',
    ]);
    expect(events).toHaveLength(4);
    expect(events[3]?.data).toMatchObject({
      instance_id: r.instance?.instance_id,
      node_id: h.service.nodeId,
    });
  });

  it('--since resumes after an id; the human form is one line per event; a foreign id prints stream.reset', async () => {
    const first = p.plane.events.recent()[0];
    const out: string[] = [];
    expect(
      await runCli(['events', '--since', first?.id ?? '', '--count', '2', '--home', home], io(out)),
    ).toBe(0);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^\d\d:\d\d:\d\d {2}node\.liveness_changed +[0-9a-f]+\S* unknown -> alive$/);
    expect(out[1]).toMatch(/^\d\d:\d\d:\d\d {2}instance\.placed +\S+ wasi-cog@/);
    const reset: string[] = [];
    const run = runCli(['events', '--since', 'ffff-9', '--count', '1', '--home', home], io(reset));
    await lines(reset, 1);
    expect(reset[0]).toContain('stream.reset: cannot continue after ffff-9');
    await p.plane.refreshNodes();
    p.plane.events.publish('node.removed', { node_id: 'n-test' });
    expect(await run).toBe(0);
    expect(reset[1]).toMatch(/node\.removed/);
  });

  it('refuses a bad --count (exit 3) and a wrong token (exit 3, unauthorized)', async () => {
    const err: string[] = [];
    expect(await runCli(['events', '--count', '0', '--home', home], io([], err))).toBe(3);
    writeFileSync(join(home, 'api.token'), 'wrong', { mode: 0o600 });
    const err2: string[] = [];
    expect(await runCli(['events', '--json', '--home', home], io([], err2))).toBe(3);
    expect(JSON.parse(err2[0] ?? '{}')).toMatchObject({ error: { code: 'unauthorized' } });
    writeFileSync(join(home, 'api.token'), 'events-token', { mode: 0o600 });
  });
});

describe('the chain and decision routes', () => {
  it('head and verification, latest events, an event with an inclusion proof that verifies, a decision with its explanation', async () => {
    const client = ApiClient.fromHome(home);
    const head = await client.chainHead();
    expect(head).toMatchObject({ size: p.chain.size, head: p.chain.head, root: p.chain.root() });
    expect(head.verify).toEqual({ ok: true, size: p.chain.size, failure: null });
    const proven = await client.chainEvent('0');
    expect(proven.event).toEqual(p.chain.get(0));
    expect(verifyInclusion(proven.proof.leaf, 0, head.size, proven.proof.path, head.root)).toBe(true);
    expect((await client.chainEvent(proven.event.hash)).event.seq).toBe(0);
    const placed = p.plane.instances()[0];
    const decision = await client.decision(placed?.decision_id ?? '');
    expect(decision.event.hash).toBe(placed?.decision_id);
    expect(decision.explanation?.rows.some((r) => r.verdict === 'chosen')).toBe(true);
    const res = await fetch(`${api.url}/v1/chain/events?limit=2`, {
      headers: { authorization: 'Bearer events-token' },
    });
    const page = (await res.json()) as { events: { seq: number }[] };
    expect(page.events.map((e) => e.seq)).toEqual([p.chain.size - 1, p.chain.size - 2]);
    await expect(client.chainEvent('999999')).rejects.toMatchObject({ code: 'unknown_event', status: 404 });
    await expect(client.decision(p.chain.get(p.chain.size - 1)?.hash ?? '')).rejects.toMatchObject({
      code: 'unknown_event',
    });
    const bad = await fetch(`${api.url}/v1/chain/events?limit=0`, {
      headers: { authorization: 'Bearer events-token' },
    });
    expect(bad.status).toBe(400);
  });
});
