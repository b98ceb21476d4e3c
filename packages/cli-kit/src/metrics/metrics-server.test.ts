import { afterEach, describe, expect, it } from 'vitest';
import { MetricsServer } from './metrics-server.js';
import { parseExposition, sampleValue } from './parse-exposition.js';
import { MetricsRegistry } from './registry.js';

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('MetricsServer', () => {
  it('serves /metrics, /healthz and /readyz without credentials; readiness follows the checks', async () => {
    const registry = new MetricsRegistry();
    const c = registry.counter({ name: 'hits_total', help: 'Hits.' });
    let open = false;
    server = await MetricsServer.listen({
      registry,
      host: '127.0.0.1',
      port: 0,
      ready: () => ({ store_open: open, listening: true }),
    });
    c.inc();
    const m = await fetch(`${server.url}/metrics`);
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(sampleValue(parseExposition(await m.text()), 'hits_total')).toBe(1);

    const h = await fetch(`${server.url}/healthz`);
    expect([h.status, await h.json()]).toEqual([200, { status: 'ok' }]);
    const r1 = await fetch(`${server.url}/readyz`);
    expect([r1.status, await r1.json()]).toEqual([
      503,
      { status: 'not_ready', checks: { store_open: false, listening: true } },
    ]);
    open = true;
    const r2 = await fetch(`${server.url}/readyz`);
    expect([r2.status, await r2.json()]).toEqual([
      200,
      { status: 'ready', checks: { store_open: true, listening: true } },
    ]);
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    server = await MetricsServer.listen({
      registry: new MetricsRegistry(),
      host: '127.0.0.1',
      port: 0,
      ready: () => ({}),
    });
    expect((await fetch(`${server.url}/`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics/x`)).status).toBe(404);
    const post = await fetch(`${server.url}/metrics`, { method: 'POST', body: 'x' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const head = await fetch(`${server.url}/healthz`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('a readiness check that throws reads as not ready', async () => {
    server = await MetricsServer.listen({
      registry: new MetricsRegistry(),
      host: '127.0.0.1',
      port: 0,
      ready: () => {
        throw new Error('boom');
      },
    });
    const r = await fetch(`${server.url}/readyz`);
    expect([r.status, await r.json()]).toEqual([
      503,
      { status: 'not_ready', checks: { ready_check: false } },
    ]);
  });
});
