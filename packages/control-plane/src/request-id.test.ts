import type { HostCallEvent } from '@heddle/host-service';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePackage, openPlane, startHost, type TestHost, type TestPlane } from './test-fixtures.js';

// The operator's request id (PlaceHooks.requestId) reaches a host that advertises the `request_id`
// feature in its place body, and is never sent to a host that does not (an older host would refuse
// the unknown body field): its place goes through without it.

let current: TestHost;
let older: TestHost;
let p: TestPlane;
const seenCurrent: HostCallEvent[] = [];
const seenOlder: HostCallEvent[] = [];

beforeAll(async () => {
  current = await startHost(['wasi'], undefined, 0, { onCall: (e) => seenCurrent.push(e) });
  older = await startHost(['wasi'], undefined, 0, { onCall: (e) => seenOlder.push(e), features: [] });
  p = await openPlane();
  await p.plane.addNode(current.url, { tier: 'paired' });
  await p.plane.addNode(older.url, { tier: 'paired' });
});
afterAll(async () => {
  await p.close();
  await current.close();
  await older.close();
});

describe('the request id of a place', () => {
  it('goes in the place body to a host that advertises request_id', async () => {
    const pkg = await examplePackage('wasi-cog');
    const r = await p.plane.place(
      { package_dir: pkg, node: current.service.nodeId, start: false },
      { requestId: 'rid-current-1' },
    );
    expect(r.status).toBe('placed');
    const place = seenCurrent.find((e) => e.method === 'workload.place');
    expect(place).toMatchObject({ outcome: 'ok', request_id: 'rid-current-1', authenticated: true });
    expect(place?.instance_id).toBe(r.instance?.instance_id);
    expect(place?.decision_id).toBe(r.decision_id);
  });

  it('is left out for a host that does not advertise it, whose place still succeeds', async () => {
    // What an older host would refuse (an unknown body field): any request_id in a signed request.
    const sentRequestId: string[] = [];
    older.intercept((real) => (signed, ctx) => {
      if (JSON.stringify(signed).includes('request_id')) sentRequestId.push(ctx.method);
      return real(signed, ctx);
    });
    const pkg = await examplePackage('wasi-cog');
    const r = await p.plane.place(
      { package_dir: pkg, node: older.service.nodeId, start: false },
      { requestId: 'rid-older-1' },
    );
    expect(r.status).toBe('placed');
    const place = seenOlder.find((e) => e.method === 'workload.place');
    expect(place).toMatchObject({ outcome: 'ok', request_id: null });
    expect(sentRequestId).toEqual([]);
    older.intercept(undefined);
  });

  it('a place without a request id sends none', async () => {
    const pkg = await examplePackage('wasi-cog', false, false, { cpu_pct: 1, ram_mb: 4 });
    const before = seenCurrent.length;
    await p.plane.place({ package_dir: pkg, node: current.service.nodeId, start: false });
    const place = seenCurrent.slice(before).find((e) => e.method === 'workload.place');
    expect(place).toMatchObject({ outcome: 'ok', request_id: null });
  });
});
