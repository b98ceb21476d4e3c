// Metrics, health and the request id, scraped from a real controller daemon and a real `heddle-host`
// (child processes): /healthz and /readyz without credentials on both metrics ports (and on the
// operator API port), the exposition parsed and its values checked before and after a place and a
// refusal, and the request id of `heddle place` found in the host's log line.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ParsedExposition, parseExposition, sampleValue } from '@heddle/cli-kit/testing';
import { generateKeyPair, loadKeyFile } from '@heddle/envelope';
import { ApiClient, ApiInfoSchema } from '@heddle/operator-api';
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

const cwd = tempDir();
const home = join(cwd, 'ctl');
let controller: Daemon;
let host: Daemon;
let hostUrl = '';
let controllerMetrics = '';
let hostMetrics = '';

/** Adds `metrics_listen` on a free loopback port (and any other fields) to a JSON config file. */
function addToConfig(path: string, fields: Record<string, unknown>): void {
  // cast: a config file this test wrote (or `heddle init` wrote) holds one JSON object.
  const c = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  writeFileSync(path, JSON.stringify({ ...c, ...fields }));
}

async function scrape(base: string): Promise<ParsedExposition> {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await res.text());
}

async function until<T>(what: () => T | undefined, label: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  const init = await runCaptured(['init', '--home', home, '--api-port', '0', '--json'], cwd);
  expect(init.code, init.err).toBe(0);
  // cast: `init --json` prints one object with the controller's public key.
  const { public_key } = JSON.parse(init.out) as { public_key: string };
  addToConfig(join(home, 'controller.json'), { metrics_listen: { host: '127.0.0.1', port: 0 } });
  const hostHome = writeHostHome(join(cwd, 'host'), {
    hostKeys: generateKeyPair(),
    controllerKey: public_key,
    operatorKey: public_key,
  });
  addToConfig(hostHome.config, { metrics_listen: { host: '127.0.0.1', port: 0 }, log_level: 'warn' });
  // --log-level overrides the config's warn: the host's info lines (listening, call) are written.
  host = spawnHostDaemon(['run', '--config', hostHome.config, '--log-level', 'info'], cwd);
  controller = spawnController(['controller', 'run', '--home', home, '--log-level', 'debug'], cwd);
  const [h, c] = await Promise.all([waitFor(host, 'listening'), waitFor(controller, 'listening')]);
  hostUrl = String(h.url);
  hostMetrics = String(h.metrics_url).replace(/\/metrics$/, '');
  controllerMetrics = String(c.metrics_url).replace(/\/metrics$/, '');
  expect([h.log_level, c.log_level]).toEqual(['info', 'debug']);
}, 30_000);

afterAll(async () => {
  await Promise.all([kill(controller), kill(host)]);
});

