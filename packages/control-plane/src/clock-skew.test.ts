// Clock skew between a host and the controller (docs/operator-guide.md, "Clock skew"): real hosts (a
// HostService behind a real WebSocket server on 127.0.0.1) whose clock is injected, and a real
// control plane. The offset is measured from the signed describe (its `clock_ms`) or from the host
// clock a time-window refusal names, against the midpoint of the round trip.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlaneEvent } from './plane-events.js';
import { openPlane, startHost, type TestHost, type TestPlane } from './test-fixtures.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** A host whose clock reads the real time plus `skew.ms`. */
async function skewedHost(skew: { ms: number }, seed?: number): Promise<TestHost> {
  const h = await startHost(['wasi'], seed, 0, { now: () => Date.now() + skew.ms });
  open.push(h);
  return h;
}

async function plane(controllerSkewMs = 0): Promise<TestPlane> {
  const p = await openPlane(undefined, { deadAfterMs: 60_000 }, () => Date.now() + controllerSkewMs);
  open.push(p);
  return p;
}

function chained(p: TestPlane): { kind: string; payload: Record<string, unknown> }[] {
  return readFileSync(join(p.dir, 'chain.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; payload: Record<string, unknown> });
}

describe('clock skew', () => {
  it('a host 45 s behind: expired refusal named in node ls, an alert with its offset, recovery once fixed', async () => {
    const skew = { ms: 0 };
    const h = await skewedHost(skew);
    const p = await plane();
    const seen: PlaneEvent[] = [];
    p.plane.events.subscribe((e) => seen.push(e));
    await p.plane.addNode(h.url, { tier: 'paired' });
    expect(p.plane.alerts()).toEqual([]);
    const [fine] = p.plane.nodes();
    expect(Math.abs(fine?.clock?.offset_ms ?? 1e9)).toBeLessThanOrEqual((fine?.clock?.error_ms ?? 0) + 5);

    skew.ms = -45_000;
    const [n] = await p.plane.refreshNodes();
    // The documented refusal, not a generic failure: `expired`, with the measured offset.
    expect(n?.last_error).toMatch(/^clock skew: its clock is 4[45]\.\d s behind this controller's/);
    expect(n?.last_error).toContain('refused: expired: issued_at_ms is');
    expect(n?.unreachable_since_ms).not.toBeNull();
    expect(n?.clock?.refused).toBe(true);
    expect(Math.abs((n?.clock?.offset_ms ?? 0) + 45_000)).toBeLessThanOrEqual((n?.clock?.error_ms ?? 0) + 5);
    const [alert] = p.plane.alerts({ unacknowledged: true });
    expect(alert).toMatchObject({ reason: 'clock_skew', node_id: h.service.nodeId, instance_id: '' });
    expect(alert?.detail).toContain(`node ${h.service.nodeId} (${h.url})`);
    expect(alert?.detail).toMatch(/offset_ms=-4[45]\d{3}/);
    expect(alert?.detail).toContain("it refuses this controller's signed requests");
    // Raised once, however often it is measured again.
    await p.plane.refreshNodes();
    expect(p.plane.alerts().filter((a) => a.reason === 'clock_skew')).toHaveLength(1);

    skew.ms = 0;
    const [back] = await p.plane.refreshNodes();
    expect(back?.last_error).toBeNull();
    expect(back?.unreachable_since_ms).toBeNull();
    expect(back?.clock?.refused).toBe(false);
    expect(p.plane.alerts({ unacknowledged: true })).toEqual([]);
    const types = seen.map((e) => e.type).filter((t) => t.startsWith('alert.'));
    expect(types).toEqual(['alert.opened', 'alert.closed']);
    const opened = seen.find((e) => e.type === 'alert.opened');
    expect(opened?.data).toMatchObject({ reason: 'clock_skew', node_id: h.service.nodeId });
    const phases = chained(p)
      .filter((e) => e.kind === 'workload.alert')
      .map((e) => [e.payload.phase, e.payload.node_id]);
    expect(phases).toEqual([
      ['raised', h.service.nodeId],
      ['closed', h.service.nodeId],
    ]);
  });

  it('slow drift: the alert opens past the warning threshold while calls still succeed, and closes', async () => {
    const skew = { ms: 4_000 };
    const h = await skewedHost(skew);
    const p = await plane();
    await p.plane.addNode(h.url, { tier: 'paired' });
    expect(p.plane.alerts()).toEqual([]);
    // Drifting ahead, a step per check: 8 s (under the 10 s threshold), then 12 s.
    skew.ms = 8_000;
    await p.plane.refreshNodes();
    expect(p.plane.alerts()).toEqual([]);
    skew.ms = 12_000;
    const [n] = await p.plane.refreshNodes();
    expect(n?.last_error).toBeNull();
    expect(n?.liveness).toBe('alive');
    const [alert] = p.plane.alerts({ unacknowledged: true });
    expect(alert?.reason).toBe('clock_skew');
    expect(alert?.detail).toMatch(/clock 1[12]\.\d s ahead of this controller's/);
    expect(alert?.detail).toContain('the warning threshold is 10 s, the hard window 30 s');
    // Between half the threshold and the threshold: held open (no flapping).
    skew.ms = 7_000;
    await p.plane.refreshNodes();
    expect(p.plane.alerts({ unacknowledged: true })).toHaveLength(1);
    skew.ms = 1_000;
    await p.plane.refreshNodes();
    expect(p.plane.alerts({ unacknowledged: true })).toEqual([]);
  });

  it('a host far ahead (past the request lifetime) is refused as expired too, and measured', async () => {
    const skew = { ms: 0 };
    const h = await skewedHost(skew);
    const p = await plane();
    await p.plane.addNode(h.url, { tier: 'paired' });
    skew.ms = 400_000;
    const [n] = await p.plane.refreshNodes();
    expect(n?.last_error).toMatch(/^clock skew: its clock is (399|400)\.\d s ahead of this controller's/);
    expect(n?.last_error).toContain('request expired');
    expect(p.plane.alerts({ unacknowledged: true })[0]?.detail).toMatch(/offset_ms=(399|400)\d{3}/);
  });

  it("the controller's own clock off: every host agrees, and the alert names the controller", async () => {
    const a = await skewedHost({ ms: 0 });
    const b = await skewedHost({ ms: 0 });
    const p = await plane(-20_000);
    await p.plane.addNode(a.url, { tier: 'paired' });
    await p.plane.addNode(b.url, { tier: 'paired' });
    await p.plane.refreshNodes();
    const alerts = p.plane.alerts({ unacknowledged: true });
    expect(alerts.map((x) => x.node_id).sort()).toEqual([a.service.nodeId, b.service.nodeId].sort());
    // The second alert is raised once both hosts have been measured.
    expect(
      alerts.some((x) => /this controller's own clock is probably (19|20)\.\d s behind/.test(x.detail)),
    ).toBe(true);
  });
});
