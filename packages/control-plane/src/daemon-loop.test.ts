import { describe, expect, it } from 'vitest';
import { DaemonLoop, logTick, type TickLog } from './daemon-loop.js';
import type { TickReport } from './lifecycle-tick.js';
import { openPlane, startHost, tempDir } from './test-fixtures.js';

/** A log that keeps each line as `{level, msg, ...fields}`. */
function recordingLog(): { lines: Record<string, unknown>[]; log: TickLog } {
  const lines: Record<string, unknown>[] = [];
  const at =
    (level: string) =>
    (msg: string, fields: Readonly<Record<string, unknown>> = {}): void => {
      lines.push({ level, msg, ...fields });
    };
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('DaemonLoop', () => {
  it('runs one tick at a time, ticks at start and on its interval, and stops', async () => {
    const p = await openPlane();
    try {
      const { lines, log } = recordingLog();
      let ticks = 0;
      const plane = p.plane;
      const real = plane.tick.bind(plane);
      plane.tick = (): Promise<TickReport> => {
        ticks++;
        return real();
      };
      const loop = new DaemonLoop({ plane, log, intervalMs: 40 });
      const a = loop.tick('one');
      const b = loop.tick('two');
      expect(b).toBe(a);
      await a;
      expect(ticks).toBe(1);
      loop.start();
      await new Promise((r) => setTimeout(r, 150));
      await loop.stop();
      const after = ticks;
      expect(after).toBeGreaterThanOrEqual(3);
      await new Promise((r) => setTimeout(r, 100));
      expect(ticks).toBe(after);
      expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await p.close();
    }
  });

  it('with a leadership, ticks only while it leads, and fences the tick with it', async () => {
    const p = await openPlane();
    try {
      const { log } = recordingLog();
      const fences: (boolean | undefined)[] = [];
      const plane = p.plane;
      const real = plane.tick.bind(plane);
      plane.tick = (fence?: () => boolean): Promise<TickReport> => {
        fences.push(fence?.());
        return real(fence);
      };
      let leads = false;
      const started: string[] = [];
      const loop = new DaemonLoop({
        plane,
        log,
        intervalMs: 1000,
        leadership: { isLeader: () => leads },
        onTick: (reason) => started.push(reason),
      });
      await loop.tick('follower');
      expect(fences).toEqual([]);
      leads = true;
      await loop.tick('leader');
      expect(fences).toEqual([true]);
      expect(started).toEqual(['leader']);
    } finally {
      await p.close();
    }
  });

  it('a follower ticks nothing but refreshes its nodes (a restarted controller places on live nodes)', async () => {
    const dir = tempDir();
    const h = await startHost(['wasi']);
    const first = await openPlane(dir);
    await first.plane.addNode(h.url, { tier: 'paired' });
    await first.close();
    // A restart of the controller (as a follower of another): it knows the node, has not heard from it.
    const p = await openPlane(dir);
    try {
      const { lines, log } = recordingLog();
      const plane = p.plane;
      let ticks = 0;
      const real = plane.tick.bind(plane);
      plane.tick = (fence?: () => boolean): Promise<TickReport> => {
        ticks++;
        return real(fence);
      };
      expect(plane.nodes().map((n) => n.liveness)).not.toEqual(['alive']);
      let leads = false;
      const loop = new DaemonLoop({ plane, log, intervalMs: 1000, leadership: { isLeader: () => leads } });
      await loop.tick('interval');
      expect(ticks).toBe(0);
      expect(plane.nodes().map((n) => n.liveness)).toEqual(['alive']);
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'node liveness', liveness: 'alive' }));
      // A term won while a refresh runs starts its tick at once (not behind the refresh).
      let release = (): void => {};
      plane.refreshNodes = () =>
        new Promise((r) => {
          release = () => r([]);
        });
      const refreshing = loop.tick('interval');
      leads = true;
      await loop.tick('leader');
      expect(ticks).toBe(1);
      release();
      await refreshing;
      await loop.stop();
    } finally {
      await p.close();
      await h.close();
    }
  });

  it('logs a failing tick and keeps running', async () => {
    const p = await openPlane();
    try {
      const { lines, log } = recordingLog();
      p.plane.tick = (): Promise<TickReport> => Promise.reject(new Error('store on fire'));
      const loop = new DaemonLoop({ plane: p.plane, log, intervalMs: 1000 });
      await expect(loop.tick('test')).resolves.toBeUndefined();
      expect(() => new DaemonLoop({ plane: p.plane, log, intervalMs: 0 })).toThrow(/intervalMs/);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'error',
          msg: 'tick failed (the daemon keeps running)',
          reason: 'test',
        }),
      );
    } finally {
      await p.close();
    }
  });
});

describe('tick logging', () => {
  it('logs what a tick did as JSON lines, one per kind of event, and nothing for a quiet tick', () => {
    const { lines, log } = recordingLog();
    const quiet = {
      reachable: [],
      dead: [],
      lost: [],
      rescheduled: [],
      waiting: [],
      alerts: [],
      orphans_unloaded: [],
      adopted: [],
      restarted: [],
      revoked: [],
      revocations_pushed: [],
      settle: { placed: [], nothing: [], pending: [] },
      errors: [],
    };
    logTick(log, 'interval', quiet);
    expect(lines).toEqual([]);
    logTick(log, 'interval', {
      ...quiet,
      dead: ['n1'],
      lost: ['i-1'],
      rescheduled: [{ instance_id: 'i-1', replaced_by: 'i-2', node_id: 'n2' }],
      alerts: [
        {
          alert_id: 'al-1',
          instance_id: 'i-3',
          node_id: 'n1',
          order_id: 'o-1',
          reason: 'pinned',
          detail: 'pinned to n1',
          raised_at_ms: 1,
          acked_at_ms: null,
        },
      ],
      orphans_unloaded: ['i-4'],
      adopted: ['i-5'],
      revocations_pushed: [
        { node_id: 'n2', outcome: 'applied', generation: 2, torn_down: ['i-6'], reason: null },
      ],
    });
    expect(lines.map((l) => l.msg)).toEqual([
      'instances lost',
      'rescheduled',
      'alert',
      'orphans unloaded',
      'adopted back',
      'revocations pushed',
    ]);
    expect(lines[0]).toMatchObject({ tick: 'interval', instances: ['i-1'], dead_nodes: ['n1'] });
    expect(lines[1]).toMatchObject({ instance_id: 'i-1', replaced_by: 'i-2', node_id: 'n2' });
    expect(lines[2]).toMatchObject({ alert_id: 'al-1', reason: 'pinned' });
  });
});