describe('health endpoints', () => {
  it('/healthz and /readyz answer without credentials on both metrics ports, saying only status and checks', async () => {
    for (const [base, checks] of [
      [controllerMetrics, { api_listening: true, store_open: true, chain_writable: true }],
      [hostMetrics, { recovered: true, listening: true, chain_writable: true, revocation_list_valid: true }],
    ] as const) {
      const h = await fetch(`${base}/healthz`);
      expect([h.status, await h.json()]).toEqual([200, { status: 'ok' }]);
      const r = await fetch(`${base}/readyz`);
      expect([r.status, await r.json()]).toEqual([200, { status: 'ready', checks }]);
    }
  });

  it('the operator API port answers /healthz and /readyz without the token; every other route still needs it', async () => {
    const info = ApiInfoSchema.parse(JSON.parse(readFileSync(join(home, 'api.json'), 'utf8')));
    const h = await fetch(`${info.url}/healthz`);
    expect([h.status, await h.json()]).toEqual([200, { status: 'ok' }]);
    // Probes poll these routes: their request lines are written at debug (this controller runs at debug).
    const probeLine = await until(
      () => controller.lines.find((l) => l.msg === 'request' && l.path === '/healthz'),
      'the probe request line',
    );
    expect(probeLine).toMatchObject({ level: 'debug', status: 200 });
    const r = await fetch(`${info.url}/readyz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      status: 'ready',
      checks: { api_listening: true, store_open: true, chain_writable: true },
    });
    expect((await fetch(`${info.url}/v1/health`)).status).toBe(401);
    expect((await fetch(`${info.url}/v1/nodes`)).status).toBe(401);
    // The request id header: echoed when well-formed, made up when absent, refused when malformed.
    const token = readFileSync(join(home, 'api.token'), 'utf8').trim();
    const auth = { authorization: `Bearer ${token}` };
    const echoed = await fetch(`${info.url}/v1/health`, { headers: { ...auth, 'x-request-id': 'abc-1' } });
    expect([echoed.status, echoed.headers.get('x-request-id')]).toEqual([200, 'abc-1']);
    const made = await fetch(`${info.url}/v1/health`, { headers: auth });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await fetch(`${info.url}/v1/health`, { headers: { ...auth, 'x-request-id': 'no spaces' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_input', field: 'x-request-id' } });
    expect((await fetch(`${info.url}/healthz`, { method: 'POST' })).status).toBe(401);
  });
});

describe('metrics and the request id', () => {
  it('a place from the CLI moves the metrics of both daemons, and its request id reaches the host log', async () => {
    const client = ApiClient.fromHome(home);
    await client.addNode(hostUrl, { tier: 'paired' });
    const c0 = await scrape(controllerMetrics);
    const h0 = await scrape(hostMetrics);
    expect(sampleValue(c0, 'heddle_nodes', { tier: 'paired' })).toBe(1);
    expect(sampleValue(c0, 'heddle_places_total')).toBe(0);
    expect(sampleValue(c0, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sampleValue(h0, 'heddle_host_places_total')).toBe(0);
    expect(sampleValue(h0, 'heddle_host_calls_total', { method: 'workload.describe', outcome: 'ok' })).toBe(
      1,
    );

    const keys = loadKeyFile(join(home, 'controller.key'));
    const pkg = await wasiPackage(keys);
    const rid = 'e2e-place-0001';
    const run = await runCaptured(
      ['place', pkg.dir, '--home', home, '--mode', 'interval:30', '--request-id', rid, '--json'],
      cwd,
    );
    expect(run.code, run.err).toBe(0);

    // The host logged the place with the operator's request id, and so did the controller's API.
    const call = await until(
      () => host.lines.find((l) => l.msg === 'call' && l.request_id === rid),
      'the host call line',
    );
    expect(call).toMatchObject({ level: 'info', method: 'workload.place', outcome: 'ok', request_id: rid });
    expect(String(call.instance_id)).toMatch(/^wasi-cog-[0-9a-f]{16}$/);
    const request = await until(
      () =>
        controller.lines.find((l) => l.msg === 'request' && l.path === '/v1/place' && l.request_id === rid),
      'the controller request line',
    );
    expect(request).toMatchObject({ status: 200 });

    const c1 = await scrape(controllerMetrics);
    const h1 = await scrape(hostMetrics);
    expect(sampleValue(c1, 'heddle_places_total', { outcome: 'placed' })).toBe(1);
    expect(sampleValue(c1, 'heddle_place_duration_seconds_count', { outcome: 'placed' })).toBe(1);
    expect(sampleValue(c1, 'heddle_place_duration_seconds_bucket', { outcome: 'placed', le: '+Inf' })).toBe(
      1,
    );
    expect(sampleValue(c1, 'heddle_place_attempts_total', { outcome: 'placed' })).toBe(1);
    expect(sampleValue(c1, 'heddle_instances', { state: 'running' })).toBe(1);
    expect(sampleValue(c1, 'heddle_api_requests_total', { route: 'place', code: '' })).toBe(1);
    expect(sampleValue(c1, 'heddle_api_bytes_total', { direction: 'out' })).toBeGreaterThan(
      sampleValue(c0, 'heddle_api_bytes_total', { direction: 'out' }),
    );
    expect(sampleValue(c1, 'heddle_chain_events')).toBeGreaterThan(sampleValue(c0, 'heddle_chain_events'));
    expect(sampleValue(c1, 'heddle_chain_append_duration_seconds_count')).toBeGreaterThan(
      sampleValue(c0, 'heddle_chain_append_duration_seconds_count'),
    );
    expect(sampleValue(c1, 'heddle_alerts_open')).toBe(0);
    expect(sampleValue(c1, 'heddle_revocation_generation')).toBe(0);

    expect(sampleValue(h1, 'heddle_host_places_total', { method: 'workload.place', outcome: 'ok' })).toBe(1);
    expect(sampleValue(h1, 'heddle_host_place_duration_seconds_count', { outcome: 'ok' })).toBe(1);
    expect(sampleValue(h1, 'heddle_host_instances', { state: 'running' })).toBe(1);
    // The controller's sessions come and go with its calls: the gauge is there, whatever it reads now.
    expect([h1.types.get('heddle_wire_sessions'), h1.types.get('heddle_host_calls_in_flight')]).toEqual([
      'gauge',
      'gauge',
    ]);
    expect(sampleValue(h1, 'heddle_wire_bytes_total', { direction: 'in' })).toBeGreaterThan(
      sampleValue(h0, 'heddle_wire_bytes_total', { direction: 'in' }) + 100,
    );
    expect(sampleValue(h1, 'heddle_chain_events')).toBeGreaterThan(sampleValue(h0, 'heddle_chain_events'));
  });

  it('a place the host refuses is counted by code on both daemons, and logged with its request id', async () => {
    const c0 = await scrape(controllerMetrics);
    const h0 = await scrape(hostMetrics);
    const keys = loadKeyFile(join(home, 'controller.key'));
    const pkg = await wasiPackage(keys);
    const rid = 'e2e-refused-0002';
    // The example cog declares no config field: the host's adapter refuses an unknown one.
    const run = await runCaptured(
      ['place', pkg.dir, '--home', home, '--set', 'nosuch=1', '--request-id', rid, '--json'],
      cwd,
    );
    expect(run.code).toBe(1);
    const call = await until(
      () => host.lines.find((l) => l.msg === 'call' && l.request_id === rid),
      'the host call line',
    );
    expect(call).toMatchObject({ method: 'workload.place', outcome: 'refused', code: 'invalid_request' });

    const c1 = await scrape(controllerMetrics);
    const h1 = await scrape(hostMetrics);
    const refusedBefore = sampleValue(c0, 'heddle_refusals_total', {
      source: 'host',
      code: 'invalid_request',
    });
    expect(sampleValue(c1, 'heddle_refusals_total', { source: 'host', code: 'invalid_request' })).toBe(
      refusedBefore + 1,
    );
    expect(sampleValue(c1, 'heddle_place_attempts_total', { outcome: 'refused' })).toBe(1);
    expect(sampleValue(c1, 'heddle_places_total', { outcome: 'placed' })).toBe(1);
    const failed = c1.samples.filter(
      (s) => s.name === 'heddle_places_total' && s.labels.outcome !== 'placed' && s.value > 0,
    );
    expect(failed).toHaveLength(1);
    expect(
      sampleValue(h1, 'heddle_host_refusals_total', { code: 'invalid_request', authenticated: 'true' }),
    ).toBe(
      sampleValue(h0, 'heddle_host_refusals_total', { code: 'invalid_request', authenticated: 'true' }) + 1,
    );
    expect(
      sampleValue(h1, 'heddle_host_places_total', { method: 'workload.place', outcome: 'invalid_request' }),
    ).toBe(1);
  });

  it('a host at log level info writes no debug line; the controller at debug may', () => {
    expect(host.lines.some((l) => l.level === 'debug')).toBe(false);
    expect(host.lines.every((l) => typeof l.ts === 'string' && typeof l.level === 'string')).toBe(true);
  });
});
